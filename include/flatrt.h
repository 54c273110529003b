/*
 * flatrt.h — the whole public API of flatrt, a static CPU inference runtime for ONNX models.
 *
 * A model is loaded and compiled once into an immutable frt_model (weights memory-mapped, kernels
 * chosen, memory planned). Each thread that runs it owns an frt_runtime (value array + one memory
 * slab). Runtimes never share mutable state, so any number of them may run one model at once.
 *
 * Usage:
 *
 *     frt_options opt;
 *     frt_options_init(&opt);
 *     frt_model *model;
 *     if (frt_model_load("mnist.onnx", &opt, &model) != FRT_OK) {
 *         fprintf(stderr, "%s\n", frt_last_error());
 *         return 1;
 *     }
 *     frt_runtime *rt;
 *     frt_runtime_create(model, &rt);
 *
 *     float pixels[1 * 1 * 8 * 8] = {0};
 *     frt_tensor in = {.dtype = FRT_FLOAT32, .rank = 4, .shape = {1, 1, 8, 8},
 *                      .data = pixels, .nbytes = sizeof pixels};
 *     const char *names[] = {"image"};
 *     frt_tensor out;                              // filled by frt_run
 *     if (frt_run(rt, names, &in, 1, &out, 1, FRT_OUTPUTS_ALLOC) != FRT_OK)
 *         fprintf(stderr, "%s\n", frt_last_error());
 *     else
 *         printf("%g\n", ((float *)out.data)[0]);
 *     frt_tensor_release(&out);                    // caller owns ALLOC outputs
 *
 *     frt_runtime_free(rt);                        // every runtime before its model
 *     frt_model_free(model);
 *
 * Conventions
 * - Every fallible call returns frt_status. On failure, frt_last_error() returns a message for the
 *   most recent failed call on the calling thread, naming the node, op type and problem where there
 *   is one. The string belongs to flatrt and stays valid until the next failing call on that thread.
 * - Destroying NULL is a no-op.
 * - Inputs are borrowed for the duration of a call; flatrt never writes to them.
 * - An frt_model must outlive every frt_runtime made from it.
 */
#ifndef FLATRT_H
#define FLATRT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this header; frt_version() returns the library's. The shared library's SONAME
 * (libflatrt.so.0) changes with the major version, when the ABI changes incompatibly. */
#define FRT_VERSION_STRING "0.1.0"

/* Marks the public API: the only symbols libflatrt.so exports (it is built with
 * -fvisibility=hidden). */
#if defined(__GNUC__) && __GNUC__ >= 4
#define FRT_API __attribute__((visibility("default")))
#else
#define FRT_API
#endif

/* Largest tensor rank flatrt handles. */
#define FRT_MAX_RANK 8

typedef enum frt_status {
    FRT_OK = 0,
    FRT_ERR_INVALID_ARGUMENT = 1, /* bad argument from the caller (names, dtypes, shapes, NULLs) */
    FRT_ERR_IO = 2,               /* file could not be opened or mapped */
    FRT_ERR_MALFORMED = 3,        /* model bytes are not a valid ONNX model */
    FRT_ERR_UNSUPPORTED = 4,      /* valid model that uses something flatrt does not implement */
    FRT_ERR_SHAPE = 5,            /* shapes or dtypes inconsistent within the model */
    FRT_ERR_NO_MEMORY = 6,        /* an allocation failed or a size is absurd */
    FRT_ERR_RUNTIME = 7,          /* a kernel rejected data at run time (e.g. an index out of range) */
    FRT_ERR_INTERNAL = 8,         /* a bug in flatrt */
    FRT_ERR_TIMEOUT = 9           /* a wait ran out (frt_pool_run: no runtime became free) */
} frt_status;

/* Element types; values equal ONNX TensorProto.DataType. */
typedef enum frt_dtype {
    FRT_DTYPE_UNDEFINED = 0,
    FRT_FLOAT32 = 1,
    FRT_UINT8 = 2,
    FRT_INT8 = 3,
    FRT_UINT16 = 4,
    FRT_INT16 = 5,
    FRT_INT32 = 6,
    FRT_INT64 = 7,
    FRT_STRING = 8,
    FRT_BOOL = 9,
    FRT_FLOAT16 = 10,
    FRT_FLOAT64 = 11,
    FRT_UINT32 = 12,
    FRT_UINT64 = 13,
    FRT_BFLOAT16 = 16 /* the upper 16 bits of a float32 */
} frt_dtype;

/* Name of a status or dtype ("FRT_OK", "float32"); never NULL. */
FRT_API const char *frt_status_string(frt_status s);
FRT_API const char *frt_dtype_name(frt_dtype t);
/* Bytes per element, 0 for types without a fixed size. */
FRT_API size_t frt_dtype_size(frt_dtype t);

/* Version of the library in use, "major.minor.patch"; equals FRT_VERSION_STRING when the program
 * was built against the same release. The string is static. */
FRT_API const char *frt_version(void);

