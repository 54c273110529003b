/* DFT STFT HannWindow HammingWindow BlackmanWindow MelWeightMatrix (opset 17). Portable, in
 * double; real (last dim 1) and complex (last dim 2) signals of float32, float64, float16.
 *
 * DFT (17..19): X [..., n_axis, ..., 1|2], optional dft_length (input 1, scalar int), axis
 *   (default 1; a dim of X other than the last), inverse (0), onesided (0). The signal along
 *   axis is zero-padded or truncated to n = dft_length (default n_axis); Y has X's shape with
 *   dims[axis] = onesided ? n/2 + 1 : n and last dim 2:
 *     Y[k] = sum_t X[t] e^(-+2 pi i k t / n)   (inverse: + and a factor 1/n).
 *   onesided with inverse is FRT_ERR_UNSUPPORTED.
 * STFT: signal [B, L, 1|2], frame_step (scalar), window (optional [W]), frame_length (optional
 *   scalar, else W): frames F = (L - frame_length) / frame_step + 1, output [B, F, bins, 2] with
 *   bins = onesided (default 1) ? frame_length/2 + 1 : frame_length; frame f is the DFT of
 *   signal[f*step .. f*step + frame_length) times the window.
 * Hann/Hamming/BlackmanWindow: size (scalar int), periodic (1), output_datatype (1 = float32;
 *   float64, float16 too): N = periodic ? size : size - 1, k = 0..size-1:
 *     Hann a0 - a1 cos(2 pi k / N), a0 = a1 = 1/2; Hamming a0 = 25/46, a1 = 21/46;
 *     Blackman 0.42 - 0.5 cos(2 pi k / N) + 0.08 cos(4 pi k / N).
 * MelWeightMatrix: num_mel_bins, dft_length, sample_rate (scalar ints), lower/upper_edge_hertz
 *   (scalar floats), output_datatype (1): [dft_length/2 + 1, num_mel_bins] triangular filters
 *   between mel-spaced bin indices, computed as the ONNX reference does (mel step over
 *   num_mel_bins + 2 points, bins floor((dft_length + 1) f / sample_rate)).
 * Output shapes depend on the data of the size inputs (FRT_OP_SHAPE_IN): infer reads them when
 * known and leaves the dims -1 otherwise; kernels check them against the output's shape.
 */
#include <math.h>
#include <string.h>

#include "dtype_util.h"
#include "op.h"

static const double PI = 3.14159265358979323846;

/* Scalar integer input i (one element); false when absent or not known. */
static bool scalar_int(const frt_value *v, int64_t *out) {
    if (!v || !v->data || v->numel != 1 || !frt_dtype_is_int(v->dtype)) return false;
    *out = frt_ld_i64(v->dtype, v->data, 0);
    return true;
}

static bool out_float_dtype(int64_t dt) {
    return dt == FRT_FLOAT32 || dt == FRT_FLOAT64 || dt == FRT_FLOAT16;
}

/* One DFT of n points of a signal of `len` available points (zero beyond), element t at
 * x[xoff + t * xs] (real) or the pair at x[xoff + 2 t xs] (cplx), times win[t] when win is not
 * NULL (dtype dt too); bins [0, nb) written as (re, im) pairs at y[yoff + 2 k ys]. */
static void dft1(int32_t dt, const void *x, int64_t xoff, int64_t xs, int64_t len, bool cplx,
                 const void *win, int64_t n, int64_t nb, bool inverse, int32_t ydt, void *y,
                 int64_t yoff, int64_t ys) {
    const double sg = inverse ? 1.0 : -1.0;
    for (int64_t k = 0; k < nb; k++) {
        double re = 0, im = 0;
        for (int64_t t = 0; t < n && t < len; t++) {
            double a = frt_ld_f64(dt, x, xoff + t * xs * (cplx ? 2 : 1));
            double b = cplx ? frt_ld_f64(dt, x, xoff + t * xs * 2 + 1) : 0.0;
            if (win) {
                const double w = frt_ld_f64(dt, win, t);
                a *= w;
                b *= w;
            }
            double ang = sg * 2.0 * PI * (double)((k * t) % n) / (double)n;
            double c = cos(ang), s = sin(ang);
            re += a * c - b * s;
            im += a * s + b * c;
        }
        if (inverse) {
            re /= (double)n;
            im /= (double)n;
        }
        frt_st_f64(ydt, y, yoff + k * ys * 2, re);
        frt_st_f64(ydt, y, yoff + k * ys * 2 + 1, im);
    }
}

