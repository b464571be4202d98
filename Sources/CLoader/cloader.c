#include "cloader.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

const char *announce_library_open(const char *soname, const char *package, const announce_symbol *symbols, size_t count,
                                  char *problem, size_t size) {
    void *library = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        // "libcurl.so.4" is called libcurl.
        const char *suffix = strstr(soname, ".so");
        int length = suffix ? (int)(suffix - soname) : (int)strlen(soname);
        snprintf(problem, size, "%.*s is not installed (%s): install the Debian package %s", length, soname, dlerror(), package);
        return problem;
    }
    for (size_t i = 0; i < count; i++) {
        if (!(*symbols[i].address = dlsym(library, symbols[i].name))) {
            snprintf(problem, size, "%s lacks %s", soname, symbols[i].name);
            return problem;
        }
    }
    return NULL;
}
