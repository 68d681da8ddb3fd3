#ifndef ASICFS_CPKCS11_H
#define ASICFS_CPKCS11_H
#include <p11-kit/pkcs11.h>
#include <p11-kit/p11-kit.h>
#include <dlfcn.h>
#include <string.h>

// p11-kit is loaded the first time a PKCS#11 token is looked for (dlopen, cpkcs11.c), not when
// asicfs starts: with the libffi it brings it cost about 5 ms of every cold start, mounts
// included. The cp11_ functions below have p11-kit's signatures.

// 0 once p11-kit is loaded; -1 otherwise, with the reason in cp11_load_error(). Safe to call
// from many threads; the work is done once. The functions below may be called only after it
// returned 0.
int cp11_load(void);
const char *cp11_load_error(void);

void cp11_be_quiet(void);
const char *cp11_message(void);
CK_FUNCTION_LIST **cp11_modules_load_and_initialize(int flags);
void cp11_modules_finalize_and_release(CK_FUNCTION_LIST **modules);
char *cp11_module_get_name(CK_FUNCTION_LIST *module);
char *cp11_module_get_filename(CK_FUNCTION_LIST *module);

// dlsym gives a void *; calling it as C_GetFunctionList is a cast Swift cannot spell cleanly.
static inline CK_RV cpkcs11_get_function_list(void *symbol, CK_FUNCTION_LIST_PTR *list) {
    return ((CK_C_GetFunctionList)symbol)(list);
}

// C_Initialize arguments: the module may use the operating system's locking (threads).
static inline CK_C_INITIALIZE_ARGS cpkcs11_initialize_args(void) {
    CK_C_INITIALIZE_ARGS args;
    memset(&args, 0, sizeof args);
    args.flags = CKF_OS_LOCKING_OK;
    return args;
}
#endif
