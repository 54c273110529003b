# libFuzzer targets (FRT_FUZZ=ON, see fuzz_flags.cmake). Target fuzz_NAME is tests/fuzz/fuzz_NAME.c
# with the protobuf-aware mutator tests/fuzz/pb_mutator.c;
# its seed corpus is tests/fuzz/corpus/NAME/. scripts/fuzz.sh builds and runs them.
# fuzz.corpus.NAME runs the target once over its committed corpus (no mutation): every input that
# ever crashed is in there.
function(frt_fuzz_target name)
  add_executable(fuzz_${name} ${CMAKE_SOURCE_DIR}/tests/fuzz/fuzz_${name}.c
                             ${CMAKE_SOURCE_DIR}/tests/fuzz/pb_mutator.c)
  target_link_libraries(fuzz_${name} PRIVATE flatrt_static)
  target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
  add_test(NAME fuzz.corpus.${name}
           COMMAND fuzz_${name} -runs=0 ${CMAKE_SOURCE_DIR}/tests/fuzz/corpus/${name})
  set_tests_properties(fuzz.corpus.${name} PROPERTIES LABELS fuzz TIMEOUT 600)
endfunction()
frt_fuzz_target(onnx_decode)
frt_fuzz_target(pipeline)
