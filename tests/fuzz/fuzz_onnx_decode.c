/* libFuzzer target for the ONNX decoder (src/onnx/). Built by -DFRT_FUZZ=ON with clang and run by
 * scripts/fuzz.sh; seeds in tests/fuzz/corpus/onnx_decode/.
 *
 * Each input is decoded twice: as given (libFuzzer's buffer) and shifted by one byte, so that
 * raw_data payloads take both the in-place and the copy path. A successful decode is walked
 * completely (every string, array and tensor byte is read) so ASan sees any bad pointer, and
 * frt_onnx_map_external() with no base directory walks all tensors without touching files.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx.h"

static volatile uint64_t sink;

static void touch_graph(const frt_onnx_graph *g);

static void touch_tensor(const frt_onnx_tensor *t) {
    uint64_t s = strlen(t->name) + (uint64_t)t->numel;
    if (t->data)
        for (size_t i = 0; i < t->nbytes; i++) s += ((const uint8_t *)t->data)[i];
    if (t->ext_location) s += strlen(t->ext_location);
    sink += s;
}

static void touch_vi(const frt_onnx_value_info *v) {
    sink += strlen(v->name);
    if (v->has_shape)
        for (int i = 0; i < v->rank; i++)
            sink += v->dims[i].param ? strlen(v->dims[i].param) : (uint64_t)v->dims[i].value;
}

static void touch_graph(const frt_onnx_graph *g) {
    sink += strlen(g->name);
    for (size_t i = 0; i < g->n_nodes; i++) {
        const frt_onnx_node *n = &g->nodes[i];
        sink += strlen(n->name) + strlen(n->op_type) + strlen(n->domain);
        for (size_t j = 0; j < n->n_inputs; j++) sink += strlen(n->inputs[j]);
        for (size_t j = 0; j < n->n_outputs; j++) sink += strlen(n->outputs[j]);
        for (size_t j = 0; j < n->n_attrs; j++) {
            const frt_onnx_attr *a = &n->attrs[j];
            sink += strlen(a->name);
            switch (a->type) {
            case FRT_ATTR_STRING: sink += a->s_len + (uint8_t)a->s[a->s_len]; break;
            case FRT_ATTR_TENSOR: touch_tensor(a->t); break;
            case FRT_ATTR_GRAPH: touch_graph(a->g); break;
            case FRT_ATTR_FLOATS: for (size_t k = 0; k < a->n; k++) sink += a->floats[k] > 0; break;
            case FRT_ATTR_INTS: for (size_t k = 0; k < a->n; k++) sink += (uint64_t)a->ints[k]; break;
            case FRT_ATTR_STRINGS: for (size_t k = 0; k < a->n; k++) sink += strlen(a->strings[k]); break;
            case FRT_ATTR_TENSORS: for (size_t k = 0; k < a->n; k++) touch_tensor(&a->tensors[k]); break;
            case FRT_ATTR_GRAPHS: for (size_t k = 0; k < a->n; k++) touch_graph(&a->graphs[k]); break;
            default: break;
            }
        }
    }
    for (size_t i = 0; i < g->n_initializers; i++) touch_tensor(&g->initializers[i]);
    for (size_t i = 0; i < g->n_inputs; i++) touch_vi(&g->inputs[i]);
    for (size_t i = 0; i < g->n_outputs; i++) touch_vi(&g->outputs[i]);
    for (size_t i = 0; i < g->n_value_info; i++) touch_vi(&g->value_info[i]);
}

static void run(const uint8_t *data, size_t size) {
    frt_onnx_model *m = NULL;
    if (frt_onnx_decode(data, size, &m) != FRT_OK) {
        if (m) abort(); /* contract: *out is NULL on failure */
        return;
    }
    sink += strlen(m->producer_name) + strlen(m->producer_version);
    for (size_t i = 0; i < m->n_opsets; i++) sink += strlen(m->opsets[i].domain);
    sink += (uint64_t)frt_onnx_default_opset(m);
    touch_graph(m->graph);
    (void)frt_onnx_map_external(m, NULL);
    frt_onnx_model_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    run(data, size);
    uint8_t *shifted = malloc(size + 1);
    if (!shifted) return 0;
    memcpy(shifted + 1, data, size);
    run(shifted + 1, size);
    free(shifted);
    return 0;
}
