/* Static memory planning for one set of shapes.
 *
 * 1. Concat in place: when every input of a Concat is a managed tensor made by an earlier step and
 *    the concatenated slices are contiguous (all dims before the axis are 1), the inputs are placed
 *    as consecutive slices of the Concat's output; their producers write straight into it and the
 *    Concat step is skipped. Nested concats (DenseNet) nest the same way.
 * 2. In place: a step whose kernel allows it (FRT_K_INPLACE) writes its output over the input the
 *    kernel names (inplace_in: input 0 of elementwise kernels, the residual of a fused
 *    convolution) when that input dies at the step, has the same size and layout, is not a
 *    slice of an in-place concat, and no other input reads its memory (except input 0 read
 *    twice by an elementwise kernel).
 * 3. The remaining storage roots (plus per-step scratch) get offsets in one slab:
 *    - standard: storage groups; new tensors take the best-fitting free group (the smallest large
 *      enough, else the largest free one, grown); a group is freed after its last reader;
 *      then greedy by size, and the smaller slab of the two is kept (ties: the groups);
 *    - greedy: greedy by size (Pisarchyk & Lee, arXiv:2001.03288, section 5.2): largest first,
 *      into the smallest gap among already placed tensors whose lifetimes overlap;
 *    - none: every tensor its own range, no in-place, no concat in place.
 * With inter-op threads (prog->dag), "lifetimes overlap" becomes "not ordered by the dataflow
 * DAG": an area may take another's bytes only when every use (producer, readers, of every member)
 * of the other happens before every write of it, so any schedule that respects the DAG is safe;
 * in place requires every other read of the input to happen before the step; the standard
 * planner keeps the smaller of storage groups and greedy by size (groups fragment over a DAG).
 * All work arrays are allocated once per runtime (frt_plan_init), so re-planning for new shapes
 * never touches the heap. Sizes are physical sizes in each value's layout (frt_value_nbytes,
 * padding included), rounded up to 64 bytes per root. Values in a non-plain layout are concat
 * slices only along the channels of a channel-blocked Concat whose inputs hold whole blocks, and
 * share in place only with an input of the same layout. */
#include <stdlib.h>
#include <string.h>

#include "program.h"

/* A selective build compiles only the planners its selection lists (FRT_PLANNER_OFF_<NAME>,
 * cmake/selective.cmake) and, without the thread pool (FRT_PLAN_NO_DAG), never sees a DAG: the
 * code of the others compiles out and frt_plan_available refuses them at load. */
#ifdef FRT_PLAN_NO_DAG
#define DAG(prog) ((void)(prog), (const frt_dag *)NULL)
#else
#define DAG(prog) ((prog)->dag)
#endif
#ifdef FRT_PLANNER_OFF_GREEDY
#define HAVE_GREEDY 0
#else
#define HAVE_GREEDY 1
#endif

#define ALIGN 64
static size_t align_up(size_t n) { return (n + ALIGN - 1) & ~(size_t)(ALIGN - 1); }

enum { K_ROOT = 0, K_SLICE = 1, K_ALIAS = 2 };

struct frt_plan_item {
    int32_t id; /* value id, or -(pos+1) for the scratch of compute position pos */
    int32_t first, last;
    size_t size, off;
    int32_t group;
};

struct frt_plan_group {
    size_t size;
    bool busy;
    int32_t last; /* with a DAG: the item placed last in the group */
};

void frt_plan_free(frt_plan *p) {
    free(p->offset);
    free(p->scratch_off);
    free(p->scratch_bytes);
    free(p->skip);
    free(p->parent);
    free(p->rel);
    free(p->kind);
    free(p->first);
    free(p->last);
    free(p->items);
    free(p->order);
    free(p->groups);
    free(p->end_head);
    free(p->end_next);
    free(p->mhead);
    free(p->mnext);
    memset(p, 0, sizeof *p);
}

