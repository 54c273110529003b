/* The parametric activation loops and LogSoftmax rows, written once over a small vector
 * vocabulary that x86/vec_avx2.h (8 lanes) and x86/vec_avx512.h (16 lanes) define; the
 * including file (activation_param_{avx2,avx512}.c) includes one of them first:
 *
 *   V, M, VW                   vector, comparison mask, lanes
 *   vset vload vstore vadd vsub vmul vdiv vmax vmin vabs
 *   vfma(a, b, c) = a b + c    vfnma(a, b, c) = c - a b
 *   vlt vle vgt veq -> M       ordered compares (false when a lane is NaN)
 *   vsel(m, t, f)              m ? t : f per lane
 *   vround(x)                  nearest integer (as float)
 *   vscale(p, n)               p 2^n, n integral in [-150, 127], exact down to the denormals
 *   vfrexp(x, &k)              x = m 2^k with m in [sqrt(1/2), sqrt 2), for finite x > 0
 *   vhmax, vhsum               horizontal max / sum
 *
 * vmax(a, b) / vmin(a, b) return b when either is NaN (the x86 rule): the code puts the operand
 * whose NaN must survive second. Names are static and file-local in each including file.
 */

/* e^x: x = n ln2 + r, |r| <= ln2/2 (Cody-Waite split of ln2), e^r by a degree-6 polynomial;
 * x clamped to [-104, 88]; NaN stays NaN. */
static inline V v_exp_parts(V x, V *pm1, V *n) {
    x = vmax(vset(-104.0f), x);
    x = vmin(vset(88.0f), x);
    V nn = vround(vmul(x, vset(1.44269504088896341f)));
    V r = vfnma(nn, vset(0.693359375f), x);
    r = vfnma(nn, vset(-2.12194440e-4f), r);
    V q = vfma(vset(0.0013822003f), r, vset(0.008362863f));
    q = vfma(q, r, vset(0.0416678f));
    q = vfma(q, r, vset(0.16666579f));
    q = vfma(q, r, vset(0.49999997f));
    *pm1 = vfma(q, vmul(r, r), r); /* e^r - 1 */
    *n = nn;
    return x;
}

static inline V v_exp(V x) {
    V pm1, n;
    v_exp_parts(x, &pm1, &n);
    return vscale(vadd(pm1, vset(1.0f)), n);
}

/* e^x - 1, accurate near 0: 2^n (e^r - 1) + (2^n - 1). x below -30 gives -1 (as in float),
 * above ln(FLT_MAX) +inf. */
static inline V v_expm1(V x) {
    V pm1, n;
    V c = v_exp_parts(vmax(vset(-30.0f), x), &pm1, &n);
    V s = vscale(vset(1.0f), n); /* n in [-44, 127]: a normal float */
    V y = vadd(vmul(pm1, s), vsub(s, vset(1.0f)));
    return vsel(vgt(x, vset(88.7228394f)), vset(INFINITY), vsel(veq(c, c), y, c));
}

/* log(u) for finite u >= 1: k ln2 + 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.172. */
static inline V v_log_ge1(V u) {
    V k;
    V m = vfrexp(u, &k);
    V s = vdiv(vsub(m, vset(1.0f)), vadd(m, vset(1.0f)));
    V z = vmul(s, s);
    V q = vfma(vset(1.0f / 11.0f), z, vset(1.0f / 9.0f));
    q = vfma(q, z, vset(1.0f / 7.0f));
    q = vfma(q, z, vset(1.0f / 5.0f));
    q = vfma(q, z, vset(1.0f / 3.0f));
    V l = vmul(vadd(s, s), vfma(q, z, vset(1.0f)));
    return vfma(k, vset(0.693147180559945309f), l);
}

/* log(1 + e) for e in [0, 1] (NaN stays NaN): log(u) e / (u - 1) with u = 1 + e rounded, which
 * cancels the rounding of u; e itself when u == 1. */
static inline V v_log1p01(V e) {
    V u = vadd(vset(1.0f), e);
    V d = vsub(u, vset(1.0f));
    V l = vmul(v_log_ge1(vmin(vset(2.0f), u)), vdiv(e, vsel(veq(d, vset(0.0f)), vset(1.0f), d)));
    return vsel(veq(d, vset(0.0f)), e, l);
}

