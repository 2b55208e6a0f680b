# run_cli_test.cmake: runs one CLI case, as zstd's cli-tests do.
#
#   cmake -DTOPK=<topk binary> -DSCRIPT=<case.sh> -DEXPECTED=<case.stdout.exact>
#         -DWORKDIR=<scratch dir> -P run_cli_test.cmake
#
# The script runs as `sh SCRIPT` in a fresh WORKDIR with TOPK set to the binary.
# Its standard output must equal EXPECTED byte for byte; on a mismatch the test
# prints a unified diff (or both texts, where diff is missing) and fails. A
# script that exits non-zero fails too (cases print `echo $?` themselves after
# commands expected to fail, so a script's own status is that of its last echo).
foreach(var TOPK SCRIPT EXPECTED WORKDIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_cli_test.cmake: -D${var}=... is required")
  endif()
endforeach()

file(REMOVE_RECURSE "${WORKDIR}")
file(MAKE_DIRECTORY "${WORKDIR}")

# LC_ALL=C: messages that come from the C library (strerror) are in English.
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env TOPK=${TOPK} LC_ALL=C sh "${SCRIPT}"
  WORKING_DIRECTORY "${WORKDIR}"
  OUTPUT_VARIABLE actual
  ERROR_VARIABLE errors
  RESULT_VARIABLE status)

file(READ "${EXPECTED}" expected)
file(WRITE "${WORKDIR}/actual.stdout" "${actual}")

if(NOT status EQUAL 0)
  message("standard error:\n${errors}")
  message(FATAL_ERROR "${SCRIPT} exited with status ${status}")
endif()

if(NOT actual STREQUAL expected)
  find_program(DIFF diff)
  if(DIFF)
    execute_process(COMMAND ${DIFF} -u "${EXPECTED}" "${WORKDIR}/actual.stdout" OUTPUT_VARIABLE difference)
    message("${difference}")
  else()
    message("expected:\n${expected}\nactual:\n${actual}")
  endif()
  message("standard error:\n${errors}")
  message(FATAL_ERROR "${SCRIPT}: standard output differs from ${EXPECTED} (actual output kept in ${WORKDIR}/actual.stdout)")
endif()
