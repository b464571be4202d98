#ifndef ANNOUNCE_CSDBUS_H
#define ANNOUNCE_CSDBUS_H

#include <stddef.h>
#include <stdint.h>

// sd-bus (libsystemd) as announce uses it: opaque handles and functions without varargs or
// macros, which Swift cannot call. libsystemd is loaded on first use (dlopen), so a client
// that never touches the bus does not pay its link cost; only this file needs its headers.
typedef struct sd_bus sd_bus;
typedef struct sd_bus_message sd_bus_message;
/// sd_bus_message_handler_t, its error (unused here) left untyped.
typedef int (*announce_bus_handler)(sd_bus_message *message, void *userdata, void *error);

/// NULL when libsystemd.so.0 is loaded, else why not.
const char *announce_bus_load(void);

/// Every int below is >= 0 on success, else -errno.
int announce_bus_open(const char *address, sd_bus **bus);
void announce_bus_close(sd_bus *bus);
int announce_bus_fd(sd_bus *bus);
int announce_bus_events(sd_bus *bus);
/// The absolute CLOCK_MONOTONIC time (µs) by which process must run; UINT64_MAX: none.
int announce_bus_timeout(sd_bus *bus, uint64_t *usec);
/// > 0: more may be ready at once; 0: wait for the descriptor.
int announce_bus_process(sd_bus *bus);
int announce_bus_request_name(sd_bus *bus, const char *name);
int announce_bus_add_object(sd_bus *bus, const char *path, announce_bus_handler handler, void *userdata);
int announce_bus_add_match(sd_bus *bus, const char *match, announce_bus_handler handler, void *userdata);

int announce_bus_new_call(sd_bus *bus, const char *destination, const char *path, const char *interface,
                          const char *member, sd_bus_message **message);
int announce_bus_new_signal(sd_bus *bus, const char *path, const char *interface, const char *member,
                            sd_bus_message **message);
int announce_bus_new_return(sd_bus_message *call, sd_bus_message **message);
int announce_bus_reply_error(sd_bus_message *call, const char *name, const char *text);
/// `reply` is set on success; on failure `problem` gets the D-Bus error's text.
int announce_bus_call(sd_bus *bus, sd_bus_message *message, uint64_t usec, sd_bus_message **reply,
                      char *problem, size_t problem_size);
int announce_bus_send(sd_bus *bus, sd_bus_message *message);
void announce_bus_unref(sd_bus_message *message);

const char *announce_bus_member(sd_bus_message *message);
const char *announce_bus_interface(sd_bus_message *message);
const char *announce_bus_sender(sd_bus_message *message);
int announce_bus_is_method_call(sd_bus_message *message);

int announce_bus_append_text(sd_bus_message *message, char type, const char *value);
int announce_bus_append_bool(sd_bus_message *message, int value);
int announce_bus_append_int64(sd_bus_message *message, int64_t value);
int announce_bus_append_double(sd_bus_message *message, double value);
int announce_bus_open_container(sd_bus_message *message, char type, const char *contents);
int announce_bus_close_container(sd_bus_message *message);

/// 0 at the end of the current container; else the next value's type and, for a container, its contents.
int announce_bus_peek(sd_bus_message *message, char *type, const char **contents);
int announce_bus_read_text(sd_bus_message *message, char type, const char **value);
int announce_bus_read_bool(sd_bus_message *message, int *value);
int announce_bus_read_int64(sd_bus_message *message, int64_t *value);
int announce_bus_read_double(sd_bus_message *message, double *value);
int announce_bus_enter(sd_bus_message *message, char type, const char *contents);
int announce_bus_exit(sd_bus_message *message);
int announce_bus_skip(sd_bus_message *message, const char *types);

#endif
