// The sound server's restore database (module-stream-restore on PulseAudio; on PipeWire,
// pipewire-pulse's ext-stream-restore over WirePlumber's restore-stream), so that a stream announce
// lowered and that ended while lowered does not leave its lowered volume there (DESIGN §3).
#include "internal.h"
#include <pulse/ext-stream-restore.h>

#include "cloader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
    pa_operation *(*get_sink_input_info)(pa_context *, uint32_t, pa_sink_input_info_cb_t, void *);
    pa_operation *(*restore_read)(pa_context *, pa_ext_stream_restore_read_cb_t, void *);
    pa_operation *(*restore_write)(pa_context *, pa_update_mode_t, const pa_ext_stream_restore_info[], unsigned, int,
                                   pa_context_success_cb_t, void *);
    const char *(*proplist_gets)(const pa_proplist *, const char *);
    pa_operation *(*get_server_info)(pa_context *, pa_server_info_cb_t, void *);
} ext;

static const announce_symbol symbols[] = {
    {"pa_context_get_sink_input_info", (void **)&ext.get_sink_input_info},
    {"pa_ext_stream_restore_read", (void **)&ext.restore_read},
    {"pa_ext_stream_restore_write", (void **)&ext.restore_write},
    {"pa_proplist_gets", (void **)&ext.proplist_gets},
    {"pa_context_get_server_info", (void **)&ext.get_server_info},
};

// announce_pulse_load opened it: this only finds the same library again.
static announce_library library = ANNOUNCE_LIBRARY("libpulse.so.0", "libpulse0", symbols, NULL);

static int ready(void) { return !announce_pulse_load() && !announce_library_load(&library); }

// The database's name for a stream: module-stream-restore keeps it in the stream's properties; elsewhere
// (pipewire-pulse) it is made as module-stream-restore makes it (pa_proplist_get_stream_group): by media
// role, else application id, else application name, else media name.
static void restore_name(const pa_proplist *properties, char *into, size_t size) {
    static const struct { const char *property, *kind; } ways[] = {
        {PA_PROP_MEDIA_ROLE, "media-role"},
        {PA_PROP_APPLICATION_ID, "application-id"},
        {PA_PROP_APPLICATION_NAME, "application-name"},
        {PA_PROP_MEDIA_NAME, "media-name"},
    };
    into[0] = 0;
    if (!properties) return;
    const char *known = ext.proplist_gets(properties, "module-stream-restore.id");
    if (known && *known) {
        snprintf(into, size, "%s", known);
        return;
    }
    for (size_t way = 0; way < sizeof ways / sizeof ways[0]; way++) {
        const char *value = ext.proplist_gets(properties, ways[way].property);
        if (value && *value) {
            snprintf(into, size, "sink-input-by-%s:%s", ways[way].kind, value);
            return;
        }
    }
}

static void fill(announce_pulse_restore_entry *entry, const char *name, const pa_channel_map *map,
                 const pa_cvolume *volume, const char *device, int muted) {
    memset(entry, 0, sizeof *entry);
    snprintf(entry->name, sizeof entry->name, "%s", name ? name : "");
    entry->channels = map->channels <= ANNOUNCE_PULSE_MAX_CHANNELS ? map->channels : 0;
    for (uint32_t channel = 0; channel < entry->channels; channel++) entry->positions[channel] = (int32_t)map->map[channel];
    entry->volume_channels = volume && volume->channels <= ANNOUNCE_PULSE_MAX_CHANNELS ? volume->channels : 0;
    for (uint32_t channel = 0; channel < entry->volume_channels; channel++) entry->volume[channel] = volume->values[channel];
    snprintf(entry->device, sizeof entry->device, "%s", device ? device : "");
    entry->muted = muted;
}

// One entry looked for in a list, a stream's or the database's, and filled in when found.
struct entry_lookup {
    /// The database entry's name (NULL for a stream's).
    const char *name;
    announce_pulse_restore_entry *entry;
    int found;
    int failed;
    int done;
};

// Whether a list callback's `info` is one to look at: not the end of the list (`eol`, negative when
// the list failed) and nothing found yet.
static int looking(struct entry_lookup *lookup, const void *info, int eol) {
    if (eol) {
        lookup->failed = eol < 0;
        lookup->done = 1;
        return 0;
    }
    return info && !lookup->found;
}

