# Selective build: the registry (and the selection name, util/features.c) compiled for a subset
# of ops (FRT_OPS_ONLY + FRT_OP_SELECT_<op>)
# replaces the library's registry in a static link; the test checks that only the listed ops are
# registered and that a family none of them uses (pad) is not linked at all.
add_executable(test_ops_subset selective/test_ops_subset.c ${CMAKE_SOURCE_DIR}/src/ops/registry.c
  ${CMAKE_SOURCE_DIR}/src/util/features.c)
target_compile_definitions(test_ops_subset PRIVATE FRT_OPS_ONLY FRT_OP_SELECT_Relu=1
  FRT_OP_SELECT_Add=1 FRT_OP_SELECT_Identity=1)
target_link_libraries(test_ops_subset PRIVATE flatrt_static)
add_test(NAME unit.test_ops_subset COMMAND test_ops_subset)
set_tests_properties(unit.test_ops_subset PROPERTIES LABELS unit)

# cmake -DFRT_SELECT (docs/selective.md) end to end: `flatrt trace` of the digits example and of
# mobilenet_v2, a nested selective build of each, outputs identical to this build's, and a model
# outside the selection refused at load (tests/selective/selective_check.sh). The two builds cover
# both settings of every compile-time switch: digits keeps the optional features
# (FRT_SELECT_KEEP=describe,step_trace), mobilenet_v2 leaves them out; both check that kernel
# classes their traces did not record (FRT_KERNEL_BUILT in Conv and Gemm) are refused at load. Release builds only:
# the nested projects are plain builds, and sanitizer/fuzz trees would only repeat them.
if(NOT FRT_SANITIZE AND NOT FRT_FUZZ)
  set(FRT_DIGITS_ONNX ${CMAKE_SOURCE_DIR}/examples/digits/digits.onnx)
  set(FRT_MNV2 ${FRT_MODELS_DIR}/mobilenet_v2)
  add_test(NAME selective.digits
    COMMAND sh ${CMAKE_SOURCE_DIR}/tests/selective/selective_check.sh digits $<TARGET_FILE:flatrt>
            ${CMAKE_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/selective_digits ${FRT_DIGITS_ONNX}
            "image=${CMAKE_SOURCE_DIR}/examples/digits/samples/digit_1_label6.npy"
            ${FRT_MNV2}/model.onnx classify "describe,step_trace" "batch=8")
  add_test(NAME selective.mobilenet_v2
    COMMAND sh ${CMAKE_SOURCE_DIR}/tests/selective/selective_check.sh mobilenet_v2
            $<TARGET_FILE:flatrt> ${CMAKE_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/selective_mnv2
            ${FRT_MNV2}/model.onnx "input=${FRT_MNV2}/in/input.npy" ${FRT_DIGITS_ONNX})
  set_tests_properties(selective.digits selective.mobilenet_v2 PROPERTIES LABELS selective
    TIMEOUT 900 FIXTURES_REQUIRED frt_models ENVIRONMENT "CC=${CMAKE_C_COMPILER}")
endif()

# `flatrt trace` alone: union = merge, valid YAML, refused malformed files (all build types).
add_test(NAME selective.trace
  COMMAND sh ${CMAKE_SOURCE_DIR}/tests/selective/trace_check.sh $<TARGET_FILE:flatrt>
          ${CMAKE_CURRENT_BINARY_DIR}/selective_trace ${CMAKE_SOURCE_DIR}/examples/digits/digits.onnx
          ${FRT_MODELS_DIR}/mobilenet_v2/model.onnx)
set_tests_properties(selective.trace PROPERTIES LABELS selective TIMEOUT 300
  FIXTURES_REQUIRED frt_models)

# The AVX2 conv GEMM tile's row tails in a selective build (4/2/1-row sub-tiles) are bit-identical
# to the full build's per-row-count micro-kernels.
if(FRT_HAVE_X86)
  add_executable(test_tile_rows_avx2 selective/test_tile_rows_avx2.c)
  target_include_directories(test_tile_rows_avx2 PRIVATE ${CMAKE_SOURCE_DIR}/src ${CMAKE_SOURCE_DIR}/include)
  target_compile_options(test_tile_rows_avx2 PRIVATE -Wno-unused-function -mavx2 -mfma -mf16c)
  add_test(NAME selective.tile_rows_avx2 COMMAND test_tile_rows_avx2)
  set_tests_properties(selective.tile_rows_avx2 PROPERTIES LABELS "selective;unit"
    SKIP_RETURN_CODE 77)
endif()

# The conv GEMM tile and the SGEMM edge micro-kernel a selective build compiles (row tails as
# 8/4/2/1-row sub-tiles, fewer instantiations) are bit-identical to the full build's per-row-count
# kernels.
if(FRT_HAVE_X86 AND FRT_X86_AVX512_SOURCES)
  add_executable(test_tile_rows selective/test_tile_rows.c)
  target_include_directories(test_tile_rows PRIVATE ${CMAKE_SOURCE_DIR}/src ${CMAKE_SOURCE_DIR}/include)
  target_compile_options(test_tile_rows PRIVATE -Wno-unused-function -mavx2 -mfma -mf16c
    -mavx512f -mavx512bw -mavx512vl -mavx512dq)
  add_test(NAME selective.tile_rows COMMAND test_tile_rows)
  add_executable(test_ukr_rows selective/test_ukr_rows.c)
  target_include_directories(test_ukr_rows PRIVATE ${CMAKE_SOURCE_DIR}/src ${CMAKE_SOURCE_DIR}/include)
  target_compile_definitions(test_ukr_rows PRIVATE FRT_HAVE_X86=1)
  target_compile_options(test_ukr_rows PRIVATE -Wno-unused-function -mavx2 -mfma -mf16c
    -mavx512f -mavx512bw -mavx512vl -mavx512dq)
  add_test(NAME selective.ukr_rows COMMAND test_ukr_rows)
  set_tests_properties(selective.tile_rows selective.ukr_rows PROPERTIES LABELS "selective;unit"
    SKIP_RETURN_CODE 77)
endif()

# Ahead-of-time programs (docs/selective.md): `flatrt compile` of deep_wide (tiny products,
# transpose, concat, elementwise) and mlp (packed-weight GEMV with fused Relu) run by one
# runtime-only build of their merged trace (-DFRT_AOT_ONLY=ON, ASan + UBSan) with the full build's
# output hashes, the loader's refusals of truncated / changed / foreign programs, and compile
# refusing an op without a writer (tests/selective/aot_check.sh). Release builds only, as above.
if(NOT FRT_SANITIZE AND NOT FRT_FUZZ)
  add_test(NAME selective.aot
    COMMAND sh ${CMAKE_SOURCE_DIR}/tests/selective/aot_check.sh $<TARGET_FILE:flatrt>
            $<TARGET_FILE:minimal_run> ${CMAKE_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/selective_aot
            ${FRT_MODELS_DIR}/mobilenet_v2/model.onnx ${FRT_MODELS_DIR}/deep_wide/model.onnx
            ${FRT_MODELS_DIR}/mlp/model.onnx)
  set_tests_properties(selective.aot PROPERTIES LABELS selective TIMEOUT 900
    FIXTURES_REQUIRED frt_models ENVIRONMENT "CC=${CMAKE_C_COMPILER}")
endif()