/* e^x for x in [-87, 88] (the caller clamps; NaN stays NaN): the reduction and polynomial of
 * v_exp_parts, then one scale factor 2^n, n in [-126, 127] (v_exp's two factors reach the
 * denormals). Used where a result below e^-87 is as good as its exact value: the GELU forms. */
static inline V v_exp_n(V x) {
    V nn = vround(vmul(x, vset(1.44269504088896341f)));
    V r = vfnma(nn, vset(0.693359375f), x);
    r = vfnma(nn, vset(-2.12194440e-4f), r);
    V r2 = vmul(r, r);
    /* the polynomial of v_exp_parts in two halves (shorter dependency chain) */
    V qh = vfma(vfma(vset(0.0013822003f), r, vset(0.008362863f)), r2,
                vfma(vset(0.0416678f), r, vset(0.16666579f)));
    V q = vfma(qh, r, vset(0.49999997f));
    return vscale_n(vadd(vfma(q, r2, r), vset(1.0f)), nn);
}

/* erfc(z) / 2 for z >= 0, relative error ~1e-6 in float: t e^(-z^2 + P(t)) / 2, t = 1 / (1 + z/2)
 * (the Chebyshev fit of Numerical Recipes' erfcc). P by Estrin's scheme (a dependency chain of 4
 * multiply-adds instead of 9); the exponent is clamped to [-87, 0.5]: below e^-87 the result
 * (< 1e-38) counts as its exact value, and the exponent never exceeds ~1e-7. */
static inline V v_half_erfc_pos(V z) {
    V t = vdiv(vset(1.0f), vfma(vset(0.5f), z, vset(1.0f)));
    V t2 = vmul(t, t);
    V t4 = vmul(t2, t2);
    V p01 = vfma(vset(1.00002368f), t, vset(-1.26551223f));
    V p23 = vfma(vset(0.09678418f), t, vset(0.37409196f));
    V p45 = vfma(vset(0.27886807f), t, vset(-0.18628806f));
    V p67 = vfma(vset(1.48851587f), t, vset(-1.13520398f));
    V p89 = vfma(vset(0.17087277f), t, vset(-0.82215223f));
    V p03 = vfma(p23, t2, p01);
    V p47 = vfma(p67, t2, p45);
    V p = vfma(vmul(p89, t4), t4, vfma(p47, t4, p03));
    V a = vfnma(z, z, p);
    a = vmin(vset(0.5f), vmax(vset(-87.0f), a)); /* NaN stays NaN (second operand) */
    return vmul(vmul(vset(0.5f), t), v_exp_n(a));
}

/* x sigmoid(x) = x / (1 + e^-x); -inf gives NaN (-inf * 0, as the unfused pair). 8 lanes:
 * vsilu of vec_avx2.h (one scale factor, one division); 16 lanes keep the general form. */
static inline V v_silu(V x) {
#if VW == 8
    return vsilu(x);
#else
    V y = vdiv(x, vadd(vset(1.0f), v_exp(vsub(vset(0.0f), x))));
    return vsel(veq(x, vset(-INFINITY)), vset(NAN), y); /* -inf * 0, as unclamped */
#endif
}

