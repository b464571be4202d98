#include "internal.h"

#include "cloader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pulse/pulseaudio.h>

static struct {
    pa_mainloop *(*mainloop_new)(void);
    void (*mainloop_free)(pa_mainloop *);
    pa_mainloop_api *(*mainloop_get_api)(pa_mainloop *);
    int (*mainloop_prepare)(pa_mainloop *, int);
    int (*mainloop_poll)(pa_mainloop *);
    int (*mainloop_dispatch)(pa_mainloop *);
    pa_context *(*context_new)(pa_mainloop_api *, const char *);
    void (*context_unref)(pa_context *);
    int (*context_connect)(pa_context *, const char *, pa_context_flags_t, const pa_spawn_api *);
    void (*context_disconnect)(pa_context *);
    void (*context_set_state_callback)(pa_context *, pa_context_notify_cb_t, void *);
    pa_context_state_t (*context_get_state)(const pa_context *);
    int (*context_errno)(const pa_context *);
    const char *(*strerror)(int);
    pa_operation *(*get_sink_input_info_list)(pa_context *, pa_sink_input_info_cb_t, void *);
    pa_operation *(*set_sink_input_volume)(pa_context *, uint32_t, const pa_cvolume *, pa_context_success_cb_t, void *);
    void (*operation_unref)(pa_operation *);
    void (*operation_cancel)(pa_operation *);
    const char *(*proplist_gets)(const pa_proplist *, const char *);
    void (*set_subscribe_callback)(pa_context *, pa_context_subscribe_cb_t, void *);
    pa_operation *(*subscribe)(pa_context *, pa_subscription_mask_t, pa_context_success_cb_t, void *);
} pa;

#define SYMBOL(field, name) {name, (void **)&pa.field}
static const announce_symbol symbols[] = {
    SYMBOL(mainloop_new, "pa_mainloop_new"), SYMBOL(mainloop_free, "pa_mainloop_free"),
    SYMBOL(mainloop_get_api, "pa_mainloop_get_api"), SYMBOL(mainloop_prepare, "pa_mainloop_prepare"),
    SYMBOL(mainloop_poll, "pa_mainloop_poll"), SYMBOL(mainloop_dispatch, "pa_mainloop_dispatch"),
    SYMBOL(context_new, "pa_context_new"), SYMBOL(context_unref, "pa_context_unref"), SYMBOL(context_connect, "pa_context_connect"),
    SYMBOL(context_disconnect, "pa_context_disconnect"), SYMBOL(context_set_state_callback, "pa_context_set_state_callback"),
    SYMBOL(context_get_state, "pa_context_get_state"), SYMBOL(context_errno, "pa_context_errno"), SYMBOL(strerror, "pa_strerror"),
    SYMBOL(get_sink_input_info_list, "pa_context_get_sink_input_info_list"),
    SYMBOL(set_sink_input_volume, "pa_context_set_sink_input_volume"), SYMBOL(operation_unref, "pa_operation_unref"),
    SYMBOL(operation_cancel, "pa_operation_cancel"), SYMBOL(proplist_gets, "pa_proplist_gets"),
    SYMBOL(set_subscribe_callback, "pa_context_set_subscribe_callback"), SYMBOL(subscribe, "pa_context_subscribe"),
};

static announce_library library = ANNOUNCE_LIBRARY("libpulse.so.0", "libpulse0", symbols, NULL);

const char *announce_pulse_load(void) { return announce_library_load(&library); }

struct announce_pulse {
    pa_mainloop *loop;
    pa_context *context;
    /// Sink-input news came since the last `announce_pulse_wait_for_news`.
    int news;
};

static int64_t now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

