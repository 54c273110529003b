/* The per-channel mean of a channel-blocked image (nChw8c / nChw16c, src/ir/layout.c): the
 * squeeze of squeeze-and-excitation, computed by the conv that writes the image
 * (flatrt::ConvMean, src/passes/fuse_cnn.c) right after each channel block, while the block is
 * still in cache, instead of a GlobalAveragePool pass over the whole image later.
 *
 *   out[l] = ((a0 + a1) + (a2 + a3)) * inv for each lane l < b, a_r the sum in pixel order of
 *   y[s][l] over the pixels s = r mod 4 of [0, S)
 *
 * y: one block [S][b]; out: b floats. The order depends on S alone, so the result is the same
 * whatever thread computes the block, and every variant gives the same bits. Padding lanes give
 * the mean of what they hold (0 in the provider's images). A variant per ISA tier
 * (x86/blkmean_avx2.c for b 8 and 16; AVX-512 hosts take it), portable C for the rest. */
#ifndef FRT_OPS_BLKMEAN_H
#define FRT_OPS_BLKMEAN_H

#include <stdint.h>

#include "cpu.h"

typedef void (*frt_blkmean_fn)(const float *y, int64_t S, int64_t b, float inv, float *out);

/* The loop of tier cap or below. */
frt_blkmean_fn frt_blkmean_get(frt_isa cap);

void frt_blkmean_portable(const float *y, int64_t S, int64_t b, float inv, float *out);
void frt_blkmean_avx2(const float *y, int64_t S, int64_t b, float inv, float *out);

#endif
