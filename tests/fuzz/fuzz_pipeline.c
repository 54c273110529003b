/* libFuzzer target for the whole pipeline, through the public API only: the fuzz input is a
 * model (frt_model_load_buffer: decode, IR, folding, fusion, kernel selection), which is then run
 * with inputs of its declared shapes (symbolic dims 1 or 2) on the kernels the host selects
 * (SIMD variants, OpenBLAS). Build with -DFRT_FUZZ=ON (see scripts/fuzz.sh).
 *
 * What counts as a finding (besides any sanitizer report, leak or timeout):
 *   - a failing call whose frt_last_error() is empty, or a failed load that leaves *out set;
 *   - FRT_ERR_INTERNAL (flatrt's own "this is a bug" status, e.g. the FRT_CHECK_PLAN overlap
 *     check, which is on here);
 *   - an output whose nbytes disagrees with its dtype and shape.
 *
 * Options and output modes are derived from a hash of the input, so every input replays the same
 * way: planner, folding, fusion, manage_outputs, 1 or 2 threads, ALLOC / CALLER / BORROW, a
 * second run with the same shapes, a too-small CALLER buffer.
 *
 * A model whose inputs, planned slab and outputs together exceed MAX_RUN_BYTES is loaded and
 * planned but not run, so one iteration stays in the millisecond range; under ASan a single
 * allocation above 512 MiB fails (see __asan_default_options). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flatrt.h"

#define MAX_RUN_BYTES ((size_t)4 << 20)
#define MAX_IO 64

static volatile uint64_t sink;

static void bug(const char *what, frt_status st) {
    fprintf(stderr, "fuzz_pipeline: %s (status %s, message '%s')\n", what, frt_status_string(st),
            frt_last_error());
    abort();
}

/* Every failure must explain itself; FRT_ERR_INTERNAL is flatrt admitting a bug. */
static void check_failure(frt_status st, const char *call) {
    if (st == FRT_OK) return;
    if (frt_last_error()[0] == 0) bug(call, st);
    if (st == FRT_ERR_INTERNAL) bug(call, st);
}

static uint64_t fnv1a(const uint8_t *d, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ d[i]) * 1099511628211ull;
    return h;
}

/* Small, varied values: floats in [-1.5, 1.5], integers in [0, 2] (valid as indices and axes
 * of small dims most of the time). */
static void fill(void *p, frt_dtype t, size_t numel) {
    for (size_t i = 0; i < numel; i++) {
        int k = (int)(i % 7);
        switch (t) {
        case FRT_FLOAT32: ((float *)p)[i] = 0.5f * (float)(k - 3); break;
        case FRT_FLOAT64: ((double *)p)[i] = 0.5 * (double)(k - 3); break;
        case FRT_INT64: ((int64_t *)p)[i] = k % 3; break;
        case FRT_INT32: ((int32_t *)p)[i] = k % 3; break;
        case FRT_BOOL: ((uint8_t *)p)[i] = (uint8_t)(k & 1); break;
        default: memset((char *)p + i * frt_dtype_size(t), k, frt_dtype_size(t)); break;
        }
    }
}

/* Reads every byte of an output (so ASan checks the pointer) and its size against its shape. */
static void touch_output(const frt_tensor *t) {
    int64_t n = frt_tensor_numel(t);
    if (n < 0 || (size_t)n * frt_dtype_size(t->dtype) != t->nbytes) bug("output nbytes", FRT_OK);
    if (t->nbytes && !t->data) bug("output without data", FRT_OK);
    uint64_t s = 0;
    for (size_t i = 0; i < t->nbytes; i++) s += ((const uint8_t *)t->data)[i];
    sink += s;
}

static void introspect(const frt_model *m) {
    frt_model_stats st;
    frt_model_get_stats(m, &st);
    sink += st.num_steps + strlen(st.producer);
    for (size_t i = 0; i < frt_model_num_op_types(m); i++) {
        const char *op;
        size_t c;
        frt_model_op_type(m, i, &op, &c);
        sink += strlen(op) + c;
    }
    for (size_t i = 0; i < frt_model_num_outputs(m); i++) {
        frt_tensor_info info;
        if (frt_model_output(m, i, &info) != FRT_OK) bug("frt_model_output", FRT_OK);
        sink += strlen(info.name);
        for (int d = 0; d < info.rank; d++)
            if (info.dim_names[d]) sink += strlen(info.dim_names[d]);
    }
}

