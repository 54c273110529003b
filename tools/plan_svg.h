/* Draws a runtime's memory plan as SVG: time (compute steps) across, slab offset down, one
 * rectangle per tensor, labelled where it fits (every rectangle has a hover tooltip). */
#ifndef FRT_TOOLS_PLAN_SVG_H
#define FRT_TOOLS_PLAN_SVG_H

#include <stdio.h>

#include "flatrt.h"

/* Writes the SVG for rt's current plan to f. title is printed at the top. Returns 0 or -1. */
int plan_svg_write(FILE *f, const frt_runtime *rt, const char *title);

#endif
