/* Selection trace: what loading and running models uses, for selective builds (`flatrt trace`,
 * docs/selective.md).
 *
 * While switched on (frt_seltrace_enable), load and run add facts to one process-wide set of
 * strings, each a tab-separated record:
 *   op       <domain> <op_type> <opset>          an op resolved from the registry (load)
 *   dtype    <domain> <op_type> <dtype name>     a dtype of an input or output of a selected kernel
 *   kernel   <domain> <op_type> <provider> <kernel name>
 *   variant  <family> <isa>                      a variant table of src/ops/<family>.c picked <isa>
 *   provider <name>                              builtin, onednn, openblas
 *   feature  <name>                              sequences, subgraphs, external_data, ...
 * <domain> is "ai.onnx" for the default domain. Tools read the set with frt_seltrace_count/_at.
 *
 * A selective build (FRT_SELECTIVE) records nothing: FRT_SELTRACE_ON is the constant 0 there, so
 * the hooks compile away. */
#ifndef FRT_UTIL_SELTRACE_H
#define FRT_UTIL_SELTRACE_H

#include <stddef.h>
#include <stdint.h>

#if defined(FRT_SELECTIVE) && FRT_SELECTIVE
#define FRT_SELTRACE_ON 0
#else
extern int frt_seltrace_enabled;
#define FRT_SELTRACE_ON __atomic_load_n(&frt_seltrace_enabled, __ATOMIC_RELAXED)
#endif

/* Switches recording on (1) or off (0); recorded facts stay until frt_seltrace_reset. */
void frt_seltrace_enable(int on);
void frt_seltrace_reset(void);
/* Adds one record (fields joined with tabs; NULL ends the list). Thread-safe. */
void frt_seltrace_add(const char *kind, ...);

/* Hooks (call only when FRT_SELTRACE_ON). */
void frt_seltrace_op(const char *domain, const char *op_type, int64_t opset);
/* site: __FILE__ of the variant table's user (its stem names the family). */
void frt_seltrace_variant(const char *site, int isa, const char *isa_name);
/* "ai.onnx" for the default (empty or NULL) domain, else d. (frt_seltrace_kernel, which records a
 * selected kernel, is in the ops layer: src/ops/op.h.) */
const char *frt_seltrace_domain(const char *d);
void frt_seltrace_feature(const char *name);

/* The recorded set, in insertion order (strings valid until frt_seltrace_reset). */
size_t frt_seltrace_count(void);
const char *frt_seltrace_at(size_t i);
/* Facts lost since the last reset (out of memory, or a record longer than 511 bytes): a trace
 * with dropped facts is incomplete and must not be written as a selection. */
size_t frt_seltrace_dropped(void);

#endif
