/* Conv: private interface shared by conv.c (op definition, portable kernels), conv_gemm.c (the
 * packed-weight GEMM driver), conv_depthwise.c (depthwise drivers) and the SIMD inner loops in
 * x86/conv_*_{avx2,avx512}.c. The x86 files hold only inner loops and packing; they call nothing
 * in the portable files (drivers call them through the variant tables below).
 *
 * FusedConv (an internal op a fusion pass makes from Conv -> Add [-> Relu/Clip]) is Conv with a
 * 4th input Z of the output's shape: Y = act(conv(X, W) + B + Z).
 *
 * Fused activation (node->act, see frt_act_kind in ir/ir.h), applied after bias and sum:
 *   RELU, CLIP           p->act = 1, clamp to [p->lo, p->hi] (in the kernels' registers)
 *   SILU                 p->post = FRT_CONV_POST_SILU:        y = x sigmoid(x)
 *   HARDSWISH            p->post = FRT_CONV_POST_HARDSWISH:   y = x max(0, min(1, x/6 + 1/2))
 *   HARDSIGMOID(a, b)    p->post = FRT_CONV_POST_HARDSIGMOID: y = max(0, min(1, a x + b)),
 *                        p->post_prm = {a, b}
 *   SIGMOID              p->post = FRT_CONV_POST_SIGMOID:     y = 1 / (1 + e^-x)
 * The nonlinear kinds are applied by frt_conv_post() on a block of outputs just written (still in
 * cache), with the tier's vector loop of the parametric activations (x86/simd_act.h).
 *
 * Every convolution is handled as 2-D: a 1-D convolution (input [N, C, L]) is the 2-D case with
 * H = 1 and a 1-row kernel. Shapes:
 *   X [N, C, H, W]   W [M, C/group, kh, kw]   B [M] (optional)   Y [N, M, OH, OW]
 * Spatial input dims may be unknown at select: kernels read them from the values at run time and
 * resolve pads (auto_pad) with frt_conv_geometry().
 */
#ifndef FRT_OPS_CONV_H
#define FRT_OPS_CONV_H

#include "cpu.h"
#include "op.h"

enum {
    FRT_CONV_PAD_NOTSET = 0,
    FRT_CONV_PAD_SAME_UPPER,
    FRT_CONV_PAD_SAME_LOWER,
    FRT_CONV_PAD_VALID
};

enum {
    FRT_CONV_POST_NONE = 0,
    FRT_CONV_POST_SILU,        /* x sigmoid(x) */
    FRT_CONV_POST_HARDSWISH,   /* x max(0, min(1, x/6 + 1/2)) */
    FRT_CONV_POST_HARDSIGMOID, /* max(0, min(1, post_prm[0] x + post_prm[1])) */
    FRT_CONV_POST_SIGMOID      /* 1 / (1 + e^-x) */
};

/* Kernel parameters, in the model arena; immutable after select. */
typedef struct frt_conv_params {
    frt_kernel_fn mean_inner; /* flatrt::ConvMean: the conv's kernel, run before the mean (conv.c) */
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
    int32_t post;       /* FRT_CONV_POST_*: nonlinear activation after the clamp */
    int32_t post_kind;  /* its FRT_ACTP_* kind for post_fn */
    float post_prm[4];  /* its parameters (HARDSIGMOID: alpha, beta) */
    /* the tier's parametric activation loop (frt_actp_fn), set when post is not NONE or SIGMOID */
    void (*post_fn)(int kind, const float *x, float *y, size_t n, const float *prm);
    /* the tier's sigmoid loop, set when post == SIGMOID */
    void (*post_sigmoid)(const float *x, float *y, size_t n);
    const float *w;     /* constant W [M, Cg, kh, kw], or NULL: W is read at run time */
    const struct frt_dw_variant *dwvar; /* depthwise fast path, or NULL */
    /* packed-weight GEMM path (conv_gemm.c), NULL var otherwise */
    const struct frt_conv_gemm_variant *var;
    const float *wpack; /* [group][K block][mpanels][kc][mr], rows past Mg zero (the last K
                           block has Kg % kc rows), + FRT_CONV_WPACK_SLACK floats */
    int64_t mpanels;    /* ceil(Mg / mr) */
    int64_t kc, nc;     /* K and N blocking (nc a multiple of nr) */
    /* reduced-precision weights (node->wprec, frt_options.weights_precision; conv_gemm.c):
     * wprec 1 fp16 / 2 bf16: whalf holds wpack's layout in half precision and wpack is NULL;
     * each K block is widened to float32 in scratch before the (float32) inner loops run */
    int32_t wprec;
    const uint16_t *whalf;
    void (*f16_to_f32)(const uint16_t *x, float *y, size_t n);
    /* the region split of this node (frt_conv_split_run), or NULL */
    const struct frt_conv_split *split;
} frt_conv_params;

