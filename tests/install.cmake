# flatrt as an installed product (tests/product/install_check.sh): cmake --install into a
# temporary prefix, then a consumer project links and runs against it through find_package(flatrt)
# (shared and static) and pkg-config (shared and --static), also after moving the prefix.
# add_subdirectory users get flatrt::flatrt with include/ only (add_subdirectory_check.sh).
set(FRT_CONSUMER_ENV CMAKE=${CMAKE_COMMAND})
if(FRT_SANITIZE)
  include(${PROJECT_SOURCE_DIR}/cmake/sanitizer_preload.cmake)
  list(APPEND FRT_CONSUMER_ENV "CFLAGS=-fsanitize=${FRT_SANITIZE} -fno-omit-frame-pointer"
       PYTHON_PRELOAD=${FRT_SANITIZER_PRELOAD})
endif()
add_test(NAME product.install
  COMMAND sh ${CMAKE_SOURCE_DIR}/tests/product/install_check.sh ${CMAKE_BINARY_DIR}
          ${CMAKE_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/install_check ${CMAKE_C_COMPILER})
add_test(NAME product.add_subdirectory
  COMMAND sh ${CMAKE_SOURCE_DIR}/tests/product/add_subdirectory_check.sh ${CMAKE_SOURCE_DIR}
          ${CMAKE_CURRENT_BINARY_DIR}/add_subdirectory_check ${CMAKE_C_COMPILER})
set_tests_properties(product.install product.add_subdirectory PROPERTIES
  LABELS product TIMEOUT 600 ENVIRONMENT "${FRT_CONSUMER_ENV}")
