/* Selection files (selection_file.c; format: docs/selective.md). */
#ifndef FRT_TOOLS_SELECTION_FILE_H
#define FRT_TOOLS_SELECTION_FILE_H

#include <stddef.h>

#include "cli.h"

#define SEL_VERSION 1

/* A set of distinct records; zero-initialised = empty. Owns its strings. */
typedef struct sel_set {
    char **s;
    size_t n, cap;
} sel_set;

/* Adds a copy of rec unless present. Return 0, or 1 after printing the error (out of memory). */
int sel_add(sel_set *r, const char *rec);
int sel_addf(sel_set *r, const char *fmt, ...) PRINTF_LIKE(2, 3);
void sel_free(sel_set *r);
/* Adds the records of the selection file at path. 0, or 1 after printing an error naming the
 * file and line (unreadable file, wrong version, malformed or unknown entries). */
int sel_read(const char *path, sel_set *r);
/* Sorts r and writes it as a selection file. 0, or 1 after printing the error. */
int sel_write(const char *path, sel_set *r);

#endif