/* Message of the last failed call on this thread ("" if none). */
FRT_API const char *frt_last_error(void);

/* The operators this build implements, one entry per op and opset range (a selective build lists
 * only the ops it kept). Strings are static. */
typedef struct frt_op_info {
    const char *domain;    /* "" (ai.onnx), "ai.onnx.preview.training", ...; "flatrt" for ops
                              that only load-time passes create */
    const char *op_type;
    int since_opset;       /* opsets of the domain this entry implements: [since, max] */
    int max_opset;
    const char *family;    /* implementation family (source file src/ops/<family>.c) */
    int data_shape;        /* 1: output shapes may depend on input data (run-time sized) */
} frt_op_info;
FRT_API size_t frt_num_ops(void);
/* Fills *out for entry index < frt_num_ops(); FRT_ERR_INVALID_ARGUMENT otherwise. */
FRT_API frt_status frt_op_info_get(size_t index, frt_op_info *out);

/* ---------------------------------------------------------------------------------------------- */
/* Tensors exchanged with the caller                                                               */
/* ---------------------------------------------------------------------------------------------- */

/* A plain description of a dense, row-major tensor. Not opaque: callers fill it for inputs.
 * `_owner` is opaque and belongs to flatrt: callers never read, write or interpret it, except to
 * zero it (zero-initialize every tensor they make, e.g. `frt_tensor t = {0}` or designated
 * initializers). flatrt sets it on returned outputs; when data was allocated by flatrt
 * (FRT_OUTPUTS_ALLOC) the caller must call frt_tensor_release(). */
typedef struct frt_tensor {
    frt_dtype dtype;
    int32_t rank;
    int64_t shape[FRT_MAX_RANK];
    void *data;
    size_t nbytes; /* bytes at data: the exact size for inputs and returned outputs, the capacity
                      for FRT_OUTPUTS_CALLER buffers */
    void *_owner; /* opaque: see above */
} frt_tensor;

/* Releases data that flatrt allocated for the tensor (or the tensor's reference to a managed
 * output arena) and clears the tensor; harmless on any other tensor. Thread-safe: tensors may be
 * released on any thread, also after their runtime was freed. */
FRT_API void frt_tensor_release(frt_tensor *t);
/* Number of elements (product of shape; 1 for rank 0). */
FRT_API int64_t frt_tensor_numel(const frt_tensor *t);

/* ---------------------------------------------------------------------------------------------- */
/* Models                                                                                          */
/* ---------------------------------------------------------------------------------------------- */

typedef enum frt_planner {
    FRT_PLANNER_STANDARD = 0, /* storage groups of tensors with disjoint lifetimes, or greedy by
                                 size where that gives the smaller slab */
    FRT_PLANNER_NONE = 1,     /* every intermediate in its own range: no reuse (for comparison) */
    FRT_PLANNER_GREEDY = 2    /* byte offsets, greedy by size (arXiv:2001.03288, section 5.2) */
} frt_planner;

/* Storage precision of constant weights (frt_options.weights_precision). FP16 / BF16: the
 * weights of Gemm and MatMul nodes whose weight operand (B) is a constant, and of Conv nodes with
 * constant W run by the builtin packed-GEMM convolution (AVX2 / AVX-512 tiers), are rounded to
 * IEEE half / bfloat16 (nearest even) and packed at load, halving their memory and bandwidth;
 * products are still computed in float32. The result differs from float32 weights by the rounding
 * of each weight (relative 2^-11 for fp16, 2^-8 for bf16). A node whose weights do not fit fp16
 * (|w| >= 65520) keeps float32. Convolutions run by the oneDNN provider (its bf16 primitives would
 * round the activations too), depthwise convolutions and the portable tier's convolution keep
 * float32 weights; the kernel names (flatrt bench --profile) carry _f16w / _bf16w where the option
 * applies. Folded (constant) subgraphs are always computed in float32. */
typedef enum frt_weights_precision {
    FRT_WEIGHTS_FP32 = 0, /* default: weights as stored in the model */
    FRT_WEIGHTS_FP16 = 1,
    FRT_WEIGHTS_BF16 = 2
} frt_weights_precision;

/* Largest num_threads a model accepts. */
#define FRT_MAX_THREADS 256

