/* TfIdfVectorizer against a brute-force reference (every n-gram of every skip distance compared
 * with every pool entry), TF/IDF/TFIDF, int32 and int64 tokens, 1-D and 2-D inputs; bad pools. */
#include <stdint.h>

#include "op_harness.h"
#include "test_util.h"

static uint32_t rng = 5;
static int irand(int n) {
    rng = rng * 1664525u + 1013904223u;
    return (int)((rng >> 8) % (uint32_t)n);
}

static void test_random(void) {
    for (int it = 0; it < 60; it++) {
        int mode = it % 3, use64 = it % 2, two_d = (it / 2) % 2;
        int64_t min_n = 1 + irand(2), max_n = min_n + irand(2), max_skip = irand(4);
        /* pool: levels 1..max_n, a few random grams each over tokens 0..4 */
        int64_t counts[4], pool[64], np = 0, ngrams = 0, level_of[32];
        for (int64_t k = 0; k < max_n; k++) {
            counts[k] = np;
            int g = 1 + irand(3);
            for (int j = 0; j < g; j++, ngrams++) { /* distinct grams within a level */
                level_of[ngrams] = k + 1;
                for (int64_t t = 0; t <= k; t++) pool[np + t] = t ? irand(5) : j;
                np += k + 1;
            }
        }
        int64_t idx[32];
        float w[32];
        int64_t out = 0;
        for (int64_t g = 0; g < ngrams; g++) {
            idx[g] = g; /* distinct outputs */
            w[g] = 0.5f + (float)irand(4);
            out = g + 1;
        }
        int64_t N = two_d ? 2 : 1, C = 3 + irand(9);
        int64_t tok[32];
        int32_t tok32[32];
        for (int64_t i = 0; i < N * C; i++) tok32[i] = (int32_t)(tok[i] = irand(5));
        /* reference */
        float R[64] = {0};
        for (int64_t r = 0; r < N; r++)
            for (int64_t g = 0, e = 0; g < ngrams; e += level_of[g], g++) {
                int64_t n = level_of[g], cnt = 0;
                if (n < min_n) continue;
                for (int64_t d = 1; d <= (n == 1 ? 1 : max_skip + 1); d++)
                    for (int64_t i = 0; i + (n - 1) * d < C; i++) {
                        int ok = 1;
                        for (int64_t t = 0; t < n; t++) ok &= tok[r * C + i + t * d] == pool[e + t];
                        cnt += ok;
                    }
                float v = (float)cnt;
                if (mode == 1) v = cnt ? w[g] : 0;
                if (mode == 2) v = (float)cnt * w[g];
                R[r * out + idx[g]] = v;
            }
        static const char *modes[] = {"TF", "IDF", "TFIDF"};
        frt_onnx_attr at[8] = {frt_test_attr_string("mode", modes[mode]),
                               frt_test_attr_int("min_gram_length", min_n),
                               frt_test_attr_int("max_gram_length", max_n),
                               frt_test_attr_int("max_skip_count", max_skip),
                               frt_test_attr_ints("ngram_counts", counts, (size_t)max_n),
                               frt_test_attr_ints("ngram_indexes", idx, (size_t)ngrams),
                               frt_test_attr_ints("pool_int64s", pool, (size_t)np),
                               frt_test_attr_floats("weights", w, (size_t)ngrams)};
        int64_t xd[2] = {N, C};
        frt_value in = two_d ? frt_test_value(use64 ? FRT_INT64 : FRT_INT32, 2, xd, use64 ? (void *)tok : (void *)tok32)
                             : frt_test_value(use64 ? FRT_INT64 : FRT_INT32, 1, &xd[1], use64 ? (void *)tok : (void *)tok32);
        frt_test_op t = {.op_type = "TfIdfVectorizer", .attrs = at, .n_attrs = it % 4 == 0 ? 7 : 8,
                         .inputs = &in, .n_in = 1, .n_out = 1};
        if (t.n_attrs == 7) /* no weights: weight 1 */
            for (int64_t r = 0; r < N; r++)
                for (int64_t g = 0; g < ngrams; g++) {
                    float *v = &R[r * out + idx[g]];
                    if (mode == 1) *v = *v != 0 ? 1.0f : 0.0f;
                    if (mode == 2) *v = *v / w[g];
                }
        frt_value y;
        frt_status st = frt_test_run_op(&t, &y, NULL);
        CHECK_MSG(st == FRT_OK, "TfIdfVectorizer: %s", frt_last_error());
        if (st) continue;
        CHECK(y.dtype == FRT_FLOAT32 && y.rank == (two_d ? 2 : 1) && y.dims[y.rank - 1] == out);
        CHECK_MSG(t_close(y.data, R, (size_t)(N * out), 1e-6f, 1e-6f), "it %d mode %s", it, modes[mode]);
        free(y.data);
    }
}

static void test_bad(void) {
    int32_t tok[4] = {1, 2, 3, 4};
    int64_t d = 4, counts[2] = {0, 3}, idx[3] = {0, 1, 2}, pool[4] = {1, 2, 3, 4};
    frt_value in = frt_test_value(FRT_INT32, 1, &d, tok), y;
    frt_onnx_attr at[7] = {frt_test_attr_string("mode", "TF"), frt_test_attr_int("min_gram_length", 1),
                           frt_test_attr_int("max_gram_length", 2),
                           frt_test_attr_int("max_skip_count", 0),
                           frt_test_attr_ints("ngram_counts", counts, 2),
                           frt_test_attr_ints("ngram_indexes", idx, 3),
                           frt_test_attr_ints("pool_int64s", pool, 4)};
    frt_test_op t = {.op_type = "TfIdfVectorizer", .attrs = at, .n_attrs = 7, .inputs = &in, .n_in = 1, .n_out = 1};
    /* bigram level of 1 token: not a whole number of 2-grams */
    CHECK(frt_test_run_op(&t, &y, NULL) == FRT_ERR_SHAPE);
    at[0] = frt_test_attr_string("mode", "BM25");
    CHECK(frt_test_run_op(&t, &y, NULL) == FRT_ERR_SHAPE);
    float f[4] = {0};
    in = frt_test_value(FRT_FLOAT32, 1, &d, f);
    at[0] = frt_test_attr_string("mode", "TF");
    CHECK(frt_test_run_op(&t, &y, NULL) == FRT_ERR_UNSUPPORTED);
}

int main(void) {
    test_random();
    test_bad();
    TEST_MAIN_END();
}