/* ---- DFT ----------------------------------------------------------------------------------- */

typedef struct dft_params {
    int64_t axis;
    bool inverse, onesided;
} dft_params;

static frt_status dft_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, 2, 1, 1);
    if (!st) st = frt_op_check_input(c, 0, 0);
    if (st) return st;
    const frt_value *x = c->in[0];
    if (!frt_dtype_is_float(x->dtype))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported (float32, float64, "
                           "float16)", frt_dtype_name(x->dtype));
    const frt_value *lv = c->n_in > 1 ? c->in[1] : NULL;
    if (lv && !frt_dtype_is_int(lv->dtype))
        return frt_op_fail(c, FRT_ERR_SHAPE, "dft_length must be an integer scalar");
    bool onesided = frt_attr_int(c->node, "onesided", 0) != 0;
    int64_t axis = frt_attr_int(c->node, "axis", 1);
    if (x->rank < 0) {
        frt_op_set_shape(c->out[0], x->dtype, -1, NULL);
        return FRT_OK;
    }
    if (x->rank < 2)
        return frt_op_fail(c, FRT_ERR_SHAPE, "input rank %d < 2 ([..., signal, 1|2])", x->rank);
    int ax = frt_norm_axis(axis, x->rank);
    if (ax < 0 || ax == x->rank - 1)
        return frt_op_fail(c, FRT_ERR_SHAPE, "axis %lld out of range for rank %d",
                           (long long)axis, x->rank);
    int64_t last = x->dims[x->rank - 1];
    if (last >= 0 && last != 1 && last != 2)
        return frt_op_fail(c, FRT_ERR_SHAPE, "last dim is %lld (1 real, 2 complex)",
                           (long long)last);
    int64_t d[FRT_MAX_RANK], n = x->dims[ax];
    memcpy(d, x->dims, sizeof(int64_t) * (size_t)x->rank);
    if (lv) {
        if (!scalar_int(lv, &n)) n = -1;
        else if (n < 1)
            return frt_op_fail(c, FRT_ERR_SHAPE, "dft_length %lld < 1", (long long)n);
    }
    d[ax] = n < 0 ? -1 : onesided ? n / 2 + 1 : n;
    d[x->rank - 1] = 2;
    frt_op_set_shape(c->out[0], x->dtype, x->rank, d);
    return FRT_OK;
}

static frt_status k_dft(const frt_step *s, frt_exec *x) {
    const dft_params *p = s->k.params;
    const frt_value *xv = &x->values[s->in[0]];
    frt_value *yv = &x->values[s->out[0]];
    int r = xv->rank, ax = frt_norm_axis(p->axis, r);
    if (r < 2 || ax < 0 || ax == r - 1) return frt_step_fail(s, FRT_ERR_SHAPE, "bad axis");
    int64_t n = xv->dims[ax];
    if (s->n_in > 1 && s->in[1] >= 0 && !scalar_int(&x->values[s->in[1]], &n))
        return frt_step_fail(s, FRT_ERR_SHAPE, "dft_length must be one integer");
    const int64_t nb = p->onesided ? n / 2 + 1 : n;
    if (n < 1 || yv->dims[ax] != nb)
        return frt_step_fail(s, FRT_ERR_SHAPE, "dft_length %lld does not match the output",
                             (long long)n);
    const bool cplx = xv->dims[r - 1] == 2;
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < ax; i++) outer *= xv->dims[i];
    for (int i = ax + 1; i < r - 1; i++) inner *= xv->dims[i];
    const int64_t len = xv->dims[ax], ci = cplx ? 2 : 1;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++)
            dft1(xv->dtype, xv->data, (o * len * inner + i) * ci, inner, len, cplx, NULL, n, nb,
                 p->inverse, yv->dtype, yv->data, (o * nb * inner + i) * 2, inner);
    return FRT_OK;
}

static frt_status dft_select(frt_op_ctx *c, frt_kernel *k) {
    dft_params *p = frt_arena_alloc(c->arena, sizeof *p, 64);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    p->axis = frt_attr_int(c->node, "axis", 1);
    p->inverse = frt_attr_int(c->node, "inverse", 0) != 0;
    p->onesided = frt_attr_int(c->node, "onesided", 0) != 0;
    if (p->inverse && p->onesided)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "onesided with inverse");
    k->params = p;
    k->fn = k_dft;
    k->name = "dft_generic";
    return FRT_OK;
}

