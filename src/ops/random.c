/* RandomUniform RandomNormal RandomUniformLike RandomNormalLike Bernoulli.
 *
 *   RandomUniform()             attrs shape (ints, required), dtype (float32 default; float16,
 *                               float32, float64), low (0), high (1), seed (float, optional):
 *                               values in [low, high)
 *   RandomNormal()              attrs shape, dtype, mean (0), scale (1), seed
 *   RandomUniformLike(x)        x's shape; dtype attribute or else x's dtype (must be a float type)
 *   RandomNormalLike(x)         likewise
 *   Bernoulli(p)                p float16/32/64 probabilities; out[i] = 1 with probability p[i]
 *                               (u < p[i] for a uniform u in [0, 1)), else 0, in dtype (attribute,
 *                               default p's dtype; any numeric dtype or bool)
 *
 * Generator: counter-based. Element i of a run is a function of (key, i) only (a splitmix64 hash),
 * so the kernels split across threads freely and give the same values for any thread count.
 * With a seed, key is derived from the seed: every run of the model produces the same values.
 * Without one, each run takes a fresh key (a process-wide atomic counter mixed with an address
 * and the time at first use), so runs differ. The values cannot match another implementation's
 * generator (numpy's, ONNX Runtime's): only the distribution does. Normal values use the
 * Box-Muller transform of two uniforms. float16 outputs are rounded from float32 (so a uniform
 * value may round up to high there).
 *
 * These ops are FRT_OP_NO_FOLD: never evaluated at load, even with constant inputs.
 */
#include <math.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "dtype_util.h"
#include "op.h"
#include "x86/simd_elementwise.h"

static inline uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The i-th 64-bit value of stream key. */
static inline uint64_t rnd(uint64_t key, uint64_t i) {
    return mix64(key + (i + 1) * 0x9E3779B97F4A7C15ull);
}

/* Uniform in [0, 1) with 53 random bits. */
static inline double unit53(uint64_t h) { return (double)(h >> 11) * 0x1p-53; }

/* A key for an unseeded run: distinct for every call in the process. */
static uint64_t fresh_key(void) {
    static _Atomic uint64_t counter;
    static _Atomic uint64_t base;
    uint64_t b = atomic_load_explicit(&base, memory_order_relaxed);
    if (!b) {
        uint64_t t = (uint64_t)time(NULL), a = (uint64_t)(uintptr_t)&counter;
        uint64_t want = mix64(t ^ (a << 16)) | 1;
        uint64_t expect = 0;
        atomic_compare_exchange_strong(&base, &expect, want);
        b = atomic_load(&base);
    }
    return mix64(b + atomic_fetch_add(&counter, 1) * 0xD1B54A32D192ED03ull);
}

enum { R_UNIFORM, R_NORMAL, R_BERNOULLI };

typedef struct rand_params {
    int kind;
    int32_t dtype;     /* output dtype */
    double a, b;       /* uniform: low, high; normal: mean, scale */
    bool seeded;
    uint64_t key;      /* when seeded */
} rand_params;

typedef struct rand_job {
    const rand_params *p;
    uint64_t key;
    const frt_value *prob; /* Bernoulli's input */
    void *out;
} rand_job;

static void rand_range(void *ctx, size_t lo, size_t hi) {
    const rand_job *j = ctx;
    const rand_params *p = j->p;
    for (size_t i = lo; i < hi; i++) {
        double v;
        if (p->kind == R_UNIFORM) {
            v = p->a + (p->b - p->a) * unit53(rnd(j->key, i));
            if (p->dtype == FRT_FLOAT32 && (float)v >= (float)p->b && p->b > p->a)
                v = nextafterf((float)p->b, -INFINITY); /* rounding must not reach high */
        } else if (p->kind == R_NORMAL) {
            double u1 = 1.0 - unit53(rnd(j->key, 2 * (uint64_t)i)); /* (0, 1] */
            double u2 = unit53(rnd(j->key, 2 * (uint64_t)i + 1));
            v = p->a + p->b * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
        } else {
            double prob = frt_ld_f64(j->prob->dtype, j->prob->data, (int64_t)i);
            v = unit53(rnd(j->key, i)) < prob ? 1.0 : 0.0;
        }
        frt_st_f64(p->dtype, j->out, (int64_t)i, v);
    }
}

static frt_status k_random(const frt_step *s, frt_exec *x) {
    const rand_params *p = s->k.params;
    frt_value *out = &x->values[s->out[0]];
    rand_job j = {p, p->seeded ? p->key : fresh_key(), NULL, out->data};
    if (p->kind == R_BERNOULLI) {
        j.prob = &x->values[s->in[0]];
        if (j.prob->numel != out->numel)
            return frt_step_fail(s, FRT_ERR_INTERNAL, "input and output sizes differ");
    }
    frt_ew_parallel(x->tp, (size_t)out->numel, 8, rand_range, &j);
    return FRT_OK;
}

/* ---- infer / select ------------------------------------------------------------------------ */

static bool is_float_out(int32_t dt) {
    return dt == FRT_FLOAT32 || dt == FRT_FLOAT64 || dt == FRT_FLOAT16;
}

