#define _GNU_SOURCE
#define FUSE_USE_VERSION 31
#include <fuse3/fuse.h>
#include <fuse3/fuse_lowlevel.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "cfuse_reader.h"
#include "lets_go.h"

static pthread_mutex_t role_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t role_free = PTHREAD_COND_INITIALIZER;
static int role_taken;
static __thread int holds_role;
static long poll_ns;
// Set while a thread holds the role: a worker that libfuse lets end (too many idle ones) gives
// the role up on its way out.
static pthread_key_t holder_key;
static pthread_once_t holder_key_once = PTHREAD_ONCE_INIT;

static void release_role(void) {
    holds_role = 0;
    pthread_setspecific(holder_key, NULL);
    pthread_mutex_lock(&role_lock);
    role_taken = 0;
    pthread_cond_signal(&role_free);
    pthread_mutex_unlock(&role_lock);
}

static void release_at_exit(void *unused) {
    (void)unused;
    release_role();
}

static void make_holder_key(void) { pthread_key_create(&holder_key, release_at_exit); }

static void unlock_on_cancel(void *mutex) { pthread_mutex_unlock(mutex); }

// Waits until no thread holds the role, then takes it. A cancellation point (libfuse cancels
// its workers when the session ends).
static void take_role(void) {
    pthread_mutex_lock(&role_lock);
    pthread_cleanup_push(unlock_on_cancel, &role_lock);
    while (role_taken) pthread_cond_wait(&role_free, &role_lock);
    role_taken = 1;
    pthread_cleanup_pop(1);
    holds_role = 1;
    pthread_setspecific(holder_key, (void *)1);
}

void cfuse_reader_yield(void) {
    if (holds_role) release_role();
}

// The INIT request, kept until libfuse answers it (see cfuse_reader.h: killpriv_v2).
static uint64_t init_unique;
static uint32_t init_offered;
// ASICFS_TEST_REQUEST_LOG's file, or -1.
static int request_log = -1;
// ASICFS_TEST_HOLD_READS's path, or NULL.
static char *hold_reads_gate;
// ASICFS_TEST_HOLD_RELEASE's path, or NULL.
static char *hold_release_gate;
static struct fuse_session *reader_session;

// A request read once the session has been told to stop would be dropped unanswered by
// libfuse; left queued, it is served at the end (cfuse_session_end.h) if it is a RELEASE.
static int stopping(void) { return reader_session != NULL && fuse_session_exited(reader_session); }

// Tests only: while `gate` exists (and the session has not been told to stop), waits, with
// `<gate>.held` present meanwhile.
static void hold_at(const char *gate) {
    if (gate == NULL || access(gate, F_OK) != 0) return;
    char marker[4096];
    if (snprintf(marker, sizeof marker, "%s.held", gate) >= (int)sizeof marker) return;
    int fd = open(marker, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0) close(fd);
    struct timespec pause = { .tv_sec = 0, .tv_nsec = 5000000 };
    while (access(gate, F_OK) == 0 && !stopping()) nanosleep(&pause, NULL);
    unlink(marker);
}

// While the gate exists the reader reads nothing (requests stay queued in the kernel).
// nanosleep is a cancellation point: a stop ends the wait.
static void hold_reads(void) { hold_at(hold_reads_gate); }

// While the gate exists the reader that has just read a RELEASE keeps it unserved, so that a
// test can stop the session between the read and the serving (a stop ends the wait). Not
// cancellable: the stop's cancel would take the request with it.
static void hold_release(const void *buffer, ssize_t count) {
    if (count < (ssize_t)sizeof(struct fuse_in_header)) return;
    if (((const struct fuse_in_header *)buffer)->opcode != FUSE_RELEASE) return;
    int cancel_state;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
    hold_at(hold_release_gate);
    pthread_setcancelstate(cancel_state, NULL);
}

static void note_request(const void *buffer, ssize_t count) {
    if (count < (ssize_t)sizeof(struct fuse_in_header)) return;
    const struct fuse_in_header *header = buffer;
    if (header->opcode == FUSE_INIT && count >= (ssize_t)(sizeof *header + sizeof(struct fuse_init_in))) {
        const struct fuse_init_in *init = (const void *)(header + 1);
        init_unique = header->unique;
        init_offered = init->flags;
    }
    if (request_log >= 0) {
        char line[16];
        int length = snprintf(line, sizeof line, "%u\n", header->opcode);
        (void)!write(request_log, line, (size_t)length);
    }
}

static long elapsed_ns(const struct timespec *start) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - start->tv_sec) * 1000000000L + (now.tv_nsec - start->tv_nsec);
}

// Polls (without sleeping) until a request is there or `poll_ns` has passed.
static void brief_poll(int fd) {
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    struct pollfd device = { .fd = fd, .events = POLLIN };
    while (poll(&device, 1, 0) == 0 && elapsed_ns(&start) < poll_ns && !stopping()) {}
}

// Tests only (with the gate): waits for a request in short polls instead of one long poll(),
// so that a gate made meanwhile holds the reader at once, whether or not a request comes.
static void wait_watching_gate(int fd) {
    struct pollfd device = { .fd = fd, .events = POLLIN };
    while (!stopping()) {
        hold_reads();
        if (poll(&device, 1, 5) != 0) return;
    }
}

