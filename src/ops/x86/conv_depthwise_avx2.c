/* Depthwise convolution with AVX2/FMA: fast paths for 3x3, dilation 1, stride 1 or 2 (same in
 * both axes); every other shape goes through the portable plane kernel.
 *
 * Direct: each output row is computed 8 outputs per vector straight from the (up to) three input
 * rows it needs, with no copies. Vectors whose window crosses the left or right edge of the input
 * use masked loads (zeros outside the row); input rows outside the plane are skipped.
 *   stride 1: out[ow..ow+7] = sum_ky,kx w[ky][kx] * x[ih+ky][ow - pl + kx + (0..7)]
 *   stride 2: the 16 inputs under 8 outputs are split into even and odd columns:
 *             kx = 0 -> evens of x[c..c+15], kx = 1 -> odds, kx = 2 -> evens of x[c+2..c+17],
 *             c = 2*ow - pl.
 * When OW is not a multiple of 8 the last vector of a row overlaps the previous one (recomputing
 * the same values); rows narrower than 8 store a full vector whose extra lanes the next row
 * overwrites, and the plane's last row uses a masked store.
 */
#include <immintrin.h>
#include <stdint.h>

#include "ops/conv.h"
#include "runtime/threadpool.h"

static inline __m256 evens(__m256 v0, __m256 v1) {
    __m256 e = _mm256_shuffle_ps(v0, v1, _MM_SHUFFLE(2, 0, 2, 0));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
}
static inline __m256 odds(__m256 v0, __m256 v1) {
    __m256 o = _mm256_shuffle_ps(v0, v1, _MM_SHUFFLE(3, 1, 3, 1));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(o), _MM_SHUFFLE(3, 1, 2, 0)));
}

/* Masks of the loads of one vector position (see load_cols): stride 1 loads columns c, c+1,
 * c+2; stride 2 loads c, c+8, c+2, c+10. */
typedef struct dw_masks {
    __m256i m[4];
} dw_masks;

static inline __m256i cols_mask(int64_t c, int64_t W) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i idx = _mm256_add_epi32(lane, _mm256_set1_epi32((int32_t)c));
    return _mm256_and_si256(_mm256_cmpgt_epi32(idx, _mm256_set1_epi32(-1)),
                            _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)W), idx));
}

static void masks_for(dw_masks *mk, int64_t ow, int64_t pl, int64_t W, int s) {
    if (s == 1) {
        for (int k = 0; k < 3; k++) mk->m[k] = cols_mask(ow - pl + k, W);
        mk->m[3] = _mm256_setzero_si256();
    } else {
        static const int off[4] = {0, 8, 2, 10};
        for (int k = 0; k < 4; k++) mk->m[k] = cols_mask(2 * ow - pl + off[k], W);
    }
}

/* row + c with integer arithmetic: the address may lie outside the row when c < 0, and only
 * the lanes a mask keeps are accessed. */
static inline __m256 mload(const float *row, int64_t c, __m256i m) {
    const float *base = (const float *)((uintptr_t)row + (uintptr_t)(c * (int64_t)sizeof(float)));
    return _mm256_maskload_ps(base, m);
}

/* acc + sum_kx k_kx * (input row under the 8 outputs starting at ow); mk: masked loads. */
static inline __attribute__((always_inline)) __m256 row3(__m256 acc, const float *r, int64_t ow,
                                                          int64_t pl, int s, const dw_masks *mk,
                                                          __m256 k0, __m256 k1, __m256 k2) {
    if (s == 1) {
        int64_t c = ow - pl;
        if (!mk) {
            acc = _mm256_fmadd_ps(k0, _mm256_loadu_ps(r + c), acc);
            acc = _mm256_fmadd_ps(k1, _mm256_loadu_ps(r + c + 1), acc);
            return _mm256_fmadd_ps(k2, _mm256_loadu_ps(r + c + 2), acc);
        }
        acc = _mm256_fmadd_ps(k0, mload(r, c, mk->m[0]), acc);
        acc = _mm256_fmadd_ps(k1, mload(r, c + 1, mk->m[1]), acc);
        return _mm256_fmadd_ps(k2, mload(r, c + 2, mk->m[2]), acc);
    }
    int64_t c = 2 * ow - pl;
    __m256 v0, v1, v2, v3;
    if (!mk) {
        v0 = _mm256_loadu_ps(r + c);
        v1 = _mm256_loadu_ps(r + c + 8);
        v2 = _mm256_loadu_ps(r + c + 2);
        v3 = _mm256_loadu_ps(r + c + 10);
    } else {
        v0 = mload(r, c, mk->m[0]);
        v1 = mload(r, c + 8, mk->m[1]);
        v2 = mload(r, c + 2, mk->m[2]);
        v3 = mload(r, c + 10, mk->m[3]);
    }
    acc = _mm256_fmadd_ps(k0, evens(v0, v1), acc);
    acc = _mm256_fmadd_ps(k1, odds(v0, v1), acc);
    return _mm256_fmadd_ps(k2, evens(v2, v3), acc);
}

