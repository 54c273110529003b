/* Selection trace recorder (see seltrace.h). */
#include "util/seltrace.h"

#include <pthread.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>


int frt_seltrace_enabled;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static char **g_items;
static size_t g_n, g_cap;
static size_t g_dropped; /* facts lost to out-of-memory or over-long records */
static unsigned g_generation; /* bumped by reset: per-thread memos of recorded facts expire */

void frt_seltrace_enable(int on) { __atomic_store_n(&frt_seltrace_enabled, on ? 1 : 0, __ATOMIC_RELAXED); }

void frt_seltrace_reset(void) {
    pthread_mutex_lock(&g_mu);
    for (size_t i = 0; i < g_n; i++) free(g_items[i]);
    free(g_items);
    g_items = NULL;
    g_n = g_cap = 0;
    g_dropped = 0;
    __atomic_add_fetch(&g_generation, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&g_mu);
}

/* Adds s unless present; when out of memory it counts the fact as dropped (frt_seltrace_dropped),
 * so a tool can refuse to write an incomplete trace. */
static void add_str(const char *s) {
    pthread_mutex_lock(&g_mu);
    for (size_t i = g_n; i-- > 0;)
        if (!strcmp(g_items[i], s)) goto out;
    if (g_n == g_cap) {
        size_t c = g_cap ? 2 * g_cap : 64;
        char **p = realloc(g_items, c * sizeof *p);
        if (!p) {
            g_dropped++;
            goto out;
        }
        g_items = p;
        g_cap = c;
    }
    size_t len = strlen(s) + 1;
    char *d = malloc(len); /* not strdup: its allocation would bypass allocation-failure tests */
    if (d) {
        memcpy(d, s, len);
        g_items[g_n++] = d;
    } else {
        g_dropped++;
    }
out:
    pthread_mutex_unlock(&g_mu);
}

void frt_seltrace_add(const char *kind, ...) {
    char buf[512];
    size_t o = 0;
    va_list ap;
    va_start(ap, kind);
    for (const char *f = kind; f; f = va_arg(ap, const char *)) {
        size_t len = strlen(f);
        if (o + len + 2 > sizeof buf) { /* a cut record would name something else: drop it */
            va_end(ap);
            pthread_mutex_lock(&g_mu);
            g_dropped++;
            pthread_mutex_unlock(&g_mu);
            return;
        }
        if (o) buf[o++] = '\t';
        for (size_t i = 0; i < len; i++) buf[o++] = f[i] == '\t' || f[i] == '\n' ? ' ' : f[i];
    }
    va_end(ap);
    buf[o] = 0;
    add_str(buf);
}

const char *frt_seltrace_domain(const char *d) { return !d || !d[0] ? "ai.onnx" : d; }

void frt_seltrace_op(const char *domain, const char *op_type, int64_t opset) {
    char v[32];
    snprintf(v, sizeof v, "%lld", (long long)opset);
    frt_seltrace_add("op", frt_seltrace_domain(domain), op_type, v, NULL);
}

void frt_seltrace_variant(const char *site, int isa, const char *isa_name) {
    /* the same site and tier as last time since the last reset: nothing new (kernels pick at every
     * call) */
    static __thread const char *last_site;
    static __thread int last_isa = -1;
    static __thread unsigned last_gen;
    unsigned gen = __atomic_load_n(&g_generation, __ATOMIC_RELAXED);
    if (site == last_site && isa == last_isa && gen == last_gen) return;
    last_site = site;
    last_isa = isa;
    last_gen = gen;
    const char *b = strrchr(site, '/');
    b = b ? b + 1 : site;
    char fam[128];
    size_t n = strcspn(b, ".");
    if (n >= sizeof fam) n = sizeof fam - 1;
    memcpy(fam, b, n);
    fam[n] = 0;
    frt_seltrace_add("variant", fam, isa_name, NULL);
}

void frt_seltrace_feature(const char *name) { frt_seltrace_add("feature", name, NULL); }

size_t frt_seltrace_count(void) {
    pthread_mutex_lock(&g_mu);
    size_t n = g_n;
    pthread_mutex_unlock(&g_mu);
    return n;
}

size_t frt_seltrace_dropped(void) {
    pthread_mutex_lock(&g_mu);
    size_t n = g_dropped;
    pthread_mutex_unlock(&g_mu);
    return n;
}

const char *frt_seltrace_at(size_t i) {
    pthread_mutex_lock(&g_mu);
    const char *s = i < g_n ? g_items[i] : NULL;
    pthread_mutex_unlock(&g_mu);
    return s;
}
