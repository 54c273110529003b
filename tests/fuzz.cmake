# The committed fuzz corpus as a regression test in every build (no libFuzzer needed): each
# tests/fuzz/fuzz_NAME.c target is linked with tests/fuzz/replay.c as replay_NAME and run once
# over tests/fuzz/corpus/NAME/, which holds the seeds and every input that ever crashed.
# The fuzzing itself: scripts/fuzz.sh (clang, -DFRT_FUZZ=ON).
foreach(name onnx_decode pipeline)
  add_executable(replay_${name} ${CMAKE_SOURCE_DIR}/tests/fuzz/fuzz_${name}.c
                                ${CMAKE_SOURCE_DIR}/tests/fuzz/replay.c)
  target_link_libraries(replay_${name} PRIVATE flatrt_static)
  add_test(NAME fuzz.replay.${name}
           COMMAND replay_${name} ${CMAKE_SOURCE_DIR}/tests/fuzz/corpus/${name})
  set_tests_properties(fuzz.replay.${name} PROPERTIES LABELS fuzz TIMEOUT 600)
endforeach()
# The pipeline corpus again with the kernels capped at the avx2 tier (FRT_ISA caps, never raises):
# some load-time paths (the dilated-conv region split) exist only there, and an AVX-512 host
# would otherwise never replay them.
add_test(NAME fuzz.replay.pipeline.avx2
         COMMAND replay_pipeline ${CMAKE_SOURCE_DIR}/tests/fuzz/corpus/pipeline)
set_tests_properties(fuzz.replay.pipeline.avx2 PROPERTIES LABELS fuzz TIMEOUT 600
                     ENVIRONMENT FRT_ISA=avx2)
