/*
 * _flatrt: the CPython extension behind the `flatrt` Python package (python/flatrt/__init__.py).
 * It uses only the public C API (include/flatrt.h) and numpy's C API.
 *
 *   Model(path_or_bytes, threads=1, planner="greedy", fold_constants=True, fuse=True,
 *         manage_outputs=False, max_runtimes=8, idle_timeout_ms=10000, base_dir=None)
 *   Model.inputs, Model.outputs      lists of TensorInfo(name, dtype, shape)
 *   Model.run(feeds, outputs=None, timeout_ms=-1) -> {name: numpy.ndarray}
 *   Model.profile(feeds, runs=1)     per-step times of a dedicated profiling runtime
 *   Model.plan_stats(feeds=None)     memory plan of that runtime for the feeds' shapes
 *   Model.pool_stats()               counters of the runtime pool
 *   Model.converted_inputs           inputs copied/converted so far (0 copies: zero-copy feeds)
 *
 * Runs go through an frt_pool: each call takes a runtime of the pool with the GIL released, so
 * any number of Python threads may call run() on one Model at once. Outputs are allocated by
 * flatrt (FRT_OUTPUTS_ALLOC) and handed to numpy with a capsule as the array's base object whose
 * destructor calls frt_tensor_release: an output array owns its memory and never points into a
 * runtime's slab. Library failures raise flatrt.Error with the library's message, .status (the
 * frt_status number) and .status_name ("FRT_ERR_SHAPE").
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>
#include <structmember.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flatrt.h"

static PyObject *frt_py_error; /* flatrt.Error */
static PyTypeObject tensor_info_type;

/* numpy type number of a flatrt dtype, -1 when numpy has none (string, bfloat16). */
static int npy_of(frt_dtype t) {
    switch (t) {
    case FRT_FLOAT32: return NPY_FLOAT32;
    case FRT_UINT8: return NPY_UINT8;
    case FRT_INT8: return NPY_INT8;
    case FRT_UINT16: return NPY_UINT16;
    case FRT_INT16: return NPY_INT16;
    case FRT_INT32: return NPY_INT32;
    case FRT_INT64: return NPY_INT64;
    case FRT_BOOL: return NPY_BOOL;
    case FRT_FLOAT16: return NPY_FLOAT16;
    case FRT_FLOAT64: return NPY_FLOAT64;
    case FRT_UINT32: return NPY_UINT32;
    case FRT_UINT64: return NPY_UINT64;
    default: return -1;
    }
}

/* flatrt dtype of a numpy array's element type, FRT_DTYPE_UNDEFINED when flatrt has none. */
static frt_dtype frt_of_npy(int npy) {
    static const frt_dtype all[] = {FRT_FLOAT32, FRT_UINT8,  FRT_INT8,    FRT_UINT16,
                                    FRT_INT16,   FRT_INT32,  FRT_INT64,   FRT_BOOL,
                                    FRT_FLOAT16, FRT_FLOAT64, FRT_UINT32, FRT_UINT64};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (PyArray_EquivTypenums(npy_of(all[i]), npy)) return all[i];
    return FRT_DTYPE_UNDEFINED;
}

/* Raises flatrt.Error(message) with .status and .status_name. Returns NULL. */
static PyObject *raise_status(frt_status st, const char *msg) {
    PyObject *exc = PyObject_CallFunction(frt_py_error, "s", msg && *msg ? msg : frt_status_string(st));
    if (!exc) return NULL;
    PyObject *code = PyLong_FromLong((long)st);
    PyObject *name = PyUnicode_FromString(frt_status_string(st));
    if (code && name && PyObject_SetAttrString(exc, "status", code) == 0 &&
        PyObject_SetAttrString(exc, "status_name", name) == 0)
        PyErr_SetObject(frt_py_error, exc);
    Py_XDECREF(code);
    Py_XDECREF(name);
    Py_DECREF(exc);
    return NULL;
}

/* frt_last_error() of this thread, copied (it is overwritten by the next failing call). */
static char *last_error_copy(void) {
    const char *e = frt_last_error();
    return strdup(e ? e : "");
}

static PyObject *raise_copied(frt_status st, char *msg) {
    raise_status(st, msg ? msg : "out of memory while reporting an error");
    free(msg);
    return NULL;
}

/* ---------------------------------------------------------------------------------------------- */
/* Outputs: numpy arrays owning flatrt's allocation                                                */
/* ---------------------------------------------------------------------------------------------- */

static void release_capsule(PyObject *cap) {
    frt_tensor *t = PyCapsule_GetPointer(cap, "flatrt.tensor");
    if (!t) return;
    frt_tensor_release(t);
    PyMem_RawFree(t);
}

