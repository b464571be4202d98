#ifndef ANNOUNCE_CLOADER_H
#define ANNOUNCE_CLOADER_H
#include <pthread.h>
#include <stddef.h>

// The one loader of every library announce opens on first use (dlopen) instead of linking:
// libcurl, libpulse, libebur128, libsystemd (sd-bus) and libmosquitto. Each wrapper keeps a table
// of the functions it calls and where their addresses go, and asks for its library through it.

/// One function to find: its name, and where its address goes.
typedef struct {
    const char *name;
    void **address;
} announce_symbol;

/// A library to open once, on first use; declare it with ANNOUNCE_LIBRARY.
typedef struct {
    const char *soname;
    /// The Debian package that installs it, for the message when it is missing.
    const char *package;
    const announce_symbol *symbols;
    size_t count;
    /// Run once every symbol is found (NULL: nothing to run); what it returns, when not NULL, is the problem.
    const char *(*start)(void);
    // The first load's answer, kept for every later one.
    pthread_mutex_t lock;
    int tried;
    const char *problem;
    char problem_text[512];
} announce_library;

/// `symbols` is the array itself (its size gives the count); `start` may be NULL.
#define ANNOUNCE_LIBRARY(soname, package, symbols, start)                                                               \
    {soname, package, symbols, sizeof symbols / sizeof *symbols, start, PTHREAD_MUTEX_INITIALIZER, 0, NULL, {0}}

/// Opens `library` (RTLD_NOW | RTLD_LOCAL) and finds each of its symbols, the first time it is
/// called; later calls give the first one's answer. NULL when all were found (and `start` had no
/// problem); else why not: "libX is not installed (dlerror): install the Debian package PACKAGE",
/// or "SONAME lacks NAME".
const char *announce_library_load(announce_library *library);

#endif
