# SPDX-License-Identifier: MIT
# Included from tests/CMakeLists.txt in ordinary builds: the fuzz targets
# with a plain main(), and a ctest replaying every regression input.
set(FUZZ_DIR ${CMAKE_SOURCE_DIR}/tests/fuzz)
add_executable(replay-framer ${FUZZ_DIR}/fuzz-framer.c ${FUZZ_DIR}/standalone.c)
target_link_libraries(replay-framer PRIVATE baton_core)
add_executable(replay-parser-codex ${FUZZ_DIR}/fuzz-parser.c ${FUZZ_DIR}/standalone.c)
target_compile_definitions(replay-parser-codex PRIVATE BT_FUZZ_CODER="codex")
target_link_libraries(replay-parser-codex PRIVATE baton_core PkgConfig::CJSON)
add_test(NAME fuzz-regressions
         COMMAND sh -c "$<TARGET_FILE:replay-framer> ${FUZZ_DIR}/regressions/framer && $<TARGET_FILE:replay-parser-codex> ${FUZZ_DIR}/regressions/parser-codex ${CMAKE_SOURCE_DIR}/fixtures/codex")
set_tests_properties(fuzz-regressions PROPERTIES TIMEOUT 120 LABELS unit)