/* Moves *t (an FRT_OUTPUTS_ALLOC output) into a new numpy array; *t is cleared either way. */
static PyObject *wrap_output(frt_tensor *t, const char *name) {
    int npy = npy_of(t->dtype);
    if (npy < 0 || t->rank < 0 || t->rank > FRT_MAX_RANK) {
        char msg[256];
        snprintf(msg, sizeof msg, "output '%s' has dtype %s, which numpy cannot hold", name,
                 frt_dtype_name(t->dtype));
        frt_tensor_release(t);
        return raise_status(FRT_ERR_UNSUPPORTED, msg);
    }
    npy_intp dims[FRT_MAX_RANK];
    int64_t numel = 1;
    for (int i = 0; i < t->rank; i++) {
        dims[i] = (npy_intp)t->shape[i];
        numel *= t->shape[i];
    }
    if ((size_t)numel * frt_dtype_size(t->dtype) != t->nbytes) {
        char msg[256];
        snprintf(msg, sizeof msg, "output '%s': %zu bytes for %lld elements of %s", name,
                 t->nbytes, (long long)numel, frt_dtype_name(t->dtype));
        frt_tensor_release(t);
        return raise_status(FRT_ERR_INTERNAL, msg);
    }
    if (numel == 0 || !t->data) { /* nothing to share: a fresh empty array */
        int rank = t->rank;
        frt_tensor_release(t);
        return PyArray_ZEROS(rank, dims, npy, 0);
    }
    frt_tensor *held = PyMem_RawMalloc(sizeof *held);
    if (!held) {
        frt_tensor_release(t);
        return PyErr_NoMemory();
    }
    *held = *t;
    memset(t, 0, sizeof *t);
    PyObject *cap = PyCapsule_New(held, "flatrt.tensor", release_capsule);
    if (!cap) {
        frt_tensor_release(held);
        PyMem_RawFree(held);
        return NULL;
    }
    PyObject *arr = PyArray_NewFromDescr(&PyArray_Type, PyArray_DescrFromType(npy), held->rank,
                                         dims, NULL, held->data, NPY_ARRAY_CARRAY, NULL);
    if (!arr) {
        Py_DECREF(cap);
        return NULL;
    }
    if (PyArray_SetBaseObject((PyArrayObject *)arr, cap) < 0) { /* steals cap */
        Py_DECREF(arr);
        return NULL;
    }
    return arr;
}

/* ---------------------------------------------------------------------------------------------- */
/* Model                                                                                           */
/* ---------------------------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    frt_model *model;
    frt_pool *pool;
    PyObject *buffer;        /* bytes the model was loaded from (kept alive), or NULL */
    PyObject *inputs;        /* tuple of TensorInfo */
    PyObject *outputs;       /* tuple of TensorInfo */
    frt_tensor_info *in_info; /* [n_in]: names and dtypes for matching feeds */
    size_t n_in, n_out;
    const char **out_names;  /* [n_out] */
    /* The profiling runtime (profile(), plan_stats()), created on first use; lock guards it. */
    frt_runtime *prof_rt;
    PyThread_type_lock lock;
    Py_ssize_t converted;    /* inputs that had to be copied or converted (under the GIL) */
} ModelObject;

/* Inputs of one call, converted to numpy arrays the call holds until it returns. */
typedef struct {
    size_t n;
    const char **names;
    frt_tensor *tensors;
    PyObject **arrays;
    PyObject *items; /* list of (key, value): keeps the names' str objects alive */
} feed_batch;

static void feeds_free(feed_batch *b) {
    for (size_t i = 0; i < b->n; i++) Py_XDECREF(b->arrays[i]);
    PyMem_Free(b->names);
    PyMem_Free(b->tensors);
    PyMem_Free(b->arrays);
    Py_XDECREF(b->items);
    memset(b, 0, sizeof *b);
}

/* An array for input `name` of flatrt dtype `want` (FRT_DTYPE_UNDEFINED: name unknown to the
 * model, keep the element type; the library then reports the name). The object itself when it is
 * an aligned, C-contiguous, native-order ndarray of that dtype; otherwise a converted copy, as
 * numpy's astype(casting="same_kind") (int64 -> int32 or float64 -> float32 are allowed, float ->
 * int is refused with TypeError). */
