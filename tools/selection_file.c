/* Selection files for `cmake -DFRT_SELECT` (format: docs/selective.md), read and written by
 * `flatrt trace` (cmd_trace.c).
 *
 * A selection is held as a set of tab-separated records, the strings the library's recorder
 * produces (frt_selection_at: "op\tai.onnx\tConv\t13", "variant\tconv_gemm\tavx512", ...) plus
 * "model\t<path>", "feature\t<name>" and "isa\t<tier>". Writing sorts the set and groups it into
 * the YAML layout; reading parses exactly that layout back into records, so merging files is a set
 * union and tracing two models equals merging their two traces byte for byte. */
#include "selection_file.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* ---- the record set of a selection ---------------------------------------------------------- */

int sel_add(sel_set *r, const char *s) {
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->s[i], s)) return 0;
    if (r->n == r->cap) {
        size_t c = r->cap ? 2 * r->cap : 64;
        char **p = realloc(r->s, c * sizeof *p);
        if (!p) return fail("out of memory");
        r->s = p;
        r->cap = c;
    }
    if (!(r->s[r->n] = strdup(s))) return fail("out of memory");
    r->n++;
    return 0;
}

int sel_addf(sel_set *r, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof buf) return fail("selection record too long");
    return sel_add(r, buf);
}

