/* Registry: the builtin op table, generated from the op list (ops.def), and the provider list.
 * Consulted at load time only (one binary search per node); steps keep kernel pointers.
 *
 * Selective build: compiled with FRT_OPS_ONLY defined, the table keeps only the ops X for which
 * FRT_OP_SELECT_X is defined as 1 (e.g. -DFRT_OPS_ONLY -DFRT_OP_SELECT_Relu=1, or those defines
 * in a header named by FRT_OPS_SELECTION). The implementations of the others are then never
 * referenced, so their family objects drop out of a static link. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op.h"
#include "onednn/onednn.h"
#include "util/seltrace.h"

#ifdef FRT_OPS_SELECTION
#include FRT_OPS_SELECTION
#endif

/* FRT_OP_ON(op) expands to 1 when op is built, else 0: FRT_SEL_ONE_##v pastes to the placeholder
 * "0," only when v is the token 1, which shifts the 1 into second place. */
#define FRT_SEL_ONE_1 0,
#define FRT_SEL_SECOND(a, b, ...) b
#define FRT_SEL_IS1(v) FRT_SEL_IS1_(v)
#define FRT_SEL_IS1_(v) FRT_SEL_IS1__(FRT_SEL_ONE_##v)
#define FRT_SEL_IS1__(x) FRT_SEL_SECOND(x 1, 0, ~)
#ifdef FRT_OPS_ONLY
#define FRT_OP_ON(op) FRT_SEL_IS1(FRT_OP_SELECT_##op)
#else
#define FRT_OP_ON(op) 1
#endif
#define FRT_SEL_CAT(a, b) FRT_SEL_CAT_(a, b)
#define FRT_SEL_CAT_(a, b) a##b
#define FRT_SEL_EMIT_1(...) __VA_ARGS__
#define FRT_SEL_EMIT_0(...)
#define FRT_IF_ON(op, ...) FRT_SEL_CAT(FRT_SEL_EMIT_, FRT_OP_ON(op))(__VA_ARGS__)
/* An op whose nodes the trace saw all fused or folded away (FRT_OP_INFER_ONLY_<op> 1 in the
 * selection header) keeps its infer, which load runs before fusing, but not its kernels: its
 * select is select_left_out. */
#ifdef FRT_OPS_ONLY
#define FRT_OP_INFER_ONLY(op) FRT_SEL_IS1(FRT_OP_INFER_ONLY_##op)
#else
#define FRT_OP_INFER_ONLY(op) 0
#endif
#define FRT_SEL_PICK_1(a, b) a
#define FRT_SEL_PICK_0(a, b) b
#define FRT_SELECT_FN(op, fn) FRT_SEL_CAT(FRT_SEL_PICK_, FRT_OP_INFER_ONLY(op))(select_left_out, fn)

#define FRT_DOM_ONNX FRT_DOMAIN_ONNX
#define FRT_DOM_INTERNAL FRT_DOMAIN_INTERNAL
#define FRT_DOM_TRAINING FRT_DOMAIN_TRAINING
#define LATEST FRT_OPSET_LATEST /* the list's name for it */

/* Declarations of the listed implementations. */
#define FRT_OP(dom, op, since, max, fam, sym, flags)                                               \
    FRT_IF_ON(op, frt_status frt_op_##fam##_##sym##_infer(frt_op_ctx *c);                          \
              frt_status frt_op_##fam##_##sym##_select(frt_op_ctx *c, frt_kernel *k);)
#include "ops.def"
#undef FRT_OP

#ifdef FRT_OPS_ONLY
#ifndef FRT_SELECTION_FILE
#define FRT_SELECTION_FILE "the op list FRT_OPS"
#endif
__attribute__((unused)) static frt_status select_left_out(frt_op_ctx *c, frt_kernel *k) {
    (void)k;
    return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "kernels of op '%s' not in this build's selection "
                       "(%s): its trace saw every node of it fused or folded away",
                       c->node->op_type, FRT_SELECTION_FILE);
}
#endif