static PyArrayObject *input_array(ModelObject *self, PyObject *obj, const char *name,
                                  frt_dtype want) {
    PyArrayObject *arr;
    if (PyArray_Check(obj)) {
        Py_INCREF(obj);
        arr = (PyArrayObject *)obj;
    } else {
        arr = (PyArrayObject *)PyArray_FromAny(obj, NULL, 0, 0, 0, NULL);
        if (!arr) return NULL;
    }
    int have = PyArray_TYPE(arr);
    if (frt_of_npy(have) == FRT_DTYPE_UNDEFINED && want == FRT_DTYPE_UNDEFINED) {
        PyErr_Format(PyExc_TypeError, "input '%s': numpy dtype %R has no flatrt equivalent", name,
                     (PyObject *)PyArray_DESCR(arr));
        Py_DECREF(arr);
        return NULL;
    }
    int target = want == FRT_DTYPE_UNDEFINED ? have : npy_of(want);
    if (target < 0) {
        PyErr_Format(PyExc_TypeError, "input '%s' has dtype %s, which numpy cannot provide", name,
                     frt_dtype_name(want));
        Py_DECREF(arr);
        return NULL;
    }
    if (PyArray_NDIM(arr) > FRT_MAX_RANK) {
        PyErr_Format(PyExc_ValueError, "input '%s' has rank %d; flatrt handles up to %d", name,
                     PyArray_NDIM(arr), FRT_MAX_RANK);
        Py_DECREF(arr);
        return NULL;
    }
    if (PyArray_EquivTypenums(have, target) && PyArray_ISNOTSWAPPED(arr) &&
        PyArray_IS_C_CONTIGUOUS(arr) && PyArray_ISALIGNED(arr))
        return arr; /* zero copy */
    PyArray_Descr *to = PyArray_DescrFromType(target);
    if (!PyArray_CanCastTypeTo(PyArray_DESCR(arr), to, NPY_SAME_KIND_CASTING)) {
        PyErr_Format(PyExc_TypeError,
                     "input '%s' expects %s; an array of %R cannot be converted to it "
                     "(only casts within the same kind, as numpy's casting='same_kind')",
                     name, frt_dtype_name(frt_of_npy(target)), (PyObject *)PyArray_DESCR(arr));
        Py_DECREF(to);
        Py_DECREF(arr);
        return NULL;
    }
    PyArrayObject *conv = (PyArrayObject *)PyArray_FromArray(
        arr, to, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | NPY_ARRAY_FORCECAST); /* steals to */
    Py_DECREF(arr);
    if (conv) self->converted++;
    return conv;
}

/* Converts a mapping {name: array-like} into a feed_batch. */
static int feeds_from(ModelObject *self, PyObject *feeds, feed_batch *b) {
    memset(b, 0, sizeof *b);
    if (!PyDict_Check(feeds) && !PyObject_HasAttrString(feeds, "items")) {
        PyErr_SetString(PyExc_TypeError, "feeds must be a dict {input name: array}");
        return -1;
    }
    b->items = PyMapping_Items(feeds);
    if (!b->items) return -1;
    Py_ssize_t n = PyList_GET_SIZE(b->items);
    b->names = PyMem_Calloc(n ? (size_t)n : 1, sizeof *b->names);
    b->tensors = PyMem_Calloc(n ? (size_t)n : 1, sizeof *b->tensors);
    b->arrays = PyMem_Calloc(n ? (size_t)n : 1, sizeof *b->arrays);
    if (!b->names || !b->tensors || !b->arrays) {
        PyErr_NoMemory();
        feeds_free(b);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *kv = PyList_GET_ITEM(b->items, i);
        PyObject *key = PyTuple_GET_ITEM(kv, 0), *val = PyTuple_GET_ITEM(kv, 1);
        if (!PyUnicode_Check(key)) {
            PyErr_Format(PyExc_TypeError, "feeds keys must be input names (str), got %R", key);
            feeds_free(b);
            return -1;
        }
        const char *name = PyUnicode_AsUTF8(key);
        if (!name) {
            feeds_free(b);
            return -1;
        }
        frt_dtype want = FRT_DTYPE_UNDEFINED;
        for (size_t k = 0; k < self->n_in; k++)
            if (strcmp(self->in_info[k].name, name) == 0) want = self->in_info[k].dtype;
        PyArrayObject *arr = input_array(self, val, name, want);
        b->n = (size_t)i; /* arrays[0..i) are owned */
        if (!arr) {
            feeds_free(b);
            return -1;
        }
        b->arrays[i] = (PyObject *)arr;
        b->n = (size_t)i + 1;
        b->names[i] = name;
        frt_tensor *t = &b->tensors[i];
        t->dtype = frt_of_npy(PyArray_TYPE(arr));
        t->rank = PyArray_NDIM(arr);
        for (int d = 0; d < t->rank; d++) t->shape[d] = (int64_t)PyArray_DIM(arr, d);
        t->data = PyArray_DATA(arr);
        t->nbytes = (size_t)PyArray_NBYTES(arr);
    }
    b->n = (size_t)n;
    return 0;
}

static PyObject *info_tuple(const frt_tensor_info *info) {
    PyObject *ti = PyStructSequence_New(&tensor_info_type);
    if (!ti) return NULL;
    PyObject *name = PyUnicode_FromString(info->name ? info->name : "");
    PyObject *dtype;
    int npy = npy_of(info->dtype);
    if (npy >= 0) {
        dtype = (PyObject *)PyArray_DescrFromType(npy);
    } else {
        dtype = Py_None;
        Py_INCREF(dtype);
    }
    PyObject *shape;
    if (info->rank < 0) {
        shape = Py_None;
        Py_INCREF(shape);
    } else {
        shape = PyTuple_New(info->rank);
        for (int i = 0; shape && i < info->rank; i++) {
            PyObject *d;
            if (info->shape[i] >= 0)
                d = PyLong_FromLongLong(info->shape[i]);
            else if (info->dim_names[i] && info->dim_names[i][0])
                d = PyUnicode_FromString(info->dim_names[i]);
            else {
                d = Py_None;
                Py_INCREF(d);
            }
            if (!d) {
                Py_CLEAR(shape);
                break;
            }
            PyTuple_SET_ITEM(shape, i, d);
        }
    }
    if (!name || !dtype || !shape) {
        Py_XDECREF(name);
        Py_XDECREF(dtype);
        Py_XDECREF(shape);
        Py_DECREF(ti);
        return NULL;
    }
    static const char *const kinds[] = {"tensor", "sequence", "optional"};
    PyObject *kind = PyUnicode_FromString(
        (unsigned)info->kind < sizeof kinds / sizeof kinds[0] ? kinds[info->kind] : "unknown");
    if (!kind) {
        Py_DECREF(name);
        Py_DECREF(dtype);
        Py_DECREF(shape);
        Py_DECREF(ti);
        return NULL;
    }
    PyStructSequence_SET_ITEM(ti, 0, name);
    PyStructSequence_SET_ITEM(ti, 1, dtype);
    PyStructSequence_SET_ITEM(ti, 2, shape);
    PyStructSequence_SET_ITEM(ti, 3, kind);
    return ti;
}

