#!/usr/bin/env python3
"""Where the bytes of a statically linked flatrt executable go, from a GNU ld map (-Wl,-Map).

    python3 bench/size_map.py MAP [--functions FILE_STEM...]

Sums the input sections that landed in .text, .rodata, .data.rel.ro and .data per source file
(object name without .c.o) and splits them into load-time code (what an ahead-of-time program
would leave out: the ONNX decoder, IR, passes, compile, the planner, the registry, the model
loader and every op's infer / select and the helpers only they call) and run-time code (the
runtime, the kernels and what they call). The split is by file and by function name (LOAD_FILES,
LOAD_FUNCS below); it is an estimate of an AOT runner's content, not a measurement of one.
Build without LTO (-DFRT_SELECT_LTO=OFF) so that every section keeps its source file and
function name: docs/selective.md ("Toward 60 KB") has the commands.
"""
import collections
import re
import sys

LOAD_FILES = {'decode', 'pb', 'external', 'graph', 'value', 'layout', 'seq', 'compile', 'plan',
              'dag', 'fold', 'fuse', 'fuse_xf', 'fuse_cnn', 'fuse_pool', 'registry', 'features',
              'onednn', 'view'}
# functions of the family files, common.c, model.c and features_off.c that only load calls
LOAD_FUNCS = re.compile(
    r'(infer|select|fill_params|legacy_pad|dt_short|dt_numeric|set_name|check_act|mm_is_small|'
    r'constant_source|transpose_perm\b|check_fixed_size|frt_ld_f64|bound_value|clip_range|'
    r'new_params|frt_broadcast_shape|frt_op_check|frt_op_fail|frt_op_dtype_missing|'
    r'frt_op_kernel_missing|frt_attr|frt_gather_elems|finish_load|new_model|frt_onnx|'
    r'first_external|left_out|frt_threadpool_check|fill_info|release_model_bytes|vfail|op_names|'
    r'pat_names|pat_fns|types\.0|names\.1|tiers|mm_path_built|constant_kernel|bin_values|'
    r'same_shape|gather_kernel)')
KEPT = ('.text', '.rodata', '.data.rel.ro', '.data')


def sections(path):
    lines = open(path).read().split('\n')
    start = next(i for i, l in enumerate(lines) if l.startswith('Linker script and memory map'))
    out, pending, items = None, None, []
    for l in lines[start:]:
        m = re.match(r'^(\.\S+)\s+0x', l)
        if m:
            out = m.group(1)
        m = re.match(r'^ (\.\S+)\s*$', l)
        if m:
            pending = m.group(1)
            continue
        m = re.match(r'^ (\.\S+)?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+)', l)
        if m:
            name = m.group(1) or pending
            pending = None
            size = int(m.group(3), 16)
            if size and out in KEPT:
                obj = re.sub(r'.*\((.*)\)', r'\1', m.group(4)).split('/')[-1]
                obj = re.sub(r'\.c\.o$|\.o$', '', obj)
                fn = re.sub(r'^\.(text|rodata|data\.rel\.ro|data)\.?', '', name) or out
                items.append((obj, fn, size))
    return items


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    items = sections(sys.argv[1])
    show = sys.argv[sys.argv.index('--functions') + 1:] if '--functions' in sys.argv else []
    per = {'load': collections.Counter(), 'run': collections.Counter()}
    for obj, fn, size in items:
        per['load' if obj in LOAD_FILES or LOAD_FUNCS.search(fn) else 'run'][obj] += size
    total = sum(s for _, _, s in items)
    print(f'content (.text .rodata .data.rel.ro .data): {total} B')
    for kind in ('load', 'run'):
        c = per[kind]
        print(f'{kind}-time: {sum(c.values())} B')
        for obj, size in c.most_common():
            print(f'  {size:7d}  {obj}')
    for stem in show:
        rows = sorted(((s, f) for o, f, s in items if o == stem), reverse=True)
        print(f'{stem}: ' + '; '.join(f'{f} {s}' for s, f in rows))


if __name__ == '__main__':
    main()
