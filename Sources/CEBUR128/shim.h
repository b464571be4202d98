#ifndef ANNOUNCE_CEBUR128_SHIM_H
#define ANNOUNCE_CEBUR128_SHIM_H
#include <ebur128.h>
#endif