static int parse_planner(const char *s, frt_planner *out) {
    if (strcmp(s, "greedy") == 0) *out = FRT_PLANNER_GREEDY;
    else if (strcmp(s, "standard") == 0) *out = FRT_PLANNER_STANDARD;
    else if (strcmp(s, "none") == 0) *out = FRT_PLANNER_NONE;
    else return -1;
    return 0;
}

static int Model_init(ModelObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"model", "threads", "planner", "fold_constants", "fuse",
                             "manage_outputs", "max_runtimes", "idle_timeout_ms", "base_dir",
                             NULL};
    PyObject *src, *base_obj = Py_None;
    int threads = 1, fold = 1, fuse = 1, manage = 0, max_rt = -1;
    long long idle_ms = -1;
    const char *planner = "greedy";
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$isppp" "iLO", kwlist, &src, &threads,
                                     &planner, &fold, &fuse, &manage, &max_rt, &idle_ms,
                                     &base_obj))
        return -1;
    if (self->model) {
        PyErr_SetString(PyExc_RuntimeError, "Model is already initialized");
        return -1;
    }
    frt_options opt;
    frt_options_init(&opt);
    opt.num_threads = threads;
    opt.fold_constants = fold;
    opt.fuse = fuse;
    opt.manage_outputs = manage;
    if (parse_planner(planner, &opt.planner) < 0) {
        PyErr_Format(PyExc_ValueError, "planner must be 'greedy', 'standard' or 'none', got '%s'",
                     planner);
        return -1;
    }
    frt_pool_options popt;
    frt_pool_options_init(&popt);
    if (max_rt != -1) popt.max_runtimes = max_rt;
    if (idle_ms != -1) popt.idle_timeout_ms = idle_ms;

    frt_status st;
    frt_model *model = NULL;
    char *err = NULL;
    if (PyUnicode_Check(src) || PyObject_HasAttrString(src, "__fspath__")) {
        PyObject *path = NULL;
        if (!PyUnicode_FSConverter(src, &path)) return -1;
        Py_BEGIN_ALLOW_THREADS
        st = frt_model_load(PyBytes_AS_STRING(path), &opt, &model);
        if (st != FRT_OK) err = last_error_copy();
        Py_END_ALLOW_THREADS
        Py_DECREF(path);
    } else if (PyObject_CheckBuffer(src)) {
        PyObject *bytes;
        if (PyBytes_CheckExact(src)) { /* immutable: used in place */
            Py_INCREF(src);
            bytes = src;
        } else { /* bytearray, memoryview, ndarray...: may change, so keep a copy */
            Py_buffer view;
            if (PyObject_GetBuffer(src, &view, PyBUF_C_CONTIGUOUS) < 0) return -1;
            bytes = PyBytes_FromStringAndSize(view.buf, view.len);
            PyBuffer_Release(&view);
            if (!bytes) return -1;
        }
        PyObject *base = NULL;
        if (base_obj != Py_None && !PyUnicode_FSConverter(base_obj, &base)) {
            Py_DECREF(bytes);
            return -1;
        }
        const char *base_dir = base ? PyBytes_AS_STRING(base) : NULL;
        Py_BEGIN_ALLOW_THREADS
        st = frt_model_load_buffer(PyBytes_AS_STRING(bytes), (size_t)PyBytes_GET_SIZE(bytes),
                                   base_dir, &opt, &model);
        if (st != FRT_OK) err = last_error_copy();
        Py_END_ALLOW_THREADS
        Py_XDECREF(base);
        if (st == FRT_OK)
            self->buffer = bytes;
        else
            Py_DECREF(bytes);
    } else {
        PyErr_Format(PyExc_TypeError, "Model() takes a path (str or os.PathLike) or the model's "
                     "bytes, got %R", (PyObject *)Py_TYPE(src));
        return -1;
    }
    if (st != FRT_OK) {
        raise_copied(st, err);
        return -1;
    }
    self->model = model;
    st = frt_pool_create(model, &popt, &self->pool);
    if (st != FRT_OK) {
        raise_status(st, frt_last_error());
        return -1;
    }

    self->n_in = frt_model_num_inputs(model);
    self->n_out = frt_model_num_outputs(model);
    self->in_info = PyMem_Calloc(self->n_in ? self->n_in : 1, sizeof *self->in_info);
    self->out_names = PyMem_Calloc(self->n_out ? self->n_out : 1, sizeof *self->out_names);
    self->inputs = PyTuple_New((Py_ssize_t)self->n_in);
    self->outputs = PyTuple_New((Py_ssize_t)self->n_out);
    if (!self->in_info || !self->out_names || !self->inputs || !self->outputs) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < self->n_in + self->n_out; i++) {
        frt_tensor_info info;
        int is_in = i < self->n_in;
        size_t k = is_in ? i : i - self->n_in;
        st = is_in ? frt_model_input(model, k, &info) : frt_model_output(model, k, &info);
        if (st != FRT_OK) {
            raise_status(st, frt_last_error());
            return -1;
        }
        if (is_in)
            self->in_info[k] = info;
        else
            self->out_names[k] = info.name;
        PyObject *ti = info_tuple(&info);
        if (!ti) return -1;
        PyTuple_SET_ITEM(is_in ? self->inputs : self->outputs, (Py_ssize_t)k, ti);
    }
    self->lock = PyThread_allocate_lock();
    if (!self->lock) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static void Model_dealloc(ModelObject *self) {
    frt_runtime_free(self->prof_rt); /* runtimes and the pool before their model */
    frt_pool_free(self->pool);
    frt_model_free(self->model);
    Py_XDECREF(self->buffer); /* after the model that used it */
    Py_XDECREF(self->inputs);
    Py_XDECREF(self->outputs);
    PyMem_Free(self->in_info);
    PyMem_Free(self->out_names);
    if (self->lock) PyThread_free_lock(self->lock);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int check_ready(ModelObject *self) {
    if (!self->model || !self->pool) {
        PyErr_SetString(PyExc_RuntimeError, "Model is not initialized");
        return -1;
    }
    return 0;
}

/* outputs=None: all; else a list of names. Fills sel (indices into the graph outputs, in the
 * order given) and returns how many leading graph outputs the run must produce. */
static Py_ssize_t select_outputs(ModelObject *self, PyObject *names, size_t **sel, size_t *n_sel) {
    *sel = NULL;
    *n_sel = 0;
    if (names == Py_None) {
        *sel = PyMem_Calloc(self->n_out ? self->n_out : 1, sizeof **sel);
        if (!*sel) return PyErr_NoMemory(), -1;
        for (size_t i = 0; i < self->n_out; i++) (*sel)[i] = i;
        *n_sel = self->n_out;
        return (Py_ssize_t)self->n_out;
    }
    PyObject *seq = PySequence_Fast(names, "outputs must be a list of output names");
    if (!seq) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq), need = 0;
    *sel = PyMem_Calloc(n ? (size_t)n : 1, sizeof **sel);
    if (!*sel) {
        Py_DECREF(seq);
        return PyErr_NoMemory(), -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PySequence_Fast_GET_ITEM(seq, i);
        const char *name = PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : NULL;
        size_t k = self->n_out;
        if (name)
            for (k = 0; k < self->n_out; k++)
                if (strcmp(self->out_names[k], name) == 0) break;
        if (k == self->n_out) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_ValueError, "%R is not an output of the model (outputs: %R)",
                             o, self->outputs);
            Py_DECREF(seq);
            PyMem_Free(*sel);
            *sel = NULL;
            return -1;
        }
        (*sel)[i] = k;
        if ((Py_ssize_t)k + 1 > need) need = (Py_ssize_t)k + 1;
    }
    *n_sel = (size_t)n;
    Py_DECREF(seq);
    return need;
}

