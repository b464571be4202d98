#include "csdbus.h"

#include "cloader.h"

#include <errno.h>
#include <stdio.h>
#include <systemd/sd-bus.h>

// Each function this file calls, looked up once: typeof keeps the header's signatures.
#define FUNCTIONS(F) \
    F(sd_bus_new) F(sd_bus_set_address) F(sd_bus_set_bus_client) F(sd_bus_start) F(sd_bus_flush_close_unref) \
    F(sd_bus_get_fd) F(sd_bus_get_events) F(sd_bus_get_timeout) F(sd_bus_process) F(sd_bus_request_name) \
    F(sd_bus_add_object) F(sd_bus_add_match) F(sd_bus_message_new_method_call) F(sd_bus_message_new_signal) \
    F(sd_bus_message_new_method_return) F(sd_bus_reply_method_error) F(sd_bus_call) F(sd_bus_send) \
    F(sd_bus_message_unref) F(sd_bus_error_free) F(sd_bus_message_get_member) F(sd_bus_message_get_interface) \
    F(sd_bus_message_get_sender) F(sd_bus_message_get_type) F(sd_bus_message_append_basic) \
    F(sd_bus_message_open_container) F(sd_bus_message_close_container) F(sd_bus_message_peek_type) \
    F(sd_bus_message_read_basic) F(sd_bus_message_enter_container) F(sd_bus_message_exit_container) \
    F(sd_bus_message_skip)

#define DECLARE(name) static typeof(name) *p_##name;
FUNCTIONS(DECLARE)

#define SYMBOL(name) {#name, (void **)&p_##name},
static const announce_symbol symbols[] = {FUNCTIONS(SYMBOL)};

static announce_library library = ANNOUNCE_LIBRARY("libsystemd.so.0", "libsystemd0", symbols, NULL);

const char *announce_bus_load(void) { return announce_library_load(&library); }

int announce_bus_open(const char *address, sd_bus **bus) {
    sd_bus *made = NULL;
    int r = p_sd_bus_new(&made);
    if (r < 0) return r;
    if ((r = p_sd_bus_set_address(made, address)) < 0 || (r = p_sd_bus_set_bus_client(made, 1)) < 0
        || (r = p_sd_bus_start(made)) < 0) {
        p_sd_bus_flush_close_unref(made);
        return r;
    }
    *bus = made;
    return 0;
}

void announce_bus_close(sd_bus *bus) { p_sd_bus_flush_close_unref(bus); }
int announce_bus_fd(sd_bus *bus) { return p_sd_bus_get_fd(bus); }
int announce_bus_events(sd_bus *bus) { return p_sd_bus_get_events(bus); }
int announce_bus_timeout(sd_bus *bus, uint64_t *usec) { return p_sd_bus_get_timeout(bus, usec); }
int announce_bus_process(sd_bus *bus) { return p_sd_bus_process(bus, NULL); }
int announce_bus_request_name(sd_bus *bus, const char *name) { return p_sd_bus_request_name(bus, name, 0); }

// Slots left floating: they live as long as the bus.
int announce_bus_add_object(sd_bus *bus, const char *path, announce_bus_handler handler, void *userdata) {
    return p_sd_bus_add_object(bus, NULL, path, (sd_bus_message_handler_t)handler, userdata);
}
int announce_bus_add_match(sd_bus *bus, const char *match, announce_bus_handler handler, void *userdata) {
    return p_sd_bus_add_match(bus, NULL, match, (sd_bus_message_handler_t)handler, userdata);
}

int announce_bus_new_call(sd_bus *bus, const char *destination, const char *path, const char *interface,
                          const char *member, sd_bus_message **message) {
    return p_sd_bus_message_new_method_call(bus, message, destination, path, interface, member);
}
int announce_bus_new_signal(sd_bus *bus, const char *path, const char *interface, const char *member,
                            sd_bus_message **message) {
    return p_sd_bus_message_new_signal(bus, message, path, interface, member);
}
int announce_bus_new_return(sd_bus_message *call, sd_bus_message **message) {
    return p_sd_bus_message_new_method_return(call, message);
}
int announce_bus_reply_error(sd_bus_message *call, const char *name, const char *text) {
    sd_bus_error error = SD_BUS_ERROR_MAKE_CONST(name, text);
    return p_sd_bus_reply_method_error(call, &error);
}

int announce_bus_call(sd_bus *bus, sd_bus_message *message, uint64_t usec, sd_bus_message **reply,
                      char *problem_out, size_t problem_size) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    int r = p_sd_bus_call(bus, message, usec, &error, reply);
    if (r < 0 && problem_size > 0) {
        snprintf(problem_out, problem_size, "%s", error.message ? error.message : (error.name ? error.name : "failed"));
    }
    p_sd_bus_error_free(&error);
    return r;
}
int announce_bus_send(sd_bus *bus, sd_bus_message *message) { return p_sd_bus_send(bus, message, NULL); }
void announce_bus_unref(sd_bus_message *message) { p_sd_bus_message_unref(message); }

const char *announce_bus_member(sd_bus_message *message) { return p_sd_bus_message_get_member(message); }
const char *announce_bus_interface(sd_bus_message *message) { return p_sd_bus_message_get_interface(message); }
const char *announce_bus_sender(sd_bus_message *message) { return p_sd_bus_message_get_sender(message); }
int announce_bus_is_method_call(sd_bus_message *message) {
    uint8_t type = 0;
    return p_sd_bus_message_get_type(message, &type) >= 0 && type == SD_BUS_MESSAGE_METHOD_CALL;
}

int announce_bus_append_text(sd_bus_message *message, char type, const char *value) {
    return p_sd_bus_message_append_basic(message, type, value);
}
int announce_bus_append_bool(sd_bus_message *message, int value) {
    return p_sd_bus_message_append_basic(message, 'b', &value);
}
int announce_bus_append_int64(sd_bus_message *message, int64_t value) {
    return p_sd_bus_message_append_basic(message, 'x', &value);
}
int announce_bus_append_double(sd_bus_message *message, double value) {
    return p_sd_bus_message_append_basic(message, 'd', &value);
}
int announce_bus_open_container(sd_bus_message *message, char type, const char *contents) {
    return p_sd_bus_message_open_container(message, type, contents);
}
int announce_bus_close_container(sd_bus_message *message) { return p_sd_bus_message_close_container(message); }

int announce_bus_peek(sd_bus_message *message, char *type, const char **contents) {
    return p_sd_bus_message_peek_type(message, type, contents);
}
int announce_bus_read_text(sd_bus_message *message, char type, const char **value) {
    return p_sd_bus_message_read_basic(message, type, value);
}
int announce_bus_read_bool(sd_bus_message *message, int *value) { return p_sd_bus_message_read_basic(message, 'b', value); }
int announce_bus_read_int64(sd_bus_message *message, int64_t *value) { return p_sd_bus_message_read_basic(message, 'x', value); }
int announce_bus_read_double(sd_bus_message *message, double *value) { return p_sd_bus_message_read_basic(message, 'd', value); }
int announce_bus_enter(sd_bus_message *message, char type, const char *contents) {
    return p_sd_bus_message_enter_container(message, type, contents);
}
int announce_bus_exit(sd_bus_message *message) { return p_sd_bus_message_exit_container(message); }
int announce_bus_skip(sd_bus_message *message, const char *types) { return p_sd_bus_message_skip(message, types); }
