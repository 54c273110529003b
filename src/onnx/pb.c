/* Protobuf wire-format reader; see pb.h for the rules it enforces. */
#include "onnx/pb.h"

bool frt_pb_varint(const uint8_t **pp, const uint8_t *end, uint64_t *out) {
    const uint8_t *p = *pp;
    if (p < end && !(*p & 0x80)) { /* fast path: one byte */
        *out = *p;
        *pp = p + 1;
        return true;
    }
    uint64_t v = 0;
    for (unsigned i = 0; i < 10; i++) {
        if (p >= end) return false; /* truncated */
        uint8_t b = *p++;
        if (i == 9 && b > 1) return false; /* bits above 63, or an 11th byte would follow */
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *out = v;
            *pp = p;
            return true;
        }
    }
    return false; /* unreachable: the 10th byte either ends the varint or is rejected above */
}

/* Distinguishes a truncated varint from an overlong one, for the message. */
static const char *varint_problem(const uint8_t *p, const uint8_t *end) {
    for (unsigned i = 0; i < 10; i++) {
        if (p >= end) return "truncated varint";
        uint8_t b = *p++;
        if (i == 9 && b > 1) return "varint longer than 10 bytes or over 64 bits";
        if (!(b & 0x80)) break;
    }
    return "bad varint";
}

int frt_pb_next(frt_pb_reader *r, frt_pb_field *f, frt_pb_error *err) {
    const uint8_t *p = r->p, *end = r->end;
    if (p >= end) return 0;
    size_t off = (size_t)(p - r->base);
    uint64_t tag;
    if (!frt_pb_varint(&p, end, &tag)) {
        err->what = varint_problem(r->p, end);
        err->offset = off;
        return -1;
    }
    if (tag > UINT32_MAX) {
        err->what = "field tag does not fit 32 bits";
        err->offset = off;
        return -1;
    }
    f->num = (uint32_t)(tag >> 3);
    f->wire = (uint32_t)(tag & 7);
    f->offset = off;
    f->data = NULL;
    f->len = 0;
    f->u = 0;
    if (f->num == 0) {
        err->what = "field number 0";
        err->offset = off;
        return -1;
    }
    switch (f->wire) {
    case FRT_PB_VARINT: {
        const uint8_t *q = p;
        if (!frt_pb_varint(&p, end, &f->u)) {
            err->what = varint_problem(q, end);
            err->offset = (size_t)(q - r->base);
            return -1;
        }
        break;
    }
    case FRT_PB_I64:
        if ((size_t)(end - p) < 8) {
            err->what = "truncated fixed64 value";
            err->offset = (size_t)(p - r->base);
            return -1;
        }
        f->u = frt_pb_load64(p);
        p += 8;
        break;
    case FRT_PB_I32:
        if ((size_t)(end - p) < 4) {
            err->what = "truncated fixed32 value";
            err->offset = (size_t)(p - r->base);
            return -1;
        }
        f->u = frt_pb_load32(p);
        p += 4;
        break;
    case FRT_PB_LEN: {
        const uint8_t *q = p;
        uint64_t len;
        if (!frt_pb_varint(&p, end, &len)) {
            err->what = varint_problem(q, end);
            err->offset = (size_t)(q - r->base);
            return -1;
        }
        if (len > (uint64_t)(end - p)) {
            err->what = "length-delimited field extends past the end of its message";
            err->offset = (size_t)(q - r->base);
            return -1;
        }
        f->data = p;
        f->len = (size_t)len;
        p += len;
        break;
    }
    case 3:
    case 4:
        err->what = "group wire type (3/4) is not supported";
        err->offset = off;
        return -1;
    default:
        err->what = "invalid wire type (6/7)";
        err->offset = off;
        return -1;
    }
    r->p = p;
    return 1;
}

bool frt_pb_count_packed_varints(const uint8_t *base, const uint8_t *data, size_t len,
                                 size_t *count, frt_pb_error *err) {
    const uint8_t *p = data, *end = data + len;
    size_t n = 0;
    while (p < end) {
        /* Fast path: a byte without the continuation bit is a whole varint. */
        if (!(*p & 0x80)) {
            p++;
            n++;
            continue;
        }
        const uint8_t *q = p;
        uint64_t v;
        if (!frt_pb_varint(&p, end, &v)) {
            err->what = varint_problem(q, end)[0] == 't' ? "truncated varint in packed array"
                                                         : "overlong varint in packed array";
            err->offset = (size_t)(q - base);
            return false;
        }
        n++;
    }
    *count = n;
    return true;
}

const char *frt_pb_wire_name(uint32_t wire) {
    switch (wire) {
    case FRT_PB_VARINT: return "varint";
    case FRT_PB_I64: return "fixed64";
    case FRT_PB_LEN: return "length-delimited";
    case FRT_PB_I32: return "fixed32";
    case 3: return "start-group";
    case 4: return "end-group";
    default: return "invalid";
    }
}