typedef struct frt_options {
    /* intra-op threads per runtime, 1..FRT_MAX_THREADS (1 = run on the calling thread only);
     * anything else is rejected with FRT_ERR_INVALID_ARGUMENT */
    int32_t num_threads;
    frt_planner planner;
    int32_t fold_constants; /* 1 (default): evaluate constant subgraphs at load */
    int32_t fuse;           /* 1 (default): fuse Conv+BatchNorm, Conv/Gemm+activation, ... */
    /* 1: FRT_OUTPUTS_ALLOC outputs are not copied: they point into the runtime's output arena,
     * which stays alive until the caller has released every output tensor of that run (as
     * Static Runtime's manage_output_tensors). While the caller holds them, the next run uses a
     * fresh arena; once released, the arena is reused, so a caller that releases its outputs
     * before the next run causes no allocation. 0 (default): each output is copied into its own
     * allocation. */
    int32_t manage_outputs;
    /* FRT_WEIGHTS_FP32 (default), FRT_WEIGHTS_FP16 or FRT_WEIGHTS_BF16 (see above); any other value
     * is rejected with FRT_ERR_INVALID_ARGUMENT */
    frt_weights_precision weights_precision;
    /* inter-op threads per runtime, 1..FRT_MAX_THREADS (default 1: steps run one after another).
     * N > 1: steps of the model's graph that do not depend on each other (the branches of an
     * Inception block, the embedding lookups of a DLRM) run concurrently on up to N threads (the
     * caller + N - 1 workers of the runtime). The memory plan is made for that: two tensors share
     * memory only when every use of one happens before the other is written, by the dataflow
     * graph. Threads: the runtime's intra-op pool then has max(num_threads, N) threads, of which
     * the N inter-op threads are part (an idle one helps a running step whose kernel splits its
     * work, e.g. a GEMM, instead of waiting), and kernels are chosen for that many. So at most
     * max(num_threads, N) threads compute at once (give N <= cores). When inter-op is declined
     * at load (frt_runtime_interop_info), steps run in order and all max(num_threads, N) threads
     * split them, as with num_threads = max(num_threads, N). Kernels split work without
     * changing any summation order, so a step's result does not depend on how many threads
     * helped: outputs are bit-identical to a sequential run's (test runtime.interop).
     * Steps inside subgraphs (If/Loop/Scan bodies) run one after another, and a graph
     * with steps whose outputs are sized at run time (NonZero, Unique, data-dependent shapes)
     * runs sequentially. */
    int32_t inter_op_threads;
} frt_options;

/* Fills defaults: 1 thread, standard planner, folding and fusion on, float32 weights, 1 inter-op
 * thread. */
FRT_API void frt_options_init(frt_options *opt);

typedef struct frt_model frt_model;

/* Loads and compiles an ONNX model. The file is memory-mapped; weights are used in place.
 * External data files are looked up relative to the model's directory. opt may be NULL. */
FRT_API frt_status frt_model_load(const char *path, const frt_options *opt, frt_model **out);
/* Same from a buffer the caller keeps alive and unchanged until frt_model_free(). External data
 * files are resolved relative to base_dir (may be NULL: then external data is an error). */
FRT_API frt_status frt_model_load_buffer(const void *data, size_t size, const char *base_dir,
                                         const frt_options *opt, frt_model **out);
/* Loads an ahead-of-time program written by `flatrt compile MODEL -o PROGRAM` (the model loaded,
 * optimised, kernels chosen and memory planned for fixed input shapes; docs/selective.md
 * "Ahead-of-time programs") into the same frt_model handle; everything after loading works as
 * for a model, except that inputs must have the shapes the program was compiled for. Programs
 * are read by a runtime-only build (cmake -DFRT_SELECT=... -DFRT_AOT_ONLY=ON, where frt_model_load
 * reads programs too); other builds answer FRT_ERR_UNSUPPORTED. A program is validated like any
 * untrusted input: a truncated, corrupted or foreign file (another version, ISA tier or op
 * selection) gets FRT_ERR_MALFORMED or FRT_ERR_UNSUPPORTED with what failed. opt may be NULL;
 * programs run on one thread. */
FRT_API frt_status frt_model_load_program(const char *path, const frt_options *opt,
                                          frt_model **out);
/* Writes the ahead-of-time program of a loaded model (what `flatrt compile` calls) to path, for
 * the input shapes of inputs[0..n) (matched by names; every model input once, every dim known;
 * their data is not read). The model must have been loaded with one thread and have no subgraphs.
 * FRT_ERR_UNSUPPORTED, naming the op, node and kernel, when some step's kernel has no
 * ahead-of-time writer yet (nothing is written then); selective builds answer it
 * FRT_ERR_UNSUPPORTED. */
FRT_API frt_status frt_model_write_program(const frt_model *model, const char *const *names,
                                           const frt_tensor *inputs, size_t n, const char *path);
FRT_API void frt_model_free(frt_model *model);

/* What a graph input or output holds. Most models have tensors only; sequences and optionals
 * are passed with frt_run_values (frt_run accepts tensors only). */
typedef enum frt_kind {
    FRT_KIND_TENSOR = 0,
    FRT_KIND_SEQUENCE = 1, /* an ordered list of tensors of one dtype (shapes may differ) */
    FRT_KIND_OPTIONAL = 2  /* a tensor or a sequence, or nothing */
} frt_kind;

/* Shape and type of a graph input or output. A dim that is not fixed is -1, and dim_names[i]
 * holds its symbolic name ("batch") or NULL. Strings belong to the model. For a sequence or
 * optional, dtype is the dtype of its tensors and rank is -1. */
