#include "cebur128.h"
#include "cloader.h"

static struct {
    ebur128_state *(*init)(unsigned int, unsigned long, int);
    void (*destroy)(ebur128_state **);
    int (*add_frames_float)(ebur128_state *, const float *, size_t);
    int (*loudness_global)(ebur128_state *, double *);
    int (*loudness_global_multiple)(ebur128_state **, size_t, double *);
    int (*loudness_momentary)(ebur128_state *, double *);
    int (*loudness_shortterm)(ebur128_state *, double *);
    int (*loudness_range)(ebur128_state *, double *);
    int (*true_peak)(ebur128_state *, unsigned int, double *);
} lib;

#define SYMBOL(field, name) {name, (void **)&lib.field}
static const announce_symbol symbols[] = {
    SYMBOL(init, "ebur128_init"), SYMBOL(destroy, "ebur128_destroy"), SYMBOL(add_frames_float, "ebur128_add_frames_float"),
    SYMBOL(loudness_global, "ebur128_loudness_global"), SYMBOL(loudness_momentary, "ebur128_loudness_momentary"),
    SYMBOL(loudness_shortterm, "ebur128_loudness_shortterm"),
    SYMBOL(loudness_global_multiple, "ebur128_loudness_global_multiple"),
    SYMBOL(loudness_range, "ebur128_loudness_range"), SYMBOL(true_peak, "ebur128_true_peak"),
};

static announce_library library = ANNOUNCE_LIBRARY("libebur128.so.1", "libebur128-1", symbols, NULL);

const char *announce_ebur128_load(void) { return announce_library_load(&library); }

ebur128_state *announce_ebur128_init(unsigned int channels, unsigned long samplerate, int mode) {
    return lib.init(channels, samplerate, mode);
}
void announce_ebur128_destroy(ebur128_state **state) { lib.destroy(state); }
int announce_ebur128_add_frames_float(ebur128_state *state, const float *frames, size_t count) {
    return lib.add_frames_float(state, frames, count);
}
int announce_ebur128_loudness_global(ebur128_state *state, double *out) { return lib.loudness_global(state, out); }
int announce_ebur128_loudness_global_multiple(ebur128_state **states, size_t count, double *out) {
    return lib.loudness_global_multiple(states, count, out);
}
int announce_ebur128_loudness_momentary(ebur128_state *state, double *out) { return lib.loudness_momentary(state, out); }
int announce_ebur128_loudness_shortterm(ebur128_state *state, double *out) { return lib.loudness_shortterm(state, out); }
int announce_ebur128_loudness_range(ebur128_state *state, double *out) { return lib.loudness_range(state, out); }
int announce_ebur128_true_peak(ebur128_state *state, unsigned int channel, double *out) { return lib.true_peak(state, channel, out); }
