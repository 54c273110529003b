/* A convolution between two reorders inside one step (see relay.h). */
#include <string.h>

#include "ops/op.h"

#if FRT_HAVE_DNNL
#include "relay.h"

struct dn_relay {
    dnnl_primitive_t rin, rout;         /* x -> a, b -> y */
    dnnl_memory_desc_t x_md, a_md, b_md, y_md, sp_md;
    size_t sp_bytes, a_off, b_off, total;
    size_t x_img, y_img;                /* bytes of one image of X and Y */
    const dn_env *env;
};

bool frt_dn_is_ref(const_dnnl_primitive_desc_t pd) {
    const char *name = NULL;
    return dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &name) == dnnl_success &&
           name && !strncmp(name, "ref", 3);
}

static size_t up64(size_t n) { return (n + 63) & ~(size_t)63; }

static dnnl_status_t make_reorder(dnnl_primitive_t *p, const dnnl_memory_desc_t *from,
                                  const dnnl_memory_desc_t *to, dnnl_engine_t eng) {
    dnnl_primitive_desc_t pd = NULL;
    *p = NULL;
    dnnl_status_t s = dnnl_reorder_primitive_desc_create(&pd, from, eng, to, eng, NULL);
    if (s) return s;
    s = dnnl_primitive_create(p, pd);
    dnnl_primitive_desc_destroy(pd);
    if (s) *p = NULL;
    return s;
}

frt_status frt_dn_relay_make(frt_op_ctx *c, const dnnl_memory_desc_t *x_md,
                             const dnnl_memory_desc_t *y_md, const_dnnl_primitive_desc_t pd,
                             const dn_env *env, dn_relay **out) {
    *out = NULL;
    dn_relay *r = frt_arena_alloc(c->arena, sizeof *r, 64);
    if (!r) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory for kernel parameters");
    memset(r, 0, sizeof *r);
    r->env = env;
    r->x_md = *x_md;
    r->y_md = *y_md;
    r->a_md = *dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
    r->b_md = *dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    r->sp_md = *dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    r->sp_bytes = dnnl_memory_desc_get_size(&r->sp_md);
    r->x_img = dnnl_memory_desc_get_size(&r->x_md);
    r->y_img = dnnl_memory_desc_get_size(&r->y_md);
    r->a_off = up64(r->sp_bytes);
    r->b_off = r->a_off + up64(dnnl_memory_desc_get_size(&r->a_md));
    r->total = r->b_off + up64(dnnl_memory_desc_get_size(&r->b_md));
    dnnl_engine_t eng = env->engine();
    dnnl_status_t s = eng ? make_reorder(&r->rin, &r->x_md, &r->a_md, eng) : dnnl_runtime_error;
    if (!s) s = make_reorder(&r->rout, &r->b_md, &r->y_md, eng);
    if (s) {
        frt_dn_relay_free(r);
        return frt_op_fail(c, s == dnnl_out_of_memory ? FRT_ERR_NO_MEMORY : FRT_ERR_INTERNAL,
                           "onednn: making the relay reorders failed (status %d)", (int)s);
    }
    *out = r;
    return FRT_OK;
}

size_t frt_dn_relay_scratch(const dn_relay *r) { return r->total; }

frt_status frt_dn_relay_run(const frt_step *s, frt_exec *x, const dn_relay *r,
                            dnnl_primitive_t conv, dnnl_memory_t wmem, dnnl_memory_t bmem,
                            const frt_value *X, frt_value *Y) {
    const dn_env *e = r->env;
    frt_dn_thread *t = e->this_thread();
    if (!t) return frt_step_fail(s, FRT_ERR_NO_MEMORY, "onednn: no stream");
    e->set_threads(1);
    dnnl_stream_t st = e->thread_stream(t);
    dnnl_status_t ds = dnnl_success;
    dnnl_memory_t mx = e->thread_mem(t, &r->x_md, &ds), ma = NULL, mb = NULL, my = NULL, msp = NULL;
    if (!ds) ma = e->thread_mem(t, &r->a_md, &ds);
    if (!ds) mb = e->thread_mem(t, &r->b_md, &ds);
    if (!ds) my = e->thread_mem(t, &r->y_md, &ds);
    if (!ds && r->sp_bytes) msp = e->thread_mem(t, &r->sp_md, &ds);
    char *scratch = x->scratch;
    if (!ds) ds = dnnl_memory_set_data_handle(ma, scratch + r->a_off);
    if (!ds) ds = dnnl_memory_set_data_handle(mb, scratch + r->b_off);
    if (!ds && msp) ds = dnnl_memory_set_data_handle(msp, scratch);
    dnnl_exec_arg_t cargs[5] = {{DNNL_ARG_SRC, ma}, {DNNL_ARG_DST, mb}, {DNNL_ARG_WEIGHTS, wmem}};
    int nc = 3;
    if (bmem) cargs[nc++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, bmem};
    if (msp) cargs[nc++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, msp};
    dnnl_exec_arg_t iargs[2] = {{DNNL_ARG_FROM, mx}, {DNNL_ARG_TO, ma}};
    dnnl_exec_arg_t oargs[2] = {{DNNL_ARG_FROM, mb}, {DNNL_ARG_TO, my}};
    for (int64_t n = 0; n < X->dims[0] && !ds; n++) {
        ds = dnnl_memory_set_data_handle(mx, (char *)X->data + (size_t)n * r->x_img);
        if (!ds) ds = dnnl_memory_set_data_handle(my, (char *)Y->data + (size_t)n * r->y_img);
        if (!ds) ds = dnnl_primitive_execute(r->rin, st, 2, iargs);
        if (!ds) ds = dnnl_primitive_execute(conv, st, nc, cargs);
        if (!ds) ds = dnnl_primitive_execute(r->rout, st, 2, oargs);
    }
    if (!ds) ds = dnnl_stream_wait(st);
    if (ds)
        return frt_step_fail(s, ds == dnnl_out_of_memory ? FRT_ERR_NO_MEMORY : FRT_ERR_INTERNAL,
                             "onednn: execution failed (status %d)", (int)ds);
    return FRT_OK;
}

void frt_dn_relay_free(dn_relay *r) {
    if (!r) return;
    if (r->rin) dnnl_primitive_destroy(r->rin);
    if (r->rout) dnnl_primitive_destroy(r->rout);
    r->rin = r->rout = NULL;
}

#endif /* FRT_HAVE_DNNL */