typedef struct frt_tensor_info {
    const char *name;
    frt_dtype dtype;
    int32_t rank; /* -1 when unknown */
    int64_t shape[FRT_MAX_RANK];
    const char *dim_names[FRT_MAX_RANK];
    frt_kind kind;      /* FRT_KIND_TENSOR for tensors */
    frt_kind elem_kind; /* FRT_KIND_OPTIONAL: what it holds (TENSOR or SEQUENCE); else TENSOR */
} frt_tensor_info;

FRT_API size_t frt_model_num_inputs(const frt_model *model);
FRT_API size_t frt_model_num_outputs(const frt_model *model);
FRT_API frt_status frt_model_input(const frt_model *model, size_t index, frt_tensor_info *info);
FRT_API frt_status frt_model_output(const frt_model *model, size_t index, frt_tensor_info *info);

/* Facts about a loaded model, for tools. Strings belong to the model. */
typedef struct frt_model_stats {
    int64_t opset;           /* default-domain opset */
    const char *producer;    /* producer_name + version, may be "" */
    size_t num_nodes;        /* nodes in the ONNX graph */
    size_t num_steps;        /* steps left after folding and fusion (views included) */
    size_t num_folded;       /* nodes evaluated at load */
    size_t num_fused;        /* nodes removed by fusion */
    size_t num_params;       /* elements in initializers */
    size_t param_bytes;      /* bytes of initializers */
    size_t mapped_bytes;     /* initializer bytes used in place from the file */
    size_t copied_bytes;     /* initializer bytes copied (misaligned or non-raw encodings) */
    size_t transformed_bytes;/* bytes of weights produced by passes (folded BN, packed weights) */
} frt_model_stats;
FRT_API void frt_model_get_stats(const frt_model *model, frt_model_stats *stats);

/* ONNX op types of the graph's nodes and how many nodes use each; index in [0, count). */
FRT_API size_t frt_model_num_op_types(const frt_model *model);
FRT_API void frt_model_op_type(const frt_model *model, size_t index, const char **op_type,
                               size_t *count);

/* ---------------------------------------------------------------------------------------------- */
/* Runtimes                                                                                        */
/* ---------------------------------------------------------------------------------------------- */

typedef struct frt_runtime frt_runtime;

/* A runtime holds the value array and memory slab for one thread. Creation is cheap: the slab is
 * sized on the first run (or by frt_runtime_reshape). */
FRT_API frt_status frt_runtime_create(const frt_model *model, frt_runtime **out);
/* A new runtime for the same model, with the same input shapes already planned. */
FRT_API frt_status frt_runtime_clone(const frt_runtime *rt, frt_runtime **out);
FRT_API void frt_runtime_free(frt_runtime *rt);

typedef enum frt_output_mode {
    /* flatrt mallocs each output; the caller frees with frt_tensor_release(). */
    FRT_OUTPUTS_ALLOC = 0,
    /* The caller sets data and nbytes (capacity) of each output; flatrt checks the capacity and
     * fills dtype, rank, shape and nbytes. */
    FRT_OUTPUTS_CALLER = 1,
    /* Outputs point into the runtime's memory: no copy, valid until the next run or reshape of
     * this runtime or its destruction. */
    FRT_OUTPUTS_BORROW = 2
} frt_output_mode;

/* Runs the model. Inputs are matched by name (every graph input must be given exactly once);
 * their dtype, rank and fixed dims are checked. outputs[i] receives graph output i; n_outputs
 * may be smaller than the number of outputs to skip trailing ones. When input shapes differ
 * from the previous run, shapes and the memory plan are recomputed first. */
FRT_API frt_status frt_run(frt_runtime *rt, const char *const *input_names,
                           const frt_tensor *inputs, size_t n_inputs, frt_tensor *outputs,
                           size_t n_outputs, frt_output_mode mode);

/* Asynchronous runs (as Static Runtime's runAsync). A task launcher runs tasks on the caller's
 * threads (an executor, a thread pool, an event loop): launch(ctx, task, arg) must call
 * task(arg) exactly once, later on any thread, or right away on the calling thread. flatrt hands
 * it the work of a run: one task for a run whose steps run in order; with inter_op_threads > 1,
 * inter_op_threads tasks that take the run's steps as they become ready (a task may wait, polling
 * briefly then sleeping, while steps of the others run; it never waits for a task that has not
 * started, so any launcher works, also one that runs tasks at once or on a single thread). */
typedef struct frt_task_launcher {
    void (*launch)(void *ctx, void (*task)(void *arg), void *arg);
    void *ctx;
} frt_task_launcher;

/* Called once when an asynchronous run ends, on the thread that ran its last task, with the
 * run's status; on failure, frt_last_error() on that thread has the message while the callback
 * runs. The runtime may be run again from the callback, but not freed there (the callback may
 * run on one of the runtime's own threads). */
typedef void (*frt_run_callback)(void *user, frt_status status);