/* Takes the outputs [0, n_run) of a successful run: the selected ones become arrays in a new
 * dict, every one is released. */
static PyObject *outputs_dict(ModelObject *self, frt_tensor *outs, size_t n_run,
                              const size_t *sel, size_t n_sel) {
    PyObject *d = PyDict_New();
    for (size_t i = 0; d && i < n_sel; i++) {
        size_t k = sel[i];
        if (!outs[k].data && outs[k].nbytes == 0 && outs[k].dtype == FRT_DTYPE_UNDEFINED)
            continue; /* already taken: the same name listed twice */
        PyObject *arr = wrap_output(&outs[k], self->out_names[k]);
        if (!arr || PyDict_SetItemString(d, self->out_names[k], arr) < 0) Py_CLEAR(d);
        Py_XDECREF(arr);
    }
    for (size_t k = 0; k < n_run; k++) frt_tensor_release(&outs[k]);
    return d;
}

static PyObject *Model_run(ModelObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"feeds", "outputs", "timeout_ms", NULL};
    PyObject *feeds, *names = Py_None;
    long long timeout_ms = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O$L", kwlist, &feeds, &names, &timeout_ms))
        return NULL;
    if (check_ready(self) < 0) return NULL;
    size_t *sel, n_sel;
    Py_ssize_t n_run = select_outputs(self, names, &sel, &n_sel);
    if (n_run < 0) return NULL;
    feed_batch b;
    if (feeds_from(self, feeds, &b) < 0) {
        PyMem_Free(sel);
        return NULL;
    }
    frt_tensor *outs = PyMem_Calloc(n_run ? (size_t)n_run : 1, sizeof *outs);
    if (!outs) {
        feeds_free(&b);
        PyMem_Free(sel);
        return PyErr_NoMemory();
    }
    frt_status st;
    char *err = NULL;
    Py_BEGIN_ALLOW_THREADS
    st = frt_pool_run(self->pool, b.names, b.tensors, b.n, outs, (size_t)n_run, FRT_OUTPUTS_ALLOC,
                      (int64_t)timeout_ms);
    if (st != FRT_OK) err = last_error_copy();
    Py_END_ALLOW_THREADS
    feeds_free(&b);
    PyObject *res = NULL;
    if (st != FRT_OK)
        raise_copied(st, err);
    else
        res = outputs_dict(self, outs, (size_t)n_run, sel, n_sel);
    PyMem_Free(outs);
    PyMem_Free(sel);
    return res;
}

