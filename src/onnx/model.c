/* Lifetime of a decoded ONNX model and small queries on it. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "onnx/onnx.h"

void frt_onnx_model_free(frt_onnx_model *m) {
    if (!m) return;
    for (size_t i = 0; i < m->n_maps; i++) {
        if (m->maps[i].addr && m->maps[i].len) munmap(m->maps[i].addr, m->maps[i].len);
        free(m->maps[i].path);
    }
    free(m->maps);
    frt_arena_free(&m->arena);
    free(m);
}

int64_t frt_onnx_default_opset(const frt_onnx_model *m) {
    if (!m) return 0;
    for (size_t i = 0; i < m->n_opsets; i++)
        if (m->opsets[i].domain && m->opsets[i].domain[0] == 0) return m->opsets[i].version;
    return 0;
}
