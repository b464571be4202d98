#define _GNU_SOURCE
#include "cmosquitto.h"

#include "cloader.h"

#include <errno.h>
#include <mosquitto.h>
#include <mqtt_protocol.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct {
    int (*lib_init)(void);
    struct mosquitto *(*new_)(const char *, bool, void *);
    void (*destroy)(struct mosquitto *);
    int (*int_option)(struct mosquitto *, enum mosq_opt_t, int);
    int (*tls_set)(struct mosquitto *, const char *, const char *, const char *, const char *,
                   int (*)(char *, int, int, void *));
    int (*username_pw_set)(struct mosquitto *, const char *, const char *);
    int (*will_set)(struct mosquitto *, const char *, int, const void *, int, bool);
    int (*connect_bind_v5)(struct mosquitto *, const char *, int, int, const char *, const mosquitto_property *);
    int (*disconnect)(struct mosquitto *);
    int (*loop)(struct mosquitto *, int, int);
    int (*threaded_set)(struct mosquitto *, bool);
    int (*subscribe)(struct mosquitto *, int *, const char *, int);
    int (*publish_v5)(struct mosquitto *, int *, const char *, int, const void *, int, bool, const mosquitto_property *);
    int (*property_add_int32)(mosquitto_property **, int, uint32_t);
    void (*property_free_all)(mosquitto_property **);
    void (*connect_v5_callback_set)(struct mosquitto *, void (*)(struct mosquitto *, void *, int, int, const mosquitto_property *));
    void (*disconnect_v5_callback_set)(struct mosquitto *, void (*)(struct mosquitto *, void *, int, const mosquitto_property *));
    void (*message_v5_callback_set)(struct mosquitto *,
                                    void (*)(struct mosquitto *, void *, const struct mosquitto_message *, const mosquitto_property *));
    const mosquitto_property *(*property_read_int32)(const mosquitto_property *, int, uint32_t *, bool);
    void (*subscribe_callback_set)(struct mosquitto *, void (*)(struct mosquitto *, void *, int, int, const int *));
    void (*publish_v5_callback_set)(struct mosquitto *, void (*)(struct mosquitto *, void *, int, int, const mosquitto_property *));
    const char *(*strerror)(int);
    const char *(*reason_string)(int);
} lib;

#define SYMBOL(field, name) {name, (void **)&lib.field}
static const announce_symbol symbols[] = {
    SYMBOL(lib_init, "mosquitto_lib_init"), SYMBOL(new_, "mosquitto_new"), SYMBOL(destroy, "mosquitto_destroy"),
    SYMBOL(int_option, "mosquitto_int_option"), SYMBOL(tls_set, "mosquitto_tls_set"),
    SYMBOL(username_pw_set, "mosquitto_username_pw_set"), SYMBOL(will_set, "mosquitto_will_set"),
    SYMBOL(connect_bind_v5, "mosquitto_connect_bind_v5"), SYMBOL(disconnect, "mosquitto_disconnect"),
    SYMBOL(loop, "mosquitto_loop"), SYMBOL(threaded_set, "mosquitto_threaded_set"), SYMBOL(subscribe, "mosquitto_subscribe"),
    SYMBOL(publish_v5, "mosquitto_publish_v5"), SYMBOL(property_add_int32, "mosquitto_property_add_int32"),
    SYMBOL(property_free_all, "mosquitto_property_free_all"),
    SYMBOL(connect_v5_callback_set, "mosquitto_connect_v5_callback_set"),
    SYMBOL(disconnect_v5_callback_set, "mosquitto_disconnect_v5_callback_set"),
    SYMBOL(message_v5_callback_set, "mosquitto_message_v5_callback_set"),
    SYMBOL(property_read_int32, "mosquitto_property_read_int32"),
    SYMBOL(subscribe_callback_set, "mosquitto_subscribe_callback_set"),
    SYMBOL(publish_v5_callback_set, "mosquitto_publish_v5_callback_set"), SYMBOL(strerror, "mosquitto_strerror"),
    SYMBOL(reason_string, "mosquitto_reason_string"),
};

static const char *start(void) {
    lib.lib_init();
    return NULL;
}

// MQTT 5 needs libmosquitto 1.6 or later: an older one lacks the _v5 functions.
static announce_library library = ANNOUNCE_LIBRARY("libmosquitto.so.1", "libmosquitto1", symbols, start);

const char *announce_mqtt_load(void) { return announce_library_load(&library); }

struct announce_mqtt {
    struct mosquitto *mosq;
    announce_mqtt_callbacks callbacks;
    void *context;
    uint32_t session_expiry;
    /// The largest message payload taken; the broker is asked for packets no larger than this plus headroom.
    uint32_t max_payload;
    char *host;
    int port;
    int keepalive;
    pthread_t thread;
    bool started;
    // Guarded by `lock`; `wake` ends a wait between connection attempts.
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool stopping;
};