typedef struct inputs {
    size_t n;
    const char *names[MAX_IO];
    frt_tensor t[MAX_IO];
    size_t bytes;
} inputs;

/* Inputs of the declared shapes; 0 when the model cannot be fed (unknown rank, string or
 * undefined dtype, too many inputs) or the inputs alone exceed MAX_RUN_BYTES. */
static int make_inputs(const frt_model *m, uint64_t h, inputs *in) {
    memset(in, 0, sizeof *in);
    size_t n = frt_model_num_inputs(m);
    if (n > MAX_IO) return 0;
    for (size_t i = 0; i < n; i++) {
        frt_tensor_info info;
        if (frt_model_input(m, i, &info) != FRT_OK) bug("frt_model_input", FRT_OK);
        size_t es = frt_dtype_size(info.dtype);
        if (info.rank < 0 || info.rank > FRT_MAX_RANK || es == 0) return 0;
        frt_tensor *t = &in->t[in->n];
        t->dtype = info.dtype;
        t->rank = info.rank;
        size_t numel = 1;
        for (int d = 0; d < info.rank; d++) {
            int64_t v = info.shape[d] >= 0 ? info.shape[d] : 1 + (int64_t)((h >> (d + 20)) & 1);
            t->shape[d] = v;
            if (v > (int64_t)MAX_RUN_BYTES) return 0;
            numel *= (size_t)v;
            if (numel > MAX_RUN_BYTES) return 0;
        }
        t->nbytes = numel * es;
        in->bytes += t->nbytes;
        if (in->bytes > MAX_RUN_BYTES) return 0;
        in->names[in->n++] = info.name;
    }
    for (size_t i = 0; i < in->n; i++) {
        frt_tensor *t = &in->t[i];
        /* exact size: ASan sees any read past the end of an input */
        t->data = malloc(t->nbytes ? t->nbytes : 1);
        if (!t->data) return 0;
        fill(t->data, t->dtype, t->nbytes / frt_dtype_size(t->dtype));
    }
    return 1;
}

static void free_inputs(inputs *in) {
    for (size_t i = 0; i < in->n; i++) free(in->t[i].data);
}

/* One run in `mode`; CALLER buffers come from a BORROW run's sizes. Returns the status. */
static frt_status run_mode(frt_runtime *rt, inputs *in, size_t n_out, frt_output_mode mode,
                           uint64_t h) {
    frt_tensor out[MAX_IO];
    memset(out, 0, sizeof out);
    frt_status st;
    if (mode == FRT_OUTPUTS_CALLER) {
        st = frt_run(rt, in->names, in->t, in->n, out, n_out, FRT_OUTPUTS_BORROW);
        check_failure(st, "frt_run (BORROW, sizing CALLER buffers)");
        if (st) return st;
        size_t sizes[MAX_IO];
        for (size_t i = 0; i < n_out; i++) sizes[i] = out[i].nbytes;
        int short_one = (h >> 40) % 8 == 0 && n_out > 0 && sizes[0] > 0;
        for (size_t i = 0; i < n_out; i++) {
            memset(&out[i], 0, sizeof out[i]);
            size_t cap = sizes[i] - (short_one && i == 0);
            out[i].data = malloc(cap ? cap : 1);
            out[i].nbytes = cap;
        }
        st = frt_run(rt, in->names, in->t, in->n, out, n_out, FRT_OUTPUTS_CALLER);
        if (short_one && st != FRT_ERR_INVALID_ARGUMENT) bug("short CALLER buffer accepted", st);
        check_failure(st, "frt_run (CALLER)");
        for (size_t i = 0; i < n_out; i++) {
            if (!st) touch_output(&out[i]);
            free(out[i].data);
        }
        return st;
    }
    st = frt_run(rt, in->names, in->t, in->n, out, n_out, mode);
    check_failure(st, mode == FRT_OUTPUTS_ALLOC ? "frt_run (ALLOC)" : "frt_run (BORROW)");
    if (st == FRT_OK)
        for (size_t i = 0; i < n_out; i++) touch_output(&out[i]);
    if (st == FRT_OK && mode == FRT_OUTPUTS_ALLOC && ((h >> 44) & 1)) {
        /* run again while the first outputs are held (manage_outputs: a fresh output block) */
        frt_tensor again[MAX_IO];
        memset(again, 0, sizeof again);
        st = frt_run(rt, in->names, in->t, in->n, again, n_out, mode);
        check_failure(st, "frt_run (ALLOC, second run)");
        for (size_t i = 0; i < n_out; i++) {
            if (st == FRT_OK) touch_output(&again[i]);
            frt_tensor_release(&again[i]);
        }
    }
    for (size_t i = 0; i < n_out; i++) frt_tensor_release(&out[i]);
    return st;
}

