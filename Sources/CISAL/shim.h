#ifndef ASICFS_CISAL_SHIM_H
#define ASICFS_CISAL_SHIM_H
// ISA-L (Debian libisal-dev): igzip raw-deflate inflate and deflate, and CRC-32.
//
// inflate_state and isal_zstream hold fixed arrays of up to 64 KiB, which Swift would import
// as enormous tuples, so Swift sees them only as `void *` through these wrappers; Inflater.swift
// and Deflater.swift are the only Swift files that hold such a pointer.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <isa-l/igzip_lib.h>
#include <isa-l/crc.h>

// ---- inflate -------------------------------------------------------------------------------

static inline void *cisal_inflater_new(void) {
    struct inflate_state *s = calloc(1, sizeof(struct inflate_state));
    if (s) {
        isal_inflate_init(s);
        s->crc_flag = ISAL_DEFLATE;  // raw deflate, no wrapper, no checksum
        s->hist_bits = 0;            // the full 32 KiB window
    }
    return s;
}

static inline void cisal_inflater_free(void *s) { free(s); }

// The stream has zlib's header and Adler-32 trailer (RFC 1950), checked, instead of being raw.
static inline void cisal_inflater_set_zlib(void *p) { ((struct inflate_state *)p)->crc_flag = ISAL_ZLIB; }

static inline void cisal_inflater_set_input(void *p, const uint8_t *input, uint32_t count) {
    struct inflate_state *s = p;
    s->next_in = (uint8_t *)input;
    s->avail_in = count;
}

static inline uint32_t cisal_inflater_input_left(const void *p) {
    return ((const struct inflate_state *)p)->avail_in;
}

// Input bytes given but not part of the stream once it finished: those not taken, and whole
// bytes read ahead into the bit buffer.
static inline uint32_t cisal_inflater_unused(const void *p) {
    const struct inflate_state *s = p;
    return s->avail_in + (s->read_in_length > 0 ? (uint32_t)s->read_in_length / 8 : 0);
}

static inline int cisal_inflater_finished(const void *p) {
    return ((const struct inflate_state *)p)->block_state == ISAL_BLOCK_FINISH;
}

// One isal_inflate call into output[0..<count]; *produced is what it wrote.
// total_out is a uint32 that ISA-L uses (in raw mode) only to refuse back-references further
// back than the output so far; it would wrap after 4 GiB and then refuse valid ones, so once
// it is past 2 GiB it is moved back by 1 GiB, which keeps it far above the 32 KiB window.
static inline int cisal_inflater_run(void *p, uint8_t *output, uint32_t count, uint32_t *produced) {
    struct inflate_state *s = p;
    s->next_out = output;
    s->avail_out = count;
    int rc = isal_inflate(s);
    *produced = count - s->avail_out;
    s->next_out = NULL;
    s->avail_out = 0;
    if (s->total_out > 0x80000000u) s->total_out -= 0x40000000u;
    return rc;
}

// A saved state is the struct up to tmp_out_buffer (bit buffer, block state, Huffman tables)
// plus the valid part of tmp_out_buffer (the last 32 KiB of output, and output decoded but not
// yet handed out). Input and output pointers are not saved: the caller records the input
// position (bytes given minus cisal_inflater_input_left) and feeds input from there.
static inline size_t cisal_inflater_saved_size(const void *p) {
    const struct inflate_state *s = p;
    return offsetof(struct inflate_state, tmp_out_buffer) + (size_t)s->tmp_out_valid;
}

static inline void cisal_inflater_save(const void *p, uint8_t *target) {
    const struct inflate_state *s = p;
    size_t head = offsetof(struct inflate_state, tmp_out_buffer);
    memcpy(target, s, head);
    // (target may be unaligned: the pointer fields are cleared with memset, not assigned)
    memset(target + offsetof(struct inflate_state, next_out), 0, sizeof(s->next_out));
    memset(target + offsetof(struct inflate_state, next_in), 0, sizeof(s->next_in));
    memset(target + offsetof(struct inflate_state, avail_in), 0, sizeof(s->avail_in));
    memset(target + offsetof(struct inflate_state, avail_out), 0, sizeof(s->avail_out));
    memcpy(target + head, s->tmp_out_buffer, (size_t)s->tmp_out_valid);
}

// Restores a state saved by cisal_inflater_save; 0 on success, -1 if the bytes cannot be one.
static inline int cisal_inflater_restore(void *p, const uint8_t *saved, size_t count) {
    struct inflate_state *s = p;
    size_t head = offsetof(struct inflate_state, tmp_out_buffer);
    if (count < head || count > sizeof(struct inflate_state)) return -1;
    memcpy(s, saved, head);
    if (s->tmp_out_valid < 0 || (size_t)s->tmp_out_valid != count - head
        || s->tmp_out_processed < 0 || s->tmp_out_processed > s->tmp_out_valid) return -1;
    memcpy(s->tmp_out_buffer, saved + head, count - head);
    s->next_in = NULL; s->avail_in = 0;
    s->next_out = NULL; s->avail_out = 0;
    return 0;
}

