#ifndef ASICFS_CFUSE3_SHIM_H
#define ASICFS_CFUSE3_SHIM_H
#define FUSE_USE_VERSION 31
#include <fuse.h>
#include <fuse_lowlevel.h>
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>

// fuse_loop_mt is a function-like macro in the FUSE 3.1 API.
// UTIME_NOW/UTIME_OMIT are macros over shifted constants that Swift does not import.
static inline long cfuse_utime_now(void) { return UTIME_NOW; }
static inline long cfuse_utime_omit(void) { return UTIME_OMIT; }
static inline int cfuse_loop_mt(struct fuse *f, int clone_fd) { return fuse_loop_mt(f, clone_fd); }
// Whether the session is stopping (a blocked read of status/wait gives up then).
static inline int cfuse_session_exited(struct fuse *f) { return fuse_session_exited(fuse_get_session(f)); }
// libfuse's own messages ("fuse: unknown option(s)") silenced while asicfs asks it which
// options it takes and says so itself; 0 restores libfuse's default logger.
static void cfuse_discard_log(enum fuse_log_level level, const char *format, va_list arguments) {
    (void)level; (void)format; (void)arguments;
}
static inline void cfuse_quiet_log(int quiet) { fuse_set_log_func(quiet ? cfuse_discard_log : NULL); }
#endif