/* Region split of a 2-D conv with constant weights and an input shape fixed at load (conv.c's
 * select builds it; conv_gemm.c runs it). Along each axis, the output positions fall into runs
 * (bands) with the same range of live kernel taps (those reading inside the input, not padding;
 * with dilation d and pad d, a 3x3's outer rows are live only for the d border rows). A region is
 * a row band x a column band; it runs as the packed GEMM of its live sub-kernel (rows ky0 ..
 * ky0 + p->kh - 1, columns kx0 .. kx0 + p->kw - 1 of W) over its output rectangle, its pads
 * shifted so each tap reads what the full kernel's tap reads there (negative pads: an offset into
 * X). Every output sums the products of the live taps in the full kernel's order (ci, ky, kx),
 * from the bias; the unsplit kernel adds the same products and, for the dead taps, w * 0, which
 * leaves a finite sum unchanged (up to the sign of a zero sum), so the results are the same bits
 * for finite W (select requires it) -- except at positions that either run takes through the AVX2
 * one-column tail kernel (the last 1-3 positions of a GEMM of 1-3 mod 16 positions), which sums K
 * in four interleaved partial sums: a region's GEMM has other tails than the whole output's. The
 * regions hold their own packed weights (M x Cg x their live taps each). The regions' GEMMs run without the activation and sum input
 * into scratch; the run then copies each into Y and applies the sum input and the activation
 * there, elementwise as the unsplit kernel does after its last K block. */
typedef struct frt_conv_region {
    int64_t oh0, oh1, ow0, ow1; /* output rectangle [oh0, oh1) x [ow0, ow1) */
    int64_t ky0, kx0;           /* first live kernel row / column */
    const frt_conv_params *p;   /* the sub-kernel (kh, kw, Kg, packed weights); no act / post */
} frt_conv_region;

typedef struct frt_conv_split {
    int64_t C, H, W, OH, OW; /* the input shape seen at load (channels, rows, columns), output */
    int64_t pt, pl;          /* the full kernel's top / left pads */
    int nregions;
    const frt_conv_region *regions;
} frt_conv_split;

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

/* Fused activation over n floats: clamp to [p->lo, p->hi] when p->act, then p->post. */
void frt_conv_act_ref(const frt_conv_params *p, float *y, int64_t n);
/* The nonlinear part alone (p->post) over n floats, in place. */
static inline void frt_conv_post(const frt_conv_params *p, float *y, int64_t n) {
    if (p->post == FRT_CONV_POST_NONE || n <= 0) return;
    if (p->post == FRT_CONV_POST_SIGMOID) p->post_sigmoid(y, y, (size_t)n);
    else p->post_fn(p->post_kind, y, y, (size_t)n, p->post_prm);
}

/* FusedConv: the sum input Z of a run (input 3, the output's shape), or NULL for Conv.
 * frt_conv_sum_act: y[i] = act(y[i] + z[i]). */
const float *frt_conv_sum(const frt_step *s, const frt_exec *x);
void frt_conv_sum_act(const frt_conv_params *p, float *y, const float *z, int64_t n);

/* One output channel plane of a depthwise conv (Cg == 1, group == C > 1), any kernel / stride /
 * dilation / pad / multiplier: y[OH*OW] from x[H*W] with kernel w[kh*kw], bias b, rows
 * [oh0, oh1). */
void frt_conv_dw_plane_ref(const frt_conv_params *p, const frt_conv_geom *g,
                           const float *restrict x, const float *restrict w, float b,
                           float *restrict y, int64_t oh0, int64_t oh1);