static inline V v_actp(int kind, V x, V a, V b) {
    const V zero = vset(0.0f), one = vset(1.0f);
    switch (kind) {
    case FRT_ACTP_LEAKY:
        return vsel(vlt(x, zero), vmul(a, x), x);
    case FRT_ACTP_ELU:
        return vsel(vlt(x, zero), vmul(a, v_expm1(x)), x);
    case FRT_ACTP_SELU: /* a = alpha, b = gamma */
        return vsel(vle(x, zero), vmul(vmul(b, a), v_expm1(x)), vmul(b, x));
    case FRT_ACTP_CELU:
        return vsel(vlt(x, zero), vmul(a, v_expm1(vdiv(x, a))), x);
    case FRT_ACTP_HARDSIGMOID:
        return vmax(zero, vmin(one, vfma(a, x, b)));
    case FRT_ACTP_HARDSWISH:
        return vmul(x, vmax(zero, vmin(one, vfma(x, vset(1.0f / 6.0f), vset(0.5f)))));
    case FRT_ACTP_SOFTPLUS:
        return vadd(vmax(zero, x), v_log1p01(v_exp(vsub(zero, vabs(x)))));
    case FRT_ACTP_SOFTSIGN:
        return vdiv(x, vadd(one, vabs(x)));
    case FRT_ACTP_GELU: { /* Phi(x) = erfc(|x|/sqrt 2)/2 for x <= 0, 1 - that for x > 0 */
        V h = v_half_erfc_pos(vmul(vabs(x), vset(0.70710678118654752f)));
        return vmul(x, vsel(vle(x, zero), h, vsub(one, h)));
    }
    case FRT_ACTP_GELU_TANH: {
        /* x / (1 + e^(-2u)); e^(-2u) clamped to [e^-87, e^88]: past the lower end 1 + e^(-2u)
         * rounds to 1 anyway, past the upper end |y| < 1e-36 */
        V m2u = vmul(vset(-1.59576912160573072f),
                     vfma(vmul(vset(0.044715f), vmul(x, x)), x, x));
        m2u = vmin(vset(88.0f), vmax(vset(-87.0f), m2u)); /* NaN stays NaN */
        V y = vdiv(x, vadd(one, v_exp_n(m2u)));
        return vsel(veq(x, vset(-INFINITY)), vset(NAN), y); /* -inf * 0, as unclamped */
    }
    case FRT_ACTP_MISH: {
        V e = v_exp(vmin(vset(20.0f), x));
        V n = vmul(e, vadd(e, vset(2.0f)));
        return vmul(x, vdiv(n, vadd(n, vset(2.0f))));
    }
    case FRT_ACTP_THRESHOLDED:
        return vsel(vle(x, a), zero, x);
    case FRT_ACTP_SHRINK: /* a = lambd, b = bias */
        return vsel(vlt(x, vsub(zero, a)), vadd(x, b), vsel(vgt(x, a), vsub(x, b), zero));
    case FRT_ACTP_SILU: return v_silu(x);
    }
    return x;
}

/* One loop per kind so the switch is outside the loop; the tail goes through a padded buffer. */
#define ACTP_LOOP(KIND)                                                                          \
    for (; i + VW <= n; i += VW) vstore(y + i, v_actp(KIND, vload(x + i), a, b));                \
    break;

static void actp_f32(int kind, const float *x, float *y, size_t n, const float *prm) {
    const V a = vset(prm[0]), b = vset(prm[1]);
    size_t i = 0;
    switch (kind) {
    case FRT_ACTP_LEAKY: ACTP_LOOP(FRT_ACTP_LEAKY)
    case FRT_ACTP_ELU: ACTP_LOOP(FRT_ACTP_ELU)
    case FRT_ACTP_SELU: ACTP_LOOP(FRT_ACTP_SELU)
    case FRT_ACTP_CELU: ACTP_LOOP(FRT_ACTP_CELU)
    case FRT_ACTP_HARDSIGMOID: ACTP_LOOP(FRT_ACTP_HARDSIGMOID)
    case FRT_ACTP_HARDSWISH: ACTP_LOOP(FRT_ACTP_HARDSWISH)
    case FRT_ACTP_SOFTPLUS: ACTP_LOOP(FRT_ACTP_SOFTPLUS)
    case FRT_ACTP_SOFTSIGN: ACTP_LOOP(FRT_ACTP_SOFTSIGN)
    case FRT_ACTP_GELU: ACTP_LOOP(FRT_ACTP_GELU)
    case FRT_ACTP_GELU_TANH: ACTP_LOOP(FRT_ACTP_GELU_TANH)
    case FRT_ACTP_MISH: ACTP_LOOP(FRT_ACTP_MISH)
    case FRT_ACTP_THRESHOLDED: ACTP_LOOP(FRT_ACTP_THRESHOLDED)
    case FRT_ACTP_SHRINK: ACTP_LOOP(FRT_ACTP_SHRINK)
    case FRT_ACTP_SILU: ACTP_LOOP(FRT_ACTP_SILU)
    default: return;
    }
    if (i < n) {
        float t[VW] = {0};
        for (size_t k = 0; k < n - i; k++) t[k] = x[i + k];
        vstore(t, v_actp(kind, vload(t), a, b));
        for (size_t k = 0; k < n - i; k++) y[i + k] = t[k];
    }
}
#undef ACTP_LOOP

/* frt_actp_rows_fn: one pass over each row (bias, activation, residual in registers); the row's
 * tail goes through a padded buffer. */
