#ifndef ANNOUNCE_CALSA_SHIM_H
#define ANNOUNCE_CALSA_SHIM_H

#include <alsa/asoundlib.h>
#include <stdarg.h>
#include <stdio.h>

// snd_pcm_hw_params_alloca/sw_params_alloca are alloca macros: their memory
// cannot outlive a wrapper function, so Swift gets malloc'd equivalents that
// it frees itself (only at open, never on the playback path).
static inline snd_pcm_hw_params_t *announce_hw_params_new(void) {
    snd_pcm_hw_params_t *p = NULL;
    return snd_pcm_hw_params_malloc(&p) == 0 ? p : NULL;
}
static inline snd_pcm_sw_params_t *announce_sw_params_new(void) {
    snd_pcm_sw_params_t *p = NULL;
    return snd_pcm_sw_params_malloc(&p) == 0 ? p : NULL;
}

// ALSA reports through a variadic handler that Swift cannot implement.
// The trampoline formats the message and hands it to AnnounceOutput's logger
// (defined in Swift with @_cdecl) instead of printing "ALSA lib ..." lines.
extern void announce_alsa_log(const char *file, int line, const char *function, int err, const char *message);

static inline void announce_alsa_error_trampoline(const char *file, int line, const char *function,
                                                  int err, const char *fmt, ...) {
    char message[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    announce_alsa_log(file, line, function, err, message);
}

static inline int announce_alsa_route_errors_to_logger(void) {
    return snd_lib_error_set_handler(announce_alsa_error_trampoline);
}

#endif