/* ---- packed-weight GEMM path (conv_gemm.c drives, a variant's inner loops compute) ----
 * Per (batch n, group gr): Y_g[Mg, P] = W_g[Mg, Kg] * col_g[Kg, P], P = OH*OW positions,
 * k = (ci*kh + ky)*kw + kx. W_g is packed at select into mr-row panels, the col block [kc x nc]
 * is packed per block from X into nr-wide panels [npan][kcur][nr] (zeros past ncur). */
#define FRT_CONV_WPACK_SLACK 16 /* floats after the packed weights that inner loops may read */
enum { FRT_CONV_UK_FIRST = 1, FRT_CONV_UK_LAST = 2 };

/* One position block x K block of a run: what the inner loops read. */
typedef struct frt_conv_gemm_ctx {
    const frt_conv_params *p;
    frt_conv_geom g;          /* flattened (H = 1, W = H*W) for pointwise convs */
    const float *xg;          /* X channels of the current (n, group) */
    int64_t cs;               /* stride between xg's channel planes (H*W; 3-D: D*H*W, xg at one
                                 depth plane) */
    float *yg;                /* Y rows of the current (n, group), row stride npos */
    const float *zg;          /* FusedConv sum input rows, same layout as yg, or NULL */
    const float *wg;          /* packed weights of the group (NULL with half weights) */
    const float *wk;          /* float32 panels of the current K block: [mpanels][kcur][mr] */
    float *wbuf;              /* with half weights: the task's buffer that wk points to */
    int64_t gr;               /* current group (3-D: the packed slice group * kd + kz) */
    int64_t od;               /* 3-D: output depth plane of the block (yg, zg point into it) */
    const float *bias;        /* bias of the group (Mg floats) or NULL */
    float *blk;               /* packed col block */
    int64_t npos;
    int64_t n0, ncur, npan;   /* position block: [n0, n0 + ncur), npan = ceil(ncur / nr) */
    int64_t k0, kcur;         /* K block */
    int jouter;               /* col panels outer loop (the K block's weights fit in L1) */
    int flags;                /* FRT_CONV_UK_FIRST (bias, no C read) | FRT_CONV_UK_LAST (z, act) */
} frt_conv_gemm_ctx;

/* Input columns an inner loop may address through 32-bit lanes; wider inputs are refused. */
#define FRT_CONV_COL_LIMIT ((int64_t)1 << 28)

typedef struct frt_conv_gemm_variant {
    frt_isa isa;
    const char *name_1x1, *name_im2col; /* kernel names (1x1 kernels / every other kernel) */
    int64_t mr, nr;                     /* register tile: mr output channels x nr positions */
    /* Packs K block [k0, k0 + kcur) x positions [n0, n0 + ncur) of t into t->blk. */
    void (*pack_block)(const frt_conv_gemm_ctx *t);
    /* Y tiles of weight panels [mp0, mp1) x every col panel of the packed block: Y = (FIRST ?
     * bias : Y) + W * col; when LAST, + z, then clamp to [lo, hi] when p->act. */
    void (*compute)(const frt_conv_gemm_ctx *t, int64_t mp0, int64_t mp1);
    /* Optional (NULL: compute is used): one output position of a 1x1 conv on a 1x1 input,
     * y[Mg] = bias + W_g x[Kg] (+ z), clamp when p->act, from the group's packed weights wg. */
    void (*gemv)(const frt_conv_params *p, const float *wg, const float *x, const float *bias,
                 const float *z, float *y);
} frt_conv_gemm_variant;

/* The GEMM path for cap, or NULL (portable: im2col + frt_sgemm in conv.c). */
const frt_conv_gemm_variant *frt_conv_gemm_pick(frt_isa cap);
/* Packs W [M, Cg*kh*kw] for var into p (wpack in arena; sets var, kc, nc, mpanels). */
frt_status frt_conv_gemm_pack(frt_conv_params *p, const frt_conv_gemm_variant *var,
                              const float *w, frt_arena *arena);
frt_status frt_conv_gemm_run(const frt_step *s, frt_exec *x);
size_t frt_conv_gemm_scratch(const frt_step *s, const frt_value *values);
/* The region split (p->split, see frt_conv_split) of a packed-GEMM node. */
frt_status frt_conv_split_run(const frt_step *s, frt_exec *x);
size_t frt_conv_split_scratch(const frt_step *s, const frt_value *values);

