#include "cpkcs11.h"
#include <pthread.h>
#include <stdio.h>

// p11-kit's functions, found with dlsym once (see cpkcs11.h for why it is not linked).
static struct {
    void (*be_quiet)(void);
    const char *(*message)(void);
    CK_FUNCTION_LIST **(*modules_load_and_initialize)(int);
    void (*modules_finalize_and_release)(CK_FUNCTION_LIST **);
    char *(*module_get_name)(CK_FUNCTION_LIST *);
    char *(*module_get_filename)(CK_FUNCTION_LIST *);
} api;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded = -1;
static char error[512] = "p11-kit was not loaded";

static void load(void) {
    // The soname Debian's libp11-kit0 installs.
    void *library = dlopen("libp11-kit.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(error, sizeof error, "cannot load p11-kit (install Debian's libp11-kit0): %s", dlerror());
        return;
    }
#define FIND(field, symbol)                                                                  \
    if (!(*(void **)&api.field = dlsym(library, symbol))) {                                  \
        snprintf(error, sizeof error, "libp11-kit.so.0 has no %s: it is too old", symbol);   \
        return;                                                                              \
    }
    FIND(be_quiet, "p11_kit_be_quiet")
    FIND(message, "p11_kit_message")
    FIND(modules_load_and_initialize, "p11_kit_modules_load_and_initialize")
    FIND(modules_finalize_and_release, "p11_kit_modules_finalize_and_release")
    FIND(module_get_name, "p11_kit_module_get_name")
    FIND(module_get_filename, "p11_kit_module_get_filename")
#undef FIND
    loaded = 0;
}

int cp11_load(void) {
    pthread_once(&once, load);
    return loaded;
}

const char *cp11_load_error(void) { return error; }

void cp11_be_quiet(void) { api.be_quiet(); }
const char *cp11_message(void) { return api.message(); }
CK_FUNCTION_LIST **cp11_modules_load_and_initialize(int flags) { return api.modules_load_and_initialize(flags); }
void cp11_modules_finalize_and_release(CK_FUNCTION_LIST **modules) { api.modules_finalize_and_release(modules); }
char *cp11_module_get_name(CK_FUNCTION_LIST *module) { return api.module_get_name(module); }
char *cp11_module_get_filename(CK_FUNCTION_LIST *module) { return api.module_get_filename(module); }
