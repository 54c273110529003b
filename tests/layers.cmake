# One-way layering (tests/layers/check_layers.py, docs/architecture.md "Layers"): includes and
# symbol uses between src/ directories go from higher layers to lower ones only; the selftest
# shows that both checks fail on made-up violations.
find_program(FRT_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
set(FRT_LAYERS ${CMAKE_SOURCE_DIR}/tests/layers/check_layers.py)
add_test(NAME layers.includes COMMAND ${FRT_PYTHON} ${FRT_LAYERS} includes ${CMAKE_SOURCE_DIR})
add_test(NAME layers.calls
  COMMAND ${FRT_PYTHON} ${FRT_LAYERS} calls "$<JOIN:$<TARGET_OBJECTS:flatrt_obj>,,>")
add_test(NAME layers.selftest COMMAND ${FRT_PYTHON} ${FRT_LAYERS} selftest ${CMAKE_C_COMPILER})
set_tests_properties(layers.includes layers.calls layers.selftest PROPERTIES LABELS layers
  TIMEOUT 120)