/* The table. A trailing sentinel keeps the array non-empty when a selection lists nothing. */
#define FRT_OP(dom, op, since, max, fam, sym, flags)                                               \
    FRT_IF_ON(op, {FRT_DOM_##dom, #op, since, max, (flags), #fam, frt_op_##fam##_##sym##_infer,   \
                   FRT_SELECT_FN(op, frt_op_##fam##_##sym##_select)},)
static const frt_op_def g_defs[] = {
#include "ops.def"
    {NULL, NULL, 0, 0, 0, NULL, NULL, NULL},
};
#undef FRT_OP

#define N_DEFS (sizeof g_defs / sizeof g_defs[0] - 1)

#if defined(FRT_OPS_ONLY) && defined(FRT_LEFT_OUT_HASHES)
/* The ops the selection left out, as sorted 24-bit hashes (32-bit FNV-1a of "<domain letter><op>",
 * o ai.onnx, i flatrt, t training, xor-folded to 24 bits) from scripts/gen_selection.py, three
 * big-endian bytes each: 3 bytes an op instead of its name (load names the op from the model's
 * node). An op flatrt does not implement whose hash equals a left-out op's (about one in
 * 2^24 / 200 = 84,000) would be refused as "not in this build's selection" instead of
 * "unsupported operators": refused either way. */
static const uint8_t g_left_out_hash[] = {FRT_LEFT_OUT_HASHES};
#define N_LEFT_OUT (sizeof g_left_out_hash / 3)

static uint32_t left_out_hash(char dc, const char *op) {
    uint32_t h = (2166136261u ^ (uint8_t)dc) * 16777619u;
    for (const unsigned char *p = (const unsigned char *)op; *p; p++) h = (h ^ *p) * 16777619u;
    return (h >> 24) ^ (h & 0xffffffu);
}

static uint32_t left_out_at(size_t i) {
    const uint8_t *b = g_left_out_hash + 3 * i;
    return (uint32_t)b[0] << 16 | (uint32_t)b[1] << 8 | b[2];
}
#elif defined(FRT_OPS_ONLY)
/* The ops the selection left out, by name only (load names them in its message): one string of
 * entries "<domain letter><op>\0" (o ai.onnx, i flatrt, t training), ended by an empty entry; a
 * string instead of a pointer table keeps it to the names' bytes. */
#define FRT_SEL_OFF_1(...)
#define FRT_SEL_OFF_0(...) __VA_ARGS__
#define FRT_IF_OFF(op, ...) FRT_SEL_CAT(FRT_SEL_OFF_, FRT_OP_ON(op))(__VA_ARGS__)
#define FRT_DOMCH_ONNX "o"
#define FRT_DOMCH_INTERNAL "i"
#define FRT_DOMCH_TRAINING "t"
#define FRT_OP(dom, op, since, max, fam, sym, flags) FRT_IF_OFF(op, FRT_DOMCH_##dom #op "\0")
static const char g_left_out[] =
#include "ops.def"
    "";
#undef FRT_OP
#endif

static const frt_op_table g_table = {g_defs, N_DEFS};

const frt_op_table *frt_op_registry(void) { return &g_table; }

size_t frt_op_def_count(void) { return N_DEFS; }

const frt_op_def *frt_op_def_at(size_t i) { return i < N_DEFS ? &g_defs[i] : NULL; }

/* "" for the default domain under either of its names. */
static const char *canon_domain(const char *d) {
    return !d || strcmp(d, "ai.onnx") == 0 ? FRT_DOMAIN_ONNX : d;
}

static int cmp_key(const frt_op_def *d, const char *domain, const char *op_type) {
    int c = strcmp(d->domain, domain);
    return c ? c : strcmp(d->op_type, op_type);
}

/* Index of the first entry of (domain, op_type) in t, or t->n when absent. */
static size_t first_of(const frt_op_table *t, const char *domain, const char *op_type) {
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_key(&t->defs[mid], domain, op_type) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo < t->n && cmp_key(&t->defs[lo], domain, op_type) == 0 ? lo : t->n;
}

const frt_op_def *frt_op_table_find(const frt_op_table *t, const char *domain, const char *op_type,
                                    int64_t opset, char *why, size_t cap) {
    domain = canon_domain(domain);
    if (why && cap) why[0] = 0;
    if (!op_type) return NULL;
    size_t i = first_of(t, domain, op_type);
    if (i == t->n) {
        if (why && cap) snprintf(why, cap, "no operator %s%s%s", domain, domain[0] ? "::" : "", op_type);
        return NULL;
    }
    size_t o = 0;
    if (why && cap) o = (size_t)snprintf(why, cap, "opset %lld not implemented (implemented:",
                                         (long long)opset);
    for (size_t j = i; j < t->n && cmp_key(&t->defs[j], domain, op_type) == 0; j++) {
        const frt_op_def *d = &t->defs[j];
        if (opset >= d->since && opset <= d->max) return d;
        if (why && o < cap)
            o += (size_t)snprintf(why + o, cap - o, "%s %d..%d", j > i ? "," : "", d->since, d->max);
    }
    if (why && o < cap) snprintf(why + o, cap - o, ")");
    return NULL;
}

frt_status frt_op_table_check(const frt_op_table *t) {
    for (size_t i = 0; i < t->n; i++) {
        const frt_op_def *d = &t->defs[i];
        if (!d->domain || !d->op_type || !d->infer || !d->select || d->since < 1 || d->max < d->since)
            return frt_error(FRT_ERR_INTERNAL, "op table entry %zu (%s) is incomplete", i,
                             d->op_type ? d->op_type : "?");
        if (i == 0) continue;
        const frt_op_def *p = &t->defs[i - 1];
        int c = cmp_key(p, d->domain, d->op_type);
        if (c > 0 || (c == 0 && p->max >= d->since))
            return frt_error(FRT_ERR_INTERNAL, "op table entries %s%s%s %d..%d and %s%s%s %d..%d "
                             "are out of order or overlap", p->domain, p->domain[0] ? "::" : "",
                             p->op_type, p->since, p->max, d->domain, d->domain[0] ? "::" : "",
                             d->op_type, d->since, d->max);
    }
    return FRT_OK;
}

const frt_op_def *frt_op_lookup(const char *domain, const char *op_type, int64_t opset) {
    const frt_op_def *d = frt_op_table_find(frt_op_registry(), domain, op_type, opset, NULL, 0);
    if (d && FRT_SELTRACE_ON) frt_seltrace_op(domain, op_type, opset);
    return d;
}

const frt_op_def *frt_op_probe(const char *domain, const char *op_type, int64_t opset) {
    return frt_op_table_find(frt_op_registry(), domain, op_type, opset, NULL, 0);
}

/* also the ops a later fusion absorbs (Gelu into FusedMatMul): never selected, but the selective
 * build must create them for the next fusion to see the same chain */
void frt_op_created(const char *domain, const char *op_type, int64_t opset) {
    if (FRT_SELTRACE_ON) frt_seltrace_op(domain, op_type, opset);
}

const frt_op_def *frt_op_find(const char *domain, const char *op_type) {
    const frt_op_table *t = frt_op_registry();
    domain = canon_domain(domain);
    if (!op_type) return NULL;
    size_t i = first_of(t, domain, op_type), last = t->n;
    for (size_t j = i; j < t->n && cmp_key(&t->defs[j], domain, op_type) == 0; j++) last = j;
    return last < t->n ? &t->defs[last] : NULL;
}

frt_status frt_op_resolve(const frt_node *n, const frt_op_def **def) {
    char why[256];
    *def = frt_op_table_find(frt_op_registry(), n->domain, n->op_type, n->opset, why, sizeof why);
    if (*def) return FRT_OK;
    const char *dom = canon_domain(n->domain);
    return frt_error(FRT_ERR_UNSUPPORTED, "node '%s': %s (domain '%s', opset %lld): %s", n->name,
                     n->op_type, dom[0] ? dom : "ai.onnx", (long long)n->opset, why);
}


bool frt_op_left_out(const char *domain, const char *op_type) {
#ifdef FRT_OPS_ONLY
    domain = canon_domain(domain);
    char dc = !strcmp(domain, FRT_DOMAIN_ONNX)       ? 'o'
              : !strcmp(domain, FRT_DOMAIN_INTERNAL) ? 'i'
              : !strcmp(domain, FRT_DOMAIN_TRAINING) ? 't'
                                                     : 0;
#ifdef FRT_LEFT_OUT_HASHES
    if (!op_type || !dc) return false;
    uint32_t h = left_out_hash(dc, op_type);
    size_t lo = 0, hi = N_LEFT_OUT;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (left_out_at(mid) < h) lo = mid + 1;
        else hi = mid;
    }
    return lo < N_LEFT_OUT && left_out_at(lo) == h;
#else
    for (const char *e = g_left_out; op_type && dc && *e; e += strlen(e) + 1)
        if (e[0] == dc && !strcmp(e + 1, op_type)) return true;
#endif
#endif
    return false;
}

/* Records the kernel chosen for a node: op, kernel name, provider, dtypes and features. */
void frt_seltrace_kernel(const frt_op_def *def, const frt_op_ctx *c, const frt_kernel *k,
                         const char *provider) {
    const char *dom = frt_seltrace_domain(def->domain);
    frt_seltrace_op(def->domain, def->op_type, c->opset);
    const char *kn = k->name ? k->name : "-";
    size_t pl = strlen(provider);
    if (!strncmp(kn, provider, pl) && kn[pl] == ':') kn += pl + 1; /* "onednn:conv" */
    frt_seltrace_add("kernel", dom, def->op_type, provider, kn, NULL);
    frt_seltrace_add("provider", provider, NULL);
    for (int pass = 0; pass < 2; pass++) {
        int n = pass ? c->n_out : c->n_in;
        frt_value **v = pass ? c->out : c->in;
        for (int i = 0; i < n; i++)
            if (v[i] && v[i]->dtype > 0)
                frt_seltrace_add("dtype", dom, def->op_type, frt_dtype_name((frt_dtype)v[i]->dtype),
                                 NULL);
    }
    if (def->flags & FRT_OP_SEQ_VALUES) frt_seltrace_feature("sequences");
    for (int i = 0; i < c->n_out; i++)
        if (c->out[i] && c->out[i]->vtype) frt_seltrace_feature("sequences");
    if (c->node && c->node->n_sub > 0) frt_seltrace_feature("subgraphs");
}


/* ---- providers ---- */

static frt_status builtin_select(const frt_provider *p, const frt_op_def *def, frt_op_ctx *c,
                                 frt_kernel *k) {
    return def->select(c, k);
}

const frt_provider frt_provider_builtin = {"builtin", builtin_select, NULL};

/* The oneDNN provider for num_threads intra-op threads, then builtin; builtin only when oneDNN is
 * not built or is switched off (FRT_DNNL=0). The provider makes every primitive for one OpenMP
 * thread; with num_threads > 1 it splits big steps into channel parts that run on the runtime's
 * own pool (src/ops/onednn/split.c), so no OpenMP team ever runs beside that pool. */
enum { FRT_PROVIDER_LISTS = 257 };
static const frt_provider *g_lists[FRT_PROVIDER_LISTS][2];
static pthread_once_t g_lists_once = PTHREAD_ONCE_INIT;

static void lists_init(void) {
    for (int i = 1; i < FRT_PROVIDER_LISTS; i++) {
        g_lists[i][0] = frt_onednn_provider(i);
        g_lists[i][1] = &frt_provider_builtin;
    }
}

const frt_provider *const *frt_providers_for_threads(int num_threads, size_t *n) {
    static const frt_provider *const builtin_only[] = {&frt_provider_builtin};
    if (frt_onednn_enabled() && num_threads >= 1 && num_threads < FRT_PROVIDER_LISTS) {
        pthread_once(&g_lists_once, lists_init);
        if (g_lists[num_threads][0]) {
            *n = 2;
            return g_lists[num_threads];
        }
    }
    *n = 1;
    return builtin_only;
}

const frt_provider *const *frt_default_providers(size_t *n) {
    return frt_providers_for_threads(1, n);
}