/* Locks the profiling runtime (creating it on first use) with the GIL released while waiting. */
static int prof_acquire(ModelObject *self) {
    if (check_ready(self) < 0) return -1;
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(self->lock, WAIT_LOCK);
    Py_END_ALLOW_THREADS
    if (!self->prof_rt) {
        frt_status st = frt_runtime_create(self->model, &self->prof_rt);
        if (st != FRT_OK) {
            raise_status(st, frt_last_error());
            PyThread_release_lock(self->lock);
            return -1;
        }
    }
    return 0;
}

static PyObject *Model_profile(ModelObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"feeds", "runs", NULL};
    PyObject *feeds;
    int runs = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|i", kwlist, &feeds, &runs)) return NULL;
    if (runs < 1) {
        PyErr_SetString(PyExc_ValueError, "runs must be >= 1");
        return NULL;
    }
    feed_batch b;
    if (check_ready(self) < 0 || feeds_from(self, feeds, &b) < 0) return NULL;
    if (prof_acquire(self) < 0) {
        feeds_free(&b);
        return NULL;
    }
    frt_tensor *outs = PyMem_Calloc(self->n_out ? self->n_out : 1, sizeof *outs);
    frt_status st = FRT_OK;
    char *err = NULL;
    if (outs) {
        frt_runtime *rt = self->prof_rt;
        size_t n_out = self->n_out;
        Py_BEGIN_ALLOW_THREADS
        frt_runtime_set_profiling(rt, 1);
        frt_runtime_reset_profile(rt);
        for (int r = 0; r < runs && st == FRT_OK; r++) {
            st = frt_run(rt, b.names, b.tensors, b.n, outs, n_out, FRT_OUTPUTS_ALLOC);
            if (st != FRT_OK) err = last_error_copy();
            for (size_t k = 0; k < n_out; k++) frt_tensor_release(&outs[k]);
        }
        frt_runtime_set_profiling(rt, 0);
        Py_END_ALLOW_THREADS
    }
    feeds_free(&b);
    PyObject *res = NULL;
    if (!outs) {
        PyErr_NoMemory();
    } else if (st != FRT_OK) {
        raise_copied(st, err);
    } else {
        size_t n = frt_runtime_num_steps(self->prof_rt);
        res = PyList_New((Py_ssize_t)n);
        for (size_t i = 0; res && i < n; i++) {
            frt_step_profile p;
            frt_runtime_step_profile(self->prof_rt, i, &p);
            PyObject *d = Py_BuildValue(
                "{s:s,s:s,s:s,s:K,s:K,s:d}", "node", p.node_name ? p.node_name : "", "op_type",
                p.op_type ? p.op_type : "", "kernel", p.kernel ? p.kernel : "", "total_ns",
                (unsigned long long)p.total_ns, "runs", (unsigned long long)p.runs, "mean_ms",
                p.runs ? (double)p.total_ns / (double)p.runs / 1e6 : 0.0);
            if (!d) {
                Py_CLEAR(res);
                break;
            }
            PyList_SET_ITEM(res, (Py_ssize_t)i, d);
        }
    }
    PyMem_Free(outs);
    PyThread_release_lock(self->lock);
    return res;
}

