/* Depthwise convolution with AVX2/FMA: fast paths for 3x3, dilation 1, stride 1 or 2 (same in
 * both axes); every other shape goes through the portable plane kernel.
 *
 * A plane is computed one output row at a time, 8 outputs per vector. The three input rows an
 * output row needs are first copied into a small ring of padded rows (zeros where the window
 * leaves the input), so the inner loop has no bounds checks and no scalar edges:
 *   stride 1: R[j] = x[ih][j - pl]                  out[ow] = sum_kx w[kx] * R[ow + kx]
 *   stride 2: E[j] = x[ih][2j - pl], O[j] = x[ih][2j + 1 - pl]  (deinterleaved)
 *             out[ow] = w[0] * E[ow] + w[1] * O[ow] + w[2] * E[ow + 1]
 * Each input row is padded once and reused by the output rows that need it (ring of 4 rows keyed
 * by ih). The last vector of a row overlaps the previous one when OW is not a multiple of 8
 * (recomputing the same values); rows narrower than 8 go through a small buffer.
 */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "ops/conv.h"
#include "runtime/threadpool.h"

#define DW_MAXOW 1024                /* wider rows use the portable kernel */
#define DW_SLOT (2 * (DW_MAXOW + 16)) /* floats per ring slot (E and O halves for stride 2) */

typedef struct dw_ring {
    int64_t tag[4]; /* input row held by each slot */
    _Alignas(32) float buf[4][DW_SLOT];
} dw_ring;

/* Padded row of width len for stride 1: r[j] = x[j - pl] inside the input, else 0. */
static void build_s1(float *r, const float *xr, int64_t W, int64_t pl, int64_t len) {
    if (!xr) {
        memset(r, 0, (size_t)len * sizeof(float));
        return;
    }
    int64_t a = pl < len ? pl : len;              /* [0, a): left zeros */
    int64_t b = pl + W < len ? pl + W : len;      /* [a, b): input */
    if (b < a) b = a;
    memset(r, 0, (size_t)a * sizeof(float));
    if (b > a) memcpy(r + a, xr + (a - pl), (size_t)(b - a) * sizeof(float));
    memset(r + b, 0, (size_t)(len - b) * sizeof(float));
}

/* Deinterleaved padded row of width len for stride 2: e[j] = x[2j - pl], o[j] = x[2j + 1 - pl]. */
static void build_s2(float *e, float *o, const float *xr, int64_t W, int64_t pl, int64_t len) {
    if (!xr) {
        memset(e, 0, (size_t)len * sizeof(float));
        memset(o, 0, (size_t)len * sizeof(float));
        return;
    }
    int64_t j = 0;
    for (; j < len && 2 * j - pl < 0; j++) {
        int64_t iw = 2 * j - pl;
        e[j] = 0.0f;
        o[j] = iw + 1 >= 0 && iw + 1 < W ? xr[iw + 1] : 0.0f;
    }
    /* 8 pairs from x[2j - pl .. 2j - pl + 15], all inside the row */
    for (; j + 8 <= len && 2 * j - pl + 15 <= W - 1; j += 8) {
        const float *s = xr + 2 * j - pl;
        __m256 v0 = _mm256_loadu_ps(s), v1 = _mm256_loadu_ps(s + 8);
        __m256 ev = _mm256_shuffle_ps(v0, v1, _MM_SHUFFLE(2, 0, 2, 0));
        __m256 od = _mm256_shuffle_ps(v0, v1, _MM_SHUFFLE(3, 1, 3, 1));
        ev = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), _MM_SHUFFLE(3, 1, 2, 0)));
        od = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(od), _MM_SHUFFLE(3, 1, 2, 0)));
        _mm256_storeu_ps(e + j, ev);
        _mm256_storeu_ps(o + j, od);
    }
    for (; j < len; j++) {
        int64_t iw = 2 * j - pl;
        e[j] = iw >= 0 && iw < W ? xr[iw] : 0.0f;
        o[j] = iw + 1 >= 0 && iw + 1 < W ? xr[iw + 1] : 0.0f;
    }
}

static const float *ring_row(dw_ring *rg, const frt_conv_geom *g, const float *x, int64_t ih,
                             int s, int64_t len) {
    int slot = (int)(ih & 3);
    float *r = rg->buf[slot];
    if (rg->tag[slot] != ih) {
        const float *xr = ih >= 0 && ih < g->H ? x + ih * g->W : NULL;
        if (s == 1)
            build_s1(r, xr, g->W, g->pl, len);
        else
            build_s2(r, r + DW_SLOT / 2, xr, g->W, g->pl, len);
        rg->tag[slot] = ih;
    }
    return r;
}

