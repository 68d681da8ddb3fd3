#ifndef ASICFS_CLINUX_SHIM_H
#define ASICFS_CLINUX_SHIM_H
#include <sys/types.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/fs.h>
#include <sys/xattr.h>
#include <fcntl.h>
#include <linux/openat2.h>

// copy_file_range(2) is declared only under _GNU_SOURCE, which Swift's Glibc module does not set.
static inline ssize_t clinux_copy_file_range(int fd_in, off_t *off_in, int fd_out, off_t *off_out, size_t len) {
    return syscall(SYS_copy_file_range, fd_in, off_in, fd_out, off_out, len, 0u);
}
// Reflink: share the source's blocks (btrfs, XFS); fails with EOPNOTSUPP/EXDEV elsewhere.
static inline int clinux_ficlone(int dest_fd, int src_fd) { return ioctl(dest_fd, FICLONE, src_fd); }
// O_PATH is defined only under _GNU_SOURCE (as __O_PATH always).
static inline int clinux_o_path(void) { return __O_PATH; }
// O_DIRECT is defined only under _GNU_SOURCE (as __O_DIRECT always).
static inline int clinux_o_direct(void) { return __O_DIRECT; }
// renameat2(2) with RENAME_NOREPLACE/RENAME_EXCHANGE (browse mode passes rename flags through).
static inline int clinux_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags) {
    return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, flags);
}
// pidfd_open(2): a descriptor that polls readable when the process exits (glibc 2.36 has no wrapper).
static inline int clinux_pidfd_open(pid_t pid) { return (int)syscall(SYS_pidfd_open, pid, 0u); }
// openat2(2) that follows no symbolic link anywhere in `path` (a link fails it with ELOOP) and
// reaches nothing outside `dirfd` (browse mode's pass-through resolves every path this way).
static inline int clinux_open_beneath(int dirfd, const char *path, int flags) {
    struct open_how how = { .flags = (unsigned long long)flags, .mode = 0,
                            .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH };
    return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof how);
}
// The calling THREAD's filesystem ids and supplementary groups. Raw system calls on purpose:
// glibc's setgroups() changes every thread of the process (its setxid broadcast), and the
// pass-through takes one request's caller's rights on one worker thread only.
// setfsuid/setfsgid answer the previous id; (uid_t)-1 changes nothing and reads it back.
static inline unsigned int clinux_setfsuid(uid_t uid) { return (unsigned int)syscall(SYS_setfsuid, uid); }
static inline unsigned int clinux_setfsgid(gid_t gid) { return (unsigned int)syscall(SYS_setfsgid, gid); }
static inline int clinux_setgroups_thread(size_t count, const gid_t *groups) {
    return (int)syscall(SYS_setgroups, count, groups);
}
#endif
