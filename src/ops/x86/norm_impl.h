/* The normalization row loop (simd_norm.h), written once over the vector vocabulary of
 * x86/vec_avx2.h or vec_avx512.h, which the including file (norm_{avx2,avx512}.c) includes
 * first. Four accumulators per pass hide the add latency. */

static void norm_row_f32(const float *x, float *y, size_t len, const float *scale,
                         const float *bias, size_t st, float eps, float *stat) {
    V a0 = vset(0.0f), a1 = a0, a2 = a0, a3 = a0;
    size_t i = 0;
    for (; i + 4 * VW <= len; i += 4 * VW) {
        a0 = vadd(a0, vload(x + i));
        a1 = vadd(a1, vload(x + i + VW));
        a2 = vadd(a2, vload(x + i + 2 * VW));
        a3 = vadd(a3, vload(x + i + 3 * VW));
    }
    for (; i + VW <= len; i += VW) a0 = vadd(a0, vload(x + i));
    float sum = vhsum(vadd(vadd(a0, a1), vadd(a2, a3)));
    for (; i < len; i++) sum += x[i];
    const float mean = sum / (float)len;
    const V vm = vset(mean);
    a0 = a1 = a2 = a3 = vset(0.0f);
    for (i = 0; i + 4 * VW <= len; i += 4 * VW) {
        V d0 = vsub(vload(x + i), vm), d1 = vsub(vload(x + i + VW), vm);
        V d2 = vsub(vload(x + i + 2 * VW), vm), d3 = vsub(vload(x + i + 3 * VW), vm);
        a0 = vfma(d0, d0, a0);
        a1 = vfma(d1, d1, a1);
        a2 = vfma(d2, d2, a2);
        a3 = vfma(d3, d3, a3);
    }
    for (; i + VW <= len; i += VW) {
        V d = vsub(vload(x + i), vm);
        a0 = vfma(d, d, a0);
    }
    float ss = vhsum(vadd(vadd(a0, a1), vadd(a2, a3)));
    for (; i < len; i++) ss += (x[i] - mean) * (x[i] - mean);
    const float inv = 1.0f / sqrtf(ss / (float)len + eps);
    stat[0] = mean;
    stat[1] = inv;
    const V vi = vset(inv);
    if (st == 0) {
        const V s = vset(scale[0] * inv), b = vset(bias ? bias[0] : 0.0f);
        for (i = 0; i + VW <= len; i += VW) vstore(y + i, vfma(vsub(vload(x + i), vm), s, b));
        for (; i < len; i++) y[i] = (x[i] - mean) * (scale[0] * inv) + (bias ? bias[0] : 0.0f);
        return;
    }
    if (bias) {
        for (i = 0; i + VW <= len; i += VW)
            vstore(y + i, vfma(vmul(vsub(vload(x + i), vm), vi), vload(scale + i),
                               vload(bias + i)));
        for (; i < len; i++) y[i] = (x[i] - mean) * inv * scale[i] + bias[i];
    } else {
        for (i = 0; i + VW <= len; i += VW)
            vstore(y + i, vmul(vmul(vsub(vload(x + i), vm), vi), vload(scale + i)));
        for (; i < len; i++) y[i] = (x[i] - mean) * inv * scale[i];
    }
}
