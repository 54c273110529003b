# Selective build: the registry compiled for a subset of ops (FRT_OPS_ONLY + FRT_OP_SELECT_<op>)
# replaces the library's registry in a static link; the test checks that only the listed ops are
# registered and that a family none of them uses (pad) is not linked at all.
add_executable(test_ops_subset selective/test_ops_subset.c ${CMAKE_SOURCE_DIR}/src/ops/registry.c)
target_compile_definitions(test_ops_subset PRIVATE FRT_OPS_ONLY FRT_OP_SELECT_Relu=1
  FRT_OP_SELECT_Add=1 FRT_OP_SELECT_Identity=1)
target_link_libraries(test_ops_subset PRIVATE flatrt_static)
add_test(NAME unit.test_ops_subset COMMAND test_ops_subset)
set_tests_properties(unit.test_ops_subset PROPERTIES LABELS unit)
