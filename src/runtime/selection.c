/* Selection tracing and the ISA tier through the public API (flatrt.h); the recording itself is
 * util/seltrace.c, fed by hooks in the loader, registry, compile and kernels. */
#include "flatrt.h"
#include "ops/cpu.h"
#include "util/seltrace.h"

void frt_selection_record(int on) { frt_seltrace_enable(on); }
void frt_selection_reset(void) { frt_seltrace_reset(); }
size_t frt_selection_count(void) { return frt_seltrace_count(); }
const char *frt_selection_at(size_t i) { return frt_seltrace_at(i); }
size_t frt_selection_dropped(void) { return frt_seltrace_dropped(); }
const char *frt_isa_tier(void) { return frt_isa_name(frt_cpu_tier()); }