frt_status frt_plan_init(frt_plan *p, size_t n_values, size_t n_compute) {
    memset(p, 0, sizeof *p);
    p->n_values = n_values;
    p->n_compute = n_compute;
    size_t nv = n_values + 1, nc = n_compute + 1, ni = n_values + n_compute + 1;
    p->offset = calloc(nv, sizeof *p->offset);
    p->scratch_off = calloc(nc, sizeof *p->scratch_off);
    p->scratch_bytes = calloc(nc, sizeof *p->scratch_bytes);
    p->skip = calloc(nc, 1);
    p->parent = calloc(nv, sizeof *p->parent);
    p->rel = calloc(nv, sizeof *p->rel);
    p->kind = calloc(nv, 1);
    p->first = calloc(nv, sizeof *p->first);
    p->last = calloc(nv, sizeof *p->last);
    p->items = calloc(ni, sizeof *p->items);
    p->order = calloc(ni, sizeof *p->order);
    p->groups = calloc(ni, sizeof *p->groups);
    p->end_head = calloc(nc, sizeof *p->end_head);
    p->end_next = calloc(ni, sizeof *p->end_next);
    p->mhead = calloc(nv, sizeof *p->mhead);
    p->mnext = calloc(nv, sizeof *p->mnext);
    if (!p->mhead || !p->mnext ||
        !p->offset || !p->scratch_off || !p->scratch_bytes || !p->skip || !p->parent || !p->rel ||
        !p->kind || !p->first || !p->last || !p->items || !p->order || !p->groups ||
        !p->end_head || !p->end_next) {
        frt_plan_free(p);
        return frt_error(FRT_ERR_NO_MEMORY, "out of memory creating a memory plan");
    }
    return FRT_OK;
}

/* Storage root of v and v's byte offset within it. */
static int32_t storage_root(const frt_plan *p, int32_t v, size_t *off) {
    size_t o = 0;
    while (p->parent[v] >= 0) {
        o += p->rel[v];
        v = p->parent[v];
    }
    if (off) *off = o;
    return v;
}

static bool inside_slice(const frt_plan *p, int32_t v) {
    for (; v >= 0; v = p->parent[v])
        if (p->kind[v] == K_SLICE) return true;
    return false;
}

/* ---- ordering by the dataflow DAG (inter-op plans) ---- */

/* Every use of item a (its producers and readers; a scratch area: its step) happens before
 * position q. */
static bool uses_before(const frt_program *prog, const frt_plan *p, const frt_plan_item *a,
                        int32_t q) {
    const frt_dag *d = DAG(prog);
    if (a->id < 0) return frt_dag_before(d, -a->id - 1, q);
    for (int32_t m = p->mhead[a->id]; m >= 0; m = p->mnext[m]) {
        if (!frt_dag_before(d, prog->def_pos[m], q)) return false;
        for (int32_t k = d->rd_off[m]; k < d->rd_off[m + 1]; k++)
            if (!frt_dag_before(d, d->rd[k], q)) return false;
    }
    return true;
}

/* Every use of a happens before every write of b: b may take a's memory. */
static bool item_before(const frt_program *prog, const frt_plan *p, const frt_plan_item *a,
                        const frt_plan_item *b) {
    if (b->id < 0) return uses_before(prog, p, a, -b->id - 1);
    for (int32_t m = p->mhead[b->id]; m >= 0; m = p->mnext[m])
        if (!uses_before(prog, p, a, prog->def_pos[m])) return false;
    return true;
}

/* a and b may be live at once: their lifetimes overlap in the sequential order, or with a DAG,
 * neither is ordered before the other. */
static bool items_conflict(const frt_program *prog, const frt_plan *p, const frt_plan_item *a,
                           const frt_plan_item *b) {
    if (!DAG(prog)) return !(a->first > b->last || b->first > a->last);
    return !item_before(prog, p, a, b) && !item_before(prog, p, b, a);
}

/* Value u (a managed root) is read at pos and, with a DAG, every other read of it happens before
 * pos; without one, pos is its last read. */
static bool dies_at(const frt_program *prog, int32_t u, int32_t pos) {
    const frt_dag *d = DAG(prog);
    if (!d) return prog->last_pos[u] == pos;
    bool read = false;
    for (int32_t k = d->rd_off[u]; k < d->rd_off[u + 1]; k++) {
        if (d->rd[k] == pos) read = true;
        else if (!frt_dag_before(d, d->rd[k], pos)) return false;
    }
    return read;
}

