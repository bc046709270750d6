# Builds and runs tests/consumer in a fresh folder. MODE=install: installs this build of xtrace
# into a temporary prefix and uses find_package; MODE=subdirectory: add_subdirectory(SOURCE_DIR).
set(work "${WORK_DIR}/consumer_${MODE}")
file(REMOVE_RECURSE "${work}")
file(MAKE_DIRECTORY "${work}")
function(run)
    execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "failed (${rc}): ${ARGV}\n${out}\n${err}")
    endif()
endfunction()
if(MODE STREQUAL "install")
    run("${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${work}/prefix")
    set(configure_args -DCMAKE_PREFIX_PATH=${work}/prefix)
else()
    set(configure_args -DXTRACE_SOURCE_DIR=${SOURCE_DIR})
    # The consumer builds its own runtime here, so it need not match this build's sanitizers,
    # which would double its build time.
    string(REGEX REPLACE "-f(no-)?sanitize[^ ]*" "" CXX_FLAGS "${CXX_FLAGS}")
endif()
# The consumer is about packaging, not speed: no optimisation (quick to compile), with the
# build's flags (the upstream headers; the sanitizers the installed xtrace::runtime was built
# with).
run("${CMAKE_COMMAND}" -S "${SOURCE_DIR}/tests/consumer" -B "${work}/build" -G Ninja
    -DCMAKE_BUILD_TYPE= -DCMAKE_CXX_COMPILER=${CXX} "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
    -DQUICKSTART=${SOURCE_DIR}/examples/quickstart.cpp ${configure_args})
run("${CMAKE_COMMAND}" --build "${work}/build")
run("${work}/build/consumer")
run("${work}/build/consumer_separate")
run("${work}/build/consumer_quickstart")
if(EXISTS "${work}/build/consumer_onnx")
    run("${work}/build/consumer_onnx")
endif()
if(MODE STREQUAL "install")
    # A plain include path, as pkg-config gives it.
    find_program(PKG_CONFIG pkg-config)
    if(PKG_CONFIG)
        set(ENV{PKG_CONFIG_PATH} "${work}/prefix/share/pkgconfig")
        execute_process(COMMAND "${PKG_CONFIG}" --cflags xtrace OUTPUT_VARIABLE cflags
                        OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
        if(NOT rc EQUAL 0)
            message(FATAL_ERROR "pkg-config does not find the installed xtrace.pc")
        endif()
        separate_arguments(cflags UNIX_COMMAND "${cflags}")
        run("${CXX}" ${cflags} -O1 "${SOURCE_DIR}/tests/consumer/main.cpp" -o "${work}/consumer_pc")
        run("${work}/consumer_pc")
    endif()
endif()
message(STATUS "consumer (${MODE}) built and ran")
