/* Protobuf-aware custom mutator for the libFuzzer targets (linked only into the fuzz binaries, not
 * into the replay tests). Byte-level mutation of a model mostly breaks its wire format, so the
 * decoder rejects it before the compiler or a kernel sees anything. Half of the mutations here
 * parse the input as a protobuf message tree (no schema: a length-delimited field is taken for a
 * message when its bytes parse as one), change one field and serialize it again with correct
 * lengths, which keeps the model well-formed while it gets odd dims, attributes, dtypes, indices
 * or lost and repeated fields:
 *   - a varint gets an interesting value (0, 1, 2, -1, 2^31-1, 2^32, 2^62, +-1, small random);
 *   - a fixed32 gets NaN, inf, 0, -0, 1e30 or a float near its old value;
 *   - a field is deleted, or duplicated next to itself.
 * The other half, and any input that does not parse, get libFuzzer's own mutations. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

#define MAX_FIELDS 20000
#define MAX_DEPTH 12

typedef struct pbf {
    uint32_t field;
    uint8_t wt;         /* 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32 */
    uint64_t v;         /* varint / fixed value */
    const uint8_t *p;   /* length-delimited payload (when not a message) */
    size_t len;
    int first, n_kids;  /* children in the pool when a message */
    int is_msg;
    int dup;            /* serialize twice */
    int deleted;
} pbf;

static pbf pool[MAX_FIELDS];
static int n_pool;

static int rd_varint(const uint8_t *p, size_t n, size_t *at, uint64_t *v) {
    uint64_t r = 0;
    for (int s = 0; s < 64 && *at < n; s += 7) {
        uint8_t b = p[(*at)++];
        r |= (uint64_t)(b & 0x7f) << s;
        if (!(b & 0x80)) {
            *v = r;
            return 1;
        }
    }
    return 0;
}

/* Parses p[0, n) as a message: its fields go to the pool contiguously; returns their first index
 * in *first and count in *count, 0 when p is not a message. */
static int parse(const uint8_t *p, size_t n, int depth, int *first, int *count) {
    /* top-level fields must be contiguous: parse this level first, then the children */
    int start = n_pool;
    size_t at = 0;
    while (at < n) {
        uint64_t tag;
        if (!rd_varint(p, n, &at, &tag) || (tag >> 3) == 0 || (tag >> 3) > 536870911u) goto fail;
        if (n_pool >= MAX_FIELDS) goto fail;
        pbf *f = &pool[n_pool++];
        memset(f, 0, sizeof *f);
        f->field = (uint32_t)(tag >> 3);
        f->wt = (uint8_t)(tag & 7);
        switch (f->wt) {
        case 0:
            if (!rd_varint(p, n, &at, &f->v)) goto fail;
            break;
        case 1:
            if (n - at < 8) goto fail;
            memcpy(&f->v, p + at, 8);
            at += 8;
            break;
        case 5: {
            if (n - at < 4) goto fail;
            uint32_t x;
            memcpy(&x, p + at, 4);
            f->v = x;
            at += 4;
            break;
        }
        case 2: {
            uint64_t l;
            if (!rd_varint(p, n, &at, &l) || l > n - at) goto fail;
            f->p = p + at;
            f->len = (size_t)l;
            at += (size_t)l;
            break;
        }
        default: goto fail;
        }
    }
    int end = n_pool;
    for (int i = start; i < end; i++) {
        pbf *f = &pool[i];
        if (f->wt != 2 || f->len == 0 || depth >= MAX_DEPTH) continue;
        int save = n_pool, fk, nk;
        if (parse(f->p, f->len, depth + 1, &fk, &nk)) {
            f->is_msg = 1;
            f->first = fk;
            f->n_kids = nk;
        } else {
            n_pool = save;
        }
    }
    *first = start;
    *count = end - start;
    return 1;
fail:
    n_pool = start;
    return 0;
}