static inline size_t cisal_inflater_state_size(void) { return sizeof(struct inflate_state); }

// Whole-buffer inflate (for data this process deflated itself, e.g. saved states).
// Returns the bytes produced, or -1.
static inline long cisal_inflate_whole(void *p, const uint8_t *input, uint32_t count, uint8_t *output, uint32_t room) {
    struct inflate_state *s = p;
    isal_inflate_init(s);
    s->next_in = (uint8_t *)input; s->avail_in = count;
    s->next_out = output; s->avail_out = room;
    int rc = isal_inflate_stateless(s);
    long produced = (long)(room - s->avail_out);
    s->next_in = NULL; s->next_out = NULL; s->avail_in = 0; s->avail_out = 0;
    return rc == ISAL_DECOMP_OK ? produced : -1;
}

// ---- deflate -------------------------------------------------------------------------------

struct cisal_deflater {
    struct isal_zstream stream;
    uint8_t *level_buffer;
};

static inline uint32_t cisal_level_buffer_size(uint32_t level) {
    switch (level) {
    case 1: return ISAL_DEF_LVL1_DEFAULT;
    case 2: return ISAL_DEF_LVL2_DEFAULT;
    case 3: return ISAL_DEF_LVL3_DEFAULT;
    default: return 0;
    }
}

static inline uint32_t cisal_max_level(void) { return ISAL_DEF_MAX_LEVEL; }

static inline void *cisal_deflater_new(uint32_t level) {
    if (level > ISAL_DEF_MAX_LEVEL) return NULL;
    struct cisal_deflater *d = calloc(1, sizeof(struct cisal_deflater));
    if (!d) return NULL;
    isal_deflate_init(&d->stream);
    uint32_t size = cisal_level_buffer_size(level);
    if (size) {
        d->level_buffer = malloc(size);
        if (!d->level_buffer) { free(d); return NULL; }
    }
    d->stream.level = level;
    d->stream.level_buf = d->level_buffer;
    d->stream.level_buf_size = size;
    d->stream.gzip_flag = IGZIP_DEFLATE;
    d->stream.flush = NO_FLUSH;
    return d;
}

static inline void cisal_deflater_free(void *p) {
    struct cisal_deflater *d = p;
    if (d) { free(d->level_buffer); free(d); }
}

// The stream gets zlib's header and Adler-32 trailer (RFC 1950) instead of being raw deflate.
static inline void cisal_deflater_set_zlib(void *p) { ((struct cisal_deflater *)p)->stream.gzip_flag = IGZIP_ZLIB; }

// Starts a new stream with the same level and buffers.
static inline void cisal_deflater_reset(void *p) { isal_deflate_reset(&((struct cisal_deflater *)p)->stream); }

// A preset dictionary (the 32 KiB before this piece) for the next stream, after a reset.
static inline int cisal_deflater_set_dictionary(void *p, const uint8_t *dictionary, uint32_t count) {
    return isal_deflate_set_dict(&((struct cisal_deflater *)p)->stream, (uint8_t *)dictionary, count);
}

// Whether the stream ends its input with a sync flush (an empty stored block, byte-aligned):
// how a piece of a larger stream ends, so the next piece can follow it directly.
static inline void cisal_deflater_set_sync_flush(void *p, int sync) {
    ((struct cisal_deflater *)p)->stream.flush = sync ? SYNC_FLUSH : NO_FLUSH;
}

// One isal_deflate call: takes from input[0..<count] (`last`: no more input follows) into
// output[0..<room]. *consumed, *produced: what it took and wrote; *ended: the stream is complete.
static inline int cisal_deflater_run(void *p, const uint8_t *input, uint32_t count, int last,
                                     uint8_t *output, uint32_t room,
                                     uint32_t *consumed, uint32_t *produced, int *ended) {
    struct isal_zstream *z = &((struct cisal_deflater *)p)->stream;
    z->next_in = (uint8_t *)input; z->avail_in = count;
    z->end_of_stream = last ? 1 : 0;
    z->next_out = output; z->avail_out = room;
    int rc = isal_deflate(z);
    *consumed = count - z->avail_in;
    *produced = room - z->avail_out;
    *ended = z->internal_state.state == ZSTATE_END;
    z->next_in = NULL; z->avail_in = 0; z->next_out = NULL; z->avail_out = 0;
    return rc;
}
#endif
