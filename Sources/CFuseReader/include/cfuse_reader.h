#ifndef ASICFS_CFUSE_READER_H
#define ASICFS_CFUSE_READER_H

// One reader of /dev/fuse at a time, which polls briefly before it sleeps.
//
// libfuse's worker threads all sleep in read() on /dev/fuse, so every request the kernel
// queues wakes one of them, usually on another CPU; on a virtual machine waking a sleeping
// CPU costs tens of microseconds each way, most of a small request's round trip. Here only
// the thread that holds the reader role reads: it keeps the role while it serves the request
// it read (no other thread is woken), then polls the device for up to `spin_ns` before it
// sleeps in poll(), so a program that sends request after request (cp, ls, stat) finds it
// awake. The other workers sleep on a condition until the role is free.
//
// A request that may wait (for the container check, a signing, a validation) gives the role
// up first with cfuse_reader_yield(): another worker then reads the requests that come
// meanwhile, FUSE_INTERRUPT among them.

// The reader serves RELEASE, RELEASEDIR, FORGET and BATCH_FORGET itself, right after reading
// them, and reads on: libfuse drops a request its worker has read if the session is told to stop
// (a signal) before the worker serves it, and a lost RELEASE makes a file closed before the stop
// look still open for writing. Those still queued at the stop are cfuse_session_end's. It reads
// with cancellation off (the stop cancels the workers, and a cancel acting as read() returns
// loses the request it read) and sleeps in poll() instead: the device is made non-blocking.
//
// The reader also answers INIT with FUSE_HANDLE_KILLPRIV_V2 added (libfuse 3.14 cannot ask for
// it): the file system promises to remove set-id bits and security.capability on write itself,
// and the kernel then asks for security.capability (a GETXATTR round trip) once per file
// instead of before every write. A container mount has neither: its modes are 0644 or 0444
// and it keeps no security.capability (only its own user.asicfs.* attributes). `cp` of a 10 MiB file in
// (80 writes of 128 KiB) took 166 requests, then 86. (A write-only descriptor that is its file's
// only one now gets direct_io, and the kernel asks none for it.)
//
// Installs the reader on the session of `fuse` (a `struct fuse *`) after fuse_mount: 0 or a
// negative errno. With `request_log_path` (tests only) the opcode of every request read is
// appended to that file, one per line. With `hold_reads_path` (tests only) the reader reads
// nothing while that file exists, with `<path>.held` present meanwhile (it then waits for
// requests in 5 ms polls, not in one long poll(), so that it notices the file with no request to read).
// With `hold_release_path` (tests only) a reader that has read a RELEASE keeps it unserved while
// that file exists and the session has not been told to stop, with `<path>.held` present meanwhile.
int cfuse_reader_install(void *fuse, long spin_ns, const char *request_log_path, const char *hold_reads_path,
                         const char *hold_release_path);

// Gives up the reader role if the calling thread holds it (a no-op on any other thread).
void cfuse_reader_yield(void);

#endif
