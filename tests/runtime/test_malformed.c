/* Malformed models end in clear errors, never in a crash, an abort or a read out of bounds:
 *   - every model in TINY_DIR/malformed/ (cycles, undefined inputs, duplicate definitions,
 *     shape mismatches, missing attributes...) fails to load with a message containing the words
 *     in its .expect file (an empty .expect: loads, but planning its absurd shapes fails);
 *   - MODEL truncated at every byte fails to load;
 *   - MODEL with each byte flipped loads or fails with a message; when it loads, a run on zeros
 *     either works or fails with a message.
 * Run under ASan/UBSan to make "never out of bounds" a checked claim.
 * Usage: test_malformed TINY_DIR MODEL.onnx */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/test_util.h"
#include "flatrt.h"

static char *read_all(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc(sz > 0 ? (size_t)sz : 1);
    if (b && fread(b, 1, (size_t)sz, f) != (size_t)sz) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *n = (size_t)sz;
    return b;
}

static int contains_ci(const char *hay, const char *needle) {
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i])) i++;
        if (i == n) return 1;
    }
    return n == 0;
}

/* Runs m once on zero inputs (symbolic dims 2); returns the status. */
static frt_status run_zeros(frt_model *m) {
    frt_runtime *rt;
    frt_status st = frt_runtime_create(m, &rt);
    if (st) return st;
    size_t ni = frt_model_num_inputs(m);
    frt_tensor in[8] = {{0}};
    const char *names[8];
    if (ni > 8) ni = 8;
    for (size_t i = 0; i < ni; i++) {
        frt_tensor_info info;
        frt_model_input(m, i, &info);
        names[i] = info.name;
        in[i].dtype = info.dtype;
        in[i].rank = info.rank < 0 ? 0 : info.rank;
        size_t n = frt_dtype_size(info.dtype);
        for (int d = 0; d < in[i].rank; d++) {
            in[i].shape[d] = info.shape[d] < 0 ? 2 : info.shape[d];
            if (in[i].shape[d] > (1 << 20)) in[i].shape[d] = 1 << 20; /* keep the test small */
            n *= (size_t)in[i].shape[d];
        }
        if (n > ((size_t)1 << 26)) n = 0;
        in[i].nbytes = n;
        in[i].data = calloc(1, n ? n : 1);
    }
    frt_tensor out[8] = {{0}};
    size_t no = frt_model_num_outputs(m);
    st = frt_run(rt, names, in, ni, out, no > 8 ? 8 : no, FRT_OUTPUTS_BORROW);
    if (st) CHECK_MSG(frt_last_error()[0] != 0, "run failed with status %d and no message", st);
    for (size_t i = 0; i < ni; i++) free(in[i].data);
    frt_runtime_free(rt);
    return st;
}

static void test_dir(const char *tiny) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/malformed", tiny);
    DIR *d = opendir(dir);
    CHECK_MSG(d != NULL, "%s", dir);
    if (!d) return;
    int seen = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 5, ".onnx") != 0) continue;
        char path[2048], expect_path[2048], expect[256] = "";
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        snprintf(expect_path, sizeof expect_path, "%s/%.*s.expect", dir, (int)(l - 5), e->d_name);
        FILE *f = fopen(expect_path, "r");
        if (f) {
            if (!fgets(expect, sizeof expect, f)) expect[0] = 0;
            fclose(f);
        }
        expect[strcspn(expect, "\n")] = 0;
        frt_model *m = NULL;
        frt_status st = frt_model_load(path, NULL, &m);
        if (expect[0]) {
            CHECK_MSG(st != FRT_OK && m == NULL, "%s loaded", e->d_name);
            CHECK_MSG(contains_ci(frt_last_error(), expect), "%s: message '%s' lacks '%s'",
                      e->d_name, frt_last_error(), expect);
        } else {
            CHECK_MSG(st == FRT_OK, "%s: %s", e->d_name, frt_last_error());
            if (m) CHECK_MSG(run_zeros(m) != FRT_OK, "%s: absurd shapes ran", e->d_name);
        }
        frt_model_free(m);
        seen++;
    }
    closedir(d);
    CHECK_MSG(seen >= 10, "only %d malformed models", seen);
}

static void test_truncation_and_flips(const char *model) {
    size_t n = 0;
    char *buf = read_all(model, &n);
    CHECK(buf != NULL && n > 100);
    if (!buf) return;
    int accepted = 0, loaded = 0, ran = 0;
    for (size_t cut = 0; cut < n; cut++) {
        char *b = malloc(cut ? cut : 1); /* exact size: ASan sees any read past the end */
        memcpy(b, buf, cut);
        frt_model *m = NULL;
        frt_status st = frt_model_load_buffer(b, cut, NULL, NULL, &m);
        if (st == FRT_OK) accepted++;
        else CHECK_MSG(frt_last_error()[0] != 0, "cut %zu: no message", cut);
        frt_model_free(m);
        free(b);
    }
    CHECK_MSG(accepted == 0, "%d truncated prefixes loaded", accepted);
    char *b = malloc(n);
    for (size_t off = 0; off < n; off++) {
        memcpy(b, buf, n);
        b[off] ^= (char)0x5a;
        frt_model *m = NULL;
        frt_status st = frt_model_load_buffer(b, n, NULL, NULL, &m);
        if (st == FRT_OK) {
            loaded++;
            ran += run_zeros(m) == FRT_OK;
        } else {
            CHECK_MSG(frt_last_error()[0] != 0, "flip at %zu: no message", off);
        }
        frt_model_free(m);
    }
    printf("flipped bytes: %zu offsets, %d still loaded (%d of those ran), %zu rejected\n", n,
           loaded, ran, n - (size_t)loaded);
    free(b);
    free(buf);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: test_malformed TINY_DIR MODEL.onnx\n");
        return 2;
    }
    test_dir(argv[1]);
    test_truncation_and_flips(argv[2]);
    TEST_MAIN_END();
}
