#ifndef ANNOUNCE_CFLAC_SHIM_H
#define ANNOUNCE_CFLAC_SHIM_H
#include <FLAC/stream_decoder.h>
#endif
