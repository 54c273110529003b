# pytest suites of the Python binding (Debian's python3-pytest: scripts/setup.sh --test), run with
# PYTHONPATH=BUILD/python: python.api (digits example), python.zoo (zoo models against PyTorch's
# outputs), python.threads (4 threads on one Model).
execute_process(COMMAND ${Python3_EXECUTABLE} -c "import pytest" RESULT_VARIABLE FRT_NO_PYTEST
                OUTPUT_QUIET ERROR_QUIET)
if(FRT_NO_PYTEST)
  message(WARNING "flatrt: pytest not found for ${Python3_EXECUTABLE}: python.* tests not registered (scripts/setup.sh --test)")
  return()
endif()
set(FRT_PY_TEST_ENV PYTHONPATH=${FRT_PYTHON_DIR} FRT_MODELS_DIR=${FRT_MODELS_DIR}
    PYTHONDONTWRITEBYTECODE=1)
include(${PROJECT_SOURCE_DIR}/cmake/sanitizer_preload.cmake)
if(FRT_SANITIZER_PRELOAD)
  # the extension is instrumented, the interpreter is not: load the sanitizer runtimes first.
  # CPython keeps memory until exit: leaks are checked by the C tests, not here.
  list(APPEND FRT_PY_TEST_ENV LD_PRELOAD=${FRT_SANITIZER_PRELOAD} ASAN_OPTIONS=detect_leaks=0)
endif()
foreach(suite api zoo threads)
  add_test(NAME python.${suite}
           COMMAND ${Python3_EXECUTABLE} -m pytest -q -p no:cacheprovider
                   ${CMAKE_CURRENT_SOURCE_DIR}/tests/test_${suite}.py)
  set_tests_properties(python.${suite} PROPERTIES LABELS python TIMEOUT 900
                       ENVIRONMENT "${FRT_PY_TEST_ENV}")
endforeach()
set_tests_properties(python.zoo python.threads PROPERTIES FIXTURES_REQUIRED frt_models)