/* ---- STFT ---------------------------------------------------------------------------------- */

/* Frame length from input 3 or the window's size; -1 when unknown. */
static int64_t stft_frame_len(const frt_value *win, const frt_value *fl) {
    int64_t n;
    if (fl) return scalar_int(fl, &n) ? n : -1;
    if (win && win->rank == 1) return win->dims[0];
    return -1;
}

static frt_status stft_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 2, 4, 1, 1);
    if (!st) st = frt_op_check_input(c, 0, 0);
    if (!st) st = frt_op_check_input(c, 1, 0);
    if (st) return st;
    const frt_value *x = c->in[0], *win = c->n_in > 2 ? c->in[2] : NULL;
    const frt_value *fl = c->n_in > 3 ? c->in[3] : NULL;
    if (!frt_dtype_is_float(x->dtype))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported (float32, float64, "
                           "float16)", frt_dtype_name(x->dtype));
    if (!win && !fl)
        return frt_op_fail(c, FRT_ERR_SHAPE, "needs a window or a frame_length");
    if (win && (win->dtype != x->dtype || (win->rank >= 0 && win->rank != 1)))
        return frt_op_fail(c, FRT_ERR_SHAPE, "window must be 1-D with the signal's dtype");
    if (x->rank >= 0 && (x->rank != 3 || (x->dims[2] >= 0 && x->dims[2] != 1 && x->dims[2] != 2)))
        return frt_op_fail(c, FRT_ERR_SHAPE, "signal must be [batch, length, 1|2]");
    int64_t step, n = stft_frame_len(win, fl);
    bool onesided = frt_attr_int(c->node, "onesided", 1) != 0;
    if (!scalar_int(c->in[1], &step)) step = -1;
    if (step == 0 || step < -1 || n == 0 || n < -1)
        return frt_op_fail(c, FRT_ERR_SHAPE, "frame_step and frame_length must be >= 1");
    if (n > 0 && win && win->rank == 1 && win->dims[0] >= 0 && win->dims[0] != n)
        return frt_op_fail(c, FRT_ERR_SHAPE, "window has %lld points, frame_length is %lld",
                           (long long)win->dims[0], (long long)n);
    int64_t d[4] = {x->rank == 3 ? x->dims[0] : -1, -1, n < 0 ? -1 : onesided ? n / 2 + 1 : n, 2};
    int64_t L = x->rank == 3 ? x->dims[1] : -1;
    if (L >= 0 && n > 0 && step > 0) {
        if (L < n)
            return frt_op_fail(c, FRT_ERR_SHAPE, "signal length %lld < frame_length %lld",
                               (long long)L, (long long)n);
        d[1] = (L - n) / step + 1;
    }
    frt_op_set_shape(c->out[0], x->dtype, 4, d);
    return FRT_OK;
}

static frt_status k_stft(const frt_step *s, frt_exec *x) {
    const bool onesided = *(const bool *)s->k.params;
    const frt_value *xv = &x->values[s->in[0]];
    const frt_value *win = s->n_in > 2 && s->in[2] >= 0 ? &x->values[s->in[2]] : NULL;
    const frt_value *fl = s->n_in > 3 && s->in[3] >= 0 ? &x->values[s->in[3]] : NULL;
    frt_value *yv = &x->values[s->out[0]];
    int64_t step, n = stft_frame_len(win, fl);
    if (!scalar_int(&x->values[s->in[1]], &step) || step < 1 || n < 1)
        return frt_step_fail(s, FRT_ERR_SHAPE, "frame_step / frame_length must be >= 1");
    if (win && win->numel != n)
        return frt_step_fail(s, FRT_ERR_SHAPE, "window size does not match frame_length");
    const int64_t B = xv->dims[0], L = xv->dims[1], nb = onesided ? n / 2 + 1 : n;
    const int64_t F = L >= n ? (L - n) / step + 1 : 0;
    if (yv->rank != 4 || yv->dims[1] != F || yv->dims[2] != nb)
        return frt_step_fail(s, FRT_ERR_SHAPE, "frame sizes do not match the output");
    const bool cplx = xv->dims[2] == 2;
    const void *w = win ? win->data : NULL;
    const int64_t ci = cplx ? 2 : 1;
    for (int64_t b = 0; b < B; b++)
        for (int64_t f = 0; f < F; f++)
            dft1(xv->dtype, xv->data, (b * L + f * step) * ci, 1, n, cplx, w, n, nb, false,
                 yv->dtype, yv->data, (b * F + f) * nb * 2, 1);
    return FRT_OK;
}

