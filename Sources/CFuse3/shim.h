#ifndef ASICFS_CFUSE3_SHIM_H
#define ASICFS_CFUSE3_SHIM_H
#define FUSE_USE_VERSION 31
#include <fuse.h>
#include <sys/stat.h>
#include <errno.h>

// fuse_loop_mt is a function-like macro in the FUSE 3.1 API.
static inline int cfuse_loop_mt(struct fuse *f, int clone_fd) { return fuse_loop_mt(f, clone_fd); }
#endif
