/* External tensor data (TensorProto.data_location == EXTERNAL): files next to the model, mapped
 * read-only. Each distinct location is opened and mapped once per model; the mappings are
 * recorded in frt_onnx_model.maps and unmapped by frt_onnx_model_free().
 *
 * Location rules: relative, non-empty, no ".." component (with '/' or '\\' as separators). The
 * check is lexical: a symlink inside base_dir is followed (model hubs store data files as symlinks
 * into a blob directory).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "onnx/onnx.h"
#include "util/seltrace.h"
#include "util/error.h"

typedef struct ext_ctx {
    frt_onnx_model *m;
    const char *base_dir;
} ext_ctx;

/* Who the tensor belongs to, for messages. */
typedef struct ext_where {
    const frt_onnx_node *node; /* NULL for an initializer */
    const frt_onnx_attr *attr;
} ext_where;

static void describe(const frt_onnx_tensor *t, ext_where w, char *buf, size_t cap) {
    if (w.node)
        snprintf(buf, cap, "tensor '%s' in attribute '%s' of node '%s' (%s)", t->name,
                 w.attr ? w.attr->name : "", w.node->name, w.node->op_type);
    else
        snprintf(buf, cap, "initializer '%s'", t->name);
}

/* NULL if the location is acceptable, else why not. */
static const char *bad_location(const char *loc) {
    if (!loc || !*loc) return "empty location";
    if (loc[0] == '/' || loc[0] == '\\') return "absolute path";
    if (loc[0] && loc[1] == ':') return "absolute path (drive letter)";
    const char *p = loc;
    while (*p) {
        const char *q = p;
        while (*q && *q != '/' && *q != '\\') q++;
        if (q - p == 2 && p[0] == '.' && p[1] == '.') return "'..' escapes the model directory";
        p = *q ? q + 1 : q;
    }
    return NULL;
}

static frt_status get_map(ext_ctx *c, const char *loc, const char *who, struct frt_onnx_map **out) {
    frt_onnx_model *m = c->m;
    size_t bl = strlen(c->base_dir), ll = strlen(loc);
    char *path = malloc(bl + 1 + ll + 1);
    if (!path) return frt_error(FRT_ERR_NO_MEMORY, "out of memory mapping external data");
    if (bl == 0) {
        memcpy(path, loc, ll + 1);
    } else {
        memcpy(path, c->base_dir, bl);
        size_t o = bl;
        if (path[o - 1] != '/') path[o++] = '/';
        memcpy(path + o, loc, ll + 1);
    }
    for (size_t i = 0; i < m->n_maps; i++)
        if (strcmp(m->maps[i].path, path) == 0) {
            free(path);
            *out = &m->maps[i];
            return FRT_OK;
        }
    struct frt_onnx_map *nm = realloc(m->maps, (m->n_maps + 1) * sizeof *nm);
    if (!nm) {
        free(path);
        return frt_error(FRT_ERR_NO_MEMORY, "out of memory mapping external data");
    }
    m->maps = nm;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        frt_status st = frt_error(FRT_ERR_IO, "external data of %s: cannot open '%s': %s", who,
                                  path, strerror(errno));
        free(path);
        return st;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        frt_status st = frt_error(FRT_ERR_IO, "external data of %s: '%s' is not a regular file",
                                  who, path);
        free(path);
        return st;
    }
    void *addr = NULL;
    size_t len = (size_t)sb.st_size;
    if (len > 0) {
        addr = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (addr == MAP_FAILED) {
            int e = errno;
            close(fd);
            frt_status st = frt_error(FRT_ERR_IO, "external data of %s: cannot map '%s': %s", who,
                                      path, strerror(e));
            free(path);
            return st;
        }
    }
    close(fd);
    nm[m->n_maps] = (struct frt_onnx_map){addr, len, path};
    *out = &nm[m->n_maps++];
    return FRT_OK;
}