#define DW_MAXV 32 /* vector positions per row with precomputed masks (OW <= 256) */

/* Vector positions of an output row: ow = min(8v, max(OW, 8) - 8) for v < nv; edge[v] when the
 * window of that vector leaves [0, W) (masked loads with masks[v]). */
typedef struct dw_rowplan {
    int64_t nv;
    int64_t pl, W;
    int planned; /* edge and masks filled (nv <= DW_MAXV) */
    unsigned char edge[DW_MAXV];
    dw_masks masks[DW_MAXV];
} dw_rowplan;

static int64_t vec_ow(int64_t v, int64_t OW) {
    int64_t last = (OW < 8 ? 8 : OW) - 8;
    return 8 * v < last ? 8 * v : last;
}

/* Vectors starting at ow with ow*s - pl >= 0 and ow*s - pl + span <= W read inside the row. */
static int is_edge(int64_t ow, int64_t pl, int64_t W, int s) {
    int64_t c = ow * s - pl, span = s == 1 ? 10 : 18;
    return c < 0 || c + span > W;
}

/* Returns 0 when OW is too wide to plan (masks are then computed per vector). */
static int dw_plan_rows(dw_rowplan *rp, int64_t OW, int64_t W, int64_t pl, int s) {
    rp->nv = (OW + 7) / 8;
    rp->pl = pl;
    rp->W = W;
    rp->planned = rp->nv <= DW_MAXV;
    if (!rp->planned) return 0;
    for (int64_t v = 0; v < rp->nv; v++) {
        int64_t ow = vec_ow(v, OW);
        rp->edge[v] = (unsigned char)is_edge(ow, pl, W, s);
        if (rp->edge[v]) masks_for(&rp->masks[v], ow, pl, W, s);
    }
    return 1;
}

/* One output row from input rows r0, r1, r2 (NULL: outside the plane, contributes nothing). */
static inline __attribute__((always_inline)) void dw3x3_row(
    const float *r0, const float *r1, const float *r2, float *yr, int64_t OW,
    const dw_rowplan *rp, int s, const __m256 *wv, __m256 vb, int act, __m256 vlo, __m256 vhi,
    int last_row) {
    const int64_t pl = rp->pl;
    for (int64_t v = 0; v < rp->nv; v++) {
        int64_t ow = vec_ow(v, OW);
        const dw_masks *mk = NULL;
        dw_masks tmp;
        if (rp->planned) {
            if (rp->edge[v]) mk = &rp->masks[v];
        } else if (is_edge(ow, pl, rp->W, s)) {
            masks_for(&tmp, ow, pl, rp->W, s);
            mk = &tmp;
        }
        __m256 a = vb, b = _mm256_setzero_ps(), c = _mm256_setzero_ps();
        if (mk) {
            if (r0) a = row3(a, r0, ow, pl, s, mk, wv[0], wv[1], wv[2]);
            if (r1) b = row3(b, r1, ow, pl, s, mk, wv[3], wv[4], wv[5]);
            if (r2) c = row3(c, r2, ow, pl, s, mk, wv[6], wv[7], wv[8]);
        } else {
            if (r0) a = row3(a, r0, ow, pl, s, NULL, wv[0], wv[1], wv[2]);
            if (r1) b = row3(b, r1, ow, pl, s, NULL, wv[3], wv[4], wv[5]);
            if (r2) c = row3(c, r2, ow, pl, s, NULL, wv[6], wv[7], wv[8]);
        }
        a = _mm256_add_ps(a, _mm256_add_ps(b, c));
        if (act) a = _mm256_min_ps(vhi, _mm256_max_ps(vlo, a));
        if (OW >= 8) {
            _mm256_storeu_ps(yr + ow, a);
        } else if (!last_row) {
            _mm256_storeu_ps(yr, a); /* lanes past OW are rewritten by the next row */
        } else {
            const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
            _mm256_maskstore_ps(yr, _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)OW), lane), a);
        }
    }
}

