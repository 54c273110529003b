# libflatrt.so as a product (tests/product/): it exports exactly the functions of include/flatrt.h
# with SONAME libflatrt.so.<major>; programs on the public API link and run against it.
find_program(FRT_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
add_test(NAME product.exports
  COMMAND ${FRT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/product/check_exports.py
          ${CMAKE_SOURCE_DIR}/include/flatrt.h $<TARGET_FILE:flatrt_shared>)

add_executable(test_version product/test_version.c)
target_link_libraries(test_version PRIVATE flatrt_shared)
add_test(NAME product.version COMMAND test_version)

# The digits example linked against libflatrt.so instead of the static library.
add_executable(classify_shared ${CMAKE_SOURCE_DIR}/examples/digits/classify.c)
target_link_libraries(classify_shared PRIVATE flatrt_shared)
add_test(NAME product.classify_shared
  COMMAND sh -c "out=$($0 digits.onnx samples/digit_1_label6.npy samples/digit_2_label7.npy) && echo \"$out\" && test \"$out\" = \"$(printf 'samples/digit_1_label6.npy 6\\nsamples/digit_2_label7.npy 7')\""
          $<TARGET_FILE:classify_shared>
  WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}/examples/digits)
set_tests_properties(product.exports product.version product.classify_shared PROPERTIES
  LABELS product TIMEOUT 120)