/* A Concat along the channels (axis 1) of channel-blocked values whose every input has the
 * output's layout and a channel count that is a multiple of the block. */
static bool whole_blocks(const frt_step *s, const frt_value *values, const frt_value *ov,
                         int32_t axis) {
    if (axis != 1 || ov->layout->block <= 0) return false;
    for (int j = 0; j < s->n_in; j++) {
        int32_t u = s->in[j];
        if (u < 0 || values[u].layout != ov->layout || values[u].rank < 2 ||
            values[u].dims[1] % ov->layout->block)
            return false;
    }
    return true;
}

/* Concats are visited last to first, so in DenseNet-style blocks the final (largest) Concat owns
 * the storage and each earlier Concat of a prefix of the same inputs becomes a view of that
 * prefix (case B below); no copy is left in the block. */
static void concat_in_place(const frt_program *prog, const frt_value *values, frt_plan *p) {
    for (size_t pos = prog->n_compute; pos-- > 0;) {
        int32_t axis = prog->concat_axis[pos];
        if (axis < 0) continue;
        const frt_step *s = &prog->steps[prog->compute[pos]];
        int32_t o = s->out[0];
        if (o < 0 || prog->vclass[o] != FRT_VC_MANAGED || p->parent[o] >= 0 || s->n_in < 1) continue;
        const frt_value *ov = &values[o];
        if (axis >= ov->rank) continue;
        /* slices are contiguous in plain, and in a channel-blocked layout along channels when
           every input holds whole blocks (no padding) */
        if (ov->layout && !whole_blocks(s, values, ov, axis)) continue;
        int64_t outer = 1;
        for (int d = 0; d < axis; d++) outer *= ov->dims[d];
        if (outer != 1) continue; /* slices would not be contiguous */
        bool ok = true;
        int n_placed = 0;
        for (int j = 0; j < s->n_in && ok; j++) {
            int32_t u = s->in[j];
            if (u < 0 || prog->vclass[u] != FRT_VC_MANAGED || prog->root[u] != u ||
                prog->def_pos[u] >= (int32_t)pos || values[u].layout != ov->layout)
                ok = false;
            for (int k = 0; k < j && ok; k++)
                if (s->in[k] == u) ok = false;
            if (ok && p->parent[u] >= 0) n_placed++;
        }
        if (!ok) continue;
        if (n_placed == 0) {
            /* case A: the inputs become consecutive slices of this Concat's output */
            size_t off = 0;
            for (int j = 0; j < s->n_in; j++) {
                int32_t u = s->in[j];
                p->parent[u] = o;
                p->rel[u] = off;
                p->kind[u] = K_SLICE;
                off += frt_value_nbytes(&values[u]);
            }
        } else if (n_placed == s->n_in) {
            /* case B: the inputs already lie back to back in one later Concat's output: this
               output is that range */
            int32_t par = p->parent[s->in[0]];
            size_t start = p->rel[s->in[0]], off = start;
            for (int j = 0; j < s->n_in && ok; j++) {
                int32_t u = s->in[j];
                if (p->parent[u] != par || p->rel[u] != off || p->kind[u] != K_SLICE) ok = false;
                off += frt_value_nbytes(&values[u]);
            }
            if (!ok) continue;
            p->parent[o] = par;
            p->rel[o] = start;
            p->kind[o] = K_SLICE;
        } else {
            continue;
        }
        p->skip[pos] = 1;
        p->num_concat_removed++;
    }
}