/* Parameters of every Conv node (conv.c's k->params): p, then the depth axis of a 3-D one (p's
 * kh, kw, sh, sw, dh, dw, pt, pl, pb, pr are then its H and W axes). */
typedef struct frt_conv_node_params {
    frt_conv_params p;
    int64_t kd, sd, dd, pf, pk; /* depth: kernel, stride, dilation, front and back pads */
} frt_conv_node_params;

/* 3-D (NCDHW) on the packed GEMM: per (image, group, output depth od), Y[:, od] = sum over the
 * kernel depths kz whose input plane id = od*sd - pf + kz*dd lies inside [0, D) of the 2-D
 * convolution of plane id with W[:, :, kz] (kz reading only padding are skipped, not multiplied
 * by zeros). p.Kg = Cg*kh*kw (one depth slice) and wpack holds group*kd slices, slice
 * gr*kd + kz = W[gr's Mg rows][:, kz] packed as a 2-D group (frt_conv_gemm_pack3d). Bias, sum
 * input and activation as in 2-D. */
frt_status frt_conv_gemm_pack3d(frt_conv_node_params *q, const frt_conv_gemm_variant *var,
                                const float *w, frt_arena *arena);
frt_status frt_conv_gemm_run3d(const frt_step *s, frt_exec *x);
size_t frt_conv_gemm_scratch3d(const frt_step *s, const frt_value *values);

/* Tail shapes of the AVX2 6 x 16 tile (x86/conv_avx2.c) that a product of Mg output channels
 * (per group) and npos positions runs: full-width tiles with 1-5 rows run as sub-tiles of 4, 2
 * and 1 rows in a selective build (R4, R2, R1), the last col panel of a block has npos % 16
 * positions (position blocks are multiples of 16 wide at any thread count): 1-3 take the
 * one-column kernel (COL), 4-8 the half-width edge tile (E8), 9-15 the full-width one (E16).
 * The trace records the tails a run takes ("conv_gemm_avx2_<tail>", conv_gemm.c) and a selective
 * build compiles only those (kernel classes TR1, TR2, TR4, TCOL, TE8, TE16 of Conv / FusedConv);
 * a run that needs another is refused naming it. */
enum {
    FRT_CONV_T_R1 = 1, FRT_CONV_T_R2 = 2, FRT_CONV_T_R4 = 4,
    FRT_CONV_T_COL = 8, FRT_CONV_T_E8 = 16, FRT_CONV_T_E16 = 32
};
static inline unsigned frt_conv_avx2_tails(int64_t Mg, int64_t npos) {
    int64_t r = Mg % 6, c = npos % 16;
    unsigned t = (r & 4 ? FRT_CONV_T_R4 : 0) | (r & 2 ? FRT_CONV_T_R2 : 0) |
                 (r & 1 ? FRT_CONV_T_R1 : 0);
    if (c >= 1 && c <= 3) t |= FRT_CONV_T_COL;
    else if (c >= 4 && c <= 8) t |= FRT_CONV_T_E8;
    else if (c > 8) t |= FRT_CONV_T_E16;
    return t;
}
/* The tails a selective build compiled (all of them in the full build). */
#define FRT_CONV_T_BUILT_(cls) (FRT_KERNEL_BUILT(Conv, cls) || FRT_KERNEL_BUILT(FusedConv, cls))
#define FRT_CONV_AVX2_TAILS_BUILT                                                               \
    ((FRT_CONV_T_BUILT_(TR1) ? FRT_CONV_T_R1 : 0) | (FRT_CONV_T_BUILT_(TR2) ? FRT_CONV_T_R2 : 0) | \
     (FRT_CONV_T_BUILT_(TR4) ? FRT_CONV_T_R4 : 0) |                                             \
     (FRT_CONV_T_BUILT_(TCOL) ? FRT_CONV_T_COL : 0) |                                           \
     (FRT_CONV_T_BUILT_(TE8) ? FRT_CONV_T_E8 : 0) | (FRT_CONV_T_BUILT_(TE16) ? FRT_CONV_T_E16 : 0))

