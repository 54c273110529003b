# Tests of the flatrt command-line tool on the bundled digits example: each case of
# tests/cli/cli_check.sh is one ctest test (help, usage errors, run, info, bench's last line, and
# error cases that must exit non-zero with a message).
if(TARGET flatrt)
  foreach(case help usage run info bench errors finite)
    add_test(NAME cli.${case}
             COMMAND /bin/sh ${CMAKE_SOURCE_DIR}/tests/cli/cli_check.sh $<TARGET_FILE:flatrt>
                     ${CMAKE_SOURCE_DIR} ${case})
    set_tests_properties(cli.${case} PROPERTIES LABELS cli TIMEOUT 300)
  endforeach()
endif()

# CLI manners (tests/cli/manners.sh): per-command help, getopt_long forms, bench phases/progress and
# --json, --shape by dimension name, run --random / --input-dir, info on unsupported models,
# --nodes and --json, plan --svg - and its labels. plan_elide draws resnet18 of the model zoo.
if(TARGET flatrt)
  foreach(case help getopt progress json shape random input_dir info_unsupported info_nodes
               info_json plan_svg plan_elide)
    add_test(NAME cli.manners.${case}
             COMMAND /bin/sh ${CMAKE_SOURCE_DIR}/tests/cli/manners.sh $<TARGET_FILE:flatrt>
                     ${CMAKE_SOURCE_DIR} ${case} ${FRT_MODELS_DIR})
    set_tests_properties(cli.manners.${case} PROPERTIES LABELS cli TIMEOUT 300)
  endforeach()
  set_tests_properties(cli.manners.plan_elide PROPERTIES FIXTURES_REQUIRED frt_models)
endif()
