/* Depthwise convolution with AVX-512: the channel-blocked path of conv_dw_impl.h with 16 channels
 * per call (3x3 and 5x5, stride 1 or 2, any padding, multiplier 1). Every other shape uses the
 * AVX2 fast paths or the portable plane kernel (driver: conv_depthwise.c). */
#include "vec_avx512.h"

#include "conv_dw_impl.h"

int64_t frt_dwb_band_avx512(const frt_conv_geom *g, int k, int s) { return dwb_band(g, k, s); }

void frt_dwb_run_avx512(const frt_conv_params *p, const frt_conv_geom *g, const float *x,
                        const float *w, const float *b, float *y, int64_t nc, int64_t band,
                        int k, int s) {
    dwb_run(p, g, x, w, b, y, nc, band, k, s);
}