static void in_place(const frt_program *prog, const frt_value *values, frt_plan *p) {
    for (size_t pos = 0; pos < prog->n_compute; pos++) {
        if (p->skip[pos]) continue;
        const frt_step *s = &prog->steps[prog->compute[pos]];
        int32_t ii = s->k.inplace_in;
        if (!(s->k.flags & FRT_K_INPLACE) || ii < 0 || ii >= s->n_in || s->n_out < 1) continue;
        int32_t u = s->in[ii], v = s->out[0];
        if (u < 0 || v < 0 || prog->vclass[v] != FRT_VC_MANAGED || p->parent[v] >= 0) continue;
        if (prog->vclass[u] != FRT_VC_MANAGED || prog->root[u] != u) continue;
        if (!dies_at(prog, u, (int32_t)pos) || inside_slice(p, u)) continue;
        if (frt_value_nbytes(&values[u]) != frt_value_nbytes(&values[v]) ||
            values[u].layout != values[v].layout)
            continue;
        bool shared = false; /* another input reading the same memory (through a view) */
        for (int j = 0; j < s->n_in; j++) {
            if (j == ii || s->in[j] < 0 || prog->root[s->in[j]] != u) continue;
            if (ii == 0 && s->in[j] == u) continue; /* elementwise: the same element, read twice */
            shared = true;
        }
        if (shared) continue;
        p->parent[v] = u;
        p->rel[v] = 0;
        p->kind[v] = K_ALIAS;
        p->num_inplace++;
    }
}

/* Shell sort: qsort may allocate, and re-planning must not touch the heap. */
static void sort_items(frt_plan_item *it, size_t n, int (*cmp)(const void *, const void *)) {
    static const size_t gaps[] = {701, 301, 132, 57, 23, 10, 4, 1};
    for (size_t gi = 0; gi < sizeof gaps / sizeof gaps[0]; gi++) {
        size_t gap = gaps[gi];
        for (size_t i = gap; i < n; i++) {
            frt_plan_item t = it[i];
            size_t j = i;
            while (j >= gap && cmp(&it[j - gap], &t) > 0) {
                it[j] = it[j - gap];
                j -= gap;
            }
            it[j] = t;
        }
    }
}