static frt_status stft_select(frt_op_ctx *c, frt_kernel *k) {
    bool *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    *p = frt_attr_int(c->node, "onesided", 1) != 0;
    k->params = p;
    k->fn = k_stft;
    k->name = "stft_generic";
    return FRT_OK;
}

/* ---- windows ------------------------------------------------------------------------------- */

enum { WIN_HANN, WIN_HAMMING, WIN_BLACKMAN };

static frt_status win_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, 1, 1, 1);
    if (!st) st = frt_op_check_input(c, 0, 0);
    if (st) return st;
    const frt_value *v = c->in[0];
    if (!frt_dtype_is_int(v->dtype) || (v->numel >= 0 && v->numel != 1))
        return frt_op_fail(c, FRT_ERR_SHAPE, "size must be an integer scalar");
    int64_t odt = frt_attr_int(c->node, "output_datatype", FRT_FLOAT32), n;
    if (!out_float_dtype(odt))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "output_datatype %lld (float32, float64, "
                           "float16)", (long long)odt);
    if (!scalar_int(v, &n)) n = -1;
    else if (n < 0)
        return frt_op_fail(c, FRT_ERR_SHAPE, "size %lld < 0", (long long)n);
    frt_op_set_shape(c->out[0], (int32_t)odt, 1, &n);
    return FRT_OK;
}

typedef struct win_params {
    int kind;
    bool periodic;
} win_params;

static frt_status k_window(const frt_step *s, frt_exec *x) {
    const win_params *p = s->k.params;
    frt_value *yv = &x->values[s->out[0]];
    int64_t size;
    if (!scalar_int(&x->values[s->in[0]], &size) || size != yv->dims[0])
        return frt_step_fail(s, FRT_ERR_SHAPE, "size does not match the output");
    const double N = (double)(p->periodic ? size : size - 1);
    for (int64_t k = 0; k < size; k++) {
        double t = N > 0 ? 2.0 * PI * (double)k / N : 0.0, v;
        switch (p->kind) {
        case WIN_HANN: v = 0.5 - 0.5 * cos(t); break;
        case WIN_HAMMING: v = 25.0 / 46.0 - 21.0 / 46.0 * cos(t); break;
        default: v = 0.42 - 0.5 * cos(t) + 0.08 * cos(2 * t); break;
        }
        frt_st_f64(yv->dtype, yv->data, k, v);
    }
    return FRT_OK;
}

static frt_status win_select_kind(frt_op_ctx *c, frt_kernel *k, int kind) {
    win_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    p->kind = kind;
    p->periodic = frt_attr_int(c->node, "periodic", 1) != 0;
    static const char *const names[3] = {"hannwindow", "hammingwindow", "blackmanwindow"};
    k->params = p;
    k->fn = k_window;
    k->name = names[kind];
    return FRT_OK;
}
static frt_status hann_select(frt_op_ctx *c, frt_kernel *k) {
    return win_select_kind(c, k, WIN_HANN);
}
static frt_status hamming_select(frt_op_ctx *c, frt_kernel *k) {
    return win_select_kind(c, k, WIN_HAMMING);
}
static frt_status blackman_select(frt_op_ctx *c, frt_kernel *k) {
    return win_select_kind(c, k, WIN_BLACKMAN);
}

/* ---- MelWeightMatrix ----------------------------------------------------------------------- */

