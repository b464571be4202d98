#ifndef ANNOUNCE_CSPEEXDSP_SHIM_H
#define ANNOUNCE_CSPEEXDSP_SHIM_H
#include <speex/speex_resampler.h>
#endif
