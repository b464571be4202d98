#ifndef ANNOUNCE_CMOSQUITTO_H
#define ANNOUNCE_CMOSQUITTO_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// libmosquitto (MQTT, for zones: docs/ZONES.md), loaded on first use (dlopen) rather than linked:
// only a daemon with `[mqtt]` configured and `play --zone`/`--host`/`announce hosts` use it, so
// nothing else pays for its libraries (libssl, libcrypto, libcjson) at start.
//
// One opaque session per connection, always MQTT v5. libmosquitto runs its network loop on a
// thread of its own (announce_mqtt_start); the callbacks below run on that thread. Publishing and
// subscribing only queue packets and wake that thread: they never wait on the network.

typedef struct announce_mqtt announce_mqtt;

typedef struct {
    /// Called with the CONNACK's reason code (0: accepted).
    void (*connected)(void *context, int reason);
    /// The connection ended, or an attempt to connect failed; `reason` 0: asked for
    /// (announce_mqtt_free), else lost, with `why` in words.
    void (*disconnected)(void *context, int reason, const char *why);
    /// A message on a subscribed topic. The pointers are valid only during the call. `expiry`:
    /// the seconds left of its MQTT 5 message expiry as the broker forwards it, or -1 for none.
    void (*message)(void *context, const char *topic, const void *payload, size_t length, bool retained, int64_t expiry);
    /// A message larger than the session's `max_payload` (the broker should have dropped it): not copied.
    void (*oversized)(void *context, const char *topic, size_t length);
    /// The broker acknowledged the subscription with this message id.
    void (*subscribed)(void *context, int mid);
    /// The broker acknowledged the publication (QoS 1) with this message id; reason 0: accepted.
    void (*published)(void *context, int mid, int reason);
} announce_mqtt_callbacks;

/// Loads libmosquitto and runs mosquitto_lib_init once; NULL when that worked, else why not.
const char *announce_mqtt_load(void);

/// A session for `client_id`; `clean_start` false with a `session_expiry` (seconds) asks the
/// broker to keep the subscriptions and the QoS 1 messages queued for it while it is away. The
/// broker is asked (MQTT 5 Maximum Packet Size) for no message over `max_payload` bytes (plus
/// 64 KiB for topic and properties). NULL on failure (`problem` says why).
announce_mqtt *announce_mqtt_new(const char *client_id, bool clean_start, uint32_t session_expiry, uint32_t max_payload,
                                 announce_mqtt_callbacks callbacks, void *context, const char **problem);
/// Stops the loop (after a clean DISCONNECT when connected) and frees the session.
void announce_mqtt_free(announce_mqtt *session);

/// TLS with the CA file (NULL: the system's CAs), and a client certificate and key (both or neither).
int announce_mqtt_tls(announce_mqtt *session, const char *ca_file, const char *cert_file, const char *key_file);
int announce_mqtt_credentials(announce_mqtt *session, const char *username, const char *password);
/// The last will, published by the broker when the connection is lost without a DISCONNECT.
int announce_mqtt_will(announce_mqtt *session, const char *topic, const void *payload, size_t length, int qos, bool retain);
/// Connects on a thread of its own (`announce-mqtt`, which runs the network loop and the
/// callbacks) and reconnects after a loss (1 s, doubling to 30 s) until freed.
int announce_mqtt_start(announce_mqtt *session, const char *host, int port, int keepalive);

/// Queues a subscription; `mid` receives its message id.
int announce_mqtt_subscribe(announce_mqtt *session, const char *pattern, int qos, int *mid);
/// Queues a publication; `expiry` seconds (0: none) becomes MQTT 5's message expiry interval.
int announce_mqtt_publish(announce_mqtt *session, const char *topic, const void *payload, size_t length, int qos,
                          bool retain, uint32_t expiry, int *mid);

/// libmosquitto's words for an error code (MOSQ_ERR_*), and for a CONNACK reason.
const char *announce_mqtt_error(int code);
const char *announce_mqtt_reason(int reason);
#endif
