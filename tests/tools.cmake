# Tests of the command-line tool's tensor I/O (tools/tensor_io.c): a unit test executable that
# compiles tensor_io.c itself (tests/unit/test_*.c executables link only the library).
add_executable(test_tensor_io ${CMAKE_SOURCE_DIR}/tests/tools/test_tensor_io.c
                              ${CMAKE_SOURCE_DIR}/tools/tensor_io.c)
target_include_directories(test_tensor_io PRIVATE ${CMAKE_SOURCE_DIR}/tools
                                                  ${CMAKE_SOURCE_DIR}/tests/unit
                                                  ${CMAKE_SOURCE_DIR}/tests/tools)
target_link_libraries(test_tensor_io PRIVATE flatrt_static)
add_test(NAME unit.test_tensor_io COMMAND test_tensor_io)
set_tests_properties(unit.test_tensor_io PROPERTIES LABELS "unit;tools" TIMEOUT 300)
