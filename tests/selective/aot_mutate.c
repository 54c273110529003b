/* The ahead-of-time program loader against damaged programs (tests/selective/aot_check.sh, built
 * by a -DFRT_AOT_ONLY=ON build with ASan + UBSan): for a valid PROGRAM, every truncation at the
 * lengths listed below and every single-byte change (each byte position of the first 4096, every
 * 7th after; the mask cycles through 0x01, 0x80, 0xff) with the body's checksum fixed up, so that
 * the field checks behind it are reached (and one change without the fix-up, which the checksum
 * must catch). Each damaged program must load and run (the change hit
 * numbers only) or fail with a status and a message; a crash or a sanitizer report fails the test.
 * Prints the counts.
 *
 *   aot_mutate PROGRAM
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/aot.h"
#include "flatrt.h"
#include "util/error.h"

static uint64_t fnv1a64(const unsigned char *p, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* 1: loaded and ran, 0: refused with a message, -1: refused without one */
static int try_program(const unsigned char *d, size_t n) {
    frt_model *m = NULL;
    frt_runtime *rt = NULL;
    int ok = 0;
    frt_error_clear();
    if (frt_model_load_program_buffer(d, n, &m) || frt_runtime_create(m, &rt)) {
        ok = frt_last_error()[0] ? 0 : -1;
        frt_model_free(m);
        return ok;
    }
    size_t ni = frt_model_num_inputs(m), no = frt_model_num_outputs(m);
    const char *names[64];
    frt_tensor in[64], out[64];
    memset(in, 0, sizeof in);
    memset(out, 0, sizeof out);
    for (size_t i = 0; i < ni && i < 64; i++) {
        frt_tensor_info info;
        frt_model_input(m, i, &info);
        names[i] = info.name;
        in[i].dtype = info.dtype;
        in[i].rank = info.rank;
        memcpy(in[i].shape, info.shape, sizeof in[i].shape);
        in[i].nbytes = (size_t)frt_tensor_numel(&in[i]) * frt_dtype_size(info.dtype);
        in[i].data = calloc(in[i].nbytes + 1, 1);
    }
    if (frt_run(rt, names, in, ni, out, no < 64 ? no : 64, FRT_OUTPUTS_ALLOC))
        ok = frt_last_error()[0] ? 0 : -1;
    else
        ok = 1;
    for (size_t i = 0; i < no && i < 64; i++) frt_tensor_release(&out[i]);
    for (size_t i = 0; i < ni && i < 64; i++) free(in[i].data);
    frt_runtime_free(rt);
    frt_model_free(m);
    return ok;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s PROGRAM\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) return 2;
    static unsigned char buf[1 << 22];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    if (n < 32 || n == sizeof buf) return 2;
    unsigned char *d = malloc(n);
    if (!d) return 2;
    if (try_program(buf, n) != 1) {
        fprintf(stderr, "the undamaged program does not run: %s\n", frt_last_error());
        return 1;
    }
    long ran = 0, refused = 0;
    const size_t cuts[] = {0, 7, 8, 31, 32, 33, 40, 64, n / 2, n - 8, n - 1};
    for (size_t c = 0; c < sizeof cuts / sizeof *cuts; c++) {
        int r = try_program(buf, cuts[c]); /* the header's length no longer matches */
        if (r != 0) {
            fprintf(stderr, "truncated to %zu bytes: %s\n", cuts[c], r > 0 ? "ran" : "no message");
            return 1;
        }
    }
    memcpy(d, buf, n); /* a changed body byte without the checksum fixed up */
    d[32 + (n - 32) / 3] ^= 0x55;
    if (try_program(d, n) != 0 || !strstr(frt_last_error(), "checksum mismatch")) {
        fprintf(stderr, "a changed byte passed the checksum: %s\n", frt_last_error());
        return 1;
    }
    static const unsigned char masks[3] = {0x01, 0x80, 0xff};
    for (size_t i = 8, k = 0; i < n; i += i < 4096 ? 1 : 7, k++) {
        memcpy(d, buf, n);
        d[i] ^= masks[k % 3];
        if (i >= 32) {
            uint64_t h = fnv1a64(d + 32, n - 32);
            memcpy(d + 24, &h, 8);
        }
        int r = try_program(d, n);
        if (r < 0) {
            fprintf(stderr, "byte %zu changed: refused without a message\n", i);
            return 1;
        }
        if (r) ran++;
        else refused++;
    }
    printf("aot_mutate: %ld changed programs refused, %ld ran; truncations refused\n", refused,
           ran);
    free(d);
    return 0;
}