// Reads a request with cancellation off, sleeping in poll() while there is none. The stop
// cancels the workers, and a cancel that reaches a thread in read() after the kernel has handed
// it a request (under load the woken thread may get no CPU until then) acts on the way out
// (glibc 2.36 acts on a cancel pending at the end of a cancellable call), so the request was
// lost: a RELEASE so lost left its file looking open for writing. poll() takes nothing from
// the device; the device is non-blocking (cfuse_reader_install), so a read finding nothing
// (a request withdrawn meanwhile) returns to poll() instead of sleeping where no cancel reaches.
static ssize_t read_when_ready(int fd, void *buffer, size_t length) {
    for (;;) {
        int cancel_state;
        pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
        ssize_t count = read(fd, buffer, length);
        int error = errno;
        pthread_setcancelstate(cancel_state, NULL);
        errno = error;
        if (count >= 0 || errno != EAGAIN) return count;
        struct pollfd device = { .fd = fd, .events = POLLIN };
        if (poll(&device, 1, -1) < 0) return -1;
    }
}

static ssize_t read_request(int fd, void *buffer, size_t length) {
    if (!holds_role) take_role();
    if (hold_reads_gate != NULL) wait_watching_gate(fd);
    else brief_poll(fd);
    ssize_t count;
    if (stopping()) {
        count = -1;
        errno = EINTR;
    } else {
        count = read_when_ready(fd, buffer, length);
    }
    note_request(buffer, count);
    if (count < 0) {
        // EINTR (a signal), ENODEV (unmounted): let the next worker see it too.
        int error = errno;
        release_role();
        errno = error;
    }
    return count;
}

// Serves a RELEASE, RELEASEDIR, FORGET or BATCH_FORGET on the spot. libfuse drops a request its
// worker has read when the session is told to stop before it serves it (it checks between the
// two), and a signal may come in that window: a lost RELEASE left its file looking open for
// writing, rescued instead of saved. Served here, no such request ever reaches that check (those
// still queued at the stop are served by cfuse_session_end). Not cancellable, as libfuse's own
// serving is not: the stop cancels the workers. These requests never wait for another request,
// so serving them while libfuse counts this worker as idle starves nothing.
static void serve_letting_go(void *buffer, ssize_t count) {
    int cancel_state;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
    hold_release(buffer, count);
    struct fuse_buf request = { .size = (size_t)count, .mem = buffer, .fd = -1 };
    fuse_session_process_buf(reader_session, &request);
    pthread_setcancelstate(cancel_state, NULL);
}

static ssize_t reader_read(int fd, void *buffer, size_t length, void *userdata) {
    (void)userdata;
    for (;;) {
        ssize_t count = read_request(fd, buffer, length);
        if (count < (ssize_t)sizeof(struct fuse_in_header)) return count;
        if (!cfuse_lets_go(((const struct fuse_in_header *)buffer)->opcode)) return count;
        serve_letting_go(buffer, count);
    }
}

// Adds FUSE_HANDLE_KILLPRIV_V2 to libfuse's answer to INIT when the kernel offered it.
static ssize_t reply_to_init(int fd, struct iovec *iov, int count) {
    init_unique = 0;
    if (!(init_offered & FUSE_HANDLE_KILLPRIV_V2) || count < 2
        || iov[1].iov_len < offsetof(struct fuse_init_out, flags) + sizeof(uint32_t)
        || iov[1].iov_len > sizeof(struct fuse_init_out))
        return writev(fd, iov, count);
    struct fuse_init_out answer;
    memset(&answer, 0, sizeof answer);
    memcpy(&answer, iov[1].iov_base, iov[1].iov_len);
    answer.flags |= FUSE_HANDLE_KILLPRIV_V2;
    struct iovec patched[count];
    memcpy(patched, iov, sizeof patched);
    patched[1].iov_base = &answer;
    return writev(fd, patched, count);
}

static ssize_t reader_writev(int fd, struct iovec *iov, int count, void *userdata) {
    (void)userdata;
    if (init_unique != 0 && count >= 1 && iov[0].iov_len >= sizeof(struct fuse_out_header)) {
        const struct fuse_out_header *header = iov[0].iov_base;
        if (header->unique == init_unique && header->error == 0) return reply_to_init(fd, iov, count);
    }
    return writev(fd, iov, count);
}

int cfuse_reader_install(void *fuse, long spin_ns, const char *request_log_path, const char *hold_reads_path,
                         const char *hold_release_path) {
    static struct fuse_custom_io io = { .read = reader_read, .writev = reader_writev };
    pthread_once(&holder_key_once, make_holder_key);
    poll_ns = spin_ns;
    if (request_log_path != NULL)
        request_log = open(request_log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (hold_reads_path != NULL) hold_reads_gate = strdup(hold_reads_path);
    if (hold_release_path != NULL) hold_release_gate = strdup(hold_release_path);
    struct fuse_session *session = fuse_get_session(fuse);
    reader_session = session;
    int fd = fuse_session_fd(session);
    int result = fuse_session_custom_io(session, &io, fd);
    // Only once our reader is in place: libfuse's own would end the loop on EAGAIN.
    int flags = fcntl(fd, F_GETFL);
    if (result == 0 && flags >= 0) (void)fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    return result;
}