void sel_free(sel_set *r) {
    for (size_t i = 0; i < r->n; i++) free(r->s[i]);
    free(r->s);
    memset(r, 0, sizeof *r);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Splits a record into at most max tab-separated fields (in place in buf). */
static int fields(const char *rec, char *buf, size_t cap, char **f, int max) {
    snprintf(buf, cap, "%s", rec);
    int n = 0;
    char *p = buf;
    while (n < max) {
        f[n++] = p;
        char *t = strchr(p, '\t');
        if (!t) break;
        *t = 0;
        p = t + 1;
    }
    return n;
}

/* ---- writing ---------------------------------------------------------------------------------- */

/* Writes the values of records "<kind>\t<key...>\t<value...>" whose first nkey fields after
 * kind equal key[] as a flow list, value fields joined by ':'; quoted: in double quotes. */
static void put_list(FILE *f, const sel_set *r, const char *kind, const char *const *key, int nkey,
                     int quoted) {
    fputc('[', f);
    int first = 1;
    for (size_t i = 0; i < r->n; i++) {
        char buf[1024], *fl[8];
        int n = fields(r->s[i], buf, sizeof buf, fl, 8);
        if (n < nkey + 2 || strcmp(fl[0], kind)) continue;
        int match = 1;
        for (int k = 0; k < nkey && match; k++) match = !strcmp(fl[1 + k], key[k]);
        if (!match) continue;
        fputs(first ? "" : ", ", f);
        if (quoted) fputc('"', f);
        for (int k = nkey + 1; k < n; k++) fprintf(f, "%s%s", k > nkey + 1 ? ":" : "", fl[k]);
        if (quoted) fputc('"', f);
        first = 0;
    }
    fputc(']', f);
}

int sel_write(const char *path, sel_set *r) {
    qsort(r->s, r->n, sizeof *r->s, cmp_str);
    FILE *f = fopen(path, "w");
    if (!f) return fail("cannot write '%s': %s", path, strerror(errno));
    fprintf(f, "# flatrt selection (docs/selective.md): what `flatrt trace` saw models use.\n"
               "# Build a runtime with only this: cmake -DFRT_SELECT=<this file>\n"
               "flatrt_selection: %d\n", SEL_VERSION);
    fputs("models:\n", f);
    for (size_t i = 0; i < r->n; i++)
        if (!strncmp(r->s[i], "model\t", 6)) fprintf(f, "  - \"%s\"\n", r->s[i] + 6);
    fputs("isa: ", f);
    put_list(f, r, "isa", NULL, 0, 0);
    fputs("\nproviders: ", f);
    put_list(f, r, "provider", NULL, 0, 0);
    fputs("\nfeatures: ", f);
    put_list(f, r, "feature", NULL, 0, 0);
    fputs("\nvariants:\n", f);
    for (size_t i = 0; i < r->n; i++) {
        char buf[1024], *fl[4];
        if (fields(r->s[i], buf, sizeof buf, fl, 4) != 3 || strcmp(fl[0], "variant")) continue;
        if (i > 0 && !strncmp(r->s[i - 1], r->s[i], (size_t)(fl[2] - buf))) continue; /* same fam */
        const char *key[1] = {fl[1]};
        fprintf(f, "  %s: ", fl[1]);
        put_list(f, r, "variant", key, 1, 0);
        fputc('\n', f);
    }
    fputs("operators:\n", f);
    for (size_t i = 0; i < r->n; i++) {
        char buf[1024], *fl[4];
        if (fields(r->s[i], buf, sizeof buf, fl, 4) != 4 || strcmp(fl[0], "op")) continue;
        /* one line per (domain, op): records of one op are adjacent after the sort */
        char prev[1024], *pf[4];
        if (i > 0 && fields(r->s[i - 1], prev, sizeof prev, pf, 4) == 4 && !strcmp(pf[0], "op") &&
            !strcmp(pf[1], fl[1]) && !strcmp(pf[2], fl[2]))
            continue;
        const char *key[2] = {fl[1], fl[2]};
        fprintf(f, "  - {domain: %s, op: %s, opsets: ", fl[1], fl[2]);
        put_list(f, r, "op", key, 2, 0);
        fputs(", dtypes: ", f);
        put_list(f, r, "dtype", key, 2, 0);
        fputs(", kernels: ", f);
        put_list(f, r, "kernel", key, 2, 1);
        fputs("}\n", f);
    }
    if (fclose(f)) return fail("cannot write '%s': %s", path, strerror(errno));
    return 0;
}

/* ---- reading (the layout write_yaml produces) ------------------------------------------------ */

static char *trim(char *s) {
    while (*s == ' ' || *s == '\t') s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
        s[--n] = 0;
    return s;
}

static char *unquote(char *s) {
    size_t n = strlen(s);
    if (n >= 2 && s[0] == '"' && s[n - 1] == '"') {
        s[n - 1] = 0;
        return s + 1;
    }
    return s;
}

/* Items of a flow list "[a, b, "c"]" (in place); -1 when s is not one. */
static int flow_items(char *s, char **items, int max) {
    s = trim(s);
    size_t n = strlen(s);
    if (n < 2 || s[0] != '[' || s[n - 1] != ']') return -1;
    s[n - 1] = 0;
    s++;
    int k = 0;
    char *p = s;
    while (*trim(p)) {
        if (k == max) return -1;
        char *c = p;
        int q = 0;
        while (*c && (q || *c != ',')) {
            if (*c == '"') q = !q;
            c++;
        }
        int last = !*c;
        *c = 0;
        items[k++] = unquote(trim(p));
        if (last) break;
        p = c + 1;
    }
    return k;
}

/* The value of key in a flow map "{domain: a, op: B, opsets: [1], ...}" (in place, top level). */
static char *map_get(char *map, const char *key, char *out, size_t cap) {
    size_t kl = strlen(key);
    int depth = 0, q = 0;
    for (char *p = map; *p; p++) {
        if (*p == '"') q = !q;
        if (q) continue;
        if (*p == '[') depth++;
        if (*p == ']') depth--;
        if (depth == 0 && (p[-1] == '{' || p[-1] == ' ') && !strncmp(p, key, kl) && p[kl] == ':') {
            char *v = p + kl + 1, *e = v;
            int d = 0, qq = 0;
            while (*e && (qq || d || (*e != ',' && *e != '}'))) {
                if (*e == '"') qq = !qq;
                else if (!qq && *e == '[') d++;
                else if (!qq && *e == ']') d--;
                e++;
            }
            snprintf(out, cap, "%.*s", (int)(e - v), v);
            return trim(out);
        }
    }
    return NULL;
}

int sel_read(const char *path, sel_set *r) {
    FILE *f = fopen(path, "r");
    if (!f) return fail("cannot read '%s': %s", path, strerror(errno));
    char line[8192], *items[512];
    char section[32] = "";
    int lineno = 0, version = 0, rc = 0;
#define BAD(what) do { rc = fail("%s:%d: %s", path, lineno, what); goto out; } while (0)
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) BAD("line too long");
        char *s = trim(line);
        if (!*s || *s == '#') continue;
        int indented = line[0] == ' ';
        if (!indented) {
            char *colon = strchr(s, ':');
            if (!colon) BAD("expected 'key: value'");
            *colon = 0;
            char *val = trim(colon + 1);
            snprintf(section, sizeof section, "%s", s);
            if (!strcmp(s, "flatrt_selection")) {
                version = atoi(val);
                if (version != SEL_VERSION) BAD("unsupported flatrt_selection version");
            } else if (!strcmp(s, "isa") || !strcmp(s, "providers") || !strcmp(s, "features")) {
                int n = flow_items(val, items, 512);
                if (n < 0) BAD("expected a list [a, b, ...]");
                const char *kind = !strcmp(s, "isa") ? "isa" : !strcmp(s, "providers") ? "provider"
                                                                                        : "feature";
                for (int i = 0; i < n; i++)
                    if ((rc = sel_addf(r, "%s\t%s", kind, items[i]))) goto out;
            } else if (strcmp(s, "models") && strcmp(s, "variants") && strcmp(s, "operators")) {
                BAD("unknown key");
            } else if (*val) {
                BAD("expected the entries on the following lines");
            }
            continue;
        }
        if (!version) BAD("the file must start with 'flatrt_selection: 1'");
        if (!strcmp(section, "models")) {
            if (s[0] != '-') BAD("expected '- \"model path\"'");
            if ((rc = sel_addf(r, "model\t%s", unquote(trim(s + 1))))) goto out;
        } else if (!strcmp(section, "variants")) {
            char *colon = strchr(s, ':');
            if (!colon) BAD("expected 'family: [tiers]'");
            *colon = 0;
            int n = flow_items(colon + 1, items, 512);
            if (n < 0) BAD("expected 'family: [tiers]'");
            for (int i = 0; i < n; i++)
                if ((rc = sel_addf(r, "variant\t%s\t%s", trim(s), items[i]))) goto out;
        } else if (!strcmp(section, "operators")) {
            if (s[0] != '-') BAD("expected '- {domain: ..., op: ..., ...}'");
            char *m = trim(s + 1);
            size_t ml = strlen(m);
            if (ml < 2 || m[0] != '{' || m[ml - 1] != '}') BAD("expected '- {domain: ..., op: ...}'");
            char dom[256], op[256], tmp[8192];
            char *d = map_get(m, "domain", dom, sizeof dom), *o = map_get(m, "op", op, sizeof op);
            if (!d || !o || !*d || !*o) BAD("operator without domain or op");
            static const char *const keys[3] = {"opsets", "dtypes", "kernels"};
            static const char *const kinds[3] = {"op", "dtype", "kernel"};
            for (int k = 0; k < 3; k++) {
                char *v = map_get(m, keys[k], tmp, sizeof tmp);
                if (!v) continue;
                int n = flow_items(v, items, 512);
                if (n < 0) BAD("expected a list [a, b, ...]");
                for (int i = 0; i < n; i++) {
                    if (k == 2) { /* "provider:name" */
                        char *c = strchr(items[i], ':');
                        if (!c) BAD("kernel without 'provider:'");
                        *c = 0;
                        rc = sel_addf(r, "kernel\t%s\t%s\t%s\t%s", d, o, items[i], c + 1);
                    } else {
                        rc = sel_addf(r, "%s\t%s\t%s\t%s", kinds[k], d, o, items[i]);
                    }
                    if (rc) goto out;
                }
            }
        } else {
            BAD("unexpected indented line");
        }
    }
    if (!version) BAD("not a flatrt selection (no 'flatrt_selection: 1')");
#undef BAD
out:
    fclose(f);
    return rc;
}
