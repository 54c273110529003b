/* Per-step trace of a runtime's runs (frt_runtime_set_trace in flatrt.h) and its Chrome
 * trace-event JSON form. Records go into a buffer allocated when tracing is turned on; recording
 * a step never allocates. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "model.h"

static uint32_t thread_id(void) {
    static _Thread_local uint32_t tid;
    if (!tid) tid = (uint32_t)syscall(SYS_gettid);
    return tid;
}

void frt_trace_step(frt_runtime *rt, const frt_brt *b, const frt_step *s, uint64_t t0,
                    uint64_t t1) {
    frt_trace *t = &rt->trace;
    if (t->n >= t->cap) {
        t->dropped++;
        return;
    }
    frt_trace_rec *r = &t->ev[t->n++];
    r->s = s;
    r->block = b->id;
    int32_t depth = 0; /* nesting of the block: runs of a subgraph may overlap (inter-op) */
    for (int32_t k = b->b->parent; k >= 0; k = rt->m->blocks[k].parent) depth++;
    r->depth = depth;
    r->tid = thread_id();
    r->t0 = t0;
    r->dur = t1 - t0;
    r->in_bytes = r->out_bytes = 0;
    for (int32_t i = 0; i < s->n_in; i++)
        if (s->in[i] >= 0) r->in_bytes += frt_value_nbytes(&b->v[s->in[i]]);
    for (int32_t i = 0; i < s->n_out; i++)
        if (s->out[i] >= 0) r->out_bytes += frt_value_nbytes(&b->v[s->out[i]]);
    r->rank = -1;
    if (s->n_out > 0 && s->out[0] >= 0) {
        const frt_value *v = &b->v[s->out[0]];
        r->rank = v->rank < 0 ? -1 : v->rank > FRT_MAX_RANK ? FRT_MAX_RANK : v->rank;
        for (int32_t d = 0; d < r->rank; d++) r->dims[d] = v->dims[d];
    }
}

void frt_trace_free(frt_trace *t) {
    free(t->ev);
    memset(t, 0, sizeof *t);
}

frt_status frt_runtime_set_trace(frt_runtime *rt, size_t max_events) {
    if (!rt) return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_runtime_set_trace: rt is NULL");
    if (max_events > ((size_t)1 << 40) / sizeof(frt_trace_rec))
        return frt_error(FRT_ERR_INVALID_ARGUMENT,
                         "frt_runtime_set_trace: %zu events is more than a trace can hold",
                         max_events);
    frt_trace_free(&rt->trace);
    if (!max_events) return FRT_OK;
    rt->trace.ev = malloc(max_events * sizeof *rt->trace.ev);
    if (!rt->trace.ev)
        return frt_error(FRT_ERR_NO_MEMORY, "frt_runtime_set_trace: no memory for %zu events",
                         max_events);
    rt->trace.cap = max_events;
    return FRT_OK;
}

size_t frt_runtime_trace_size(const frt_runtime *rt, uint64_t *dropped) {
    if (dropped) *dropped = rt ? rt->trace.dropped : 0;
    return rt ? rt->trace.n : 0;
}

void frt_runtime_trace_clear(frt_runtime *rt) {
    if (!rt) return;
    rt->trace.n = 0;
    rt->trace.dropped = 0;
}

frt_status frt_runtime_trace_event(const frt_runtime *rt, size_t i, frt_trace_event *ev) {
    if (!rt || !ev) return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_runtime_trace_event: NULL argument");
    if (i >= rt->trace.n)
        return frt_error(FRT_ERR_INVALID_ARGUMENT,
                         "frt_runtime_trace_event: index %zu, the trace has %zu events", i,
                         rt->trace.n);
    const frt_trace_rec *r = &rt->trace.ev[i];
    memset(ev, 0, sizeof *ev);
    ev->node_name = r->s->ir->name;
    ev->op_type = r->s->ir->op_type;
    ev->kernel = r->s->k.name ? r->s->k.name : "";
    ev->block = r->block;
    ev->depth = r->depth;
    ev->thread_id = r->tid;
    ev->start_ns = r->t0;
    ev->dur_ns = r->dur;
    ev->rank = r->rank;
    for (int32_t d = 0; d < r->rank; d++) ev->shape[d] = r->dims[d];
    ev->in_bytes = r->in_bytes;
    ev->out_bytes = r->out_bytes;
    return FRT_OK;
}

/* s as the contents of a JSON string. */
static void json_str(FILE *f, const char *s) {
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
}

frt_status frt_runtime_write_trace(const frt_runtime *rt, const char *path) {
    if (!rt || !path)
        return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_runtime_write_trace: NULL argument");
    FILE *f = fopen(path, "w");
    if (!f)
        return frt_error(FRT_ERR_IO, "frt_runtime_write_trace: cannot open '%s': %s", path,
                         strerror(errno));
    const frt_trace *t = &rt->trace;
    uint64_t base = UINT64_MAX;
    for (size_t i = 0; i < t->n; i++)
        if (t->ev[i].t0 < base) base = t->ev[i].t0;
    long pid = (long)getpid();
    fprintf(f, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"flatrt %s\","
               "\"dropped_events\":%llu},\"traceEvents\":[\n",
            frt_version(), (unsigned long long)t->dropped);
    fprintf(f, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%ld,\"args\":{\"name\":\"flatrt\"}}",
            pid);
    /* one named track per thread (the first 64 threads seen get names) */
    uint32_t tids[64];
    size_t n_tids = 0;
    for (size_t i = 0; i < t->n && n_tids < 64; i++) {
        bool seen = false;
        for (size_t j = 0; j < n_tids && !seen; j++) seen = tids[j] == t->ev[i].tid;
        if (seen) continue;
        tids[n_tids++] = t->ev[i].tid;
        fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%ld,\"tid\":%u,"
                   "\"args\":{\"name\":\"runtime thread %u\"}}",
                pid, t->ev[i].tid, t->ev[i].tid);
    }
    for (size_t i = 0; i < t->n; i++) {
        const frt_trace_rec *r = &t->ev[i];
        fputs(",\n{\"ph\":\"X\",\"name\":\"", f);
        json_str(f, r->s->ir->name);
        fputs("\",\"cat\":\"", f);
        json_str(f, r->s->ir->op_type);
        fprintf(f, "\",\"pid\":%ld,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"op\":\"", pid,
                r->tid, (double)(r->t0 - base) / 1e3, (double)r->dur / 1e3);
        json_str(f, r->s->ir->op_type);
        fputs("\",\"kernel\":\"", f);
        json_str(f, r->s->k.name ? r->s->k.name : "");
        fprintf(f, "\",\"block\":%d,\"depth\":%d,\"shape\":\"[", (int)r->block, (int)r->depth);
        for (int32_t d = 0; d < r->rank; d++)
            fprintf(f, "%s%lld", d ? "," : "", (long long)r->dims[d]);
        fprintf(f, "]\",\"in_bytes\":%llu,\"out_bytes\":%llu}}", (unsigned long long)r->in_bytes,
                (unsigned long long)r->out_bytes);
    }
    fputs("\n]}\n", f);
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0) bad = true;
    if (bad)
        return frt_error(FRT_ERR_IO, "frt_runtime_write_trace: error writing '%s'", path);
    return FRT_OK;
}
