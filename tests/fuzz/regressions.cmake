# SPDX-License-Identifier: MIT
# Included from tests/CMakeLists.txt in ordinary builds: the fuzz targets
# with a plain main(), and a ctest replaying every regression input (a
# parser of src/coders.def: BATON_PARSER_FAMILIES, one for the coders
# that share one).
set(FUZZ_DIR ${CMAKE_SOURCE_DIR}/tests/fuzz)
add_executable(replay-framer ${FUZZ_DIR}/fuzz-framer.c ${FUZZ_DIR}/standalone.c)
target_link_libraries(replay-framer PRIVATE baton_core)
set(FUZZ_REPLAYS "$<TARGET_FILE:replay-framer> ${FUZZ_DIR}/regressions/framer")
# stored events read back: the seeds, and every fixture file line by line
add_executable(replay-event-parse ${FUZZ_DIR}/fuzz-event-parse.c ${FUZZ_DIR}/standalone.c)
target_link_libraries(replay-event-parse PRIVATE baton_core)
string(APPEND FUZZ_REPLAYS " && $<TARGET_FILE:replay-event-parse>"
       " ${FUZZ_DIR}/regressions/event-parse ${CMAKE_SOURCE_DIR}/fixtures")
foreach(family IN LISTS BATON_PARSER_FAMILIES)
  list(GET BATON_FAMILY_${family} 0 coder)
  add_executable(replay-parser-${family} ${FUZZ_DIR}/fuzz-parser.c ${FUZZ_DIR}/standalone.c)
  target_compile_definitions(replay-parser-${family} PRIVATE BT_FUZZ_CODER="${coder}")
  target_link_libraries(replay-parser-${family} PRIVATE baton_core PkgConfig::CJSON)
  file(MAKE_DIRECTORY ${FUZZ_DIR}/regressions/parser-${family})
  string(APPEND FUZZ_REPLAYS " && $<TARGET_FILE:replay-parser-${family}>"
         " ${FUZZ_DIR}/regressions/parser-${family}")
  foreach(member IN LISTS BATON_FAMILY_${family})
    if(EXISTS ${CMAKE_SOURCE_DIR}/fixtures/${member}) # none before its recordings
      string(APPEND FUZZ_REPLAYS " ${CMAKE_SOURCE_DIR}/fixtures/${member}")
    endif()
  endforeach()
endforeach()
# the page's markdown: the seeds and every document of docs/
add_executable(replay-markdown ${FUZZ_DIR}/fuzz-markdown.c ${FUZZ_DIR}/standalone.c)
target_link_libraries(replay-markdown PRIVATE baton_serve)
string(APPEND FUZZ_REPLAYS " && $<TARGET_FILE:replay-markdown>"
       " ${FUZZ_DIR}/regressions/markdown ${CMAKE_SOURCE_DIR}/docs")
add_test(NAME fuzz-regressions COMMAND sh -c "${FUZZ_REPLAYS}")
set_tests_properties(fuzz-regressions PROPERTIES TIMEOUT 120 LABELS unit)