static void on_stream(pa_context *context, const pa_sink_input_info *info, int eol, void *userdata) {
    (void)context;
    struct entry_lookup *lookup = userdata;
    if (!looking(lookup, info, eol)) return;
    char name[sizeof lookup->entry->name];
    restore_name(info->proplist, name, sizeof name);
    fill(lookup->entry, name, &info->channel_map, &info->volume, NULL, info->mute);
    lookup->found = 1;
}

struct server_lookup {
    int pipewire;
    int done;
};

static void on_server(pa_context *context, const pa_server_info *info, void *userdata) {
    (void)context;
    struct server_lookup *lookup = userdata;
    lookup->pipewire = info && info->server_name && strstr(info->server_name, "PipeWire") != NULL;
    lookup->done = 1;
}

int announce_pulse_is_pipewire(announce_pulse *pulse, int timeout_ms) {
    if (!ready()) return 0;
    struct server_lookup server = {0, 0};
    if (announce_pulse_finish(pulse, ext.get_server_info(announce_pulse_context(pulse), on_server, &server), &server.done, timeout_ms) < 0)
        return -1;
    return server.pipewire;
}

static void on_entry(pa_context *context, const pa_ext_stream_restore_info *info, int eol, void *userdata) {
    (void)context;
    struct entry_lookup *lookup = userdata;
    if (!looking(lookup, info, eol) || !info->name || strcmp(info->name, lookup->name) != 0) return;
    fill(lookup->entry, info->name, &info->channel_map, &info->volume, info->device, info->mute);
    lookup->found = 1;
}

int announce_pulse_restore_entry_of(announce_pulse *pulse, uint32_t index, announce_pulse_restore_entry *stream,
                                    announce_pulse_restore_entry *saved, int *has_saved, int timeout_ms) {
    *has_saved = 0;
    if (!ready()) return 2;
    pa_context *context = announce_pulse_context(pulse);
    struct entry_lookup found = {NULL, stream, 0, 0, 0};
    if (announce_pulse_finish(pulse, ext.get_sink_input_info(context, index, on_stream, &found), &found.done, timeout_ms) < 0)
        return -1;
    // A stream that is gone gets an error reply: the end of a list without it.
    if (!found.found) return 1;
    if (!stream->name[0]) return 2;
    // pipewire-pulse reads back only the route-settings metadata (what was written through it), which
    // WirePlumber 0.4 does not keep up to date with what it restores: no saved entry there, the
    // stream's own volume is the one to put back.
    struct server_lookup server = {0, 0};
    if (announce_pulse_finish(pulse, ext.get_server_info(context, on_server, &server), &server.done, timeout_ms) < 0) return -1;
    if (server.pipewire) return 0;
    struct entry_lookup lookup = {stream->name, saved, 0, 0, 0};
    if (announce_pulse_finish(pulse, ext.restore_read(context, on_entry, &lookup), &lookup.done, timeout_ms) < 0) return -1;
    // No such extension: the server keeps no restore database (PulseAudio without module-stream-restore).
    if (lookup.failed) return 2;
    *has_saved = lookup.found;
    return 0;
}

int announce_pulse_restore_write(announce_pulse *pulse, const announce_pulse_restore_entry *entry, int timeout_ms) {
    if (!ready()) return 1;
    if (!entry->name[0] || entry->channels > PA_CHANNELS_MAX || entry->volume_channels > PA_CHANNELS_MAX) return 1;
    pa_ext_stream_restore_info info;
    memset(&info, 0, sizeof info);
    info.name = entry->name;
    info.channel_map.channels = (uint8_t)entry->channels;
    for (uint32_t channel = 0; channel < entry->channels; channel++)
        info.channel_map.map[channel] = (pa_channel_position_t)entry->positions[channel];
    info.volume.channels = (uint8_t)entry->volume_channels;
    for (uint32_t channel = 0; channel < entry->volume_channels; channel++) info.volume.values[channel] = entry->volume[channel];
    // A volume the map does not fit would be refused by the library, and by PulseAudio with a protocol
    // error that drops the connection: write no volume rather than that.
    if (info.volume.channels != info.channel_map.channels) info.volume.channels = 0;
    info.device = entry->device[0] ? entry->device : NULL;
    info.mute = entry->muted;
    struct announce_pulse_setting writing = {0, 0};
    // Replace this one entry; apply_immediately 0: streams playing now keep their volumes.
    pa_operation *operation =
        ext.restore_write(announce_pulse_context(pulse), PA_UPDATE_REPLACE, &info, 1, 0, announce_pulse_on_set, &writing);
    if (!operation) return 1;
    if (announce_pulse_finish(pulse, operation, &writing.done, timeout_ms) < 0) return -1;
    return writing.success ? 0 : 1;
}
