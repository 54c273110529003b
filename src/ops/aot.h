/* Ahead-of-time programs (docs/selective.md "Ahead-of-time programs"): `flatrt compile` writes a
 * loaded, optimised and planned model as a program file; a build with -DFRT_AOT_ONLY=ON reads
 * it with a loader that has no ONNX decoder, IR building, passes, compile or planner.
 *
 * Each op whose kernels can be written has a save function (full builds, FRT_AOT_SAVE) and a
 * load function (AOT builds, FRT_AOT_LOAD) in its family file. A kernel's parameters are written
 * field by field, never as raw memory: function pointers as the operation / dtype / tier they
 * were picked for (the load function picks them again from the same tables), constant arrays as
 * bytes. A save function refuses a kernel it does not know (compared by its function pointer)
 * with FRT_ERR_UNSUPPORTED naming the op and kernel, so no program is written that would run
 * other code. A load function reads through the bounds-checked reader below and rejects any value
 * out of range; the reader fails (once, sticky) on a read past the end.
 */
#ifndef FRT_AOT_AOT_H
#define FRT_AOT_AOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ops/op.h"

#ifndef FRT_AOT_SAVE
#if defined(FRT_SELECTIVE)
#define FRT_AOT_SAVE 0
#else
#define FRT_AOT_SAVE 1
#endif
#endif
#ifndef FRT_AOT_LOAD
#if defined(FRT_AOT_ONLY)
#define FRT_AOT_LOAD 1
#else
#define FRT_AOT_LOAD 0
#endif
#endif

/* Program file format version (the header's; a reader refuses others). */
#define FRT_AOT_VERSION 1u
#define FRT_AOT_MAGIC "FRTPROG"

/* Growing byte buffer of a writer. oom is sticky. */
typedef struct frt_aot_w {
    unsigned char *p;
    size_t n, cap;
    bool oom;
} frt_aot_w;

void frt_aot_put(frt_aot_w *w, const void *src, size_t n);
static inline void frt_aot_put_i32(frt_aot_w *w, int32_t v) { frt_aot_put(w, &v, sizeof v); }
static inline void frt_aot_put_i64(frt_aot_w *w, int64_t v) { frt_aot_put(w, &v, sizeof v); }
static inline void frt_aot_put_f32(frt_aot_w *w, float v) { frt_aot_put(w, &v, sizeof v); }
/* n bytes preceded by their count (i64) */
void frt_aot_put_blob(frt_aot_w *w, const void *src, size_t n);

/* Bounds-checked reader over [p, p + n). Every read past the end sets bad (sticky) and yields
 * zeros. mem: allocator of the model's memory for arrays a kernel keeps (64-byte aligned, freed
 * with the model); NULL result = out of memory (bad is set). */
typedef struct frt_aot_r {
    const unsigned char *p;
    size_t n, at;
    bool bad;
    void *(*mem)(void *ctx, size_t n);
    void *mem_ctx;
} frt_aot_r;

void frt_aot_get(frt_aot_r *r, void *dst, size_t n);
static inline int32_t frt_aot_i32(frt_aot_r *r) {
    int32_t v;
    frt_aot_get(r, &v, sizeof v);
    return v;
}
static inline int64_t frt_aot_i64(frt_aot_r *r) {
    int64_t v;
    frt_aot_get(r, &v, sizeof v);
    return v;
}
static inline float frt_aot_f32(frt_aot_r *r) {
    float v;
    frt_aot_get(r, &v, sizeof v);
    return v;
}
/* An int in [lo, hi]; else bad. */
int32_t frt_aot_int_in(frt_aot_r *r, int32_t lo, int32_t hi);
/* A blob written by frt_aot_put_blob copied into model memory; *n gets its size. A blob whose
 * size is not want (unless want is (size_t)-1) sets bad. Returns NULL for an empty blob. */
void *frt_aot_blob(frt_aot_r *r, size_t want, size_t *n);
/* n zeroed bytes of model memory for a kernel's parameters, or NULL when out of memory. */
void *frt_aot_params(frt_aot_r *r, size_t n);

/* Save / load of one op's kernel. save writes what load needs to rebuild s->k (fn, params,
 * flags); load gets the reader positioned there, the ISA tier the program was written at, the
 * step's values (shapes and dtypes of the program) and fills k. */
typedef frt_status (*frt_aot_save_fn)(const frt_step *s, frt_aot_w *w);
typedef frt_status (*frt_aot_load_fn)(frt_aot_r *r, frt_isa isa, const frt_step *s,
                                      const frt_value *values, frt_kernel *k);

/* The failure of a save function for a kernel it cannot write. */
frt_status frt_aot_unsupported(const frt_step *s, const char *why);

typedef struct frt_aot_op {
    const char *op_type; /* ai.onnx domain, or flatrt's internal ops */
    frt_aot_save_fn save;
    frt_aot_load_fn load;
} frt_aot_op;

/* The ops with a writer (full build) / reader (AOT build) in this build (aot_ops.c);
 * NULL-terminated. */
extern const frt_aot_op frt_aot_ops[];

#define FRT_AOT_DECL(fam)                                                                        \
    frt_status frt_aot_save_##fam(const frt_step *s, frt_aot_w *w);                              \
    frt_status frt_aot_load_##fam(frt_aot_r *r, frt_isa isa, const frt_step *s,                  \
                                  const frt_value *values, frt_kernel *k);
FRT_AOT_DECL(gemm)      /* Gemm (gemm.c) */
FRT_AOT_DECL(matmul)    /* MatMul (gemm.c) */
FRT_AOT_DECL(transpose) /* Transpose (tensor.c) */
FRT_AOT_DECL(concat)    /* Concat (tensor.c) */
FRT_AOT_DECL(arith)     /* Add, Sub, Mul, Div (elementwise.c) */
FRT_AOT_DECL(unary)     /* Relu, Sigmoid, Tanh, Clip on float32 (activation.c) */
#undef FRT_AOT_DECL

#if FRT_AOT_LOAD
/* frt_model_load_program from bytes (copied as needed; the caller may free them after). */
frt_status frt_model_load_program_buffer(const void *data, size_t size, frt_model **out);
#endif


#endif
