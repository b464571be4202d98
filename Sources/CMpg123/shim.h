#ifndef ANNOUNCE_CMPG123_SHIM_H
#define ANNOUNCE_CMPG123_SHIM_H
#include <sys/types.h>
#include <mpg123.h>

// mpg123_param is a macro over mpg123_param2 and takes a long and a double;
// these name the uses we make of it.
static inline int announce_mpg123_set_flag(mpg123_handle *h, long flag) {
    return mpg123_param(h, MPG123_ADD_FLAGS, flag, 0.0);
}
static inline int announce_mpg123_set_integer(mpg123_handle *h, enum mpg123_parms key, long value) {
    return mpg123_param(h, key, value, 0.0);
}
static inline int announce_mpg123_clear_flag(mpg123_handle *h, long flag) {
    return mpg123_param(h, MPG123_REMOVE_FLAGS, flag, 0.0);
}

#endif
