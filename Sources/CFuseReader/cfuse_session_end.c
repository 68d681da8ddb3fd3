#define _GNU_SOURCE
#define FUSE_USE_VERSION 31
#include <fuse3/fuse.h>
#include <fuse3/fuse_lowlevel.h>

#include <errno.h>
#include <linux/fuse.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

#include "cfuse_session_end.h"
#include "lets_go.h"

int cfuse_session_end(void *fuse) {
    struct fuse_session *session = fuse_get_session(fuse);
    int fd = fuse_session_fd(session);
    // The kernel refuses a read into less than its largest request (a 1 MiB WRITE).
    size_t size = (1 << 20) + 0x1000;
    void *memory = malloc(size);
    if (memory == NULL) return -ENOMEM;
    int unmounted = 0;
    for (;;) {
        struct pollfd device = { .fd = fd, .events = POLLIN };
        if (poll(&device, 1, 0) != 1) break;
        // A device without a connection polls as an error and reads why: ENODEV after an
        // unmount, ECONNABORTED after an abort (/sys/fs/fuse/connections/N/abort).
        ssize_t count = read(fd, memory, size);
        if (count < 0) {
            if (errno == EINTR || errno == ENOENT) continue;
            unmounted = errno == ENODEV;
            break;
        }
        if (count < (ssize_t)sizeof(struct fuse_in_header)) break;
        const struct fuse_in_header *header = memory;
        if (!cfuse_lets_go(header->opcode)) continue;
        struct fuse_buf buffer = { .size = (size_t)count, .mem = memory, .fd = -1 };
        fuse_session_process_buf(session, &buffer);
    }
    free(memory);
    return unmounted;
}
