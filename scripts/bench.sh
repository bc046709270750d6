#!/usr/bin/env bash
# The benchmarks in one run (the README's figures): builds the release preset's benchmarks, runs
# each with its anchors measured in the same process, then the Python anchors (numpy, PyTorch)
# when they are installed, and draws docs/speedup.png with matplotlib. Run it on a quiet
# machine; it takes about ten minutes on 2 cores. Every result is also kept as Google
# Benchmark JSON in build/bench/.
#   scripts/bench.sh            everything
#   scripts/bench.sh compare    only the comparison behind docs/speedup.png
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
xtrace_install_missing libbenchmark-dev libeigen3-dev libopenblas-dev libtbb-dev
# The Python anchors and the plot are optional: without them the C++ tables still print.
xtrace_install_missing python3-numpy python3-matplotlib python3-torch ||
    echo "numpy, matplotlib or torch could not be installed: their parts are left out"
python=/usr/bin/python3 # Debian's, where apt installed numpy, torch and matplotlib

only="${1:-all}"
out=build/bench
mkdir -p "$out" docs
cmake --preset release >/dev/null
compare_targets=(bench_compare bench_compare_xsimd)
other_targets=(bench_gelu bench_tracing bench_threads bench_reduce bench_interpreter
               bench_caller_owned bench_caller_owned_xsimd bench_train_step bench_loop_gradient)
grep -q bench_matmul_blas build/release/build.ninja 2>/dev/null &&
    other_targets+=(bench_matmul bench_matmul_blas)
targets=("${compare_targets[@]}")
[ "$only" = compare ] || targets+=("${other_targets[@]}")
cmake --build --preset release -j "$(nproc)" --target "${targets[@]}"

# Every benchmark on 1 thread unless it says otherwise; BLAS too.
export OPENBLAS_NUM_THREADS=1
run() {
    local name="$1"
    shift
    echo
    echo "== $name"
    "./build/release/bench/$name" --benchmark_out="$out/$name.json" --benchmark_out_format=json \
        --benchmark_color=false "$@" | sed -n '/^ratio to/,$p'
}

run bench_compare --benchmark_min_time=0.2
run bench_compare_xsimd --benchmark_min_time=0.2
if "$python" -c "import numpy" 2>/dev/null; then
    echo
    echo "== numpy and PyTorch (bench/compare_python.py)"
    "$python" bench/compare_python.py "$out/python.json"
    python_results=(--python "$out/python.json")
else
    python_results=()
fi
if "$python" -c "import matplotlib" 2>/dev/null; then
    "$python" bench/plot_speedup.py --default "$out/bench_compare.json" \
        --xsimd "$out/bench_compare_xsimd.json" "${python_results[@]}" -o docs/speedup.png
    echo "drew docs/speedup.png"
fi
[ "$only" = compare ] && exit 0

for name in bench_gelu bench_tracing bench_threads bench_reduce bench_interpreter \
            bench_caller_owned bench_caller_owned_xsimd bench_train_step bench_loop_gradient; do
    run "$name"
done
if [ -x build/release/bench/bench_matmul_blas ]; then
    run bench_matmul
    run bench_matmul_blas
fi
if "$python" -c "import torch" 2>/dev/null; then
    echo
    echo "== the train step in PyTorch eager (bench/train_step_pytorch.py)"
    "$python" bench/train_step_pytorch.py
fi
