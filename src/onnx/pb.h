/* Bounds-checked reader for the protobuf wire format (no schema, no allocation).
 *
 * A reader walks the fields of ONE message: a byte range [p, end) inside a larger buffer starting
 * at `base` (used only to report absolute byte offsets). frt_pb_next() returns fields one by one;
 * a length-delimited field's payload is returned as a sub-range that the caller may read with a
 * new reader (nested messages) or with the packed-array helpers below.
 *
 * Rejected as malformed (never read out of range):
 * - a varint longer than 10 bytes, or whose 10th byte sets bits above bit 63;
 * - a varint, fixed32/64 value or length-delimited payload cut off by the end of the range;
 * - a tag that does not fit 32 bits or has field number 0;
 * - wire types 3 and 4 (groups: deprecated, never used by ONNX) and 6, 7 (undefined).
 * Non-minimal varint encodings of at most 10 bytes are accepted (protobuf accepts them too).
 */
#ifndef FRT_ONNX_PB_H
#define FRT_ONNX_PB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    FRT_PB_VARINT = 0,
    FRT_PB_I64 = 1,
    FRT_PB_LEN = 2,
    FRT_PB_I32 = 5
};

typedef struct frt_pb_reader {
    const uint8_t *base; /* start of the whole buffer (offsets in errors are relative to it) */
    const uint8_t *p;    /* next byte to read */
    const uint8_t *end;  /* one past the last byte of this message */
} frt_pb_reader;

typedef struct frt_pb_field {
    uint32_t num;        /* field number, >= 1 */
    uint32_t wire;       /* FRT_PB_VARINT, _I64, _LEN or _I32 */
    uint64_t u;          /* value of a VARINT, I64 or I32 field (fixed values zero-extended) */
    const uint8_t *data; /* payload of a LEN field (inside the reader's range) */
    size_t len;          /* payload length of a LEN field */
    size_t offset;       /* absolute offset of the field's tag */
} frt_pb_field;

/* Where and why decoding failed. `what` is a static string. */
typedef struct frt_pb_error {
    const char *what;
    size_t offset;
} frt_pb_error;

static inline void frt_pb_init(frt_pb_reader *r, const uint8_t *base, const uint8_t *data,
                               size_t len) {
    r->base = base;
    r->p = data;
    r->end = data + len;
}

/* Reads the next field. Returns 1 when a field was read, 0 at the clean end of the message, -1 on
 * malformed input (err filled, reader left at the bad field). */
int frt_pb_next(frt_pb_reader *r, frt_pb_field *f, frt_pb_error *err);

/* Decodes one varint from [*p, end); advances *p. Returns false if truncated or overlong. */
bool frt_pb_varint(const uint8_t **p, const uint8_t *end, uint64_t *out);

/* Counts the varints of a packed repeated field's payload, validating each one. Returns false (with
 * err->offset absolute, computed from base) if the payload does not consist of whole varints. */
bool frt_pb_count_packed_varints(const uint8_t *base, const uint8_t *data, size_t len,
                                 size_t *count, frt_pb_error *err);

static inline uint32_t frt_pb_load32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t frt_pb_load64(const uint8_t *p) {
    return (uint64_t)frt_pb_load32(p) | (uint64_t)frt_pb_load32(p + 4) << 32;
}

/* Name of a wire type for messages ("varint", "fixed64", "length-delimited", "fixed32", ...). */
const char *frt_pb_wire_name(uint32_t wire);

#endif
