# SPDX-License-Identifier: MIT
# Write the man page and the shell completions with the built baton, which
# makes them from its own help text (src/cli/cmd-doc.c).
# usage: cmake -DBATON=path/to/baton -DOUT=dir -P baton-doc.cmake
foreach(job "baton.1;__man" "baton.bash;completion;bash" "_baton;completion;zsh")
  list(POP_FRONT job file)
  execute_process(COMMAND ${BATON} ${job} OUTPUT_FILE ${OUT}/${file}.tmp
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    file(REMOVE ${OUT}/${file}.tmp)
    message(FATAL_ERROR "`baton ${job}` failed (${rc})")
  endif()
  file(RENAME ${OUT}/${file}.tmp ${OUT}/${file})
endforeach()
