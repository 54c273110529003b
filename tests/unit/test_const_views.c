/* Constants that share bytes: a Reshape of an initializer is folded at load into a view of the
 * same bytes. When the initializer is misaligned in the model buffer, those bytes are a heap copy
 * owned by the graph; a kernel that packs its weight at load (Conv) lets the graph free the
 * original, which must not free bytes a view still reads. Each case places W's raw data at an odd
 * offset (so it is copied), runs the model and checks the output against a direct computation:
 *   view:   Z = Conv1x1(X, W) + X2 * Reshape(W, [1,C,1,1])
 *   bn:     the same with a BatchNormalization after the Conv (folded into a new weight)
 *   twin:   W is [C]; Conv reads Reshape(W, [C,1,1,1]) and Mul reads Reshape(W, [1,C,1,1]). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flatrt.h"
#include "onnx_build.h"
#include "test_util.h"

enum { C = 3, H = 4, WD = 5, HW = H * WD };
enum { CASE_VIEW, CASE_BN, CASE_TWIN };

static const float wv[C] = {0.5f, -1.25f, 2.0f};
static const float bn_s[C] = {1.5f, 0.75f, -0.5f}, bn_b[C] = {0.25f, -1.0f, 0.5f};
static const float bn_m[C] = {0.1f, -0.2f, 0.3f}, bn_v[C] = {1.0f, 0.5f, 2.0f};

static void node(ob_buf *g, const char *op, const char *const *in, const char *const *out) {
    ob_buf n = ob_node(op, NULL, out[0], in, out);
    ob_msg(g, OB_NODE, &n);
}

static ob_buf build(int kind) {
    ob_buf g = {0};
    int64_t xd[4] = {1, 1, H, WD}, x2d[4] = {1, C, H, WD}, zd[4] = {1, C, H, WD};
    ob_buf vi = ob_vinfo("X", 1, 4, xd);
    ob_msg(&g, OB_INPUT, &vi);
    vi = ob_vinfo("X2", 1, 4, x2d);
    ob_msg(&g, OB_INPUT, &vi);
    vi = ob_vinfo("Z", 1, 4, zd);
    ob_msg(&g, OB_OUTPUT, &vi);
    int64_t wd4[4] = {C, 1, 1, 1}, wd1[1] = {C}, c = C;
    ob_buf t = kind == CASE_TWIN ? ob_tensor_f32("W", wd1, 1, wv) : ob_tensor_f32("W", wd4, 4, wv);
    ob_msg(&g, OB_INIT, &t);
    int64_t s4[4] = {1, C, 1, 1}, sw[4] = {C, 1, 1, 1};
    t = ob_tensor_i64("S", 4, s4);
    ob_msg(&g, OB_INIT, &t);
    const char *conv_w = "W";
    if (kind == CASE_TWIN) {
        t = ob_tensor_i64("SW", 4, sw);
        ob_msg(&g, OB_INIT, &t);
        node(&g, "Reshape", (const char *[]){"W", "SW", NULL}, (const char *[]){"W4", NULL});
        conv_w = "W4";
    }
    const char *y = "Y";
    node(&g, "Conv", (const char *[]){"X", conv_w, NULL}, (const char *[]){"Y", NULL});
    if (kind == CASE_BN) {
        const char *names[4] = {"bs", "bb", "bm", "bv"};
        const float *vals[4] = {bn_s, bn_b, bn_m, bn_v};
        for (int i = 0; i < 4; i++) {
            t = ob_tensor_f32(names[i], &c, 1, vals[i]);
            ob_msg(&g, OB_INIT, &t);
        }
        node(&g, "BatchNormalization", (const char *[]){"Y", "bs", "bb", "bm", "bv", NULL},
             (const char *[]){"YB", NULL});
        y = "YB";
    }
    node(&g, "Reshape", (const char *[]){"W", "S", NULL}, (const char *[]){"Wr", NULL});
    node(&g, "Mul", (const char *[]){"X2", "Wr", NULL}, (const char *[]){"Q", NULL});
    node(&g, "Add", (const char *[]){y, "Q", NULL}, (const char *[]){"Z", NULL});
    return ob_model(&g);
}

static void check(int kind, const char *name) {
    ob_buf mb = build(kind);
    /* where W's float bytes sit in the serialized model */
    size_t off = 0;
    for (size_t i = 0; i + sizeof wv <= mb.n; i++)
        if (!memcmp(mb.p + i, wv, sizeof wv)) {
            off = i;
            break;
        }
    CHECK_MSG(off > 0, "%s: W's bytes not found in the model", name);
    /* a 64-aligned copy of the model shifted so that W's bytes start at an address = 2 mod 4 */
    size_t shift = (2 + 64 - off % 64) % 64;
    uint8_t *buf = aligned_alloc(64, (mb.n + shift + 63) & ~(size_t)63);
    memcpy(buf + shift, mb.p, mb.n);
    CHECK(((uintptr_t)(buf + shift + off) & 3) == 2);

    float x[HW], x2[C * HW], ref[C * HW];
    t_fill(x, HW, 11);
    t_fill(x2, C * HW, 12);
    for (int k = 0; k < C; k++)
        for (int i = 0; i < HW; i++) {
            float y = x[i] * wv[k];
            if (kind == CASE_BN) y = (y - bn_m[k]) / sqrtf(bn_v[k] + 1e-5f) * bn_s[k] + bn_b[k];
            ref[k * HW + i] = y + x2[k * HW + i] * wv[k];
        }

    frt_model *m = NULL;
    CHECK_OK(frt_model_load_buffer(buf + shift, mb.n, NULL, NULL, &m));
    frt_runtime *rt = NULL;
    if (m) {
        frt_model_stats ms;
        frt_model_get_stats(m, &ms);
        CHECK_MSG(ms.copied_bytes >= sizeof wv, "%s: W was not copied (%zu bytes copied)", name,
                  ms.copied_bytes);
        CHECK_OK(frt_runtime_create(m, &rt));
    }
    if (rt) {
        frt_tensor in[2] = {
            {.dtype = FRT_FLOAT32, .rank = 4, .shape = {1, 1, H, WD}, .data = x, .nbytes = sizeof x},
            {.dtype = FRT_FLOAT32, .rank = 4, .shape = {1, C, H, WD}, .data = x2, .nbytes = sizeof x2}};
        const char *names[] = {"X", "X2"};
        for (int run = 0; run < 2; run++) {
            frt_tensor out;
            CHECK_OK(frt_run(rt, names, in, 2, &out, 1, FRT_OUTPUTS_ALLOC));
            if (out.data) {
                CHECK(out.nbytes == sizeof ref);
                CHECK_MSG(t_close(out.data, ref, C * HW, 1e-5f, 1e-5f), "%s: run %d output", name, run);
                frt_tensor_release(&out);
            }
        }
        frt_runtime_free(rt);
    }
    frt_model_free(m);
    free(buf);
    free(mb.p);
}

int main(void) {
    check(CASE_VIEW, "view");
    check(CASE_BN, "bn");
    check(CASE_TWIN, "twin");
    TEST_MAIN_END();
}