/* One plane of a 3x3 dilation-1 stride-s (1 or 2) depthwise conv. OW <= DW_MAXOW. */
static void dw3x3_plane(const frt_conv_params *p, const frt_conv_geom *g, const float *x,
                        const float *w, float bias, float *y, int s, dw_ring *rg) {
    const int64_t OW = g->OW, OWv = OW < 8 ? 8 : OW;
    const int64_t len = s == 1 ? OWv + 2 : OWv + 1;
    for (int i = 0; i < 4; i++) rg->tag[i] = INT64_MIN;
    __m256 w0 = _mm256_set1_ps(w[0]), w1 = _mm256_set1_ps(w[1]), w2 = _mm256_set1_ps(w[2]);
    __m256 w3 = _mm256_set1_ps(w[3]), w4 = _mm256_set1_ps(w[4]), w5 = _mm256_set1_ps(w[5]);
    __m256 w6 = _mm256_set1_ps(w[6]), w7 = _mm256_set1_ps(w[7]), w8 = _mm256_set1_ps(w[8]);
    const __m256 vb = _mm256_set1_ps(bias);
    const __m256 vlo = _mm256_set1_ps(p->lo), vhi = _mm256_set1_ps(p->hi);
    const int act = p->act;
    _Alignas(32) float tail[8];
    for (int64_t oh = 0; oh < g->OH; oh++) {
        int64_t ih = oh * s - g->pt;
        const float *r0 = ring_row(rg, g, x, ih, s, len);
        const float *r1 = ring_row(rg, g, x, ih + 1, s, len);
        const float *r2 = ring_row(rg, g, x, ih + 2, s, len);
        float *yr = y + oh * OW;
        for (int64_t ow = 0;; ow += 8) {
            if (ow > OWv - 8) ow = OWv - 8;
            __m256 a, b2, c;
            if (s == 1) {
                a = _mm256_fmadd_ps(w0, _mm256_loadu_ps(r0 + ow), vb);
                b2 = _mm256_mul_ps(w3, _mm256_loadu_ps(r1 + ow));
                c = _mm256_mul_ps(w6, _mm256_loadu_ps(r2 + ow));
                a = _mm256_fmadd_ps(w1, _mm256_loadu_ps(r0 + ow + 1), a);
                b2 = _mm256_fmadd_ps(w4, _mm256_loadu_ps(r1 + ow + 1), b2);
                c = _mm256_fmadd_ps(w7, _mm256_loadu_ps(r2 + ow + 1), c);
                a = _mm256_fmadd_ps(w2, _mm256_loadu_ps(r0 + ow + 2), a);
                b2 = _mm256_fmadd_ps(w5, _mm256_loadu_ps(r1 + ow + 2), b2);
                c = _mm256_fmadd_ps(w8, _mm256_loadu_ps(r2 + ow + 2), c);
            } else {
                const int64_t h = DW_SLOT / 2; /* odd half */
                a = _mm256_fmadd_ps(w0, _mm256_loadu_ps(r0 + ow), vb);
                b2 = _mm256_mul_ps(w3, _mm256_loadu_ps(r1 + ow));
                c = _mm256_mul_ps(w6, _mm256_loadu_ps(r2 + ow));
                a = _mm256_fmadd_ps(w1, _mm256_loadu_ps(r0 + h + ow), a);
                b2 = _mm256_fmadd_ps(w4, _mm256_loadu_ps(r1 + h + ow), b2);
                c = _mm256_fmadd_ps(w7, _mm256_loadu_ps(r2 + h + ow), c);
                a = _mm256_fmadd_ps(w2, _mm256_loadu_ps(r0 + ow + 1), a);
                b2 = _mm256_fmadd_ps(w5, _mm256_loadu_ps(r1 + ow + 1), b2);
                c = _mm256_fmadd_ps(w8, _mm256_loadu_ps(r2 + ow + 1), c);
            }
            a = _mm256_add_ps(a, _mm256_add_ps(b2, c));
            if (act) a = _mm256_min_ps(vhi, _mm256_max_ps(vlo, a));
            if (OW >= 8) {
                _mm256_storeu_ps(yr + ow, a);
            } else {
                _mm256_store_ps(tail, a);
                memcpy(yr, tail, (size_t)OW * sizeof(float));
            }
            if (ow + 8 >= OWv) break;
        }
    }
}

typedef struct dw_task {
    const frt_conv_params *p;
    const frt_conv_geom *g;
    const float *x, *w, *bias;
    float *y;
    int fast; /* 0: portable planes; 1 or 2: 3x3 stride */
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
    if (t->fast) {
        dw_ring rg;
        dw3x3_plane(p, g, xp, wp, b, yp, t->fast, &rg);
    } else {
        frt_conv_dw_plane_ref(p, g, xp, wp, b, yp, 0, g->OH);
    }
}

frt_status frt_conv_depthwise_avx2(const frt_step *s, frt_exec *x) {
    const frt_conv_params *p = s->k.params;
    const frt_value *X = &x->values[s->in[0]];
    frt_conv_geom g;
    frt_conv_geometry(p, X, &g);
    dw_task t = {p, &g, X->data,
                 p->w ? p->w : (const float *)x->values[s->in[1]].data,
                 s->n_in > 2 && s->in[2] >= 0 ? (const float *)x->values[s->in[2]].data : NULL,
                 x->values[s->out[0]].data, 0};
    if (p->kh == 3 && p->kw == 3 && p->dh == 1 && p->dw == 1 && p->sh == p->sw &&
        (p->sw == 1 || p->sw == 2) && g.OW <= DW_MAXOW)
        t.fast = (int)p->sw;
    frt_parallel_for(x->tp, (size_t)(g.N * p->M), dw_task_fn, &t);
    return FRT_OK;
}
