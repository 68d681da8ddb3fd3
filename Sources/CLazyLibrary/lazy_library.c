#include "lazy_library.h"
#include <dlfcn.h>
#include <stdio.h>

static int open_and_find(struct lazy_library *library) {
    void *handle = dlopen(library->soname, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        snprintf(library->error, sizeof library->error, "cannot load %s (install Debian's %s): %s",
                 library->soname, library->package, dlerror());
        return -1;
    }
    for (const struct lazy_symbol *symbol = library->symbols; symbol->name; symbol++) {
        if (!(*symbol->slot = dlsym(handle, symbol->name))) {
            snprintf(library->error, sizeof library->error, "%s has no %s: it is too old", library->soname, symbol->name);
            return -1;
        }
    }
    return library->start ? library->start(library->error, sizeof library->error) : 0;
}

int lazy_library_load(struct lazy_library *library) {
    pthread_mutex_lock(&library->lock);
    if (!library->tried) {
        library->tried = 1;
        library->loaded = open_and_find(library);
    }
    int loaded = library->loaded;
    pthread_mutex_unlock(&library->lock);
    return loaded;
}
