#ifndef ASICFS_LAZY_LIBRARY_H
#define ASICFS_LAZY_LIBRARY_H
#include <pthread.h>
#include <stddef.h>

// A shared library loaded on first use: dlopen once, then every symbol found with dlsym. CCurl,
// CLibXML2 and CPKCS11 use it for libraries that most runs of asicfs (a mount above all) never
// need: linked, the dynamic loader would read them, and what they bring, from disk at every start.

struct lazy_symbol {
    const char *name;   // as the library exports it
    void **slot;        // where its address goes (a function pointer, cast)
};

struct lazy_library {
    const char *soname;                   // "libcurl.so.4"
    const char *package;                  // the Debian package to name when it is missing
    const struct lazy_symbol *symbols;    // ends with { NULL, NULL }
    // Run once every symbol is found (curl_global_init, xmlInitParser); 0 or -1 with a reason
    // written to `error`. May be NULL.
    int (*start)(char *error, size_t size);
    pthread_mutex_t lock;                 // PTHREAD_MUTEX_INITIALIZER
    int tried;
    int loaded;                           // 0 once loaded and started
    char error[512];
};

// 0 once the library is loaded (the first call loads it; later calls only answer); -1 when it
// could not be, with the reason in `library->error`. Safe to call from many threads.
int lazy_library_load(struct lazy_library *library);

#endif