static void run_model(const frt_model *m, uint64_t h) {
    inputs in;
    if (!make_inputs(m, h, &in)) {
        free_inputs(&in);
        return;
    }
    frt_runtime *rt = NULL;
    frt_status st = frt_runtime_create(m, &rt);
    check_failure(st, "frt_runtime_create");
    if (st) {
        if (rt) bug("failed frt_runtime_create set *out", st);
        free_inputs(&in);
        return;
    }
    st = frt_runtime_reshape(rt, in.names, in.t, in.n);
    check_failure(st, "frt_runtime_reshape");
    frt_plan_stats ps;
    if (st == FRT_OK && frt_runtime_plan_stats(rt, &ps) != FRT_OK) bug("plan stats", FRT_OK);
    if (st == FRT_OK) {
        for (size_t i = 0; i < frt_runtime_plan_size(rt); i++) {
            frt_plan_entry e;
            if (frt_runtime_plan_entry(rt, i, &e) != FRT_OK) bug("plan entry", FRT_OK);
            if (e.bytes && e.offset + e.bytes > ps.arena_bytes) bug("plan entry outside slab", FRT_OK);
        }
    }
    if (st == FRT_OK && in.bytes + ps.arena_bytes + ps.output_bytes <= MAX_RUN_BYTES) {
        size_t no = frt_model_num_outputs(m);
        if (no > MAX_IO) no = MAX_IO;
        if (no && (h >> 36) % 8 == 0) no--; /* trailing outputs may be skipped */
        frt_output_mode mode = (frt_output_mode)((h >> 32) % 3);
        frt_runtime_set_profiling(rt, (h >> 45) & 1);
        st = run_mode(rt, &in, no, mode, h);
        if (st == FRT_OK && (h >> 46) % 4 == 0) {
            /* a clone planned for the same shapes runs too */
            frt_runtime *rt2 = NULL;
            frt_status st2 = frt_runtime_clone(rt, &rt2);
            check_failure(st2, "frt_runtime_clone");
            if (st2 == FRT_OK) run_mode(rt2, &in, no, FRT_OUTPUTS_BORROW, h);
            frt_runtime_free(rt2);
        }
        for (size_t i = 0; i < frt_runtime_num_steps(rt); i++) {
            frt_step_profile sp;
            frt_runtime_step_profile(rt, i, &sp);
            sink += strlen(sp.node_name) + strlen(sp.op_type) + strlen(sp.kernel);
        }
    }
    frt_runtime_free(rt);
    free_inputs(&in);
}

/* Under ASan, an allocation above 512 MiB returns NULL, and flatrt must answer
 * FRT_ERR_NO_MEMORY: a tiny model may legitimately plan a slab or outputs of gigabytes (planning
 * allocates them; they are never run here), which would only cost time and memory. */
__attribute__((visibility("default"), used)) const char *__asan_default_options(void) {
    return "allocator_may_return_null=1:max_allocation_size_mb=512";
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    setenv("FRT_CHECK_PLAN", "1", 1);       /* verify every plan: no live tensors overlap */
    setenv("OPENBLAS_NUM_THREADS", "1", 0); /* no idle BLAS server threads per process */
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint64_t h = fnv1a(data, size);
    frt_options opt;
    frt_options_init(&opt);
    opt.planner = (frt_planner)(h % 3);
    opt.fold_constants = (h >> 2) % 8 != 0;
    opt.fuse = (h >> 5) % 8 != 0;
    opt.manage_outputs = (int32_t)((h >> 8) & 1);
    opt.num_threads = (h >> 9) % 16 == 0 ? 2 : 1;
    frt_model *m = NULL;
    frt_status st = frt_model_load_buffer(data, size, NULL, &opt, &m);
    check_failure(st, "frt_model_load_buffer");
    if (st) {
        if (m) bug("failed load set *out", st);
        return 0;
    }
    introspect(m);
    run_model(m, h);
    frt_model_free(m);
    return 0;
}
