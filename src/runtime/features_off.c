/* The public API of optional features that a selective build left out (docs/selective.md,
 * "Features"): cmake/selective.cmake compiles this file instead of the feature's own file and
 * defines FRT_FEATURE_OFF_<name>. Each function keeps its contract for bad arguments and
 * otherwise answers FRT_ERR_UNSUPPORTED with a message naming the feature, the selection file
 * and how to keep it. In a full build (nothing defined) the file is empty.
 *
 *   FRT_FEATURE_OFF_DESCRIBE    frt_desc_* (src/runtime/describe.c)
 *   FRT_FEATURE_OFF_STEP_TRACE  frt_runtime_*trace* and the Chrome JSON writer (src/runtime/trace.c)
 */
#include <string.h>

#include "flatrt.h"
#include "ops/op.h"
#include "runtime/model.h"
#include "util/error.h"

#if defined(FRT_FEATURE_OFF_DESCRIBE) || defined(FRT_FEATURE_OFF_STEP_TRACE)
static frt_status left_out(const char *fn, const char *feature) {
    const char *sel = frt_op_selection_file();
    return frt_error(FRT_ERR_UNSUPPORTED,
                     "%s: feature '%s' not in this build's selection (%s); keep it with "
                     "cmake -DFRT_SELECT_KEEP=%s",
                     fn, feature, sel ? sel : "?", feature);
}
#endif

#ifdef FRT_FEATURE_OFF_DESCRIBE
frt_status frt_desc_create(const char *path, const frt_model *model, frt_desc **out) {
    if (out) *out = NULL;
    if (!out || (!path && !model))
        return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_desc_create: NULL argument");
    return left_out("frt_desc_create", "describe");
}

void frt_desc_free(frt_desc *desc) { (void)desc; }

void frt_desc_get_info(const frt_desc *desc, frt_desc_info *out) {
    (void)desc;
    if (out) memset(out, 0, sizeof *out);
}

frt_status frt_desc_input(const frt_desc *desc, size_t index, frt_tensor_info *out) {
    (void)desc, (void)index, (void)out;
    return left_out("frt_desc_input", "describe");
}

frt_status frt_desc_output(const frt_desc *desc, size_t index, frt_tensor_info *out) {
    (void)desc, (void)index, (void)out;
    return left_out("frt_desc_output", "describe");
}

frt_status frt_desc_node_get(const frt_desc *desc, size_t index, frt_desc_node *out) {
    (void)desc, (void)index, (void)out;
    return left_out("frt_desc_node_get", "describe");
}

frt_status frt_desc_node_value(const frt_desc *desc, size_t node, int is_output, size_t k,
                               frt_tensor_info *out) {
    (void)desc, (void)node, (void)is_output, (void)k, (void)out;
    return left_out("frt_desc_node_value", "describe");
}

frt_status frt_desc_node_attr(const frt_desc *desc, size_t node, size_t k, frt_desc_attr *out) {
    (void)desc, (void)node, (void)k, (void)out;
    return left_out("frt_desc_node_attr", "describe");
}
#endif

#ifdef FRT_FEATURE_OFF_STEP_TRACE
/* Never called: tracing cannot be switched on (rt->trace.cap stays 0). */
void frt_trace_step(frt_runtime *rt, const frt_brt *b, const frt_step *s, uint64_t t0,
                    uint64_t t1) {
    (void)rt, (void)b, (void)s, (void)t0, (void)t1;
}

void frt_trace_free(frt_trace *t) { (void)t; }

frt_status frt_runtime_set_trace(frt_runtime *rt, size_t max_events) {
    if (!rt) return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_runtime_set_trace: rt is NULL");
    if (!max_events) return FRT_OK; /* switching it off always works */
    return left_out("frt_runtime_set_trace", "step_trace");
}

size_t frt_runtime_trace_size(const frt_runtime *rt, uint64_t *dropped) {
    (void)rt;
    if (dropped) *dropped = 0;
    return 0;
}

void frt_runtime_trace_clear(frt_runtime *rt) { (void)rt; }

frt_status frt_runtime_trace_event(const frt_runtime *rt, size_t index, frt_trace_event *ev) {
    (void)index;
    if (!rt || !ev) return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_runtime_trace_event: NULL argument");
    return left_out("frt_runtime_trace_event", "step_trace");
}

frt_status frt_runtime_write_trace(const frt_runtime *rt, const char *path) {
    (void)rt, (void)path;
    return left_out("frt_runtime_write_trace", "step_trace");
}
#endif

typedef int frt_features_off_nonempty; /* ISO C: a translation unit declares something */
