/* The oneDNN provider (src/ops/onednn/onednn.c): Conv / FusedConv, MaxPool, AveragePool,
 * GlobalAveragePool / GlobalMaxPool (the own blocked loops of ops/blocked.h on the AVX2 tier) and
 * BatchNormalization on oneDNN primitives, with activations in the channel-
 * blocked layout (nChw16c on AVX-512 tiers, nChw8c below), and the same-shape elementwise ops and
 * Concat that sit between them run on the blocked data (the builtin kernels, declared blocked).
 * Built when the CMake option FRT_USE_DNNL is ON (FRT_HAVE_DNNL=1); see docs/dependencies.md.
 *
 * At run time the provider is off when the environment variable FRT_DNNL is "0" or "off" (read at
 * each model load): frt_default_providers() then lists the builtin provider only. For debugging,
 * FRT_DNNL_SKIP="Op1,Op2" leaves those op types to the next provider. */
#ifndef FRT_OPS_ONEDNN_H
#define FRT_OPS_ONEDNN_H

#include "ops/op.h"

/* The oneDNN provider for runtimes of num_threads intra-op threads, or NULL when the provider is
 * not built or num_threads is out of [1, FRT_MAX_THREADS]. */
const frt_provider *frt_onednn_provider(int num_threads);

/* Prepares the calling thread to run the provider's primitives: OpenMP thread count 1, so oneDNN
 * runs on this thread alone (the first call on a thread allocates libgomp's per-thread settings).
 * A runtime calls it on each worker of its intra-op pool when the pool starts. */
void frt_onednn_thread_init(void);

/* Whether the oneDNN provider is compiled in and not switched off by FRT_DNNL. */
bool frt_onednn_enabled(void);

#endif
