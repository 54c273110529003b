# Selective build: cmake -DFRT_SELECT=selection.yaml (a file from `flatrt trace`, docs/selective.md).
# Included by the top CMakeLists.txt before the library targets when FRT_SELECT is set; the default
# build never reads this file.
#
# scripts/gen_selection.py turns the selection into the list of sources to compile (core + the
# selected ops' families + what they reference), per-family ISA tier defines for the variant
# tables (FRT_TIER_AVX512 / FRT_TIER_AVX2, src/ops/cpu.h), the registry's op list
# (frt_selection.h: FRT_OPS_ONLY + FRT_OP_SELECT_<op>) and whether OpenBLAS / oneDNN are used.
# Everything is compiled with -ffunction-sections -fdata-sections and linked with --gc-sections,
# so code no kept function references is dropped; FRT_SELECT_LTO=ON adds link-time optimization.
find_program(FRT_SEL_PYTHON NAMES python3 PATHS /usr/bin)
if(NOT FRT_SEL_PYTHON)
  message(FATAL_ERROR "FRT_SELECT needs python3 (scripts/gen_selection.py)")
endif()
if(NOT EXISTS "${FRT_SELECT}")
  message(FATAL_ERROR "FRT_SELECT: no such file '${FRT_SELECT}'")
endif()
set(FRT_SEL_DIR ${CMAKE_BINARY_DIR}/selection)
# Optional features (describe: the frt_desc_* API; step_trace: frt_runtime_set_trace and the
# Chrome trace writer; runtime_pool; thread_pool; external_data: tensors in other files) are left
# out unless the selection's `features` or this list names them; their API then fails with
# FRT_ERR_UNSUPPORTED naming the feature (src/runtime/features_off.c).
set(FRT_SELECT_KEEP "" CACHE STRING
  "Optional features a selective build keeps although the selection does not list them (describe;step_trace;runtime_pool;thread_pool;external_data;half_weights;sequences;subgraphs)")