static size_t varint_len(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static size_t msg_size(int first, int count);

static size_t payload_size(const pbf *f) {
    switch (f->wt) {
    case 0: return varint_len(f->v);
    case 1: return 8;
    case 5: return 4;
    default: {
        size_t l = f->is_msg ? msg_size(f->first, f->n_kids) : f->len;
        return varint_len(l) + l;
    }
    }
}

static size_t msg_size(int first, int count) {
    size_t s = 0;
    for (int i = first; i < first + count; i++) {
        const pbf *f = &pool[i];
        if (f->deleted) continue;
        size_t one = varint_len(((uint64_t)f->field << 3) | f->wt) + payload_size(f);
        s += f->dup ? 2 * one : one;
    }
    return s;
}

static uint8_t *wr_varint(uint8_t *o, uint64_t v) {
    while (v >= 0x80) {
        *o++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *o++ = (uint8_t)v;
    return o;
}

static uint8_t *write_msg(uint8_t *o, int first, int count) {
    for (int i = first; i < first + count; i++) {
        const pbf *f = &pool[i];
        if (f->deleted) continue;
        for (int rep = 0; rep < (f->dup ? 2 : 1); rep++) {
            o = wr_varint(o, ((uint64_t)f->field << 3) | f->wt);
            switch (f->wt) {
            case 0: o = wr_varint(o, f->v); break;
            case 1: memcpy(o, &f->v, 8); o += 8; break;
            case 5: {
                uint32_t x = (uint32_t)f->v;
                memcpy(o, &x, 4);
                o += 4;
                break;
            }
            default:
                if (f->is_msg) {
                    o = wr_varint(o, msg_size(f->first, f->n_kids));
                    o = write_msg(o, f->first, f->n_kids);
                } else {
                    o = wr_varint(o, f->len);
                    memcpy(o, f->p, f->len);
                    o += f->len;
                }
            }
        }
    }
    return o;
}

static uint64_t rng;
static uint64_t rnd(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void mutate_field(pbf *f) {
    static const uint64_t interesting[] = {0, 1, 2, 3, 4, 7, 8, 16, 255, 256, 65535, 65536,
                                           2147483647u, 2147483648u, 4294967295u, 4294967296u,
                                           (uint64_t)1 << 62, (uint64_t)-1, (uint64_t)-2};
    uint64_t r = rnd();
    switch (r % 8) {
    case 0: f->deleted = 1; return;
    case 1: f->dup = 1; return;
    default: break;
    }
    if (f->wt == 0) {
        r >>= 3;
        switch (r % 3) {
        case 0: f->v = interesting[(r >> 2) % (sizeof interesting / sizeof *interesting)]; break;
        case 1: f->v += (r >> 2) & 1 ? 1 : (uint64_t)-1; break;
        default: f->v = (r >> 2) % 64; break;
        }
    } else if (f->wt == 5) {
        static const float special[] = {0.0f, -0.0f, 1.0f, -1.0f, 1e30f, 1e-30f};
        float x;
        uint32_t u = (uint32_t)f->v;
        memcpy(&x, &u, 4);
        switch ((r >> 3) % 4) {
        case 0: x = NAN; break;
        case 1: x = (r >> 5) & 1 ? INFINITY : -INFINITY; break;
        case 2: x = special[(r >> 5) % 6]; break;
        default: x = x * 2.0f + 1.0f; break;
        }
        memcpy(&u, &x, 4);
        f->v = u;
    } else {
        f->dup = 1;
    }
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned seed) {
    rng = seed ? seed : 88172645463325252ull;
    if (rnd() % 2 == 0) return LLVMFuzzerMutate(data, size, max_size);
    n_pool = 0;
    int first, count;
    if (!parse(data, size, 0, &first, &count) || n_pool == 0)
        return LLVMFuzzerMutate(data, size, max_size);
    int k = 1 + (int)(rnd() % 3);
    for (int i = 0; i < k; i++) mutate_field(&pool[rnd() % (uint64_t)n_pool]);
    size_t need = msg_size(first, count);
    if (need > max_size) return LLVMFuzzerMutate(data, size, max_size);
    uint8_t *tmp = malloc(need ? need : 1);
    if (!tmp) return LLVMFuzzerMutate(data, size, max_size);
    uint8_t *end = write_msg(tmp, first, count);
    size_t n = (size_t)(end - tmp);
    memcpy(data, tmp, n);
    free(tmp);
    return n;
}