static void on_connect(struct mosquitto *mosq, void *object, int reason, int flags, const mosquitto_property *properties) {
    (void)mosq; (void)flags; (void)properties;
    announce_mqtt *session = object;
    session->callbacks.connected(session->context, reason);
}

static void on_disconnect(struct mosquitto *mosq, void *object, int reason, const mosquitto_property *properties) {
    (void)mosq; (void)properties;
    announce_mqtt *session = object;
    session->callbacks.disconnected(session->context, reason, reason ? lib.strerror(reason) : "disconnected");
}

static void on_message(struct mosquitto *mosq, void *object, const struct mosquitto_message *message,
                       const mosquitto_property *properties) {
    (void)mosq;
    announce_mqtt *session = object;
    // The broker was asked for no larger packet (MQTT 5 Maximum Packet Size); one that still
    // comes is not copied.
    if (message->payloadlen < 0 || (uint32_t)message->payloadlen > session->max_payload) {
        session->callbacks.oversized(session->context, message->topic, (size_t)(message->payloadlen < 0 ? 0 : message->payloadlen));
        return;
    }
    uint32_t left = 0;
    int64_t expiry = lib.property_read_int32(properties, MQTT_PROP_MESSAGE_EXPIRY_INTERVAL, &left, false) ? (int64_t)left : -1;
    session->callbacks.message(session->context, message->topic, message->payload, (size_t)message->payloadlen, message->retain,
                               expiry);
}

static void on_subscribe(struct mosquitto *mosq, void *object, int mid, int count, const int *granted) {
    (void)mosq; (void)count; (void)granted;
    announce_mqtt *session = object;
    session->callbacks.subscribed(session->context, mid);
}

static void on_publish(struct mosquitto *mosq, void *object, int mid, int reason, const mosquitto_property *properties) {
    (void)mosq; (void)properties;
    announce_mqtt *session = object;
    session->callbacks.published(session->context, mid, reason);
}

announce_mqtt *announce_mqtt_new(const char *client_id, bool clean_start, uint32_t session_expiry, uint32_t max_payload,
                                 announce_mqtt_callbacks callbacks, void *context, const char **why) {
    announce_mqtt *session = calloc(1, sizeof *session);
    if (!session) { *why = "out of memory"; return NULL; }
    session->callbacks = callbacks;
    session->context = context;
    session->session_expiry = session_expiry;
    session->max_payload = max_payload;
    session->mosq = lib.new_(client_id, clean_start, session);
    if (!session->mosq) {
        *why = "mosquitto_new failed (a client id is needed to keep a session)";
        free(session);
        return NULL;
    }
    lib.int_option(session->mosq, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5);
    lib.connect_v5_callback_set(session->mosq, on_connect);
    lib.disconnect_v5_callback_set(session->mosq, on_disconnect);
    lib.message_v5_callback_set(session->mosq, on_message);
    lib.subscribe_callback_set(session->mosq, on_subscribe);
    lib.publish_v5_callback_set(session->mosq, on_publish);
    lib.threaded_set(session->mosq, true);
    pthread_mutex_init(&session->lock, NULL);
    pthread_cond_init(&session->wake, NULL);
    return session;
}

void announce_mqtt_free(announce_mqtt *session) {
    if (!session) return;
    if (session->started) {
        pthread_mutex_lock(&session->lock);
        session->stopping = true;
        pthread_cond_signal(&session->wake);
        pthread_mutex_unlock(&session->lock);
        lib.disconnect(session->mosq);  // wakes the loop's select (libmosquitto's socket pair)
        pthread_join(session->thread, NULL);
    }
    lib.destroy(session->mosq);
    pthread_mutex_destroy(&session->lock);
    pthread_cond_destroy(&session->wake);
    free(session->host);
    free(session);
}

int announce_mqtt_tls(announce_mqtt *session, const char *ca_file, const char *cert_file, const char *key_file) {
    return lib.tls_set(session->mosq, ca_file, ca_file ? NULL : "/etc/ssl/certs", cert_file, key_file, NULL);
}

int announce_mqtt_credentials(announce_mqtt *session, const char *username, const char *password) {
    return lib.username_pw_set(session->mosq, username, password);
}

int announce_mqtt_will(announce_mqtt *session, const char *topic, const void *payload, size_t length, int qos, bool retain) {
    return lib.will_set(session->mosq, topic, (int)length, payload, qos, retain);
}

static bool is_stopping(announce_mqtt *session) {
    pthread_mutex_lock(&session->lock);
    bool stopping = session->stopping;
    pthread_mutex_unlock(&session->lock);
    return stopping;
}

