# FRT_FUZZ=ON: everything (library, tools, tests) is compiled with libFuzzer's coverage
# instrumentation (-fsanitize=fuzzer-no-link) and ASan/UBSan, so coverage reaches the library;
# only the fuzz targets (tests/fuzz/fuzz_targets.cmake) link libFuzzer's main. Needs clang
# (Debian: clang, libclang-rt-14-dev). FRT_SANITIZE is ignored: the fuzz build picks its own.
if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "FRT_FUZZ=ON needs clang: configure with CC=clang")
endif()
if(FRT_SANITIZE)
  message(STATUS "FRT_FUZZ=ON: FRT_SANITIZE=${FRT_SANITIZE} ignored (fuzz builds use address,undefined)")
endif()
add_compile_options(-g -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                    -fno-sanitize-recover=all)
add_link_options(-fsanitize=address,undefined)