/* One plane of a 3x3 dilation-1 depthwise conv with stride s (1 or 2). */
static void dw3x3_plane(const frt_conv_params *p, const frt_conv_geom *g, const dw_rowplan *rp,
                        const float *x, const float *w, float bias, float *y, int s) {
    __m256 wv[9];
    for (int i = 0; i < 9; i++) wv[i] = _mm256_set1_ps(w[i]);
    const __m256 vb = _mm256_set1_ps(bias);
    const __m256 vlo = _mm256_set1_ps(p->lo), vhi = _mm256_set1_ps(p->hi);
    const int64_t H = g->H, W = g->W, OW = g->OW, OH = g->OH;
    for (int64_t oh = 0; oh < OH; oh++) {
        int64_t ih = oh * s - g->pt;
        float *yr = y + oh * OW;
        int last = oh + 1 == OH;
        if (ih >= 0 && ih + 2 < H) {
            const float *r0 = x + ih * W;
            if (s == 1)
                dw3x3_row(r0, r0 + W, r0 + 2 * W, yr, OW, rp, 1, wv, vb, p->act, vlo, vhi, last);
            else
                dw3x3_row(r0, r0 + W, r0 + 2 * W, yr, OW, rp, 2, wv, vb, p->act, vlo, vhi, last);
        } else {
            const float *r[3];
            for (int k = 0; k < 3; k++)
                r[k] = ih + k >= 0 && ih + k < H ? x + (ih + k) * W : NULL;
            dw3x3_row(r[0], r[1], r[2], yr, OW, rp, s, wv, vb, p->act, vlo, vhi, last);
        }
    }
}

typedef struct dw_task {
    const frt_conv_params *p;
    const frt_conv_geom *g;
    const float *x, *w, *bias;
    float *y;
    int fast; /* 0: portable planes; 1 or 2: 3x3 stride */
    dw_rowplan rp;
} dw_task;

static void dw_task_fn(void *ctx, size_t i) {
    const dw_task *t = ctx;
    const frt_conv_params *p = t->p;
    const frt_conv_geom *g = t->g;
    int64_t n = (int64_t)i / p->M, m = (int64_t)i % p->M;
    const float *xp = t->x + (n * g->C + m / p->Mg) * g->H * g->W;
    const float *wp = t->w + m * p->kh * p->kw;
    float b = t->bias ? t->bias[m] : 0.0f;
    float *yp = t->y + (int64_t)i * g->OH * g->OW;
    if (t->fast == 1) {
        dw3x3_plane(p, g, &t->rp, xp, wp, b, yp, 1);
    } else if (t->fast == 2) {
        dw3x3_plane(p, g, &t->rp, xp, wp, b, yp, 2);
    } else {
        frt_conv_dw_plane_ref(p, g, xp, wp, b, yp, 0, g->OH);
    }
}

frt_status frt_conv_depthwise_avx2(const frt_step *s, frt_exec *x) {
    const frt_conv_params *p = s->k.params;
    const frt_value *X = &x->values[s->in[0]];
    frt_conv_geom g;
    frt_conv_geometry(p, X, &g);
    dw_task t;
    t.p = p;
    t.g = &g;
    t.x = X->data;
    t.w = p->w ? p->w : (const float *)x->values[s->in[1]].data;
    t.bias = s->n_in > 2 && s->in[2] >= 0 ? (const float *)x->values[s->in[2]].data : NULL;
    t.y = x->values[s->out[0]].data;
    t.fast = 0;
    /* column indices go through 32-bit lanes in load_cols */
    if (p->kh == 3 && p->kw == 3 && p->dh == 1 && p->dw == 1 && p->sh == p->sw &&
        (p->sw == 1 || p->sw == 2) && g.W < INT32_MAX / 4 && g.pl < INT32_MAX / 4)
        t.fast = (int)p->sw;
    if (t.fast) dw_plan_rows(&t.rp, g.OW, g.W, g.pl, t.fast);
    frt_parallel_for(x->tp, (size_t)(g.N * p->M), dw_task_fn, &t);
    return FRT_OK;
}
