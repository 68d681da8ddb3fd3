#ifndef ASICFS_CPKCS11_SHIM_H
#define ASICFS_CPKCS11_SHIM_H
#include <p11-kit/pkcs11.h>
#include <p11-kit/p11-kit.h>
#include <dlfcn.h>
#include <string.h>

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
