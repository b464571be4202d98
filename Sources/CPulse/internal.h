#ifndef ANNOUNCE_CPULSE_INTERNAL_H
#define ANNOUNCE_CPULSE_INTERNAL_H
// Shared by the shim's files, not exported to Swift.
#include <pulse/pulseaudio.h>
#include "cpulse.h"

pa_context *announce_pulse_context(announce_pulse *pulse);
/// Runs the connection's loop until *done (0), the timeout or a failed connection (-1, the operation cancelled).
int announce_pulse_finish(announce_pulse *pulse, pa_operation *operation, const int *done, int timeout_ms);

/// Whether an operation that only succeeds or fails has ended, and how: `announce_pulse_on_set`'s userdata.
struct announce_pulse_setting {
    int done;
    int success;
};
/// A pa_context_success_cb_t that fills a `struct announce_pulse_setting`.
void announce_pulse_on_set(pa_context *context, int success, void *userdata);
#endif
