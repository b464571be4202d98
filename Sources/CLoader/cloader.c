#include "cloader.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static const char *open_library(announce_library *library) {
    char *problem = library->problem_text;
    size_t size = sizeof library->problem_text;
    void *handle = dlopen(library->soname, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        // "libcurl.so.4" is called libcurl.
        const char *suffix = strstr(library->soname, ".so");
        int length = suffix ? (int)(suffix - library->soname) : (int)strlen(library->soname);
        snprintf(problem, size, "%.*s is not installed (%s): install the Debian package %s", length, library->soname, dlerror(),
                 library->package);
        return problem;
    }
    for (size_t i = 0; i < library->count; i++) {
        const announce_symbol *symbol = &library->symbols[i];
        if (!(*symbol->address = dlsym(handle, symbol->name))) {
            snprintf(problem, size, "%s lacks %s", library->soname, symbol->name);
            return problem;
        }
    }
    return library->start ? library->start() : NULL;
}

const char *announce_library_load(announce_library *library) {
    pthread_mutex_lock(&library->lock);
    if (!library->tried) {
        library->problem = open_library(library);
        library->tried = 1;
    }
    const char *problem = library->problem;
    pthread_mutex_unlock(&library->lock);
    return problem;
}
