#!/usr/bin/env bash
# The one test command (CI runs it): installs what is missing, then builds and runs
#   1. the whole suite under AddressSanitizer + UndefinedBehaviorSanitizer (preset ci),
#      the random-program differential tester included;
#   2. the concurrency tests under ThreadSanitizer (preset tsan);
#   3. the libFuzzer targets, briefly (preset fuzz, clang), the ONNX loader's among them;
#   4. (within 1) xtrace::onnx, and ONNX Runtime running what it exports (npm onnxruntime-node);
#   5. a representative subset against the upstream xtensor/xsimd releases in ../shared/upstream,
#      when that folder exists (scripts/test-upstream.sh).
# Idempotent: re-uses build/<preset> when it exists.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
xtrace_install_missing clang libclang-rt-14-dev libonnx-dev libprotobuf-dev libopenblas-dev \
    libtbb-dev
jobs="$(nproc)"

# ONNX Runtime for the test that runs exported models (tests/onnx/ort): the npm package, kept in
# build/ort between runs. Without it that test says it was skipped.
if [ ! -d build/ort/node_modules/onnxruntime-node ] && command -v npm >/dev/null; then
    mkdir -p build/ort
    ONNXRUNTIME_NODE_INSTALL_CUDA=skip npm install --prefix build/ort --no-audit --no-fund \
        --loglevel=error onnxruntime-node@1.20.1 >/dev/null ||
        echo "onnxruntime-node could not be installed: the ONNX Runtime test will be skipped"
fi

echo "== suite under ASan + UBSan"
cmake --preset ci >/dev/null
cmake --build --preset ci -j "$jobs"
ctest --preset ci -j "$jobs"

echo "== concurrency tests under TSan"
tsan_tests=(function_threads_test state_concurrency_test correctness_hostile_input_test
            interp_threads_test interp_concurrent_steps_test
            onnx_threads_test)
cmake --preset tsan >/dev/null
cmake --build --preset tsan -j "$jobs" --target "${tsan_tests[@]}"
ctest --preset tsan -j "$jobs" -R "^($(IFS='|'; echo "${tsan_tests[*]}"))\$"

echo "== libFuzzer targets"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$jobs"
ctest --preset fuzz -j "$jobs"

if [ -x scripts/test-upstream.sh ]; then
    scripts/test-upstream.sh
fi
