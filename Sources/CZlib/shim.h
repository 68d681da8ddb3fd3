#ifndef ASICFS_CZLIB_SHIM_H
#define ASICFS_CZLIB_SHIM_H
#include <zlib.h>

// inflateInit2/deflateInit2 are macros (they pass ZLIB_VERSION and sizeof(z_stream)).
static inline int czlib_inflate_init_raw(z_streamp s) {
    return inflateInit2(s, -MAX_WBITS);
}
static inline int czlib_deflate_init_raw(z_streamp s, int level) {
    return deflateInit2(s, level, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
}
#endif
