/* frt_model_load_buffer must never write to the caller's buffer.
 *
 * For each model: the file is read into a heap buffer (anonymous memory, where a paging hint such
 * as MADV_DONTNEED would zero pages), a model is loaded from it, and the buffer must stay
 * byte-identical. A second model is then loaded from the same buffer and both must give
 * bit-identical outputs, equal to those of a model loaded from the file.
 * Usage: test_const_buffer MODEL.onnx... */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flatrt.h"
#include "../unit/test_util.h"

static unsigned char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = n > 0 ? malloc((size_t)n) : NULL;
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *len = b ? (size_t)n : 0;
    return b;
}

/* Runs m once on deterministic inputs (symbolic dims set to 1) and returns output 0 copied into a
 * fresh allocation (caller frees), or NULL on failure. */
static frt_tensor run_once(frt_model *m) {
    frt_tensor out = {0};
    size_t ni = frt_model_num_inputs(m);
    frt_tensor in[16];
    const char *names[16];
    if (ni > 16) return out;
    for (size_t i = 0; i < ni; i++) {
        frt_tensor_info info;
        frt_model_input(m, i, &info);
        memset(&in[i], 0, sizeof in[i]);
        in[i].dtype = info.dtype;
        in[i].rank = info.rank;
        for (int d = 0; d < info.rank; d++) in[i].shape[d] = info.shape[d] < 0 ? 1 : info.shape[d];
        int64_t n = frt_tensor_numel(&in[i]);
        size_t es = frt_dtype_size(info.dtype);
        in[i].nbytes = (size_t)n * es;
        in[i].data = calloc((size_t)n + 1, es);
        for (int64_t e = 0; e < n; e++) {
            if (info.dtype == FRT_FLOAT32) ((float *)in[i].data)[e] = (float)((e * 37) % 101) / 50.0f - 1;
            else if (info.dtype == FRT_INT64) ((int64_t *)in[i].data)[e] = e % 3;
            else if (info.dtype == FRT_INT32) ((int32_t *)in[i].data)[e] = (int32_t)(e % 3);
        }
        names[i] = info.name;
    }
    frt_runtime *rt = NULL;
    if (frt_runtime_create(m, &rt) != FRT_OK ||
        frt_run(rt, names, in, ni, &out, 1, FRT_OUTPUTS_ALLOC) != FRT_OK) {
        fprintf(stderr, "run failed: %s\n", frt_last_error());
        memset(&out, 0, sizeof out);
    }
    frt_runtime_free(rt);
    for (size_t i = 0; i < ni; i++) free(in[i].data);
    return out;
}

static int same_tensor(const frt_tensor *a, const frt_tensor *b) {
    return a->data && b->data && a->dtype == b->dtype && a->rank == b->rank &&
           a->nbytes == b->nbytes && memcmp(a->shape, b->shape, sizeof a->shape) == 0 &&
           memcmp(a->data, b->data, a->nbytes) == 0;
}

static void check_model(const char *path) {
    size_t len;
    unsigned char *buf = read_file(path, &len);
    CHECK_MSG(buf != NULL, "cannot read %s", path);
    if (!buf) return;
    unsigned char *copy = malloc(len);
    memcpy(copy, buf, len);

    frt_model *file_model = NULL, *m1 = NULL, *m2 = NULL;
    CHECK_OK(frt_model_load(path, NULL, &file_model));
    CHECK_OK(frt_model_load_buffer(buf, len, NULL, NULL, &m1));
    size_t diff = 0;
    for (size_t i = 0; i < len; i++) diff += buf[i] != copy[i];
    CHECK_MSG(diff == 0, "%s: loading from the caller's buffer changed %zu of %zu bytes", path,
              diff, len);
    CHECK_OK(frt_model_load_buffer(buf, len, NULL, NULL, &m2));
    if (file_model && m1 && m2) {
        frt_tensor ref = run_once(file_model), o1 = run_once(m1), o2 = run_once(m2);
        CHECK_MSG(same_tensor(&o1, &ref), "%s: model from buffer differs from model from file", path);
        CHECK_MSG(same_tensor(&o2, &ref), "%s: second model from the same buffer differs", path);
        frt_tensor_release(&ref);
        frt_tensor_release(&o1);
        frt_tensor_release(&o2);
    }
    frt_model_free(m2);
    frt_model_free(m1);
    frt_model_free(file_model);
    diff = 0;
    for (size_t i = 0; i < len; i++) diff += buf[i] != copy[i];
    CHECK_MSG(diff == 0, "%s: %zu bytes of the caller's buffer changed by the end", path, diff);
    free(copy);
    free(buf);
    printf("%s: checked (%zu bytes)\n", path, len);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_const_buffer MODEL.onnx...\n");
        return 2;
    }
    for (int i = 1; i < argc; i++) check_model(argv[i]);
    printf("%d checks, %d failures\n", t_checks, t_failures);
    return t_failures != 0;
}
