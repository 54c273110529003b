/* Minimal runner over the public API (include/flatrt.h): loads MODEL, runs it once on
 * deterministic inputs (floats from a fixed generator in [-1, 1), every other type zero; symbolic
 * dims 1) and prints each output's dtype, element count and an FNV-1a hash of its bytes, so two
 * builds can be compared bit for bit. Used for the size table of docs/selective.md.
 *
 *   minimal_run MODEL.onnx
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "flatrt.h"

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s MODEL.onnx\n", argv[0]);
        return 2;
    }
    frt_model *m = NULL;
    frt_runtime *rt = NULL;
    if (frt_model_load(argv[1], NULL, &m) || frt_runtime_create(m, &rt)) {
        fprintf(stderr, "%s: %s\n", argv[1], frt_last_error());
        frt_model_free(m);
        return 1;
    }
    size_t ni = frt_model_num_inputs(m), no = frt_model_num_outputs(m);
    const char **names = calloc(ni + 1, sizeof *names);
    frt_tensor *in = calloc(ni + 1, sizeof *in), *out = calloc(no + 1, sizeof *out);
    uint32_t seed = 12345;
    int rc = !names || !in || !out;
    for (size_t i = 0; i < ni && !rc; i++) {
        frt_tensor_info info;
        frt_model_input(m, i, &info);
        names[i] = info.name;
        in[i].dtype = info.dtype;
        in[i].rank = info.rank < 0 ? 0 : info.rank;
        for (int d = 0; d < in[i].rank; d++) in[i].shape[d] = info.shape[d] < 0 ? 1 : info.shape[d];
        size_t n = (size_t)frt_tensor_numel(&in[i]);
        in[i].nbytes = n * frt_dtype_size(info.dtype);
        in[i].data = calloc(in[i].nbytes + 1, 1);
        rc = !in[i].data;
        for (size_t k = 0; !rc && info.dtype == FRT_FLOAT32 && k < n; k++) {
            seed = seed * 1664525u + 1013904223u;
            ((float *)in[i].data)[k] = (float)(seed >> 8) / 8388608.0f - 1.0f;
        }
    }
    if (!rc && frt_run(rt, names, in, ni, out, no, FRT_OUTPUTS_ALLOC)) {
        fprintf(stderr, "%s: %s\n", argv[1], frt_last_error());
        rc = 1;
    }
    for (size_t i = 0; i < no && !rc; i++) {
        uint32_t h = 2166136261u;
        for (size_t k = 0; k < out[i].nbytes; k++) h = (h ^ ((const uint8_t *)out[i].data)[k]) * 16777619u;
        printf("output %zu: %s, %lld elements, fnv1a %08x\n", i, frt_dtype_name(out[i].dtype),
               (long long)frt_tensor_numel(&out[i]), (unsigned)h);
    }
    for (size_t i = 0; i < no; i++) frt_tensor_release(&out[i]);
    for (size_t i = 0; i < ni; i++) free(in[i].data);
    free(names);
    free(in);
    free(out);
    frt_runtime_free(rt);
    frt_model_free(m);
    return rc;
}