static frt_status map_tensor(ext_ctx *c, frt_onnx_tensor *t, ext_where w) {
    if (!t->external || t->data) return FRT_OK;
    if (FRT_SELTRACE_ON) frt_seltrace_feature("external_data");
    char who[512];
    describe(t, w, who, sizeof who);
    if (!c->base_dir)
        return frt_error(FRT_ERR_INVALID_ARGUMENT,
                         "%s uses external data ('%s') but no base directory was given", who,
                         t->ext_location ? t->ext_location : "");
    const char *why = bad_location(t->ext_location);
    if (why)
        return frt_error(FRT_ERR_MALFORMED, "malformed ONNX: external data location '%s' of %s: %s",
                         t->ext_location ? t->ext_location : "", who, why);
    if (t->ext_offset < 0)
        return frt_error(FRT_ERR_MALFORMED, "malformed ONNX: negative external data offset of %s",
                         who);
    if (t->ext_length >= 0 && (uint64_t)t->ext_length != (uint64_t)t->nbytes)
        return frt_error(FRT_ERR_MALFORMED,
                         "malformed ONNX: external data length %" PRId64
                         " of %s does not match its size %zu bytes",
                         t->ext_length, who, t->nbytes);
    struct frt_onnx_map *map = NULL;
    frt_status st = get_map(c, t->ext_location, who, &map);
    if (st) return st;
    uint64_t off = (uint64_t)t->ext_offset;
    if (off > map->len || t->nbytes > map->len - off)
        return frt_error(FRT_ERR_MALFORMED,
                         "malformed ONNX: external data of %s (offset %" PRIu64
                         ", %zu bytes) lies outside '%s' (%zu bytes)",
                         who, off, t->nbytes, map->path, map->len);
    if (t->nbytes == 0) return FRT_OK;
    const uint8_t *p = (const uint8_t *)map->addr + off;
    size_t esize = frt_dtype_size((frt_dtype)t->dtype);
    if (esize && (uintptr_t)p % esize == 0) {
        t->data = p;
        t->in_place = true;
    } else {
        void *copy = frt_arena_alloc(&c->m->arena, t->nbytes, 64);
        if (!copy)
            return frt_error(FRT_ERR_NO_MEMORY, "out of memory copying external data of %s", who);
        memcpy(copy, p, t->nbytes);
        t->data = copy;
        t->in_place = false;
    }
    return FRT_OK;
}

static frt_status walk_graph(ext_ctx *c, frt_onnx_graph *g) {
    frt_status st;
    for (size_t i = 0; i < g->n_initializers; i++)
        if ((st = map_tensor(c, &g->initializers[i], (ext_where){NULL, NULL}))) return st;
    for (size_t i = 0; i < g->n_nodes; i++) {
        frt_onnx_node *n = &g->nodes[i];
        for (size_t j = 0; j < n->n_attrs; j++) {
            frt_onnx_attr *a = &n->attrs[j];
            ext_where w = {n, a};
            switch (a->type) {
            case FRT_ATTR_TENSOR:
                if (a->t && (st = map_tensor(c, a->t, w))) return st;
                break;
            case FRT_ATTR_TENSORS:
                for (size_t k = 0; k < a->n; k++)
                    if ((st = map_tensor(c, &a->tensors[k], w))) return st;
                break;
            case FRT_ATTR_GRAPH:
                if (a->g && (st = walk_graph(c, a->g))) return st;
                break;
            case FRT_ATTR_GRAPHS:
                for (size_t k = 0; k < a->n; k++)
                    if ((st = walk_graph(c, &a->graphs[k]))) return st;
                break;
            default: break;
            }
        }
    }
    return FRT_OK;
}

frt_status frt_onnx_map_external(frt_onnx_model *m, const char *base_dir) {
    if (!m) return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_onnx_map_external: model is NULL");
    if (!m->graph) return FRT_OK;
    ext_ctx c = {m, base_dir};
    return walk_graph(&c, m->graph);
}
