#!/usr/bin/env bash
# Builds and runs a subset of the suite that covers every header and op family against the
# xtensor / xsimd / xtl releases vcpkg and Conan ship, from ../shared/upstream (include trees
# only, put ahead of the system ones), with XTENSOR_USE_XSIMD as vcpkg's xsimd feature sets it.
# The tests link xtrace::runtime, so the runtime is compiled once per configuration; the
# install + find_package consumer builds the quickstart (and xtrace::onnx) against the same headers.
# The first configuration is built without oneTBB (serial chunks), the second with it, so CI
# covers both.
set -euo pipefail
cd "$(dirname "$0")/.."
upstream="$(cd .. && pwd)/shared/upstream"
if [ ! -d "$upstream" ]; then
    echo "== upstream releases: $upstream does not exist; the compatibility builds are skipped"
    exit 0
fi
jobs="$(nproc)"
tests=(ops_binary_test ops_unary_float_test ops_cast_test ops_logic_test ops_integer_test
       ops_reduce_test ops_matmul_test ops_shape_test ops_composite_test ops_host_function_test
       control_cond_test control_while_loop_test function_cache_test state_variable_test
       interp_layout_test interp_static_fusion_test inspect_inspect_test
       correctness_edge_values_test interp_threads_test fuzz_differential onnx_round_trip_test)
for config in "xtensor-0.26.0 xsimd-13.2.0 xtl-0.8.2" "xtensor-0.27.1 xsimd-14.3.0 xtl-0.8.2"; do
    flags="-DXTENSOR_USE_XSIMD"
    tbb=$([[ $config == xtensor-0.26.0* ]] && echo OFF || echo ON)
    for dep in $config; do
        flags+=" -isystem $upstream/$dep/include"
    done
    build="build/upstream-${config// /-}"
    echo "== against $config (XTENSOR_USE_XSIMD, oneTBB $tbb)"
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
        -DCMAKE_CXX_FLAGS="$flags" -DXTRACE_TESTS_SEPARATE=ON -DXTRACE_BUILD_EXAMPLES=ON \
        -DXTRACE_FUZZ_SECONDS=10 -DXTRACE_USE_TBB="$tbb" >/dev/null
    cmake --build "$build" -j "$jobs" --target "${tests[@]}" quickstart
    "$build/examples/quickstart" >/dev/null
    ctest --test-dir "$build" -j "$jobs" --output-on-failure \
        -R "^($(IFS='|'; echo "${tests[*]}")|consumer_install)\$"
done
