#include "plan_svg.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static void xml_text(FILE *f, const char *s) {
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

static const char *fill_for(frt_plan_kind k, size_t i) {
    static const char *tensor[] = {"#4e79a7", "#6a9fd4", "#3b5f8a", "#86b0e0", "#2f4b6e", "#5b8cc4"};
    switch (k) {
    case FRT_PLAN_SLICE: return i % 2 ? "#59a14f" : "#8cd17d";
    case FRT_PLAN_INPLACE: return i % 2 ? "#f28e2b" : "#ffbe7d";
    case FRT_PLAN_SCRATCH: return "#bab0ac";
    default: return tensor[i % 6];
    }
}

static void human(char *b, size_t cap, double bytes) {
    if (bytes >= 1 << 20) snprintf(b, cap, "%.2f MiB", bytes / (1 << 20));
    else if (bytes >= 1 << 10) snprintf(b, cap, "%.1f KiB", bytes / (1 << 10));
    else snprintf(b, cap, "%.0f B", bytes);
}

int plan_svg_count(const frt_runtime *rt, plan_svg_counts *c) {
    memset(c, 0, sizeof *c);
    size_t n = frt_runtime_plan_size(rt);
    for (size_t i = 0; i < n; i++) {
        frt_plan_entry e;
        if (frt_runtime_plan_entry(rt, i, &e) != FRT_OK) return -1;
        c->total++;
        switch (e.kind) {
        case FRT_PLAN_SLICE: c->slices++; break;
        case FRT_PLAN_INPLACE: c->inplace++; break;
        case FRT_PLAN_SCRATCH: c->scratch++; break;
        default: c->tensors++;
        }
    }
    return 0;
}

void plan_svg_counts_str(const plan_svg_counts *c, char *buf, size_t len) {
    snprintf(buf, len, "%zu rectangles: %zu tensors, %zu in place, %zu concat slices, %zu scratch",
             c->total, c->tensors, c->inplace, c->slices, c->scratch);
}

/* Writes at most `fit` characters of name: whole when it fits, else its head, U+2026 and its
 * tail (UTF-8 sequences are not split). */
static void label_text(FILE *f, const char *name, size_t fit) {
    size_t len = strlen(name);
    if (len <= fit) {
        xml_text(f, name);
        return;
    }
    size_t head = (fit - 1) / 2, tail = fit - 1 - head;
    while (head > 0 && ((unsigned char)name[head] & 0xC0) == 0x80) head--;
    size_t from = len - tail;
    while (from < len && ((unsigned char)name[from] & 0xC0) == 0x80) from++;
    char buf[512];
    size_t h = head < sizeof buf - 1 ? head : sizeof buf - 1;
    memcpy(buf, name, h);
    buf[h] = 0;
    xml_text(f, buf);
    fputs("\xe2\x80\xa6", f); /* U+2026 horizontal ellipsis */
    xml_text(f, name + from);
}

int plan_svg_write(FILE *f, const frt_runtime *rt, const char *title) {
    frt_plan_stats ps;
    if (frt_runtime_plan_stats(rt, &ps) != FRT_OK) return -1;
    plan_svg_counts pc;
    if (plan_svg_count(rt, &pc) != 0) return -1;
    char counts[256];
    plan_svg_counts_str(&pc, counts, sizeof counts);
    size_t n = frt_runtime_plan_size(rt);
    size_t steps = frt_runtime_num_steps(rt);
    if (steps == 0) steps = 1;
    const double W = 1200, H = 720, L = 80, T = 70, R = 20, B = 50;
    double pw = W - L - R, ph = H - T - B;
    double slab = ps.arena_bytes ? (double)ps.arena_bytes : 1;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
               "font-family=\"sans-serif\" font-size=\"10\">\n", W, H);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    char a[32], lb[32], nv[32];
    human(a, sizeof a, (double)ps.arena_bytes);
    human(lb, sizeof lb, (double)ps.lower_bound_bytes);
    human(nv, sizeof nv, (double)ps.naive_bytes);
    fprintf(f, "<text x=\"%.0f\" y=\"22\" font-size=\"15\" font-weight=\"bold\">", L);
    xml_text(f, title);
    fprintf(f, "</text>\n<text x=\"%.0f\" y=\"42\" font-size=\"12\">slab %s, lower bound %s (x%.3f), "
               "naive %s (x%.2f)</text>\n",
            L, a, lb, ps.lower_bound_bytes ? (double)ps.arena_bytes / (double)ps.lower_bound_bytes : 0.0,
            nv, ps.naive_bytes ? (double)ps.naive_bytes / slab : 0.0);
    fprintf(f, "<text x=\"%.0f\" y=\"58\" font-size=\"12\" class=\"counts\">%s; blue: tensor, "
               "green: concat slice, orange: in place, grey: scratch</text>\n", L, counts);
    /* axes */
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#f7f7f7\" stroke=\"#999\"/>\n",
            L, T, pw, ph);
    for (int t = 0; t <= 4; t++) {
        double y = T + ph * t / 4.0;
        char b[32];
        human(b, sizeof b, slab * t / 4.0);
        fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", L - 4, y + 3, b);
        fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", L, L + pw, y, y);
    }
    for (int t = 0; t <= 10; t++) {
        double x = L + pw * t / 10.0;
        fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%zu</text>\n", x, T + ph + 14,
                (size_t)((double)steps * t / 10.0));
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\" font-size=\"12\">step (execution order)</text>\n",
            L + pw / 2, H - 12);
    fprintf(f, "<text x=\"16\" y=\"%.1f\" font-size=\"12\" transform=\"rotate(-90 16 %.1f)\" "
               "text-anchor=\"middle\">offset in slab</text>\n", T + ph / 2, T + ph / 2);
    for (size_t i = 0; i < n; i++) {
        frt_plan_entry e;
        if (frt_runtime_plan_entry(rt, i, &e) != FRT_OK) return -1;
        double x = L + pw * e.first / (double)steps;
        double w = pw * (e.last - e.first + 1) / (double)steps;
        double y = T + ph * (double)e.offset / slab;
        double h = ph * (double)e.bytes / slab;
        if (h < 0.5) h = 0.5;
        char sz[32];
        human(sz, sizeof sz, (double)e.bytes);
        fprintf(f, "<rect class=\"entry\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
                   "fill=\"%s\" stroke=\"white\" stroke-width=\"0.4\"><title>",
                x, y, w, h, fill_for(e.kind, i));
        xml_text(f, e.name);
        fprintf(f, " (%s) steps %d-%d, offset %zu</title></rect>\n", sz, e.first, e.last, e.offset);
        /* label: the whole name where it fits (about 5.2 px per character at 9 px), else its
         * head and tail around an ellipsis */
        size_t fit = (size_t)((w - 3) / 5.2);
        if (h >= 11 && fit >= 5) {
            fprintf(f, "<text class=\"label\" x=\"%.2f\" y=\"%.2f\" fill=\"white\" font-size=\"9\">",
                    x + 2, y + 9.5);
            label_text(f, e.name, fit);
            fprintf(f, "</text>\n");
        }
    }
    fprintf(f, "</svg>\n");
    return ferror(f) ? -1 : 0;
}
