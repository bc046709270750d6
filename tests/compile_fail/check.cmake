# Builds one compile-fail target and checks that it fails with its expected message (the
# source's "// expect:" line) on the first error line, in fewer than 60 lines of compiler output.
file(STRINGS "${SOURCE}" expect_line REGEX "^// expect: ")
string(REGEX REPLACE "^// expect: " "" expect "${expect_line}")
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${BUILD_DIR}" --target "${TARGET}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
if(rc EQUAL 0)
    message(FATAL_ERROR "${TARGET} compiled, but it must not")
endif()
# The compiler's lines: everything after the build tool's "FAILED:" line and the command.
string(REGEX REPLACE "^.*FAILED: [^\n]*\n[^\n]*\n" "" compiler "${all}")
string(REGEX REPLACE "ninja: build stopped[^\n]*\n?" "" compiler "${compiler}")
string(REGEX MATCH "[^\n]*error:[^\n]*" first_error "${compiler}")
string(FIND "${first_error}" "${expect}" at)
if(at EQUAL -1)
    message(FATAL_ERROR "first error of ${TARGET} does not say \"${expect}\":\n${first_error}\n\n${compiler}")
endif()
string(REGEX MATCHALL "\n" newlines "${compiler}")
list(LENGTH newlines lines)
if(lines GREATER_EQUAL 60)
    message(FATAL_ERROR "${TARGET}: ${lines} lines of compiler output (must be under 60)")
endif()
message(STATUS "${TARGET}: fails as expected, ${lines} lines")
