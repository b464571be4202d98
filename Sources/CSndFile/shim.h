#ifndef ANNOUNCE_CSNDFILE_SHIM_H
#define ANNOUNCE_CSNDFILE_SHIM_H
#include <sndfile.h>

// Major/minor format fields are masks in C; Swift sees plain functions.
static inline int announce_sf_major(int format) { return format & SF_FORMAT_TYPEMASK; }
static inline int announce_sf_minor(int format) { return format & SF_FORMAT_SUBMASK; }

#endif
