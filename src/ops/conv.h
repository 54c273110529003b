/* Conv: private interface shared by conv.c (op definition, portable kernels), conv_depthwise.c
 * and the AVX2 variants in x86/conv_*_avx2.c.
 *
 * FusedConv (an internal op a fusion pass makes from Conv -> Add [-> Relu/Clip]) is Conv with a
 * 4th input Z of the output's shape: Y = act(conv(X, W) + B + Z).
 *
 * Every convolution is handled as 2-D: a 1-D convolution (input [N, C, L]) is the 2-D case with
 * H = 1 and a 1-row kernel. Shapes:
 *   X [N, C, H, W]   W [M, C/group, kh, kw]   B [M] (optional)   Y [N, M, OH, OW]
 * Spatial input dims may be unknown at select: kernels read them from the values at run time and
 * resolve pads (auto_pad) with frt_conv_geometry().
 */
#ifndef FRT_OPS_CONV_H
#define FRT_OPS_CONV_H

#include "op.h"

enum {
    FRT_CONV_PAD_NOTSET = 0,
    FRT_CONV_PAD_SAME_UPPER,
    FRT_CONV_PAD_SAME_LOWER,
    FRT_CONV_PAD_VALID
};

/* Convolutions with fewer FLOPs run on the calling thread even with a pool: waking the pool's
 * sleeping workers costs tens of microseconds on the project machine (measured ~35-50 us per
 * region), more than splitting such a conv saves. */
#define FRT_CONV_PAR_MIN_FLOPS 5e5

/* Micro-tile of the AVX2 GEMM path: MR output channels x NR output positions. */
#define FRT_CONV_MR 6
#define FRT_CONV_NR 16

/* Kernel parameters, in the model arena; immutable after select. */
typedef struct frt_conv_params {
    int32_t nsp;        /* spatial rank of the node: 1 or 2 */
    int32_t auto_pad;   /* FRT_CONV_PAD_* */
    int64_t kh, kw;     /* kernel size (kh = 1 for 1-D) */
    int64_t sh, sw;     /* strides */
    int64_t dh, dw;     /* dilations */
    int64_t pt, pl, pb, pr; /* explicit pads (auto_pad NOTSET): top, left, bottom, right */
    int64_t group;
    int64_t M, Mg;      /* output channels, per group */
    int64_t Cg;         /* input channels per group */
    int64_t Kg;         /* Cg * kh * kw: GEMM depth per group */
    int32_t act;        /* nonzero: clamp outputs to [lo, hi] (fused Relu / Clip) */
    float lo, hi;
    const float *w;     /* constant W [M, Cg, kh, kw], or NULL: W is read at run time */
    /* AVX2 GEMM path */
    const float *wpack; /* [group][K block][mpanels][kc][MR], rows past Mg zero (the last K
                           block has Kg % kc rows) */
    int64_t mpanels;    /* ceil(Mg / MR) */
    int64_t kc, nc;     /* K and N blocking (nc a multiple of NR) */
} frt_conv_params;

/* Geometry of one run, from the actual input dims. */
typedef struct frt_conv_geom {
    int64_t N, C, H, W;   /* input (H = 1 for 1-D) */
    int64_t OH, OW;       /* output spatial dims */
    int64_t pt, pl;       /* top / left padding actually applied */
} frt_conv_geom;

/* Output size and leading pad of one spatial axis. in >= 0; k, s, d in [1, 2^31] (k is the
 * undilated size); for NOTSET, pb/pe are the explicit pads, in [0, 2^31]. Returns the output size
 * (0: the kernel does not fit, -1: in plus pads overflows int64; callers report both as shape
 * errors) and sets *pad_begin. */
int64_t frt_conv_out_dim(int64_t in, int64_t k, int64_t s, int64_t d, int auto_pad, int64_t pb,
                         int64_t pe, int64_t *pad_begin);

/* Resolves the geometry of a run from x dims ([N, C, L] or [N, C, H, W]). */
void frt_conv_geometry(const frt_conv_params *p, const frt_value *x, frt_conv_geom *g);

/* The weights of a run: p->w, or W from the values when it is not a constant (checked against
 * the shape seen at select; FRT_ERR_SHAPE otherwise). */
frt_status frt_conv_weights(const frt_step *s, const frt_exec *x, const float **w);

/* Fused activation over n floats: clamp to [p->lo, p->hi] when p->act. */
void frt_conv_act_ref(const frt_conv_params *p, float *y, int64_t n);

/* FusedConv: the sum input Z of a run (input 3, the output's shape), or NULL for Conv.
 * frt_conv_sum_act: y[i] = act(y[i] + z[i]). */
const float *frt_conv_sum(const frt_step *s, const frt_exec *x);
void frt_conv_sum_act(const frt_conv_params *p, float *y, const float *z, int64_t n);

/* Depthwise (Cg == 1, group == C > 1), portable, any kernel/stride/dilation/pad/multiplier. */
frt_status frt_conv_depthwise_ref(const frt_step *s, frt_exec *x);
/* One output channel plane of a depthwise conv: y[OH*OW] from x[H*W] with kernel w[kh*kw],
 * bias b, rows [oh0, oh1). Shared by the portable kernel and the AVX2 kernel's fallbacks. */
void frt_conv_dw_plane_ref(const frt_conv_params *p, const frt_conv_geom *g,
                           const float *restrict x, const float *restrict w, float b,
                           float *restrict y, int64_t oh0, int64_t oh1);

#if FRT_HAVE_X86
/* AVX2+FMA variants (x86/conv_*_avx2.c). Only call when the CPU has AVX2 and FMA. */
/* Packs W [M, Cg*kh*kw] into p->wpack (allocated in arena); sets mpanels. */
frt_status frt_conv_pack_weights_avx2(frt_conv_params *p, const float *w, frt_arena *arena);
frt_status frt_conv_gemm_avx2(const frt_step *s, frt_exec *x);
size_t frt_conv_gemm_avx2_scratch(const frt_step *s, const frt_value *values);
frt_status frt_conv_depthwise_avx2(const frt_step *s, frt_exec *x);
#endif

/* Test hook: when nonzero, select picks only portable kernels (no AVX2). Not thread-safe; set
 * it before loading. 0 by default. */
void frt_conv_set_portable_only(int on);

#endif