// Runs the loop until *done, the deadline or a failed context: 0, or -1.
static int run_until(announce_pulse *pulse, const int *done, int timeout_ms) {
    int64_t deadline = now_ms() + timeout_ms;
    while (!*done) {
        pa_context_state_t state = pa.context_get_state(pulse->context);
        if (state == PA_CONTEXT_FAILED || state == PA_CONTEXT_TERMINATED) return -1;
        int64_t left = deadline - now_ms();
        if (left <= 0) return -1;
        if (pa.mainloop_prepare(pulse->loop, (int)(left * 1000)) < 0) return -1;
        if (pa.mainloop_poll(pulse->loop) < 0) return -1;
        if (pa.mainloop_dispatch(pulse->loop) < 0) return -1;
    }
    return 0;
}

// Ends the wait for READY; a failure ends every wait (run_until checks the state).
static void on_state(pa_context *context, void *userdata) {
    int *done = userdata;
    pa_context_state_t state = pa.context_get_state(context);
    if (state == PA_CONTEXT_READY || state == PA_CONTEXT_FAILED || state == PA_CONTEXT_TERMINATED) *done = 1;
}

announce_pulse *announce_pulse_connect(int timeout_ms, char *error, size_t error_size) {
    const char *problem = announce_pulse_load();
    if (problem) {
        snprintf(error, error_size, "%s", problem);
        return NULL;
    }
    announce_pulse *pulse = calloc(1, sizeof *pulse);
    if (!pulse || !(pulse->loop = pa.mainloop_new())) {
        snprintf(error, error_size, "out of memory");
        free(pulse);
        return NULL;
    }
    pulse->context = pa.context_new(pa.mainloop_get_api(pulse->loop), "announce");
    if (!pulse->context) {
        snprintf(error, error_size, "cannot make a libpulse context");
        pa.mainloop_free(pulse->loop);
        free(pulse);
        return NULL;
    }
    int done = 0;
    pa.context_set_state_callback(pulse->context, on_state, &done);
    if (pa.context_connect(pulse->context, NULL, PA_CONTEXT_NOAUTOSPAWN, NULL) < 0
        || run_until(pulse, &done, timeout_ms) < 0 || pa.context_get_state(pulse->context) != PA_CONTEXT_READY) {
        int code = pa.context_errno(pulse->context);
        snprintf(error, error_size, "%s", done || code ? pa.strerror(code) : "no answer in time");
        pa.context_set_state_callback(pulse->context, NULL, NULL);
        announce_pulse_disconnect(pulse);
        return NULL;
    }
    pa.context_set_state_callback(pulse->context, NULL, NULL);
    return pulse;
}

void announce_pulse_disconnect(announce_pulse *pulse) {
    if (!pulse) return;
    pa.context_disconnect(pulse->context);
    pa.context_unref(pulse->context);
    pa.mainloop_free(pulse->loop);
    free(pulse);
}

// Waits for `operation` (which sets *done), cancelling it when the wait fails.
static int finish(announce_pulse *pulse, pa_operation *operation, const int *done, int timeout_ms) {
    if (!operation) return -1;
    int result = run_until(pulse, done, timeout_ms);
    if (result < 0) pa.operation_cancel(operation);
    pa.operation_unref(operation);
    return result;
}

struct listing {
    announce_pulse_stream *streams;
    int capacity;
    int count;
    int done;
};

static void copy_property(const pa_proplist *properties, const char *key, char *into, size_t size) {
    const char *value = properties ? pa.proplist_gets(properties, key) : NULL;
    snprintf(into, size, "%s", value ? value : "");
}

static void on_stream(pa_context *context, const pa_sink_input_info *info, int eol, void *userdata) {
    (void)context;
    struct listing *listing = userdata;
    if (eol) {
        listing->done = 1;
        return;
    }
    if (!info || listing->count >= listing->capacity) return;
    announce_pulse_stream *stream = &listing->streams[listing->count++];
    memset(stream, 0, sizeof *stream);
    stream->index = info->index;
    stream->channels = info->volume.channels;
    if (stream->channels > ANNOUNCE_PULSE_MAX_CHANNELS) stream->channels = ANNOUNCE_PULSE_MAX_CHANNELS;
    for (uint32_t channel = 0; channel < stream->channels; channel++) stream->volume[channel] = info->volume.values[channel];
    stream->has_volume = info->has_volume && info->volume_writable;
    char pid[32];
    copy_property(info->proplist, PA_PROP_APPLICATION_PROCESS_ID, pid, sizeof pid);
    char *end = NULL;
    long long value = strtoll(pid, &end, 10);
    stream->process_id = pid[0] && end && *end == 0 ? value : -1;
    copy_property(info->proplist, PA_PROP_MEDIA_ROLE, stream->role, sizeof stream->role);
    copy_property(info->proplist, PA_PROP_APPLICATION_NAME, stream->application, sizeof stream->application);
    stream->corked = info->corked ? 1 : 0;
}