static int by_first(const void *a, const void *b) {
    const frt_plan_item *x = a, *y = b;
    if (x->first != y->first) return x->first < y->first ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* Group choice shared by both group planners: among free groups, g beats the current best
 * (size bs) when it fits t and best does not or is larger, or when neither fits and g is larger
 * (it grows less). */
static bool group_better(size_t gs, size_t bs, size_t need) {
    bool fit_b = bs >= need, fit_g = gs >= need;
    return (fit_g && (!fit_b || gs < bs)) || (!fit_g && !fit_b && gs > bs);
}

/* Puts t in group best (-1: a new group), growing the group to t's size; returns the group. */
static int32_t group_take(frt_plan *p, size_t *n_groups, int32_t best, const frt_plan_item *t) {
    if (best < 0) {
        best = (int32_t)(*n_groups)++;
        p->groups[best].size = t->size;
    } else {
        if (t->id >= 0) p->num_reused++;
        if (p->groups[best].size < t->size) p->groups[best].size = t->size;
    }
    return best;
}

/* Lays the groups out one after another and gives each item its group's offset. */
static void group_offsets(frt_plan *p, size_t n_groups, size_t n) {
    size_t total = 0;
    for (size_t g = 0; g < n_groups; g++) {
        size_t sz = p->groups[g].size;
        p->groups[g].size = total; /* reuse as the group's offset */
        total += sz;
    }
    for (size_t i = 0; i < n; i++) p->items[i].off = p->groups[p->items[i].group].size;
    p->slab_bytes = total;
}

/* Storage groups over the DAG: items in order of their first write; a group is free for item t
 * when every use of the item placed last in it happens before every write of t (by induction,
 * then so do the uses of all its earlier items). */
static void plan_groups_dag(const frt_program *prog, frt_plan *p, size_t n, bool reuse) {
    frt_plan_item *it = p->items;
    sort_items(it, n, by_first);
    size_t n_groups = 0;
    for (size_t i = 0; i < n; i++) {
        frt_plan_item *t = &it[i];
        int32_t best = -1;
        for (size_t g = 0; reuse && g < n_groups; g++) {
            if (!item_before(prog, p, &it[p->groups[g].last], t)) continue;
            if (best < 0) {
                best = (int32_t)g;
                continue;
            }
            if (group_better(p->groups[g].size, p->groups[best].size, t->size)) best = (int32_t)g;
        }
        best = group_take(p, &n_groups, best, t);
        p->groups[best].last = (int32_t)i;
        t->group = best;
    }
    group_offsets(p, n_groups, n);
}

static void plan_groups(frt_plan *p, size_t n, size_t n_compute, bool reuse) {
    frt_plan_item *it = p->items;
    sort_items(it, n, by_first);
    for (size_t q = 0; q <= n_compute; q++) p->end_head[q] = -1;
    for (size_t i = 0; i < n; i++) {
        p->end_next[i] = p->end_head[it[i].last];
        p->end_head[it[i].last] = (int32_t)i;
    }
    size_t n_groups = 0, next = 0;
    for (int32_t pos = 0; pos < (int32_t)n_compute; pos++) {
        for (; next < n && it[next].first == pos; next++) {
            frt_plan_item *t = &it[next];
            int32_t best = -1;
            for (size_t g = 0; reuse && g < n_groups; g++) {
                if (p->groups[g].busy) continue;
                if (best < 0) {
                    best = (int32_t)g;
                    continue;
                }
                if (group_better(p->groups[g].size, p->groups[best].size, t->size))
                    best = (int32_t)g;
            }
            best = group_take(p, &n_groups, best, t);
            p->groups[best].busy = true;
            t->group = best;
        }
        for (int32_t i = p->end_head[pos]; i >= 0; i = p->end_next[i]) p->groups[it[i].group].busy = false;
    }
    group_offsets(p, n_groups, n);
}

static int by_size_desc(const void *a, const void *b) {
    const frt_plan_item *x = a, *y = b;
    if (x->size != y->size) return x->size > y->size ? -1 : 1;
    if (x->first != y->first) return x->first < y->first ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* Greedy by size. order[] holds indices of placed items sorted by offset. */
static void plan_greedy(const frt_program *prog, frt_plan *p, size_t n) {
    frt_plan_item *it = p->items;
    sort_items(it, n, by_size_desc);
    size_t n_placed = 0, total = 0;
    for (size_t i = 0; i < n; i++) {
        frt_plan_item *t = &it[i];
        size_t prev_end = 0, best_off = SIZE_MAX, best_gap = SIZE_MAX;
        for (size_t k = 0; k < n_placed; k++) {
            const frt_plan_item *q = &it[p->order[k]];
            if (!items_conflict(prog, p, q, t)) continue;
            if (q->off > prev_end) {
                size_t gap = q->off - prev_end;
                if (gap >= t->size && gap < best_gap) {
                    best_gap = gap;
                    best_off = prev_end;
                }
            }
            if (q->off + q->size > prev_end) prev_end = q->off + q->size;
        }
        t->off = best_off != SIZE_MAX ? best_off : prev_end;
        if (t->off + t->size > total) total = t->off + t->size;
        for (size_t k = 0; t->id >= 0 && k < n_placed; k++) {
            const frt_plan_item *q = &it[p->order[k]];
            if (t->off < q->off + q->size && q->off < t->off + t->size) {
                p->num_reused++; /* shares bytes with a tensor whose lifetime is disjoint */
                break;
            }
        }
        size_t k = n_placed;
        while (k > 0 && it[p->order[k - 1]].off > t->off) {
            p->order[k] = p->order[k - 1];
            k--;
        }
        p->order[k] = (int32_t)i;
        n_placed++;
    }
    p->slab_bytes = total;
}

frt_status frt_plan_available(frt_planner which) {
#ifdef FRT_PLANNER_OFF_GREEDY
    if (which == FRT_PLANNER_GREEDY) {
        const char *sel = frt_selection_file();
        return frt_error(FRT_ERR_UNSUPPORTED,
                         "planner 'greedy' not in this build's selection (%s); trace with "
                         "--planner greedy to keep it", sel ? sel : "?");
    }
#endif
    (void)which;
    return FRT_OK;
}

frt_status frt_plan_compute(const frt_program *prog, const frt_value *values, frt_planner which,
                            frt_plan *p) {
    size_t nv = p->n_values, nc = prog->n_compute;
    p->num_reused = p->num_inplace = p->num_concat_removed = p->num_managed = 0;
    for (size_t v = 0; v < nv; v++) {
        p->parent[v] = -1;
        p->rel[v] = 0;
        p->kind[v] = K_ROOT;
        p->first[v] = INT32_MAX;
        p->last[v] = -1;
    }
    memset(p->skip, 0, nc);
    if (which != FRT_PLANNER_NONE) {
        if (prog->concat_axis) concat_in_place(prog, values, p);
        in_place(prog, values, p);
    }
    /* Lifetimes of storage roots cover all their members; naive and lower bound count members
       as separate tensors, as a planner without sharing would have to. */
    size_t naive = 0;
    for (size_t v = 0; v < nv; v++) {
        if (prog->vclass[v] != FRT_VC_MANAGED) continue;
        p->num_managed++;
        naive += align_up(frt_value_nbytes(&values[v]));
        int32_t r = storage_root(p, (int32_t)v, NULL);
        if (prog->def_pos[v] < p->first[r]) p->first[r] = prog->def_pos[v];
        if (prog->last_pos[v] > p->last[r]) p->last[r] = prog->last_pos[v];
    }
    size_t n = 0;
    for (size_t v = 0; v < nv; v++) {
        if (prog->vclass[v] != FRT_VC_MANAGED || p->parent[v] >= 0) continue;
        frt_plan_item *t = &p->items[n++];
        t->id = (int32_t)v;
        t->first = p->first[v];
        t->last = p->last[v];
        t->size = align_up(frt_value_nbytes(&values[v]));
        t->group = -1;
    }
    for (size_t pos = 0; pos < nc; pos++) {
        if (!p->scratch_bytes[pos] || p->skip[pos]) continue;
        frt_plan_item *t = &p->items[n++];
        t->id = -(int32_t)pos - 1;
        t->first = t->last = (int32_t)pos;
        t->size = align_up(p->scratch_bytes[pos]);
        t->group = -1;
        naive += t->size;
    }
    /* lower bound: the largest sum of bytes live at one step (members counted once each) */
    size_t lower = 0;
    for (size_t pos = 0; pos < nc; pos++) {
        size_t live = 0;
        for (size_t v = 0; v < nv; v++)
            if (prog->vclass[v] == FRT_VC_MANAGED && p->parent[v] < 0 &&
                p->first[v] <= (int32_t)pos && (int32_t)pos <= p->last[v])
                live += align_up(frt_value_nbytes(&values[v]));
        if (!p->skip[pos]) live += align_up(p->scratch_bytes[pos]);
        if (live > lower) lower = live;
    }
    if (DAG(prog)) { /* members of each storage root, for ordering items by the DAG */
        for (size_t v = 0; v < nv; v++) p->mhead[v] = -1;
        for (size_t v = nv; v-- > 0;) {
            if (prog->vclass[v] != FRT_VC_MANAGED) continue;
            int32_t r = storage_root(p, (int32_t)v, NULL);
            p->mnext[v] = p->mhead[r];
            p->mhead[r] = (int32_t)v;
        }
    }
    if (HAVE_GREEDY && which == FRT_PLANNER_GREEDY) {
        plan_greedy(prog, p, n);
    } else if (DAG(prog) && which == FRT_PLANNER_STANDARD) {
        /* over a DAG, storage groups fragment (branches that may run at once each grow their
           own group): keep the smaller of groups and greedy by size */
        plan_groups_dag(prog, p, n, true);
        size_t groups_bytes = p->slab_bytes;
        p->num_reused = 0;
        plan_greedy(prog, p, n);
        if (p->slab_bytes > groups_bytes) {
            p->num_reused = 0;
            plan_groups_dag(prog, p, n, true);
        }
    } else if (DAG(prog)) {
        plan_groups_dag(prog, p, n, false);
    } else {
        plan_groups(p, n, nc, which == FRT_PLANNER_STANDARD);
        if (HAVE_GREEDY && which == FRT_PLANNER_STANDARD) {
            /* the smaller of storage groups and greedy by size (ties keep the groups): a
               smaller slab is fewer distinct bytes per run for the caches (mobilenet_v2 8.4 ->
               6.0 MB, p50 -2% at 1 thread on Zen 3; resnet18 6.0 -> 4.0 MB) */
            size_t groups_bytes = p->slab_bytes;
            p->num_reused = 0;
            plan_greedy(prog, p, n);
            if (p->slab_bytes >= groups_bytes) {
                p->num_reused = 0;
                plan_groups(p, n, nc, true);
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        const frt_plan_item *t = &p->items[i];
        if (t->id >= 0) p->offset[t->id] = t->off;
        else p->scratch_off[-t->id - 1] = t->off;
    }
    for (size_t v = 0; v < nv; v++) {
        if (prog->vclass[v] != FRT_VC_MANAGED || p->parent[v] < 0) continue;
        size_t off;
        int32_t r = storage_root(p, (int32_t)v, &off);
        p->offset[v] = p->offset[r] + off;
    }
    size_t out_total = 0;
    for (size_t v = 0; v < nv; v++) {
        if (prog->vclass[v] != FRT_VC_OWNED) continue;
        p->offset[v] = out_total;
        out_total += align_up(frt_value_nbytes(&values[v]));
    }
    p->output_bytes = out_total;
    p->naive_bytes = naive;
    p->lower_bound_bytes = lower;
    p->n_items = n;
    return FRT_OK;
}

/* With a DAG: every read of a value made by a compute step is ordered after that step. */
static frt_status check_dag(const frt_program *prog, const frt_graph *g) {
    const frt_dag *d = DAG(prog);
    for (size_t q = 0; q < prog->n_compute; q++) {
        const frt_node *nd = prog->steps[prog->compute[q]].ir;
        int32_t nr = frt_node_n_reads(nd);
        for (int j = 0; j < nr; j++) {
            if (nd->in[j] < 0) continue;
            int32_t r = prog->root[nd->in[j]];
            int32_t dp = prog->def_pos[r];
            if ((prog->vclass[r] == FRT_VC_MANAGED || prog->vclass[r] == FRT_VC_OWNED) &&
                !frt_dag_before(d, dp, (int32_t)q))
                return frt_error(FRT_ERR_INTERNAL, "step graph: '%s' reads '%s' without "
                                 "depending on its producer", nd->name, g->values[r].name);
        }
    }
    return FRT_OK;
}

frt_status frt_plan_check(const frt_program *prog, const frt_graph *g, const frt_value *values,
                          const frt_plan *p) {
    const frt_plan_item *it = p->items;
    size_t n = p->n_items;
    if (DAG(prog)) {
        frt_status st = check_dag(prog, g);
        if (st) return st;
    }
    for (size_t i = 0; i < n; i++) {
        if (it[i].off + it[i].size > p->slab_bytes)
            return frt_error(FRT_ERR_INTERNAL, "memory plan: tensor %d lies outside the slab", it[i].id);
        for (size_t j = i + 1; j < n; j++) {
            if (!it[i].size || !it[j].size) continue;
            if (it[i].off < it[j].off + it[j].size && it[j].off < it[i].off + it[i].size &&
                items_conflict(prog, p, &it[i], &it[j])) {
                const char *a = it[i].id >= 0 ? g->values[it[i].id].name : "<scratch>";
                const char *b = it[j].id >= 0 ? g->values[it[j].id].name : "<scratch>";
                return frt_error(FRT_ERR_INTERNAL, "memory plan: live tensors '%s' and '%s' overlap",
                                 a, b);
            }
        }
    }
    /* members (slices, in-place outputs) lie inside their root's range; slices of one concat do
       not overlap each other */
    for (size_t v = 0; v < p->n_values; v++) {
        if (prog->vclass[v] != FRT_VC_MANAGED || p->parent[v] < 0) continue;
        size_t off;
        int32_t r = storage_root(p, (int32_t)v, &off);
        if (off + frt_value_nbytes(&values[v]) > frt_value_nbytes(&values[r]) + ALIGN)
            return frt_error(FRT_ERR_INTERNAL, "memory plan: '%s' exceeds its storage '%s'",
                             g->values[v].name, g->values[r].name);
        if (p->kind[v] == K_ALIAS && !dies_at(prog, p->parent[v], prog->def_pos[v]))
            return frt_error(FRT_ERR_INTERNAL, "memory plan: '%s' overwrites '%s' while it is live",
                             g->values[v].name, g->values[p->parent[v]].name);
    }
    return FRT_OK;
}