execute_process(
  COMMAND ${FRT_SEL_PYTHON} ${CMAKE_SOURCE_DIR}/scripts/gen_selection.py ${FRT_SELECT}
          ${CMAKE_SOURCE_DIR} ${FRT_SEL_DIR} "${FRT_SELECT_KEEP}"
  RESULT_VARIABLE _frt_sel_rc OUTPUT_VARIABLE _frt_sel_out ERROR_VARIABLE _frt_sel_err
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(_frt_sel_rc)
  message(FATAL_ERROR "${_frt_sel_err}")
endif()
message(STATUS "${_frt_sel_out}")
include(${FRT_SEL_DIR}/selection.cmake)
# re-run the generator when the selection, the op list or any source changes
file(GLOB_RECURSE _frt_sel_deps CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/*.c)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${FRT_SELECT}
  ${CMAKE_SOURCE_DIR}/scripts/gen_selection.py ${CMAKE_SOURCE_DIR}/src/ops/ops.def ${_frt_sel_deps})

set(FRT_SOURCES ${FRT_SEL_SOURCES})
# -DFRT_AOT_ONLY=ON: a runtime-only build that runs ahead-of-time programs written by `flatrt
# compile` (src/runtime/aot_load.c implements the loading and run API; docs/selective.md
# "Ahead-of-time programs"). The model and runtime sources give way to it; the decoder, IR,
# passes, compile and planner stay in the archive but nothing links them (only minimal_run and
# libflatrt.a are built: the other targets need the whole API).
option(FRT_AOT_ONLY "Selective runtime-only build for ahead-of-time programs (flatrt compile)" OFF)
if(FRT_AOT_ONLY)
  list(FILTER FRT_SOURCES EXCLUDE REGEX "/src/runtime/(model|runtime)\\.c$")
  add_compile_definitions(FRT_AOT_ONLY=1)
endif()
set(FRT_USE_BLAS ${FRT_SEL_BLAS})
set(FRT_USE_DNNL ${FRT_SEL_DNNL})
set(FRT_BUILD_TESTS OFF)  # the unit and model tests need every op
set(FRT_BUILD_PYTHON OFF)
foreach(entry ${FRT_SEL_TIERS})
  string(REPLACE "|" ";" entry "${entry}")
  list(GET entry 0 file)
  list(GET entry 1 avx512)
  list(GET entry 2 avx2)
  set_property(SOURCE ${CMAKE_SOURCE_DIR}/${file} APPEND PROPERTY COMPILE_DEFINITIONS
    FRT_TIER_AVX512=${avx512} FRT_TIER_AVX2=${avx2})
endforeach()
set_property(SOURCE ${CMAKE_SOURCE_DIR}/src/ops/registry.c APPEND PROPERTY COMPILE_DEFINITIONS
  FRT_OPS_ONLY)
foreach(feature ${FRT_SEL_FEATURES_OFF})
  string(TOUPPER "${feature}" feature)
  set_property(SOURCE ${CMAKE_SOURCE_DIR}/src/runtime/features_off.c APPEND PROPERTY
    COMPILE_DEFINITIONS FRT_FEATURE_OFF_${feature})
endforeach()
if(FRT_SEL_PLAN_DEFS)
  set_property(SOURCE ${CMAKE_SOURCE_DIR}/src/compile/plan.c APPEND PROPERTY COMPILE_DEFINITIONS
    ${FRT_SEL_PLAN_DEFS})
endif()
include_directories(${FRT_SEL_DIR})
add_compile_definitions(FRT_SELECTIVE=1 FRT_OPS_SELECTION=<frt_selection.h>)
# No unwind tables: flatrt is C and never unwinds (about 10% of a selective library's bytes).
# Loops of dtypes and tiers left out of the tables stay defined but unused (static functions).
add_compile_options(-ffunction-sections -fdata-sections -fno-asynchronous-unwind-tables
                    -fno-unwind-tables -Wno-unused-function)
# Load-time code (model decoding, IR, passes, compile, planner, runtime) for size; the kernels in
# src/ops keep the build type's optimization, so run-time speed is the full build's.
# FRT_SELECT_SIZE_KERNELS=ON compiles the kernels with -Os too: smaller, same results, slower.
option(FRT_SELECT_SIZE "Compile the non-kernel sources of a selective build with -Os" ON)
option(FRT_SELECT_SIZE_KERNELS "Compile the kernels (src/ops) of a selective build with -Os" OFF)
# The op family files (src/ops/*.c: attribute parsing, infer, select, weight packing, portable and
# generic-dtype loops) at -Os too (9.2 KB of mobilenet_v2's library); the SIMD kernel files
# (src/ops/x86) keep -O2. Measured (docs/selective.md): mobilenet_v2 as fast (its run time is in
# src/ops/x86), deep_wide's 0.3 us run 6.6% slower (its Gemm/MatMul drivers are family code).
option(FRT_SELECT_SIZE_FAMILIES "Compile src/ops/*.c (not src/ops/x86) of a selective build with -Os" ON)
# -Oz (gcc 12+, clang) where the compiler has it: 1.6 KB (1.2%) less than -Os in mobilenet_v2's
# library, the same code paths (the optimization level changes no results: no fast-math).
include(CheckCCompilerFlag)
check_c_compiler_flag(-Oz FRT_HAVE_OZ)
if(FRT_HAVE_OZ)
  set(_frt_size_flag -Oz)
else()
  set(_frt_size_flag -Os)
endif()
set(FRT_SELECT_SIZE_FLAG ${_frt_size_flag} CACHE STRING
  "The optimization flag of the sources FRT_SELECT_SIZE and FRT_SELECT_SIZE_FAMILIES name (-Oz where the compiler has it, else -Os)")
foreach(f ${FRT_SOURCES})
  if((FRT_SELECT_SIZE AND NOT f MATCHES "/src/ops/") OR FRT_SELECT_SIZE_KERNELS OR
     (FRT_SELECT_SIZE_FAMILIES AND NOT f MATCHES "/src/ops/x86/"))
    set_property(SOURCE ${f} APPEND PROPERTY COMPILE_OPTIONS ${FRT_SELECT_SIZE_FLAG})
  endif()
endforeach()
# noseparate-code: no page-aligned padding between the code and read-only data segments
# pack-relative-relocs: DT_RELR, 8 bytes per pointer table entry instead of a 24-byte RELA
add_link_options(-Wl,--gc-sections -Wl,--no-undefined -Wl,-z,noseparate-code)
# The library's own calls to its exported API (frt_runtime_free, frt_dtype_size, ...) bind inside
# it instead of through the PLT (and may inline): an LD_PRELOADed frt_* does not interpose on them.
include(CheckCCompilerFlag)
check_c_compiler_flag(-fno-semantic-interposition FRT_HAVE_NO_SEM_INTERPOSITION)
if(FRT_HAVE_NO_SEM_INTERPOSITION)
  add_compile_options(-fno-semantic-interposition)
endif()
add_link_options(-Wl,-Bsymbolic-functions)
# Calls into libc through the GOT, bound at load (-z now, also full RELRO): no PLT stubs.
check_c_compiler_flag(-fno-plt FRT_HAVE_NO_PLT)
if(FRT_HAVE_NO_PLT)
  add_compile_options(-fno-plt)
  add_link_options(-Wl,-z,now)
endif()
include(CheckLinkerFlag)
check_linker_flag(C "-Wl,-z,pack-relative-relocs" FRT_HAVE_RELR)
if(FRT_HAVE_RELR)
  add_link_options(-Wl,-z,pack-relative-relocs)
endif()
# RELRO makes the relocated pointers (GOT, .data.rel.ro) read-only after loading, but GNU ld then
# ends them on a page boundary, padding the file by up to a page (1.7-3.4 KB of a ~160 KB
# mobilenet_v2 library). It stays on by default (hardening is not traded away silently);
# -DFRT_SELECT_RELRO=OFF leaves those pointers writable (as in a non-PIE static executable) and
# packs the segments.
option(FRT_SELECT_RELRO "Keep RELRO (-z relro) in a selective build (up to a page larger)" ON)
if(NOT FRT_SELECT_RELRO)
  add_link_options(-Wl,-z,norelro -Wl,-z,common-page-size=64)
endif()
option(FRT_SELECT_LTO "Link-time optimization in a selective build" ON)
if(FRT_SELECT_LTO)
  set(CMAKE_INTERPROCEDURAL_OPTIMIZATION ON)
endif()