/* Output dtype: the attribute, or dflt when absent. */
static frt_status out_dtype(const frt_op_ctx *c, int kind, int32_t dflt, int32_t *dt) {
    const frt_onnx_attr *a = frt_attr_find(c->node, "dtype");
    if (a && a->type != FRT_ATTR_INT)
        return frt_op_fail(c, FRT_ERR_MALFORMED, "attribute 'dtype' must be an int");
    *dt = a ? (int32_t)(a->i >= 0 && a->i <= 64 ? a->i : -1) : dflt;
    bool ok = kind == R_BERNOULLI ? (*dt > 0 && *dt != FRT_STRING &&
                                     frt_dtype_size((frt_dtype)*dt) != 0)
                                  : is_float_out(*dt);
    if (!ok)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "unsupported: dtype %s (%lld) for the output",
                           frt_dtype_name((frt_dtype)(*dt > 0 ? *dt : 0)),
                           (long long)(a ? a->i : dflt));
    return FRT_OK;
}

static frt_status rand_infer(frt_op_ctx *c, int kind, bool like) {
    frt_status st;
    int32_t dt;
    if (kind == R_BERNOULLI || like) {
        if ((st = frt_op_check_arity(c, 1, 1, 1, 1)) || (st = frt_op_check_input(c, 0, 0)))
            return st;
        const frt_value *x = c->in[0];
        if (kind == R_BERNOULLI && !is_float_out(x->dtype))
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "unsupported: input dtype %s "
                               "(float16, float32, float64)", frt_dtype_name(x->dtype));
        if ((st = out_dtype(c, kind, x->dtype, &dt))) return st;
        frt_op_set_shape(c->out[0], dt, x->rank, x->dims);
        return FRT_OK;
    }
    if ((st = frt_op_check_arity(c, 0, 0, 1, 1))) return st;
    if ((st = out_dtype(c, kind, FRT_FLOAT32, &dt))) return st;
    const frt_onnx_attr *a = frt_attr_find(c->node, "shape");
    if (!a || a->type != FRT_ATTR_INTS)
        return frt_op_fail(c, FRT_ERR_MALFORMED, "attribute 'shape' (ints) is required");
    if (a->n > FRT_MAX_RANK)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "shape has %zu dims (max %d)", a->n,
                           FRT_MAX_RANK);
    int64_t total = 1;
    for (size_t i = 0; i < a->n; i++) {
        if (a->ints[i] < 0 || (a->ints[i] && total > (INT64_C(1) << 40) / a->ints[i]))
            return frt_op_fail(c, FRT_ERR_SHAPE, "bad or too large shape (dim %zu is %lld)", i,
                               (long long)a->ints[i]);
        total *= a->ints[i];
    }
    frt_op_set_shape(c->out[0], dt, (int32_t)a->n, a->ints);
    return FRT_OK;
}

static frt_status rand_select(frt_op_ctx *c, frt_kernel *k, int kind, bool like) {
    frt_status st = rand_infer(c, kind, like);
    if (st) return st;
    rand_params *p = frt_arena_alloc(c->arena, sizeof *p, 16);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    memset(p, 0, sizeof *p);
    p->kind = kind;
    p->dtype = c->out[0]->dtype;
    if (kind == R_UNIFORM) {
        p->a = frt_attr_float(c->node, "low", 0.0f);
        p->b = frt_attr_float(c->node, "high", 1.0f);
        if (!(p->a <= p->b))
            return frt_op_fail(c, FRT_ERR_SHAPE, "low %g is above high %g", p->a, p->b);
    } else if (kind == R_NORMAL) {
        p->a = frt_attr_float(c->node, "mean", 0.0f);
        p->b = frt_attr_float(c->node, "scale", 1.0f);
    }
    const frt_onnx_attr *sd = frt_attr_find(c->node, "seed");
    if (sd && (sd->type == FRT_ATTR_FLOAT || sd->type == FRT_ATTR_INT)) {
        double v = sd->type == FRT_ATTR_FLOAT ? sd->f : (double)sd->i;
        uint64_t bits;
        memcpy(&bits, &v, 8);
        p->seeded = true;
        p->key = mix64(bits ^ 0x5EEDull);
    }
    static const char *const names[3][2] = {{"random_uniform", "random_uniform_seeded"},
                                            {"random_normal", "random_normal_seeded"},
                                            {"bernoulli", "bernoulli_seeded"}};
    k->name = names[kind][p->seeded];
    k->fn = k_random;
    k->params = p;
    return FRT_OK;
}

#define RAND_OP(Name, KIND, LIKE)                                                                \
    static frt_status Name##_infer(frt_op_ctx *c) { return rand_infer(c, KIND, LIKE); }         \
    static frt_status Name##_select(frt_op_ctx *c, frt_kernel *k) {                              \
        return rand_select(c, k, KIND, LIKE);                                                    \
    }
RAND_OP(uniform, R_UNIFORM, false)
RAND_OP(normal, R_NORMAL, false)
RAND_OP(uniform_like, R_UNIFORM, true)
RAND_OP(normal_like, R_NORMAL, true)
RAND_OP(bernoulli, R_BERNOULLI, false)

/* Implementations referred to by src/ops/ops.def. */
FRT_OP_IMPL(random, RandomUniform, uniform_infer, uniform_select);
FRT_OP_IMPL(random, RandomNormal, normal_infer, normal_select);
FRT_OP_IMPL(random, RandomUniformLike, uniform_like_infer, uniform_like_select);
FRT_OP_IMPL(random, RandomNormalLike, normal_like_infer, normal_like_select);
FRT_OP_IMPL(random, Bernoulli, bernoulli_infer, bernoulli_select);