static inline V actp_rows_vec(int kind, V v, const float *b, const float *rr, V a, V bb) {
    if (b) v = vadd(v, vload(b));
    if (kind != FRT_ACTP_COUNT) v = v_actp(kind, v, a, bb);
    if (rr) v = vadd(v, vload(rr));
    return v;
}

#define ACTP_ROWS_LOOP(KIND)                                                                     \
    for (size_t r = 0; r < m; r++) {                                                             \
        float *yr = y + r * ldy;                                                                 \
        const float *rr = res ? res + r * ldr : NULL;                                            \
        for (size_t i = 0; i + VW <= n; i += VW)                                                 \
            vstore(yr + i, actp_rows_vec(KIND, vload(yr + i), bias ? bias + i : NULL,             \
                                         rr ? rr + i : NULL, a, b));                              \
    }                                                                                            \
    break;

static void actp_rows_f32(int kind, float *y, size_t ldy, size_t m, size_t n, const float *bias,
                          const float *res, size_t ldr, const float *prm) {
    const V a = vset(prm[0]), b = vset(prm[1]);
    switch (kind) {
    case FRT_ACTP_COUNT: ACTP_ROWS_LOOP(FRT_ACTP_COUNT)
    case FRT_ACTP_GELU: ACTP_ROWS_LOOP(FRT_ACTP_GELU)
    case FRT_ACTP_GELU_TANH: ACTP_ROWS_LOOP(FRT_ACTP_GELU_TANH)
    case FRT_ACTP_SILU: ACTP_ROWS_LOOP(FRT_ACTP_SILU)
    default: /* the other kinds: the loop of actp_f32 on each row, between bias and residual */
        for (size_t r = 0; r < m; r++) {
            float *yr = y + r * ldy;
            const float *rr = res ? res + r * ldr : NULL;
            size_t i = 0;
            if (bias)
                for (; i + VW <= n; i += VW) vstore(yr + i, vadd(vload(yr + i), vload(bias + i)));
            for (; i < n; i++) yr[i] += bias ? bias[i] : 0.0f;
            actp_f32(kind, yr, yr, n, prm);
            if (rr)
                for (i = 0; i < n; i++) yr[i] += rr[i];
        }
        return;
    }
    size_t i0 = n / VW * VW;
    if (i0 == n) return;
    for (size_t r = 0; r < m; r++) {
        float t[VW] = {0}, tb[VW] = {0}, tr[VW] = {0};
        float *yr = y + r * ldy + i0;
        const float *rr = res ? res + r * ldr + i0 : NULL;
        for (size_t k = 0; k < n - i0; k++) {
            t[k] = yr[k];
            tb[k] = bias ? bias[i0 + k] : 0.0f;
            tr[k] = rr ? rr[k] : 0.0f;
        }
        vstore(t, actp_rows_vec(kind, vload(t), bias ? tb : NULL, rr ? tr : NULL, a, b));
        for (size_t k = 0; k < n - i0; k++) yr[k] = t[k];
    }
}
#undef ACTP_ROWS_LOOP

static void logsoftmax_rows_f32(const float *x, float *y, size_t rows, size_t len) {
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * len;
        float *yr = y + r * len;
        size_t i = 0;
        float m = xr[0];
        if (len >= VW) {
            V vm = vload(xr);
            for (i = VW; i + VW <= len; i += VW) vm = vmax(vm, vload(xr + i));
            m = vhmax(vm);
        }
        for (; i < len; i++) m = xr[i] > m ? xr[i] : m;
        const V vmx = vset(m);
        V acc = vset(0.0f);
        for (i = 0; i + VW <= len; i += VW) acc = vadd(acc, v_exp(vsub(vload(xr + i), vmx)));
        float sum = vhsum(acc);
        if (i < len) {
            float t[VW];
            for (size_t k = 0; k < VW; k++) t[k] = k < len - i ? xr[i + k] : -INFINITY;
            sum += vhsum(vmul(v_exp(vsub(vload(t), vmx)), vsel(vlt(vload(t), vset(-1e38f)),
                                                               vset(0.0f), vset(1.0f))));
        }
        const float ls = logf(sum);
        const V vls = vset(ls);
        for (i = 0; i + VW <= len; i += VW)
            vstore(yr + i, vsub(vsub(vload(xr + i), vmx), vls));
        for (; i < len; i++) yr[i] = (xr[i] - m) - ls;
    }
}
