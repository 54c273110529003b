/* CPU feature detection (see cpu.h). */
#include "cpu.h"

#include "util/seltrace.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define FRT_CPU_X86 1
#else
#define FRT_CPU_X86 0
#endif

static frt_cpu g_cpu;
static int g_state;     /* 0 unprobed, 1 probing, 2 ready */

#if FRT_CPU_X86
static unsigned long long xgetbv0(void) {
    unsigned eax, edx;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return ((unsigned long long)edx << 32) | eax;
}
#endif

static void probe(frt_cpu *c) {
    memset(c, 0, sizeof *c);
#if FRT_CPU_X86
    unsigned a, b, cx, d;
    if (!__get_cpuid(1, &a, &b, &cx, &d)) return;
    bool osxsave = (cx >> 27) & 1, avx = (cx >> 28) & 1;
    bool fma = (cx >> 12) & 1, f16c = (cx >> 29) & 1;
    unsigned long long xcr0 = osxsave ? xgetbv0() : 0;
    bool ymm_os = (xcr0 & 0x6) == 0x6;             /* SSE and AVX state */
    bool zmm_os = ymm_os && (xcr0 & 0xe0) == 0xe0; /* opmask, ZMM_Hi256, Hi16_ZMM */
    unsigned b7 = 0, c7 = 0, d7 = 0, a71 = 0;
    if (__get_cpuid_max(0, NULL) >= 7) {
        __cpuid_count(7, 0, a, b7, c7, d7);
        unsigned bb, cc, dd;
        __cpuid_count(7, 1, a71, bb, cc, dd);
    }
    bool ok_avx = avx && ymm_os;
    c->avx2 = ok_avx && ((b7 >> 5) & 1);
    c->fma = ok_avx && fma;
    c->f16c = ok_avx && f16c;
    c->avx512f = zmm_os && ((b7 >> 16) & 1);
    c->avx512dq = c->avx512f && ((b7 >> 17) & 1);
    c->avx512bw = c->avx512f && ((b7 >> 30) & 1);
    c->avx512vl = c->avx512f && ((b7 >> 31) & 1);
    c->avx512_vnni = c->avx512f && ((c7 >> 11) & 1);
    c->avx512_bf16 = c->avx512f && ((a71 >> 5) & 1);
    if (c->avx2 && c->fma && c->f16c) c->host = FRT_ISA_AVX2;
    if (c->host == FRT_ISA_AVX2 && c->avx512f && c->avx512bw && c->avx512vl && c->avx512dq)
        c->host = FRT_ISA_AVX512;
#endif
    c->tier = c->host;
    const char *cap = getenv("FRT_ISA");
    if (cap && cap[0]) {
        frt_isa want = c->host;
        if (strcmp(cap, "portable") == 0) want = FRT_ISA_PORTABLE;
        else if (strcmp(cap, "avx2") == 0) want = FRT_ISA_AVX2;
        else if (strcmp(cap, "avx512") == 0) want = FRT_ISA_AVX512;
        if (want < c->tier) c->tier = want;
    }
}

const frt_cpu *frt_cpu_get(void) {
    if (__atomic_load_n(&g_state, __ATOMIC_ACQUIRE) == 2) return &g_cpu;
    int expect = 0;
    if (__atomic_compare_exchange_n(&g_state, &expect, 1, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        probe(&g_cpu);
        __atomic_store_n(&g_state, 2, __ATOMIC_RELEASE);
    } else {
        while (__atomic_load_n(&g_state, __ATOMIC_ACQUIRE) != 2) { /* another thread probes */ }
    }
    return &g_cpu;
}

frt_isa frt_cpu_tier(void) { return frt_cpu_get()->tier; }

const char *frt_isa_name(frt_isa isa) {
    switch (isa) {
    case FRT_ISA_AVX512: return "avx512";
    case FRT_ISA_AVX2: return "avx2";
    default: return "portable";
    }
}

const void *frt_pick_variant_at(const void *table, size_t n, size_t stride, frt_isa cap,
                                const char *site) {
    const unsigned char *p = table;
    size_t i = 0;
    frt_isa isa = FRT_ISA_PORTABLE;
    for (; i < n; i++) {
        memcpy(&isa, p + i * stride, sizeof isa);
        if (isa <= cap) break;
    }
    if (i == n && n) i = n - 1;
    if (site && n && FRT_SELTRACE_ON) frt_seltrace_variant(site, isa, frt_isa_name((frt_isa)isa));
    return n ? p + i * stride : NULL;
}

const void *frt_pick_variant(const void *table, size_t n, size_t stride, frt_isa cap) {
    return frt_pick_variant_at(table, n, stride, cap, NULL);
}