static PyObject *Model_plan_stats(ModelObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"feeds", NULL};
    PyObject *feeds = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O", kwlist, &feeds)) return NULL;
    if (check_ready(self) < 0) return NULL;
    PyObject *zeros = NULL;
    if (feeds == Py_None) { /* the inputs' fixed shapes, when every dim is fixed */
        zeros = PyDict_New();
        for (size_t i = 0; zeros && i < self->n_in; i++) {
            const frt_tensor_info *in = &self->in_info[i];
            npy_intp dims[FRT_MAX_RANK];
            int fixed = in->rank >= 0 && npy_of(in->dtype) >= 0;
            for (int d = 0; fixed && d < in->rank; d++) {
                fixed = in->shape[d] >= 0;
                dims[d] = (npy_intp)in->shape[d];
            }
            if (!fixed) {
                PyErr_Format(PyExc_ValueError, "plan_stats(): input '%s' has no fixed shape; "
                             "pass feeds with the shapes to plan for", in->name);
                Py_CLEAR(zeros);
                break;
            }
            PyObject *z = PyArray_ZEROS(in->rank, dims, npy_of(in->dtype), 0);
            if (!z || PyDict_SetItemString(zeros, in->name, z) < 0) Py_CLEAR(zeros);
            Py_XDECREF(z);
        }
        if (!zeros) return NULL;
        feeds = zeros;
    }
    feed_batch b;
    int rc = feeds_from(self, feeds, &b);
    Py_XDECREF(zeros);
    if (rc < 0) return NULL;
    if (prof_acquire(self) < 0) {
        feeds_free(&b);
        return NULL;
    }
    frt_plan_stats ps;
    frt_status st;
    char *err = NULL;
    frt_runtime *rt = self->prof_rt;
    Py_BEGIN_ALLOW_THREADS
    st = frt_runtime_reshape(rt, b.names, b.tensors, b.n);
    if (st == FRT_OK) st = frt_runtime_plan_stats(rt, &ps);
    if (st != FRT_OK) err = last_error_copy();
    Py_END_ALLOW_THREADS
    PyThread_release_lock(self->lock);
    feeds_free(&b);
    if (st != FRT_OK) return raise_copied(st, err);
    return Py_BuildValue("{s:n,s:n,s:n,s:n,s:n,s:n,s:n,s:n,s:n,s:n}",
                         "arena_bytes", (Py_ssize_t)ps.arena_bytes,
                         "naive_bytes", (Py_ssize_t)ps.naive_bytes,
                         "lower_bound_bytes", (Py_ssize_t)ps.lower_bound_bytes,
                         "num_managed", (Py_ssize_t)ps.num_managed,
                         "num_reused", (Py_ssize_t)ps.num_reused,
                         "num_views", (Py_ssize_t)ps.num_views,
                         "num_inplace", (Py_ssize_t)ps.num_inplace,
                         "num_concat_removed", (Py_ssize_t)ps.num_concat_removed,
                         "output_bytes", (Py_ssize_t)ps.output_bytes,
                         "shape_bytes", (Py_ssize_t)ps.shape_bytes);
}

static PyObject *Model_pool_stats(ModelObject *self, PyObject *unused) {
    if (check_ready(self) < 0) return NULL;
    frt_pool_stats s;
    frt_pool_get_stats(self->pool, &s);
    return Py_BuildValue("{s:n,s:n,s:n,s:K,s:K,s:K,s:K,s:K}", "alive", (Py_ssize_t)s.alive,
                         "idle", (Py_ssize_t)s.idle, "peak", (Py_ssize_t)s.peak, "created",
                         (unsigned long long)s.created, "freed", (unsigned long long)s.freed,
                         "runs", (unsigned long long)s.runs, "waits",
                         (unsigned long long)s.waits, "timeouts",
                         (unsigned long long)s.timeouts);
}

static PyObject *Model_stats(ModelObject *self, PyObject *unused) {
    if (check_ready(self) < 0) return NULL;
    frt_model_stats s;
    frt_model_get_stats(self->model, &s);
    return Py_BuildValue("{s:L,s:s,s:n,s:n,s:n,s:n,s:n,s:n,s:n,s:n,s:n}", "opset",
                         (long long)s.opset, "producer", s.producer ? s.producer : "",
                         "num_nodes", (Py_ssize_t)s.num_nodes, "num_steps",
                         (Py_ssize_t)s.num_steps, "num_folded", (Py_ssize_t)s.num_folded,
                         "num_fused", (Py_ssize_t)s.num_fused, "num_params",
                         (Py_ssize_t)s.num_params, "param_bytes", (Py_ssize_t)s.param_bytes,
                         "mapped_bytes", (Py_ssize_t)s.mapped_bytes, "copied_bytes",
                         (Py_ssize_t)s.copied_bytes, "transformed_bytes",
                         (Py_ssize_t)s.transformed_bytes);
}

static PyObject *Model_get_inputs(ModelObject *self, void *unused) {
    if (check_ready(self) < 0) return NULL;
    return PySequence_List(self->inputs);
}

static PyObject *Model_get_outputs(ModelObject *self, void *unused) {
    if (check_ready(self) < 0) return NULL;
    return PySequence_List(self->outputs);
}

static PyObject *Model_get_converted(ModelObject *self, void *unused) {
    return PyLong_FromSsize_t(self->converted);
}

