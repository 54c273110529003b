/* Mutation sweep over a real model: truncations at many offsets and seeded random byte flips.
 * Every outcome must be a load error with a non-empty message, or a model that loads and then
 * either runs (inputs of the declared shapes, symbolic dims 1, on zeros and small values) or fails
 * to plan/run with a non-empty message. FRT_ERR_INTERNAL is a failure. Crashes, hangs and leaks are
 * caught by the sanitizers and ctest's timeout (the test is meant for an ASan/UBSan build).
 *
 * Usage: mutation_sweep MODEL.onnx [COUNT [SEED]]
 *   COUNT truncations (offsets spread evenly over the file, plus COUNT/4 near its start and end,
 *   where the graph structure of exported models lies) and COUNT mutants with 1-8 flipped bytes
 *   (half anywhere, a quarter in the first and a quarter in the last 64 KiB). Default COUNT 100,
 *   SEED 1. Every buffer has its exact size, so ASan sees any read past its end. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/test_util.h"
#include "flatrt.h"

#define MAX_IN 64
#define MAX_INPUT_BYTES ((size_t)64 << 20)

static uint64_t rng_state;

/* splitmix64 */
static uint64_t rnd(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint8_t *read_all(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = sz > 0 ? malloc((size_t)sz) : NULL;
    if (b && fread(b, 1, (size_t)sz, f) != (size_t)sz) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *n = b ? (size_t)sz : 0;
    return b;
}

typedef struct tally {
    int rejected, ran, run_failed, not_fed;
} tally;

/* Failing status: must carry a message and must not be FRT_ERR_INTERNAL. */
static void check_error(frt_status st, const char *what, const char *mutation) {
    CHECK_MSG(frt_last_error()[0] != 0, "%s: %s failed (%s) without a message", mutation, what,
              frt_status_string(st));
    CHECK_MSG(st != FRT_ERR_INTERNAL, "%s: %s: internal error: %s", mutation, what,
              frt_last_error());
}

/* Runs a loaded mutant once; counts the outcome. */
static void run_mutant(frt_model *m, const char *mutation, tally *t) {
    size_t ni = frt_model_num_inputs(m);
    frt_tensor in[MAX_IN];
    const char *names[MAX_IN];
    memset(in, 0, sizeof in);
    size_t total = 0;
    int feedable = ni <= MAX_IN;
    for (size_t i = 0; feedable && i < ni; i++) {
        frt_tensor_info info;
        CHECK_OK(frt_model_input(m, i, &info));
        size_t es = frt_dtype_size(info.dtype);
        if (info.rank < 0 || es == 0) {
            feedable = 0;
            break;
        }
        names[i] = info.name;
        in[i].dtype = info.dtype;
        in[i].rank = info.rank;
        size_t n = 1;
        for (int d = 0; d < info.rank && n <= MAX_INPUT_BYTES; d++) {
            in[i].shape[d] = info.shape[d] < 0 ? 1 : info.shape[d];
            n *= in[i].shape[d] > (int64_t)MAX_INPUT_BYTES ? MAX_INPUT_BYTES + 1
                                                           : (size_t)in[i].shape[d];
        }
        total += n * es;
        if (n > MAX_INPUT_BYTES || total > MAX_INPUT_BYTES) {
            feedable = 0; /* a flipped dim asks for an absurd input: nothing to run */
            break;
        }
        in[i].nbytes = n * es;
        in[i].data = calloc(1, in[i].nbytes ? in[i].nbytes : 1);
        if (!in[i].data) feedable = 0;
    }
    if (!feedable) {
        t->not_fed++;
    } else {
        frt_runtime *rt = NULL;
        frt_status st = frt_runtime_create(m, &rt);
        if (st == FRT_OK) {
            size_t no = frt_model_num_outputs(m);
            frt_tensor out[MAX_IN];
            memset(out, 0, sizeof out);
            st = frt_run(rt, names, in, ni, out, no > MAX_IN ? MAX_IN : no, FRT_OUTPUTS_ALLOC);
            for (size_t i = 0; i < MAX_IN; i++) frt_tensor_release(&out[i]);
        }
        if (st == FRT_OK) {
            t->ran++;
        } else {
            t->run_failed++;
            check_error(st, "run", mutation);
        }
        frt_runtime_free(rt);
    }
    for (size_t i = 0; i < ni && i < MAX_IN; i++) free(in[i].data);
}

/* Loads buf[0, n) (a copy of exactly n bytes) and runs it when it loads. */
static void try_bytes(const uint8_t *buf, size_t n, const char *mutation, tally *t) {
    uint8_t *b = malloc(n ? n : 1);
    if (!b) return;
    memcpy(b, buf, n);
    frt_model *m = NULL;
    frt_status st = frt_model_load_buffer(b, n, NULL, NULL, &m);
    if (st != FRT_OK) {
        t->rejected++;
        check_error(st, "load", mutation);
        CHECK_MSG(m == NULL, "%s: failed load left a model", mutation);
    } else {
        run_mutant(m, mutation, t);
    }
    frt_model_free(m);
    free(b);
}

static size_t pick_offset(size_t n) {
    const size_t edge = (size_t)64 << 10;
    uint64_t r = rnd();
    switch (r & 3) {
    case 0: return (size_t)((r >> 2) % (n < edge ? n : edge));
    case 1: return n - 1 - (size_t)((r >> 2) % (n < edge ? n : edge));
    default: return (size_t)((r >> 2) % n);
    }
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: mutation_sweep MODEL.onnx [COUNT [SEED]]\n");
        return 2;
    }
    long count = argc > 2 ? strtol(argv[2], NULL, 10) : 100;
    rng_state = argc > 3 ? strtoull(argv[3], NULL, 10) : 1;
    size_t n = 0;
    uint8_t *model = read_all(argv[1], &n);
    CHECK_MSG(model != NULL && n > 0, "cannot read %s", argv[1]);
    if (!model || count < 1) TEST_MAIN_END();

    /* the unmutated model must load and run, or the sweep would test nothing */
    tally base = {0};
    try_bytes(model, n, "original", &base);
    CHECK_MSG(base.ran == 1, "%s does not load and run unmutated: %s", argv[1], frt_last_error());

    char what[96];
    tally cut = {0};
    int cuts = 0;
    for (long i = 0; i < count; i++, cuts++) {
        size_t at = (size_t)((double)i / (double)count * (double)n);
        snprintf(what, sizeof what, "truncated at %zu", at);
        try_bytes(model, at, what, &cut);
    }
    for (long i = 0; i < count / 4; i++, cuts++) {
        size_t at = pick_offset(n);
        snprintf(what, sizeof what, "truncated at %zu", at);
        try_bytes(model, at, what, &cut);
    }
    printf("%s: %d truncations: %d rejected, %d loaded and ran, %d loaded but failed to run, "
           "%d loaded with inputs not fed\n",
           argv[1], cuts, cut.rejected, cut.ran, cut.run_failed, cut.not_fed);

    tally flip = {0};
    uint8_t *b = malloc(n);
    CHECK(b != NULL);
    for (long i = 0; b && i < count; i++) {
        memcpy(b, model, n);
        int k = 1 + (int)(rnd() % 8);
        int o = snprintf(what, sizeof what, "flips");
        for (int j = 0; j < k; j++) {
            size_t at = pick_offset(n);
            uint8_t x = (uint8_t)(1 + rnd() % 255);
            b[at] ^= x;
            if (o < (int)sizeof what)
                o += snprintf(what + o, sizeof what - (size_t)o, " %zu^%u", at, (unsigned)x);
        }
        try_bytes(b, n, what, &flip);
    }
    free(b);
    printf("%s: %ld flip mutants: %d rejected, %d loaded and ran, %d loaded but failed to run, "
           "%d loaded with inputs not fed\n",
           argv[1], count, flip.rejected, flip.ran, flip.run_failed, flip.not_fed);
    free(model);
    TEST_MAIN_END();
}
