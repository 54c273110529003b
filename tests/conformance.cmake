# The ONNX node test suite (onnx 1.12, generated into the build tree) through `flatrt check`:
# fails when a case listed in tests/conformance/expected_pass.txt does not pass.
if(TARGET flatrt)
  add_test(NAME conformance.node
           COMMAND bash ${CMAKE_SOURCE_DIR}/scripts/conformance.sh ${CMAKE_BINARY_DIR})
  set_tests_properties(conformance.node PROPERTIES LABELS conformance TIMEOUT 900)
endif()