static PyMethodDef Model_methods[] = {
    {"run", (PyCFunction)(void (*)(void))Model_run, METH_VARARGS | METH_KEYWORDS,
     "run(feeds, outputs=None, *, timeout_ms=-1) -> dict\n\n"
     "Runs the model on a runtime of the Model's pool (GIL released; thread-safe). feeds maps\n"
     "every input name to an array; outputs lists the output names to return (default all).\n"
     "timeout_ms bounds the wait for a free runtime when max_runtimes are busy (-1: no limit)."},
    {"profile", (PyCFunction)(void (*)(void))Model_profile, METH_VARARGS | METH_KEYWORDS,
     "profile(feeds, runs=1) -> list of dict\n\n"
     "Runs the model `runs` times on the Model's dedicated profiling runtime (not one of the pool)\n"
     "and returns one dict per compute step: node, op_type, kernel, total_ns, runs, mean_ms."},
    {"plan_stats", (PyCFunction)(void (*)(void))Model_plan_stats, METH_VARARGS | METH_KEYWORDS,
     "plan_stats(feeds=None) -> dict\n\n"
     "Memory plan (frt_plan_stats) of the dedicated profiling runtime for the feeds' shapes\n"
     "(default: the inputs' fixed shapes). Runtimes of the pool plan the same shapes alike."},
    {"pool_stats", (PyCFunction)Model_pool_stats, METH_NOARGS,
     "pool_stats() -> dict: counters of the runtime pool (frt_pool_stats)."},
    {"stats", (PyCFunction)Model_stats, METH_NOARGS,
     "stats() -> dict: facts about the loaded model (frt_model_stats)."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Model_getset[] = {
    {"inputs", (getter)Model_get_inputs, NULL, "graph inputs: list of TensorInfo", NULL},
    {"outputs", (getter)Model_get_outputs, NULL, "graph outputs: list of TensorInfo", NULL},
    {"converted_inputs", (getter)Model_get_converted, NULL,
     "number of feeds so far that were copied (converted dtype, non-contiguous, misaligned or "
     "not an ndarray); C-contiguous arrays of the input's dtype are used in place",
     NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject ModelType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "flatrt.Model",
    .tp_basicsize = sizeof(ModelObject),
    .tp_dealloc = (destructor)Model_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Model(model, *, threads=1, planner='greedy', fold_constants=True, fuse=True,\n"
              "      manage_outputs=False, max_runtimes=8, idle_timeout_ms=10000, base_dir=None)\n\n"
              "An ONNX model loaded and compiled by flatrt. model is a path or the model's bytes\n"
              "(base_dir: where external data files are, for bytes). threads: intra-op threads\n"
              "per run. max_runtimes / idle_timeout_ms: the pool of runtimes that run() uses.",
    .tp_methods = Model_methods,
    .tp_getset = Model_getset,
    .tp_init = (initproc)Model_init,
    .tp_new = PyType_GenericNew,
};

static PyStructSequence_Field tensor_info_fields[] = {
    {"name", "tensor name"},
    {"dtype", "numpy dtype (None when numpy has none, e.g. string)"},
    {"shape", "tuple: an int per fixed dim, the symbolic name (str) or None otherwise; None "
              "when the rank is unknown"},
    {"kind", "'tensor', 'sequence' or 'optional' (run() takes and returns tensors only)"},
    {NULL, NULL}};

static PyStructSequence_Desc tensor_info_desc = {
    "flatrt.TensorInfo", "Name, dtype and shape of a graph input or output.", tensor_info_fields,
    3}; /* kind: not part of the tuple (name, dtype, shape), an attribute only */

static PyObject *mod_version(PyObject *m, PyObject *unused) {
    return PyUnicode_FromString(frt_version());
}

static PyMethodDef module_methods[] = {
    {"version", mod_version, METH_NOARGS, "version() -> str: frt_version() of the library."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "flatrt._flatrt",
    "flatrt's C extension; use the flatrt package.", -1, module_methods,
    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__flatrt(void) {
    import_array();
    PyObject *m = PyModule_Create(&module_def);
    if (!m) return NULL;
    if (PyType_Ready(&ModelType) < 0 ||
        PyStructSequence_InitType2(&tensor_info_type, &tensor_info_desc) < 0)
        goto fail;
    PyObject *edict = Py_BuildValue("{s:s}", "__doc__",
        "A flatrt call failed: str(e) is the library's message, e.status the frt_status number "
        "and e.status_name its name (e.g. 'FRT_ERR_SHAPE').");
    if (!edict) goto fail;
    frt_py_error = PyErr_NewException("flatrt.Error", PyExc_RuntimeError, edict);
    Py_DECREF(edict);
    if (!frt_py_error) goto fail;
    Py_INCREF(frt_py_error);
    Py_INCREF(&ModelType);
    Py_INCREF(&tensor_info_type);
    if (PyModule_AddObject(m, "Error", frt_py_error) < 0 ||
        PyModule_AddObject(m, "Model", (PyObject *)&ModelType) < 0 ||
        PyModule_AddObject(m, "TensorInfo", (PyObject *)&tensor_info_type) < 0 ||
        PyModule_AddStringConstant(m, "__version__", frt_version()) < 0)
        goto fail;
    for (int s = FRT_OK; s <= FRT_ERR_TIMEOUT; s++)
        if (PyModule_AddIntConstant(m, frt_status_string((frt_status)s), s) < 0) goto fail;
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
