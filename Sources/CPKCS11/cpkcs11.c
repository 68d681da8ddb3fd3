#include "cpkcs11.h"
#include "lazy_library.h"

// p11-kit's functions, found with dlsym once (see cpkcs11.h for why it is not linked).
static struct {
    void (*be_quiet)(void);
    const char *(*message)(void);
    CK_FUNCTION_LIST **(*modules_load_and_initialize)(int);
    void (*modules_finalize_and_release)(CK_FUNCTION_LIST **);
    char *(*module_get_name)(CK_FUNCTION_LIST *);
    char *(*module_get_filename)(CK_FUNCTION_LIST *);
} api;

static const struct lazy_symbol symbols[] = {
    { "p11_kit_be_quiet", (void **)&api.be_quiet },
    { "p11_kit_message", (void **)&api.message },
    { "p11_kit_modules_load_and_initialize", (void **)&api.modules_load_and_initialize },
    { "p11_kit_modules_finalize_and_release", (void **)&api.modules_finalize_and_release },
    { "p11_kit_module_get_name", (void **)&api.module_get_name },
    { "p11_kit_module_get_filename", (void **)&api.module_get_filename },
    { NULL, NULL },
};

// The soname Debian's libp11-kit0 installs.
static struct lazy_library library = {
    .soname = "libp11-kit.so.0", .package = "libp11-kit0", .symbols = symbols,
    .lock = PTHREAD_MUTEX_INITIALIZER, .loaded = -1,
};

int cp11_load(void) { return lazy_library_load(&library); }

const char *cp11_load_error(void) { return library.error; }

void cp11_be_quiet(void) { api.be_quiet(); }
const char *cp11_message(void) { return api.message(); }
CK_FUNCTION_LIST **cp11_modules_load_and_initialize(int flags) { return api.modules_load_and_initialize(flags); }
void cp11_modules_finalize_and_release(CK_FUNCTION_LIST **modules) { api.modules_finalize_and_release(modules); }
char *cp11_module_get_name(CK_FUNCTION_LIST *module) { return api.module_get_name(module); }
char *cp11_module_get_filename(CK_FUNCTION_LIST *module) { return api.module_get_filename(module); }