static frt_status mel_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 5, 5, 1, 1);
    for (int i = 0; !st && i < 5; i++) st = frt_op_check_input(c, i, 0);
    if (st) return st;
    for (int i = 0; i < 5; i++) {
        const frt_value *v = c->in[i];
        bool ok = i < 3 ? frt_dtype_is_int(v->dtype) : frt_dtype_is_float(v->dtype);
        if (!ok || (v->numel >= 0 && v->numel != 1))
            return frt_op_fail(c, FRT_ERR_SHAPE, "input %d must be a%s scalar", i,
                               i < 3 ? "n integer" : " float");
    }
    int64_t odt = frt_attr_int(c->node, "output_datatype", FRT_FLOAT32), bins, len;
    if (!out_float_dtype(odt))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "output_datatype %lld (float32, float64, "
                           "float16)", (long long)odt);
    if (!scalar_int(c->in[0], &bins)) bins = -1;
    if (!scalar_int(c->in[1], &len)) len = -1;
    if (bins == 0 || bins < -1 || len == 0 || len < -1)
        return frt_op_fail(c, FRT_ERR_SHAPE, "num_mel_bins and dft_length must be >= 1");
    int64_t d[2] = {len < 0 ? -1 : len / 2 + 1, bins};
    frt_op_set_shape(c->out[0], (int32_t)odt, 2, d);
    return FRT_OK;
}

/* Spectrum bin of mel point i (of bins + 2 evenly spaced between the edges' mels). */
static int64_t mel_bin(int64_t i, double lo_mel, double step, int64_t len, int64_t rate) {
    double hz = 700.0 * (pow(10.0, ((double)i * step + lo_mel) / 2595.0) - 1.0);
    return (int64_t)floor((double)(len + 1) * hz / (double)rate);
}

static frt_status k_mel(const frt_step *s, frt_exec *x) {
    frt_value *yv = &x->values[s->out[0]];
    int64_t bins, len, rate;
    if (!scalar_int(&x->values[s->in[0]], &bins) || !scalar_int(&x->values[s->in[1]], &len) ||
        !scalar_int(&x->values[s->in[2]], &rate) || bins < 1 || len < 1 || rate < 1)
        return frt_step_fail(s, FRT_ERR_SHAPE, "num_mel_bins, dft_length, sample_rate must be >= 1");
    const int64_t nspec = len / 2 + 1;
    if (yv->rank != 2 || yv->dims[0] != nspec || yv->dims[1] != bins)
        return frt_step_fail(s, FRT_ERR_SHAPE, "sizes do not match the output");
    const frt_value *lo = &x->values[s->in[3]], *hi = &x->values[s->in[4]];
    const double lo_hz = frt_ld_f64(lo->dtype, lo->data, 0), hi_hz = frt_ld_f64(hi->dtype, hi->data, 0);
    const double lo_mel = 2595.0 * log10(1.0 + lo_hz / 700.0);
    const double hi_mel = 2595.0 * log10(1.0 + hi_hz / 700.0);
    const double step = (hi_mel - lo_mel) / (double)(bins + 2);
    for (int64_t i = 0; i < yv->numel; i++) frt_st_f64(yv->dtype, yv->data, i, 0.0);
    for (int64_t i = 0; i < bins; i++) {
        const int64_t l = mel_bin(i, lo_mel, step, len, rate);
        const int64_t ce = mel_bin(i + 1, lo_mel, step, len, rate);
        const int64_t h = mel_bin(i + 2, lo_mel, step, len, rate);
        if (l < 0 || h >= nspec + 1 || ce < 0 || ce >= nspec || l > ce || ce > h)
            return frt_step_fail(s, FRT_ERR_SHAPE, "mel filter %lld out of the spectrum range",
                                 (long long)i);
        if (ce == l) {
            frt_st_f64(yv->dtype, yv->data, ce * bins + i, 1.0);
        } else {
            for (int64_t j = l; j <= ce; j++)
                frt_st_f64(yv->dtype, yv->data, j * bins + i, (double)(j - l) / (double)(ce - l));
        }
        if (h > ce)
            for (int64_t j = ce; j < h; j++)
                frt_st_f64(yv->dtype, yv->data, j * bins + i, (double)(h - j) / (double)(h - ce));
    }
    return FRT_OK;
}

static frt_status mel_select(frt_op_ctx *c, frt_kernel *k) {
    (void)c;
    k->fn = k_mel;
    k->name = "melweightmatrix";
    return FRT_OK;
}

/* Implementations referred to by src/ops/ops.def. */
FRT_OP_IMPL(signal, BlackmanWindow, win_infer, blackman_select);
FRT_OP_IMPL(signal, DFT, dft_infer, dft_select);
FRT_OP_IMPL(signal, HammingWindow, win_infer, hamming_select);
FRT_OP_IMPL(signal, HannWindow, win_infer, hann_select);
FRT_OP_IMPL(signal, MelWeightMatrix, mel_infer, mel_select);
FRT_OP_IMPL(signal, STFT, stft_infer, stft_select);
