#ifndef ASICFS_CFUSE_READER_H
#define ASICFS_CFUSE_READER_H

// One reader of /dev/fuse at a time, which polls briefly before it sleeps.
//
// libfuse's worker threads all sleep in read() on /dev/fuse, so every request the kernel
// queues wakes one of them, usually on another CPU; on a virtual machine waking a sleeping
// CPU costs tens of microseconds each way, most of a small request's round trip. Here only
// the thread that holds the reader role reads: it keeps the role while it serves the request
// it read (no other thread is woken), then polls the device for up to `spin_ns` before it
// sleeps in read(), so a program that sends request after request (cp, ls, stat) finds it
// awake. The other workers sleep on a condition until the role is free.
//
// A request that may wait (for the container check, a signing, a validation) gives the role
// up first with cfuse_reader_yield(): another worker then reads the requests that come
// meanwhile, FUSE_INTERRUPT among them.

// Installs the reader on the session of `fuse` (a `struct fuse *`) after fuse_mount: 0 or a
// negative errno.
int cfuse_reader_install(void *fuse, long spin_ns);

// Gives up the reader role if the calling thread holds it (a no-op on any other thread).
void cfuse_reader_yield(void);

#endif
