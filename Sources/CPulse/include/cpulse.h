#ifndef ANNOUNCE_CPULSE_H
#define ANNOUNCE_CPULSE_H
#include <stddef.h>
#include <stdint.h>

// libpulse for lowering other applications' streams (DESIGN §3, duckOthers), loaded on first use
// (dlopen) rather than linked: only the daemon needs it, and linked, libpulse and the 18 libraries it
// pulls in (dbus, systemd, sndfile, xcb...) cost every `announce` start ~2.8 ms of dynamic linking
// (`announce --version`, debug build: 13.3 ms with libpulse preloaded against 10.5 ms).
//
// Synchronous calls over a plain pa_mainloop run by the calling thread, each bounded by a timeout,
// so one thread (the daemon's duck thread) owns a connection. Works with PulseAudio and
// pipewire-pulse alike. The server is the one the process environment names (PULSE_SERVER,
// XDG_RUNTIME_DIR, PULSE_CLIENTCONFIG...) when `announce_pulse_connect` runs.

enum { ANNOUNCE_PULSE_MAX_CHANNELS = 32 };

typedef struct announce_pulse announce_pulse;

/// One playback stream (a sink input) as the server reports it.
typedef struct {
    uint32_t index;
    uint32_t channels;
    uint32_t volume[ANNOUNCE_PULSE_MAX_CHANNELS];
    /// 0 when the stream has no settable volume (a passthrough stream).
    int has_volume;
    /// application.process.id, or -1 when the stream names none.
    int64_t process_id;
    char role[64];
    char application[128];
    /// 1 when the stream is corked (paused by its application): it makes no sound.
    int corked;
} announce_pulse_stream;

/// Loads libpulse once; NULL when that worked, else why not.
const char *announce_pulse_load(void);

/// Connects to the server the environment names, within `timeout_ms`; NULL with `error` filled otherwise.
announce_pulse *announce_pulse_connect(int timeout_ms, char *error, size_t error_size);
void announce_pulse_disconnect(announce_pulse *pulse);

/// Fills up to `capacity` streams; their count, or -1 when the connection failed or timed out.
int announce_pulse_list_streams(announce_pulse *pulse, announce_pulse_stream *streams, int capacity, int timeout_ms);

/// Sets stream `index`'s per-channel volume: 0 when the server accepted it, 1 when it refused
/// (the stream is gone), -1 when the connection failed or timed out.
int announce_pulse_set_volume(announce_pulse *pulse, uint32_t index, uint32_t channels, const uint32_t *volume,
                              int timeout_ms);

// Watching for calls and other audio (DESIGN §3, Interruptions from other applications): the
// server tells of sink inputs that appear, change (a cork) or go.

/// Subscribes to sink-input news: 0, or -1 when the connection failed or timed out.
int announce_pulse_subscribe_streams(announce_pulse *pulse, int timeout_ms);

/// Waits up to `timeout_ms` for sink-input news: 1 when some came (then list the streams), 0
/// when none did, -1 when the connection failed.
int announce_pulse_wait_for_news(announce_pulse *pulse, int timeout_ms);

/// An entry of the server's restore database, as ext-stream-restore reads and writes it: what the next
/// stream of the same name (`sink-input-by-application-name:NAME`, by media role, ...) starts with.
typedef struct {
    char name[512];
    uint32_t channels;
    /// pa_channel_position_t values.
    int32_t positions[ANNOUNCE_PULSE_MAX_CHANNELS];
    /// 0: no volume kept.
    uint32_t volume_channels;
    uint32_t volume[ANNOUNCE_PULSE_MAX_CHANNELS];
    /// "": none kept.
    char device[256];
    int muted;
} announce_pulse_restore_entry;

/// Stream `index` as the restore database names it (`stream`: its name, channel map, volume, mute), and the
/// database's entry of that name (`saved`, when *has_saved). 0, 1 when the stream is gone, 2 when the server
/// keeps no restore database or the stream has no name in it, -1 when the connection failed or timed out.
int announce_pulse_restore_entry_of(announce_pulse *pulse, uint32_t index, announce_pulse_restore_entry *stream,
                                    announce_pulse_restore_entry *saved, int *has_saved, int timeout_ms);

/// 1 when the server is PipeWire (pipewire-pulse), 0 when not, -1 when the connection failed or timed out.
int announce_pulse_is_pipewire(announce_pulse *pulse, int timeout_ms);

/// Replaces the database's entry of `entry->name` (streams playing keep their volumes): 0 when the server
/// accepted it, 1 when it refused, -1 when the connection failed or timed out.
int announce_pulse_restore_write(announce_pulse *pulse, const announce_pulse_restore_entry *entry, int timeout_ms);
#endif