/// Waits `seconds` or until announce_mqtt_free; true when stopping.
static bool rest(announce_mqtt *session, unsigned seconds) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += seconds;
    pthread_mutex_lock(&session->lock);
    while (!session->stopping && pthread_cond_timedwait(&session->wake, &session->lock, &until) == 0) {}
    bool stopping = session->stopping;
    pthread_mutex_unlock(&session->lock);
    return stopping;
}

/// Connects with the CONNECT properties every time: libmosquitto's own reconnect
/// (mosquitto_reconnect, loop_forever) would send none, and the broker would end the session
/// with the connection (a session expiry of 0).
static int connect_once(announce_mqtt *session) {
    mosquitto_property *properties = NULL;
    if (session->session_expiry > 0) {
        int code = lib.property_add_int32(&properties, MQTT_PROP_SESSION_EXPIRY_INTERVAL, session->session_expiry);
        if (code != MOSQ_ERR_SUCCESS) return code;
    }
    // The broker sends no larger packet (it drops the message for this client instead): a
    // message is never read into memory whole only to be refused. 64 KiB for topic and properties.
    uint32_t max_packet = session->max_payload > UINT32_MAX - 65536 ? UINT32_MAX : session->max_payload + 65536;
    int added = lib.property_add_int32(&properties, MQTT_PROP_MAXIMUM_PACKET_SIZE, max_packet);
    if (added != MOSQ_ERR_SUCCESS) {
        lib.property_free_all(&properties);
        return added;
    }
    int code = lib.connect_bind_v5(session->mosq, session->host, session->port, session->keepalive, NULL, properties);
    lib.property_free_all(&properties);
    return code;
}

static void *run(void *argument) {
    announce_mqtt *session = argument;
    pthread_setname_np(pthread_self(), "announce-mqtt");
    unsigned backoff = 1;
    while (!is_stopping(session)) {
        int failed = connect_once(session);
        if (failed != MOSQ_ERR_SUCCESS) {
            // libmosquitto's words for MOSQ_ERR_ERRNO are errno's, read here before anything changes it.
            const char *why = failed == MOSQ_ERR_ERRNO ? strerror(errno) : lib.strerror(failed);
            session->callbacks.disconnected(session->context, failed, why);
            if (rest(session, backoff)) break;
            backoff = backoff < 16 ? backoff * 2 : 30;
            continue;
        }
        // select() wakes for the socket, for a packet another thread queued (the socket pair
        // threaded mode uses), and at half the keepalive to send a PINGREQ. Stopping is checked at
        // every turn: announce_mqtt_free's DISCONNECT finds no connection while one is being made,
        // so once connected the loop says goodbye itself, then flushes what was queued (2 s at most).
        bool goodbye = false;
        int flushes = 0;
        while (true) {
            if (is_stopping(session)) {
                if (!goodbye) { lib.disconnect(session->mosq); goodbye = true; }
                else if (++flushes > 20) break;
            }
            if (lib.loop(session->mosq, goodbye ? 100 : session->keepalive * 500, 1) != MOSQ_ERR_SUCCESS) break;
            backoff = 1;
        }
        if (is_stopping(session)) break;
        if (rest(session, backoff)) break;
        backoff = backoff < 16 ? backoff * 2 : 30;
    }
    return NULL;
}

int announce_mqtt_start(announce_mqtt *session, const char *host, int port, int keepalive) {
    session->host = strdup(host);
    session->port = port;
    session->keepalive = keepalive;
    if (!session->host) return MOSQ_ERR_NOMEM;
    if (pthread_create(&session->thread, NULL, run, session) != 0) return MOSQ_ERR_ERRNO;
    session->started = true;
    return MOSQ_ERR_SUCCESS;
}

int announce_mqtt_subscribe(announce_mqtt *session, const char *pattern, int qos, int *mid) {
    return lib.subscribe(session->mosq, mid, pattern, qos);
}

int announce_mqtt_publish(announce_mqtt *session, const char *topic, const void *payload, size_t length, int qos,
                          bool retain, uint32_t expiry, int *mid) {
    mosquitto_property *properties = NULL;
    if (expiry > 0) {
        int code = lib.property_add_int32(&properties, MQTT_PROP_MESSAGE_EXPIRY_INTERVAL, expiry);
        if (code != MOSQ_ERR_SUCCESS) return code;
    }
    int code = lib.publish_v5(session->mosq, mid, topic, (int)length, payload, qos, retain, properties);
    lib.property_free_all(&properties);
    return code;
}

const char *announce_mqtt_error(int code) { return lib.strerror ? lib.strerror(code) : "libmosquitto is not loaded"; }
const char *announce_mqtt_reason(int reason) { return lib.reason_string ? lib.reason_string(reason) : "libmosquitto is not loaded"; }
