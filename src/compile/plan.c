/* Static memory planning for one set of shapes.
 *
 * Managed tensors (and per-step scratch areas) have lifetimes [def_pos, last_pos] in the compute
 * order. The standard planner assigns each to a storage group: at each step, new tensors take the
 * best-fitting free group (the smallest that is large enough, else the largest free one, grown),
 * or a new group; groups of tensors whose lifetime ends at a step are freed after that step's
 * allocations. The slab is the sum of group sizes. FRT_PLANNER_NONE gives every tensor its own
 * range. Sizes are rounded up to 64 bytes so every tensor starts cache-line aligned. */
#include <stdlib.h>
#include <string.h>

#include "program.h"

#define ALIGN 64
static size_t align_up(size_t n) { return (n + ALIGN - 1) & ~(size_t)(ALIGN - 1); }

typedef struct item {
    int32_t id;      /* value id, or -(pos+1) for the scratch of compute position pos */
    int32_t first, last;
    size_t size;
    int32_t group;
} item;

typedef struct group {
    size_t size;
    bool busy;
} group;

static int by_first(const void *a, const void *b) {
    const item *x = a, *y = b;
    if (x->first != y->first) return x->first < y->first ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

void frt_plan_free(frt_plan *p) {
    free(p->offset);
    free(p->scratch_off);
    free(p->scratch_bytes);
    memset(p, 0, sizeof *p);
}

static frt_status collect(const frt_program *prog, const frt_value *values, const frt_plan *plan,
                          item **out, size_t *n_out) {
    size_t n = 0, nv = plan->n_values;
    for (size_t v = 0; v < nv; v++) n += prog->vclass[v] == FRT_VC_MANAGED;
    for (size_t p = 0; p < prog->n_compute; p++) n += plan->scratch_bytes[p] > 0;
    item *it = malloc((n + 1) * sizeof *it);
    if (!it) return frt_error(FRT_ERR_NO_MEMORY, "out of memory planning");
    size_t k = 0;
    for (size_t v = 0; v < nv; v++) {
        if (prog->vclass[v] != FRT_VC_MANAGED) continue;
        it[k].id = (int32_t)v;
        it[k].first = prog->def_pos[v];
        it[k].last = prog->last_pos[v];
        it[k].size = align_up(frt_value_nbytes(&values[v]));
        it[k].group = -1;
        k++;
    }
    for (size_t p = 0; p < prog->n_compute; p++) {
        if (!plan->scratch_bytes[p]) continue;
        it[k].id = -(int32_t)p - 1;
        it[k].first = it[k].last = (int32_t)p;
        it[k].size = align_up(plan->scratch_bytes[p]);
        it[k].group = -1;
        k++;
    }
    qsort(it, k, sizeof *it, by_first);
    *out = it;
    *n_out = k;
    return FRT_OK;
}

frt_status frt_plan_compute(const frt_program *prog, const frt_value *values, frt_planner which,
                            frt_plan *plan) {
    size_t nv = plan->n_values;
    item *it = NULL;
    size_t n = 0;
    frt_status st = collect(prog, values, plan, &it, &n);
    if (st) return st;
    group *gr = malloc((n + 1) * sizeof *gr);
    /* frees[pos] lists items whose lifetime ends at pos */
    int32_t *end_head = malloc((prog->n_compute + 1) * sizeof(int32_t));
    int32_t *end_next = malloc((n + 1) * sizeof(int32_t));
    if (!gr || !end_head || !end_next) {
        free(it), free(gr), free(end_head), free(end_next);
        return frt_error(FRT_ERR_NO_MEMORY, "out of memory planning");
    }
    for (size_t p = 0; p <= prog->n_compute; p++) end_head[p] = -1;
    for (size_t i = 0; i < n; i++) {
        end_next[i] = end_head[it[i].last];
        end_head[it[i].last] = (int32_t)i;
    }
    size_t n_groups = 0, naive = 0, lower = 0, live = 0;
    plan->num_reused = 0;
    size_t next = 0;
    for (int32_t pos = 0; pos < (int32_t)prog->n_compute; pos++) {
        for (; next < n && it[next].first == pos; next++) {
            item *t = &it[next];
            naive += t->size;
            live += t->size;
            int32_t best = -1;
            if (which == FRT_PLANNER_STANDARD) {
                for (size_t g = 0; g < n_groups; g++) {
                    if (gr[g].busy) continue;
                    if (best < 0) {
                        best = (int32_t)g;
                        continue;
                    }
                    size_t bs = gr[best].size, gs = gr[g].size;
                    bool fit_b = bs >= t->size, fit_g = gs >= t->size;
                    if ((fit_g && (!fit_b || gs < bs)) || (!fit_g && !fit_b && gs > bs))
                        best = (int32_t)g;
                }
            }
            if (best < 0) {
                best = (int32_t)n_groups++;
                gr[best].size = t->size;
            } else {
                plan->num_reused++;
                if (gr[best].size < t->size) gr[best].size = t->size;
            }
            gr[best].busy = true;
            t->group = best;
        }
        if (live > lower) lower = live;
        for (int32_t i = end_head[pos]; i >= 0; i = end_next[i]) {
            gr[it[i].group].busy = false;
            live -= it[i].size;
        }
    }
    /* Group offsets, then item offsets. */
    size_t *goff = malloc((n_groups + 1) * sizeof *goff);
    if (!goff) {
        free(it), free(gr), free(end_head), free(end_next);
        return frt_error(FRT_ERR_NO_MEMORY, "out of memory planning");
    }
    size_t total = 0;
    for (size_t g = 0; g < n_groups; g++) {
        goff[g] = total;
        total += gr[g].size;
    }
    for (size_t i = 0; i < n; i++) {
        size_t off = goff[it[i].group];
        if (it[i].id >= 0) plan->offset[it[i].id] = off;
        else plan->scratch_off[-it[i].id - 1] = off;
    }
    /* Graph-output storage: one range each, in a separate slab. */
    size_t out_total = 0;
    for (size_t v = 0; v < nv; v++) {
        if (prog->vclass[v] != FRT_VC_OWNED) continue;
        plan->offset[v] = out_total;
        out_total += align_up(frt_value_nbytes(&values[v]));
    }
    plan->slab_bytes = total;
    plan->output_bytes = out_total;
    plan->naive_bytes = naive;
    plan->lower_bound_bytes = lower;
    plan->num_managed = 0;
    for (size_t i = 0; i < n; i++) plan->num_managed += it[i].id >= 0;
    free(goff);
    free(it);
    free(gr);
    free(end_head);
    free(end_next);
    return FRT_OK;
}

frt_status frt_plan_check(const frt_program *prog, const frt_graph *g, const frt_value *values,
                          const frt_plan *plan) {
    item *it = NULL;
    size_t n = 0;
    frt_status st = collect(prog, values, plan, &it, &n);
    if (st) return st;
    for (size_t i = 0; i < n; i++) {
        size_t oi = it[i].id >= 0 ? plan->offset[it[i].id] : plan->scratch_off[-it[i].id - 1];
        if (oi + it[i].size > plan->slab_bytes) {
            free(it);
            return frt_error(FRT_ERR_INTERNAL, "memory plan: tensor %d lies outside the slab",
                             it[i].id);
        }
        for (size_t j = i + 1; j < n; j++) {
            if (it[j].first > it[i].last || it[i].first > it[j].last) continue;
            size_t oj = it[j].id >= 0 ? plan->offset[it[j].id] : plan->scratch_off[-it[j].id - 1];
            if (!it[i].size || !it[j].size) continue;
            if (oi < oj + it[j].size && oj < oi + it[i].size) {
                const char *a = it[i].id >= 0 ? g->values[it[i].id].name : "<scratch>";
                const char *b = it[j].id >= 0 ? g->values[it[j].id].name : "<scratch>";
                free(it);
                return frt_error(FRT_ERR_INTERNAL,
                                 "memory plan: live tensors '%s' and '%s' overlap", a, b);
            }
        }
    }
    free(it);
    return FRT_OK;
}
