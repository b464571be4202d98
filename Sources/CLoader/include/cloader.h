#ifndef ANNOUNCE_CLOADER_H
#define ANNOUNCE_CLOADER_H
#include <stddef.h>

// The one loader of every library announce opens on first use (dlopen) instead of linking:
// libcurl, libpulse, libsystemd (sd-bus) and libmosquitto. Each wrapper keeps a table of the
// functions it calls and where their addresses go, and calls this once (pthread_once).

/// One function to find: its name, and where its address goes.
typedef struct {
    const char *name;
    void **address;
} announce_symbol;

/// Opens `soname` (RTLD_NOW | RTLD_LOCAL) and finds each of the `count` `symbols`. NULL when
/// all were found; else why not, written into `problem` (`size` bytes): "libX is not installed
/// (dlerror): install the Debian package PACKAGE", or "SONAME lacks NAME".
const char *announce_library_open(const char *soname, const char *package, const announce_symbol *symbols, size_t count,
                                  char *problem, size_t size);

#endif
