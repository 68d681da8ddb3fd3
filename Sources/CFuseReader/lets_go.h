#ifndef ASICFS_CFUSE_LETS_GO_H
#define ASICFS_CFUSE_LETS_GO_H

#include <linux/fuse.h>
#include <stdint.h>

// True for the requests that tell of a file or name let go (RELEASE, RELEASEDIR, FORGET,
// BATCH_FORGET): the kernel sends them without waiting for an answer, so losing one makes a
// closed file look open for good. They never wait for another request.
static inline int cfuse_lets_go(uint32_t opcode) {
    return opcode == FUSE_RELEASE || opcode == FUSE_RELEASEDIR
        || opcode == FUSE_FORGET || opcode == FUSE_BATCH_FORGET;
}

#endif
