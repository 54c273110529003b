/* Draws a runtime's memory plan as SVG: time (compute steps) across, slab offset down, one
 * rectangle per tensor, labelled where it fits (every rectangle has a hover tooltip). */
#ifndef FRT_TOOLS_PLAN_SVG_H
#define FRT_TOOLS_PLAN_SVG_H

#include <stdio.h>

#include "flatrt.h"

/* What the picture draws: one rectangle per plan entry, by kind. */
typedef struct plan_svg_counts {
    size_t total, tensors, inplace, slices, scratch;
} plan_svg_counts;
int plan_svg_count(const frt_runtime *rt, plan_svg_counts *c);
/* "N rectangles: a tensors, b in place, c concat slices, d scratch" (the picture and the console
 * print this same text). */
void plan_svg_counts_str(const plan_svg_counts *c, char *buf, size_t len);

/* Writes the SVG for rt's current plan to f. title is printed at the top. Returns 0 or -1. */
int plan_svg_write(FILE *f, const frt_runtime *rt, const char *title);

#endif