/* Starts frt_run(rt, ...) without waiting for it; done(user, status) is called when it ends.
 * Arguments, input shapes and the plan are checked before it returns: on an error it returns
 * that status and done is never called. When it returns FRT_OK, done is called exactly once
 * (possibly before frt_run_async returns, e.g. with a launcher that runs tasks at once). Until
 * done is called, the caller keeps inputs (names, tensors, data) and outputs alive and
 * unchanged, and does not use rt (no other run, reshape or free). Outputs follow `mode` as with
 * frt_run; they are filled when done is called with FRT_OK. launcher NULL: tasks run on the
 * runtime's own worker threads (inter_op_threads of them, at least one, created on first use).
 *
 *     static void launch(void *ctx, void (*task)(void *), void *arg) {
 *         my_executor_submit(ctx, task, arg);   // any thread pool of the application
 *     }
 *     static void done(void *user, frt_status st) {
 *         struct request *r = user;              // r->out was filled by the run
 *         if (st != FRT_OK) fprintf(stderr, "%s\n", frt_last_error());
 *         reply(r, st);                           // then frt_tensor_release(&r->out)
 *     }
 *     ...
 *     frt_task_launcher l = {launch, executor};
 *     if (frt_run_async(rt, names, &r->in, 1, &r->out, 1, FRT_OUTPUTS_ALLOC, &l, done, r))
 *         fprintf(stderr, "%s\n", frt_last_error()); // not started: done will not be called
 */
FRT_API frt_status frt_run_async(frt_runtime *rt, const char *const *input_names,
                                 const frt_tensor *inputs, size_t n_inputs, frt_tensor *outputs,
                                 size_t n_outputs, frt_output_mode mode,
                                 const frt_task_launcher *launcher, frt_run_callback done,
                                 void *user);

/* A graph input or output of any kind, for frt_run_values.
 *   FRT_KIND_TENSOR     n == 1, tensors[0] is the tensor
 *   FRT_KIND_SEQUENCE   tensors[0..n) in order (n may be 0)
 *   FRT_KIND_OPTIONAL   has_value 0: nothing (n 0); otherwise elem_kind TENSOR with n == 1, or
 *                       elem_kind SEQUENCE with tensors[0..n)
 * Inputs: filled by the caller (zero-initialize, then set kind, elem_kind, has_value, n, tensors);
 * the tensors are borrowed for the call, as frt_run's inputs. Outputs: filled by flatrt; the
 * tensors array and every tensor's data are allocated for the caller, who frees all of it with
 * frt_io_value_release (not frt_tensor_release on single tensors). */
typedef struct frt_io_value {
    frt_kind kind;
    frt_kind elem_kind;   /* FRT_KIND_OPTIONAL only */
    int32_t has_value;    /* FRT_KIND_OPTIONAL only: 1 when it holds a tensor or sequence */
    frt_dtype elem_dtype; /* outputs: dtype of the tensors (also of an empty sequence) */
    size_t n;
    frt_tensor *tensors;
} frt_io_value;

/* Runs the model like frt_run, with inputs and outputs of any kind (tensors, sequences,
 * optionals); see frt_io_value for the ownership of outputs. Required when a graph input or output
 * is a sequence or optional (frt_run then fails with FRT_ERR_INVALID_ARGUMENT); works for any
 * model. Element dtypes are checked against the model; element shapes are free. */
FRT_API frt_status frt_run_values(frt_runtime *rt, const char *const *input_names,
                                  const frt_io_value *inputs, size_t n_inputs,
                                  frt_io_value *outputs, size_t n_outputs);
/* Releases what frt_run_values allocated for an output value and zeroes it; harmless on a zeroed
 * value. Thread-safe like frt_tensor_release. */
FRT_API void frt_io_value_release(frt_io_value *value);

/* Resolves shapes and plans memory for the given input shapes without running (data unused). */
FRT_API frt_status frt_runtime_reshape(frt_runtime *rt, const char *const *input_names,
                                       const frt_tensor *inputs, size_t n_inputs);

/* Memory plan of the runtime for its current input shapes. */
typedef struct frt_plan_stats {
    size_t arena_bytes;       /* planned slab size */
    size_t naive_bytes;       /* sum of all planned intermediates (no reuse) */
    size_t lower_bound_bytes; /* largest total of intermediates live at one step */
    size_t num_managed;       /* intermediates placed in the slab */
    size_t num_reused;        /* managed tensors that share storage with an earlier one */
    size_t num_views;         /* values that alias another value */
    size_t num_inplace;       /* steps that write their output over a dying input */
    size_t num_concat_removed;/* Concat steps removed: producers write into the output slices */
    size_t output_bytes;      /* runtime-owned storage of graph outputs */
    size_t shape_bytes;       /* values computed while resolving shapes */
} frt_plan_stats;
FRT_API frt_status frt_runtime_plan_stats(const frt_runtime *rt, frt_plan_stats *stats);

/* One tensor of the current plan, for pictures and debugging. Lifetimes are positions in the
 * order of compute steps (see frt_runtime_step_profile). */
