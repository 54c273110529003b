# Mutation sweeps over real models (tests/fuzz/mutation_sweep.c): truncations and seeded byte flips,
# every outcome an error with a message or a completed run. Slow (minutes under ASan), so they are
# registered only with -DFRT_SLOW_TESTS=ON and carry the ctest label "slow"; a plain `ctest` in a
# default build never runs them. CI turns them on in its ASan/UBSan job with a small count.
option(FRT_SLOW_TESTS "Register the slow tests (mutation sweeps; ctest label slow)" OFF)
set(FRT_SWEEP_COUNT 100 CACHE STRING "Truncations and flip mutants per model in the mutation sweeps")
set(FRT_SWEEP_SEED 1 CACHE STRING "Seed of the mutation sweeps' byte flips")

add_executable(mutation_sweep ${CMAKE_SOURCE_DIR}/tests/fuzz/mutation_sweep.c)
target_link_libraries(mutation_sweep PRIVATE flatrt_static)

# frt_sweep_test(NAME MODEL_PATH [FIXTURE]): one sweep over any model file.
function(frt_sweep_test name model)
  if(NOT FRT_SLOW_TESTS)
    return()
  endif()
  add_test(NAME slow.sweep.${name}
           COMMAND mutation_sweep ${model} ${FRT_SWEEP_COUNT} ${FRT_SWEEP_SEED})
  set_tests_properties(slow.sweep.${name} PROPERTIES LABELS slow TIMEOUT 1800
                       ENVIRONMENT "OPENBLAS_NUM_THREADS=1")
  if(ARGC GREATER 2)
    set_tests_properties(slow.sweep.${name} PROPERTIES FIXTURES_REQUIRED ${ARGV2})
  endif()
endfunction()
frt_sweep_test(squeezenet1_1 ${FRT_MODELS_DIR}/squeezenet1_1/model.onnx frt_models)