#if FRT_HAVE_X86
void frt_conv_pack_block_avx2(const frt_conv_gemm_ctx *t);   /* nr = 16 */
void frt_conv_compute_avx2(const frt_conv_gemm_ctx *t, int64_t mp0, int64_t mp1); /* 6 x 16 */
void frt_conv_compute_avx512(const frt_conv_gemm_ctx *t, int64_t mp0, int64_t mp1); /* 16 x 16 */
void frt_conv_gemv_avx512(const frt_conv_params *p, const float *wg, const float *x,
                          const float *bias, const float *z, float *y);
#endif

/* ---- depthwise fast paths: 3x3, dilation 1, stride s = 1 or 2 in both axes ----
 * A variant fills a plan for one run's geometry (in FRT_DW_PLAN_BYTES of 64-aligned storage),
 * then computes single planes or blocks of 8 channels (multiplier 1). The driver
 * (conv_depthwise.c) adds the FusedConv sum and handles every other shape. */
#define FRT_DW_PLAN_BYTES 8192
/* 3x3 planes with OW * stride up to this many input columns per output row use channel blocks
 * (block8 or the channel-blocked path); wider ones the row kernels (measured on Zen 5). */
#define FRT_DW_BLOCK_MAXW 28
typedef struct frt_dw_variant {
    frt_isa isa;
    const char *name;
    /* Fills plan for stride s; returns the output rows per band of block8, or 0 when blocks of
     * 8 channels do not pay for this geometry (then only plane is used). */
    int64_t (*plan)(void *plan, const frt_conv_geom *g, int s);
    /* One output plane y[OH*OW] of channel weights w[9], bias b (p->act applied). */
    void (*plane)(const void *plan, const frt_conv_params *p, const frt_conv_geom *g,
                  const float *x, const float *w, float b, float *y, int s);
    /* Channels c..c+7: planes x8 + c*H*W, weights w8 + c*9, bias b8 (or NULL), outputs
     * y8 + c*OH*OW; band from plan. */
    void (*block8)(const void *plan, const frt_conv_params *p, const frt_conv_geom *g,
                   const float *x8, const float *w8, const float *b8, float *y8, int s,
                   int64_t band);
    /* Channel-blocked path (x86/conv_dw_impl.h): multiplier 1, dilation 1, k x k kernel with
     * k in {3, 5}, stride s in {1, 2} in both axes, any padding. lanes: channels per call.
     * blk_band: output rows per band, 0 when this geometry does not fit the buffers.
     * blk_run: channels [0, nc) (nc <= lanes) of one image: planes x + c*H*W, weights
     * w + c*k*k, bias b[c] (b may be NULL), outputs y + c*OH*OW; clamp and p->post applied. */
    int64_t lanes;
    int64_t (*blk_band)(const frt_conv_geom *g, int k, int s);
    void (*blk_run)(const frt_conv_params *p, const frt_conv_geom *g, const float *x,
                    const float *w, const float *b, float *y, int64_t nc, int64_t band, int k,
                    int s);
} frt_dw_variant;

/* The depthwise fast path for cap, or NULL (portable planes only). */
const frt_dw_variant *frt_conv_dw_pick(frt_isa cap);
/* Depthwise run with p->dwvar's fast paths where they apply, portable planes elsewhere. */
frt_status frt_conv_depthwise_run(const frt_step *s, frt_exec *x);

#if FRT_HAVE_X86
int64_t frt_dw3x3_plan_avx2(void *plan, const frt_conv_geom *g, int s);
void frt_dw3x3_plane_avx2(const void *plan, const frt_conv_params *p, const frt_conv_geom *g,
                          const float *x, const float *w, float b, float *y, int s);
void frt_dw3x3_block8_avx2(const void *plan, const frt_conv_params *p, const frt_conv_geom *g,
                           const float *x8, const float *w8, const float *b8, float *y8, int s,
                           int64_t band);
int64_t frt_dwb_band_avx2(const frt_conv_geom *g, int k, int s);
void frt_dwb_run_avx2(const frt_conv_params *p, const frt_conv_geom *g, const float *x,
                      const float *w, const float *b, float *y, int64_t nc, int64_t band, int k,
                      int s);
int64_t frt_dwb_band_avx512(const frt_conv_geom *g, int k, int s);
void frt_dwb_run_avx512(const frt_conv_params *p, const frt_conv_geom *g, const float *x,
                        const float *w, const float *b, float *y, int64_t nc, int64_t band,
                        int k, int s);
#endif

#endif
