# SPDX-License-Identifier: MIT
# layering.cmake: run by ctest's `layering` (tests/layering/CMakeLists.txt)
#   cmake -DCC=cc -DINCS="dir;dir" -DTOP=srcdir -DWORK=dir -P layering.cmake
# Compiles a one-line probe per header with the library's include
# directories (INCS, baton_core's): a front end's header must not be found,
# a library header must compile. Fails naming every header that broke it.
set(flags)
foreach(dir IN LISTS INCS)
  list(APPEND flags -I${dir})
endforeach()
file(MAKE_DIRECTORY ${WORK})
set(probe ${WORK}/probe.c)

# 0 when `#include "NAME"` compiles with the library's directories; OUT the
# compiler's message
function(probe name out_rc out_msg)
  file(WRITE ${probe} "#include \"${name}\"\nint bt_probe(void);\n")
  execute_process(COMMAND ${CC} -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
                          -DBATON_VERSION="0" ${flags} -fsyntax-only ${probe}
                  RESULT_VARIABLE rc ERROR_VARIABLE msg OUTPUT_VARIABLE msg)
  set(${out_rc} ${rc} PARENT_SCOPE)
  set(${out_msg} "${msg}" PARENT_SCOPE)
endfunction()

set(bad)
file(GLOB front RELATIVE ${TOP} ${TOP}/src/cli/*.h ${TOP}/src/serve/*.h ${TOP}/src/acp/*.h)
list(LENGTH front nfront)
if(nfront EQUAL 0)
  message(FATAL_ERROR "layering: no front-end header under ${TOP}/src/{cli,serve,acp}")
endif()
foreach(path IN LISTS front)
  get_filename_component(name ${path} NAME)
  probe(${name} rc msg)
  if(rc EQUAL 0)
    list(APPEND bad "${path}: a library file can include it")
  elseif(NOT msg MATCHES "${name}: No such file")
    list(APPEND bad "${path}: not refused as missing: ${msg}")
  endif()
endforeach()

file(GLOB lib RELATIVE ${TOP} ${TOP}/src/*.h)
list(LENGTH lib nlib)
foreach(path IN LISTS lib)
  get_filename_component(name ${path} NAME)
  probe(${name} rc msg)
  if(NOT rc EQUAL 0)
    list(APPEND bad "${path}: a library header that does not compile alone: ${msg}")
  endif()
endforeach()

if(bad)
  string(REPLACE ";" "\n" bad "${bad}")
  message(FATAL_ERROR "layering:\n${bad}")
endif()
message(STATUS "layering: ${nfront} front-end headers out of the library's reach, ${nlib} library headers in it")
