# Allocation-failure injection (tests/runtime/test_oom.c): the library's Nth allocation, open/mmap
# or thread start fails, for every N, over load, create, run, reshape, clone of a model.
# The test wraps the libc calls the library makes (grep src/ for them when adding one), so it links
# the static library. It carries its own copy of the arena built with tiny chunks (the archive's
# arena.o is then not linked): nearly every arena allocation becomes a heap allocation that can
# fail, instead of one per 64 KiB.
# The zoo models have ~900 (squeezenet1_1) and ~3500 (mobilenet_v2) load allocations: the default
# suite tries every 8th / 64th of them; FRT_OOM_FULL=1 in the environment (CI's sanitizer job)
# every one / every 8th. All allocations after load are always tried.
if(NOT FRT_SANITIZE MATCHES "thread")
  add_executable(test_oom ${CMAKE_CURRENT_SOURCE_DIR}/runtime/test_oom.c
                          ${CMAKE_SOURCE_DIR}/src/util/arena.c)
  target_compile_definitions(test_oom PRIVATE FRT_ARENA_CHUNK_MIN=64)
  target_link_libraries(test_oom PRIVATE flatrt_static)
  target_link_options(test_oom PRIVATE
    "LINKER:--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=aligned_alloc"
    "LINKER:--wrap=posix_memalign,--wrap=free"
    "LINKER:--wrap=open,--wrap=mmap,--wrap=pthread_create")

  set(oom_digits ${CMAKE_SOURCE_DIR}/examples/digits/digits.onnx)
  set(oom_tiny ${CMAKE_BINARY_DIR}/tiny) # written by the models.tiny fixture (runtime.cmake)
  set(oom_dynamic ${oom_tiny}/shape_dynamic.onnx)
  function(frt_oom_test name fixture)
    add_test(NAME oom.${name} COMMAND test_oom ${ARGN})
    set_tests_properties(oom.${name} PROPERTIES LABELS oom TIMEOUT 1800
      ENVIRONMENT "FRT_CHECK_PLAN=1;OPENBLAS_NUM_THREADS=1")
    if(fixture)
      set_tests_properties(oom.${name} PROPERTIES FIXTURES_REQUIRED ${fixture})
    endif()
  endfunction()
  frt_oom_test(digits "" ${oom_digits})
  frt_oom_test(tiny tiny ${oom_dynamic} ${oom_tiny}/shape_static.onnx
               ${oom_tiny}/external_gemm.onnx ${oom_tiny}/view_alias.onnx
               ${oom_tiny}/io_passthrough.onnx ${oom_tiny}/const_outputs.onnx)
  frt_oom_test(deep_wide frt_models ${FRT_MODELS_DIR}/deep_wide/model.onnx)
  frt_oom_test(squeezenet1_1 frt_models
               --sample-load 8:1 ${FRT_MODELS_DIR}/squeezenet1_1/model.onnx)
  # depthwise convolutions, BatchNorm folding, residual FusedConv (~3500 load allocations)
  frt_oom_test(mobilenet_v2 frt_models
               --sample-load 64:8 ${FRT_MODELS_DIR}/mobilenet_v2/model.onnx)
  # the pool's thread starts fail too (the runtime then runs on fewer threads)
  frt_oom_test(threads2 tiny --threads 2 ${oom_digits} ${oom_dynamic})
  # held outputs: run B needs a fresh output block
  frt_oom_test(manage_outputs tiny --manage ${oom_digits} ${oom_dynamic}
               ${oom_tiny}/view_alias.onnx)
  # frt_model_load_buffer: no mapping of the model file (external data is still mapped)
  frt_oom_test(load_buffer tiny --buffer ${oom_digits} ${oom_tiny}/external_gemm.onnx)
  # selection recording on: a trace that lost facts to a failed allocation says so
  frt_oom_test(trace tiny --trace ${oom_digits} ${oom_dynamic})
  # the Nth allocation and every later one fail: error paths that allocate
  frt_oom_test(persistent tiny --persistent ${oom_digits} ${oom_dynamic}
               ${oom_tiny}/external_gemm.onnx)
endif()