int announce_pulse_list_streams(announce_pulse *pulse, announce_pulse_stream *streams, int capacity, int timeout_ms) {
    struct listing listing = {streams, capacity, 0, 0};
    pa_operation *operation = pa.get_sink_input_info_list(pulse->context, on_stream, &listing);
    return finish(pulse, operation, &listing.done, timeout_ms) < 0 ? -1 : listing.count;
}

void announce_pulse_on_set(pa_context *context, int success, void *userdata) {
    (void)context;
    struct announce_pulse_setting *setting = userdata;
    setting->success = success;
    setting->done = 1;
}

int announce_pulse_set_volume(announce_pulse *pulse, uint32_t index, uint32_t channels, const uint32_t *volume,
                              int timeout_ms) {
    if (channels == 0 || channels > PA_CHANNELS_MAX) return 1;
    pa_cvolume cvolume;
    memset(&cvolume, 0, sizeof cvolume);
    cvolume.channels = (uint8_t)channels;
    for (uint32_t channel = 0; channel < channels; channel++) cvolume.values[channel] = volume[channel];
    struct announce_pulse_setting setting = {0, 0};
    pa_operation *operation = pa.set_sink_input_volume(pulse->context, index, &cvolume, announce_pulse_on_set, &setting);
    if (finish(pulse, operation, &setting.done, timeout_ms) < 0) return -1;
    return setting.success ? 0 : 1;
}

// MARK: news of sink inputs (the watcher of calls and other audio)

static void on_news(pa_context *context, pa_subscription_event_type_t type, uint32_t index, void *userdata) {
    (void)context;
    (void)type;
    (void)index;
    ((announce_pulse *)userdata)->news = 1;
}

int announce_pulse_subscribe_streams(announce_pulse *pulse, int timeout_ms) {
    pa.set_subscribe_callback(pulse->context, on_news, pulse);
    struct announce_pulse_setting setting = {0, 0};
    pa_operation *operation = pa.subscribe(pulse->context, PA_SUBSCRIPTION_MASK_SINK_INPUT, announce_pulse_on_set, &setting);
    if (finish(pulse, operation, &setting.done, timeout_ms) < 0 || !setting.success) return -1;
    return 0;
}

int announce_pulse_wait_for_news(announce_pulse *pulse, int timeout_ms) {
    int64_t deadline = now_ms() + timeout_ms;
    while (!pulse->news) {
        pa_context_state_t state = pa.context_get_state(pulse->context);
        if (state == PA_CONTEXT_FAILED || state == PA_CONTEXT_TERMINATED) return -1;
        int64_t left = deadline - now_ms();
        if (left <= 0) return 0;
        if (pa.mainloop_prepare(pulse->loop, (int)(left * 1000)) < 0) return -1;
        if (pa.mainloop_poll(pulse->loop) < 0) return -1;
        if (pa.mainloop_dispatch(pulse->loop) < 0) return -1;
    }
    pulse->news = 0;
    return 1;
}

// For restore.c (the restore database): the connection's context, and a bounded wait on one of its operations.
pa_context *announce_pulse_context(announce_pulse *pulse) { return pulse->context; }

int announce_pulse_finish(announce_pulse *pulse, pa_operation *operation, const int *done, int timeout_ms) {
    return finish(pulse, operation, done, timeout_ms);
}