typedef enum frt_plan_kind {
    FRT_PLAN_TENSOR = 0,  /* intermediate with its own storage */
    FRT_PLAN_SLICE = 1,   /* written straight into a slice of a Concat's output */
    FRT_PLAN_INPLACE = 2, /* written over an input that dies at its step */
    FRT_PLAN_SCRATCH = 3  /* a kernel's workspace for one step */
} frt_plan_kind;
typedef struct frt_plan_entry {
    const char *name;     /* value name, or the node name for scratch */
    frt_plan_kind kind;
    size_t offset, bytes; /* byte range in the slab */
    int32_t first, last;  /* first and last step that use it */
} frt_plan_entry;
/* Number of entries in the current plan (0 before the first run or reshape). */
FRT_API size_t frt_runtime_plan_size(const frt_runtime *rt);
FRT_API frt_status frt_runtime_plan_entry(const frt_runtime *rt, size_t index,
                                          frt_plan_entry *entry);

/* Profiling: when on, each run adds the time of each step. */
FRT_API void frt_runtime_set_profiling(frt_runtime *rt, int on);
typedef struct frt_step_profile {
    const char *node_name;
    const char *op_type;
    const char *kernel;  /* name of the kernel chosen at load */
    uint64_t total_ns;   /* summed over profiled runs */
    uint64_t runs;
} frt_step_profile;
FRT_API size_t frt_runtime_num_steps(const frt_runtime *rt);
FRT_API void frt_runtime_step_profile(const frt_runtime *rt, size_t index, frt_step_profile *out);
FRT_API void frt_runtime_reset_profile(frt_runtime *rt);

/* Inter-op parallelism of the model's graph (frt_options.inter_op_threads > 1).
 * At load, each step's time is estimated from its shapes (multiply-adds and bytes moved) and the
 * critical path (the longest chain of dependent steps) is computed over the dataflow DAG. The
 * run it would replace takes `total`: the steps in order, each split over W = max(num_threads,
 * P) threads (P inter-op threads) as far as the kernels' cost model splits it; with inter-op no
 * schedule ends before max(path of those split step times, work / W). When that leaves less
 * than 20 us or 15% of `total` to gain, inter-op is declined (hand-offs between threads cost more
 * on such a model; only steps too small to split leave threads idle in order): runs and the
 * memory plan are then sequential with steps split over the W threads, `threads` is 1 and
 * `declined` says why. (FRT_INTEROP_FORCE=1 in the environment at load keeps inter-op regardless; tests.)
 * The measured bound: with profiling on (frt_runtime_set_profiling), total_us and path_us are
 * the sum of step times and the critical path from the profiled step times, per profiled run;
 * total_us / path_us bounds any inter-op speed-up of those steps. */
typedef struct frt_interop_info {
    int32_t threads;          /* inter-op threads runs use: inter_op_threads, or 1 */
    const char *declined;     /* why inter-op was declined at load, or NULL */
    double est_total_us, est_path_us; /* load-time estimate of total and path (above; 0 when
                                         shapes were unknown) */
    double total_us, path_us; /* from the profile (0 before a profiled run) */
    uint64_t runs;            /* profiled runs */
} frt_interop_info;
/* FRT_ERR_UNSUPPORTED when the model was loaded with inter_op_threads 1 or its graph has steps
 * sized at run time (no DAG); FRT_ERR_NO_MEMORY. */
FRT_API frt_status frt_runtime_interop_info(const frt_runtime *rt, frt_interop_info *info);

/* Tracing: while a trace buffer is set, every run records one event per executed step, also
 * for the steps of subgraphs (If/Loop/Scan bodies), in execution order of completion. */
typedef struct frt_trace_event {
    const char *node_name;
    const char *op_type;
    const char *kernel;
    int32_t block;        /* 0: the model's graph; > 0: a subgraph */
    int32_t depth;        /* 0 for the graph's steps; n + 1 inside a subgraph run by depth n */
    uint32_t thread_id;   /* OS thread id (gettid) of the thread that ran the step */
    uint64_t start_ns;    /* CLOCK_MONOTONIC */
    uint64_t dur_ns;
    int32_t rank;         /* shape of the step's first output after the step; -1 if none */
    int64_t shape[FRT_MAX_RANK];
    uint64_t in_bytes;    /* bytes of the step's inputs and outputs */
    uint64_t out_bytes;
} frt_trace_event;
/* Allocates a buffer for max_events events and starts recording (clearing any previous trace);
 * max_events = 0 stops tracing and frees the buffer. Steps that do not fit are counted, not
 * recorded. Tracing adds two clock reads and one record per step; it does not allocate. */
FRT_API frt_status frt_runtime_set_trace(frt_runtime *rt, size_t max_events);
/* Events recorded so far; *dropped (may be NULL) gets the number of steps that did not fit. */
FRT_API size_t frt_runtime_trace_size(const frt_runtime *rt, uint64_t *dropped);
FRT_API frt_status frt_runtime_trace_event(const frt_runtime *rt, size_t index,
                                           frt_trace_event *ev);
