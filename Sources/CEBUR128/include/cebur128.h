#ifndef ANNOUNCE_CEBUR128_H
#define ANNOUNCE_CEBUR128_H
#include <ebur128.h>

// libebur128, loaded on first use (dlopen) rather than linked, as the other libraries only some
// commands need: `announce info` and a loudness stage load it; a `play` client's start does not.
// The functions have libebur128's own names with `announce_` before them.

/// Loads libebur128 once; NULL when that worked, else why not.
const char *announce_ebur128_load(void);

ebur128_state *announce_ebur128_init(unsigned int channels, unsigned long samplerate, int mode);
void announce_ebur128_destroy(ebur128_state **state);
int announce_ebur128_add_frames_float(ebur128_state *state, const float *frames, size_t count);
int announce_ebur128_loudness_global(ebur128_state *state, double *out);
int announce_ebur128_loudness_momentary(ebur128_state *state, double *out);
int announce_ebur128_loudness_global_multiple(ebur128_state **states, size_t count, double *out);
int announce_ebur128_loudness_shortterm(ebur128_state *state, double *out);
int announce_ebur128_loudness_range(ebur128_state *state, double *out);
int announce_ebur128_true_peak(ebur128_state *state, unsigned int channel, double *out);

#endif
