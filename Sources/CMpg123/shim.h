#ifndef ANNOUNCE_CMPG123_SHIM_H
#define ANNOUNCE_CMPG123_SHIM_H
#include <sys/types.h>
#include <mpg123.h>

// mpg123_param takes a long and a double; these name the two uses we make
// of it so the Swift side never passes C enums through untyped longs.
static inline int announce_mpg123_set_flag(mpg123_handle *h, long flag) {
    return mpg123_param(h, MPG123_ADD_FLAGS, flag, 0.0);
}
static inline int announce_mpg123_clear_flag(mpg123_handle *h, long flag) {
    return mpg123_param(h, MPG123_REMOVE_FLAGS, flag, 0.0);
}

#endif