/* Forgets the recorded events, keeping the buffer. */
FRT_API void frt_runtime_trace_clear(frt_runtime *rt);
/* Writes the recorded events to path as Chrome trace-event JSON (complete events, one track per
 * thread, times in microseconds from the first event), loadable in Perfetto and
 * chrome://tracing. Each event's args hold op, kernel, block, shape, in_bytes and out_bytes. */
FRT_API frt_status frt_runtime_write_trace(const frt_runtime *rt, const char *path);

/* ---------------------------------------------------------------------------------------------- */
/* Runtime pools                                                                                   */
/* ---------------------------------------------------------------------------------------------- */

/* A pool of runtimes of one model for callers on many threads: frt_pool_run takes a free runtime
 * (the most recently used, whose memory is warm), creating one while fewer than max_runtimes are
 * alive, else waiting for one; runs; and returns it. Runtimes left idle longer than
 * idle_timeout_ms are freed with their slabs by a helper thread of the pool, so memory falls back
 * after a spike of concurrent callers. Every runtime of the pool has the model's num_threads.
 *
 * The server pattern: one model, one pool, any number of request threads. With 1-thread models
 * (the default) max_runtimes = the number of cores runs that many requests at once, each on one
 * core, and further callers wait (or get FRT_ERR_TIMEOUT) instead of oversubscribing the cores:
 *
 *     frt_model *model;                        // frt_model_load(path, NULL, &model) once
 *     frt_pool_options po;
 *     frt_pool_options_init(&po);
 *     po.max_runtimes = 2;                     // cores
 *     po.idle_timeout_ms = 5000;               // free runtimes idle for 5 s
 *     frt_pool *pool;
 *     if (frt_pool_create(model, &po, &pool) != FRT_OK) puts(frt_last_error());
 *
 *     // on every request thread, concurrently:
 *     const char *names[] = {"image"};
 *     float img[64], logits[10];
 *     frt_tensor in = {.dtype = FRT_FLOAT32, .rank = 4, .shape = {1, 1, 8, 8}, .data = img,
 *                      .nbytes = sizeof img};
 *     frt_tensor out = {.data = logits, .nbytes = sizeof logits};
 *     frt_status st = frt_pool_run(pool, names, &in, 1, &out, 1, FRT_OUTPUTS_CALLER, 100);
 *     // FRT_OK: logits filled; FRT_ERR_TIMEOUT: every runtime busy for 100 ms
 *
 *     frt_pool_free(pool);                     // after the last frt_pool_run returned
 *     frt_model_free(model);
 */
typedef struct frt_pool frt_pool;

/* Largest max_runtimes a pool accepts. */
#define FRT_POOL_MAX_RUNTIMES 1024

typedef struct frt_pool_options {
    int32_t max_runtimes;    /* 1..FRT_POOL_MAX_RUNTIMES runtimes alive at once (default 8) */
    /* > 0: a runtime idle this long is freed (default 10000 ms); 0: idle runtimes are kept until
     * frt_pool_free (no helper thread) */
    int64_t idle_timeout_ms;
} frt_pool_options;

/* Fills defaults: 8 runtimes, 10 s idle timeout. */
FRT_API void frt_pool_options_init(frt_pool_options *opt);
/* Creates a pool for model (which must outlive it); opt may be NULL (defaults). No runtime is
 * created until the first run. */
FRT_API frt_status frt_pool_create(const frt_model *model, const frt_pool_options *opt,
                                   frt_pool **out);
/* Frees the pool and its runtimes. No frt_pool_run may be in progress. */
FRT_API void frt_pool_free(frt_pool *pool);

/* frt_run on a runtime of the pool; thread-safe. mode FRT_OUTPUTS_ALLOC or FRT_OUTPUTS_CALLER
 * (FRT_OUTPUTS_BORROW is refused: the runtime's memory goes back to the pool). With
 * manage_outputs, ALLOC outputs stay valid until released, as with frt_run. timeout_ms: how
 * long to wait when max_runtimes are busy: < 0 without limit, 0 not at all; when it runs out,
 * FRT_ERR_TIMEOUT. */
FRT_API frt_status frt_pool_run(frt_pool *pool, const char *const *input_names,
                                const frt_tensor *inputs, size_t n_inputs, frt_tensor *outputs,
                                size_t n_outputs, frt_output_mode mode, int64_t timeout_ms);

/* Frees the runtimes idle longer than the timeout now (also done by the pool's helper thread);
 * with idle_ms = 0, every idle runtime. Returns how many were freed. Thread-safe. */
FRT_API size_t frt_pool_collect(frt_pool *pool, int64_t idle_ms);

