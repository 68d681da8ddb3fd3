#ifndef ASICFS_CFUSE_SESSION_END_H
#define ASICFS_CFUSE_SESSION_END_H

// What is left to do with a FUSE session once its loop has ended.
//
// The kernel sends RELEASE without waiting for an answer, after close() has returned, and drops
// whatever is still queued when the mount goes. So when the loop ends, a file closed a moment
// before may look still open to the file system. Two cases:
// - The kernel unmounted (the device reads ENODEV). It does that only once no file of the mount
//   is open any more: every writer had finished, whether or not its RELEASE was read.
// - Anything else (a signal stopped the loop; the mount is still there): the RELEASE and FORGET
//   requests already queued are served here, without waiting for more, so every close() that
//   returned before the stop has been seen. Other requests are left unanswered: the kernel fails
//   them when the device is closed (fuse_unmount).
//
// Returns 1 when the kernel had unmounted, 0 otherwise (after serving what was queued), or a
// negative errno. `fuse` is a `struct fuse *` whose loop has returned.
int cfuse_session_end(void *fuse);

#endif
