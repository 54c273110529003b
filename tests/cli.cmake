# Tests of the flatrt command-line tool on the bundled digits example: each case of
# tests/cli_check.sh is one ctest test (help, usage errors, run, info, bench's last line, and
# error cases that must exit non-zero with a message).
if(TARGET flatrt)
  foreach(case help usage run info bench errors finite)
    add_test(NAME cli.${case}
             COMMAND /bin/sh ${CMAKE_SOURCE_DIR}/tests/cli_check.sh $<TARGET_FILE:flatrt>
                     ${CMAKE_SOURCE_DIR} ${case})
    set_tests_properties(cli.${case} PROPERTIES LABELS cli TIMEOUT 300)
  endforeach()
endif()