typedef struct frt_pool_stats {
    size_t alive;        /* runtimes that exist now (idle + running + being created) */
    size_t idle;         /* of those, waiting in the pool */
    size_t peak;         /* most runtimes alive at once */
    uint64_t created;    /* runtimes created so far */
    uint64_t freed;      /* runtimes freed as idle so far */
    uint64_t runs;       /* frt_pool_run calls that got a runtime */
    uint64_t waits;      /* of those, calls that had to wait for one */
    uint64_t timeouts;   /* calls that returned FRT_ERR_TIMEOUT */
} frt_pool_stats;
/* A consistent snapshot of the counters; thread-safe. */
FRT_API void frt_pool_get_stats(frt_pool *pool, frt_pool_stats *stats);

/* ---------------------------------------------------------------------------------------------- */
/* Model description for tools (flatrt info)                                                       */
/* ---------------------------------------------------------------------------------------------- */

/* The ONNX graph of a model as the decoder reads it (top-level graph), with the types and shapes
 * inference gave and the kernel chosen per node when the model compiled. Works on any file the
 * decoder reads, also one whose operators this build lacks. Strings belong to the description. */
typedef struct frt_desc frt_desc;

/* With model NULL, the file at path is decoded (not compiled; external data is not read) and
 * nodes report whether this build implements them. With a loaded model, path is ignored (may be
 * NULL) and the description is of that model, which must outlive it. */
FRT_API frt_status frt_desc_create(const char *path, const frt_model *model, frt_desc **out);
FRT_API void frt_desc_free(frt_desc *desc);

typedef struct frt_desc_info {
    const char *producer;    /* producer_name and version, may be "" */
    int64_t opset;           /* default-domain opset */
    int64_t ir_version;
    size_t num_nodes;        /* top-level nodes */
    size_t num_initializers;
    size_t num_inputs;       /* graph inputs that are not initializers */
    size_t num_outputs;
    int compiled;            /* 1 when made from a loaded model */
} frt_desc_info;
FRT_API void frt_desc_get_info(const frt_desc *desc, frt_desc_info *out);
/* Graph inputs (initializers left out) and outputs as declared. */
FRT_API frt_status frt_desc_input(const frt_desc *desc, size_t index, frt_tensor_info *out);
FRT_API frt_status frt_desc_output(const frt_desc *desc, size_t index, frt_tensor_info *out);

typedef struct frt_desc_node {
    const char *name;      /* the model's, or "<op>_<index>" as the runtime names it */
    const char *op_type;
    const char *domain;    /* "" for ai.onnx */
    int64_t opset;         /* the model's opset of the node's domain (0 if not imported) */
    int supported;         /* this build has the op at that opset (frt_op_info_get) */
    /* compiled models: the kernel of the node's compute step, or "(fused)" (merged into another
     * step), "(folded)" (computed at load), "(view)" (no copy), "(shape)" (computed when
     * shapes are known), "-"; models not compiled: NULL if supported, else "(unsupported)" */
    const char *kernel;
    size_t num_inputs, num_outputs, num_attrs;
} frt_desc_node;
FRT_API frt_status frt_desc_node_get(const frt_desc *desc, size_t index, frt_desc_node *out);
/* Input (is_output 0) or output k of a node: name ("" for an omitted optional one), and dtype /
 * rank / shape as inferred at load (compiled) or declared (value_info, initializers); dtype 0
 * and rank -1 when unknown. */
FRT_API frt_status frt_desc_node_value(const frt_desc *desc, size_t node, int is_output, size_t k,
                                       frt_tensor_info *out);
/* Attribute k of a node, formatted: text "[3,3]" (long lists cut with "...") and json
 * "[3, 3]" (a JSON value: number, string, array, or an object for tensors and graphs). */
typedef struct frt_desc_attr {
    const char *name;
    const char *text;
    const char *json;
} frt_desc_attr;
FRT_API frt_status frt_desc_node_attr(const frt_desc *desc, size_t node, size_t k,
                                      frt_desc_attr *out);

/* ---- selection tracing (`flatrt trace`, docs/selective.md) ----
 * While recording is on, loading and running models add facts to one process-wide set: each a
 * tab-separated record ("op", "dtype", "kernel", "variant", "provider" or "feature" and its
 * fields, as docs/selective.md lists). Recording is for tools, not for serving: it takes a lock
 * per new fact. A selective build records nothing. */
FRT_API void frt_selection_record(int on);
/* Forgets every recorded fact. Not while a model is loaded or run with recording on. */
FRT_API void frt_selection_reset(void);
/* Number of recorded facts, and fact i (valid until frt_selection_reset; NULL past the end). */
FRT_API size_t frt_selection_count(void);
FRT_API const char *frt_selection_at(size_t i);
/* Facts the recorder could not keep since the last reset (out of memory, or a record longer than
 * 511 bytes). Nonzero means the recorded set is incomplete: a selection built from it could leave
 * out something the traced models need. */
FRT_API size_t frt_selection_dropped(void);
/* The ISA tier kernels are picked for in this process ("avx512", "avx2", "portable"), after
 * FRT_ISA. */
FRT_API const char *frt_isa_tier(void);

#ifdef __cplusplus
}
#endif
#endif /* FLATRT_H */
