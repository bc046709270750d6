#!/usr/bin/env bash
# Compile time and peak memory of traced expressions of 8, 32, 128 and 256 nodes, over a
# translation unit that only includes xtrace. Each generated TU defines one traced function,
# static_asserts its node count, and calls it (tracing, static fusion and eager instantiated).
# Measured twice: header-only, and with XTRACE_SEPARATE_COMPILATION (the runtime compiled once,
# in its own translation unit, whose time is reported on its own). Each figure is the best of
# three runs.
#
#   bench/compile/run.sh [compiler flags...]      (default: -O2)
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v /usr/bin/time >/dev/null || { echo "needs GNU time: apt-get install time"; exit 1; }
flags=("$@")
[ ${#flags[@]} -gt 0 ] || flags=(-O2)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

generate() { # $1 = nodes (0 = the bare include)
    local n=$1 f="$out/expr_$1.cpp"
    {
        echo '#include <xtrace/xtrace.hpp>'
        if [ "$n" -eq 0 ]; then
            echo 'int main() { return 0; }'
        else
            local steps=$(((n - 1) / 3)) extra=$(((n - 1) % 3)) ops=(tanh sin exp cos sigmoid)
            echo 'auto f = xtrace::function([](auto x, auto y) {'
            echo '    auto e0 = x;'
            for ((i = 1; i <= steps; i++)); do
                echo "    auto e$i = xtrace::${ops[i % 5]}(e$((i - 1))) * y;"
            done
            local last=e$steps
            for ((i = 0; i < extra; i++)); do
                echo "    auto u$i = xtrace::abs($last);"
                last=u$i
            done
            echo "    return $last;"
            echo '});'
            echo 'using G = xtrace::graph_t<decltype(f), xt::xarray<float>, xt::xarray<float>>;'
            echo "static_assert(xtrace::inspect::node_count<G> == $n);"
            echo 'int main() { xt::xarray<float> a = {1.f, 2.f}; return f(a, a).size() == 2 ? 0 : 1; }'
        fi
    } >"$f"
    echo "$f"
}

measure() { # $1 = source, then extra flags; prints "seconds peak_MiB", best of three
    local src=$1 best_s="" best_m=""
    shift
    for _ in 1 2 3; do
        read -r t m < <(/usr/bin/time -f "%U %S %M" g++ -std=c++20 "${flags[@]}" "$@" -Iinclude \
            -c "$src" -o "$out/o.o" 2>&1 >/dev/null | tail -n 1 | awk '{printf "%.2f %.0f", $1 + $2, $3 / 1024}')
        if [ -z "$best_s" ] || [ "$(echo "$t < $best_s" | bc -l)" = 1 ]; then best_s=$t; fi
        if [ -z "$best_m" ] || [ "$m" -lt "$best_m" ]; then best_m=$m; fi
    done
    echo "$best_s $best_m"
}

table() { # $@ = extra flags
    read -r base_s base_m <<<"$(measure "$(generate 0)" "$@")"
    printf "bare include: %.2f s, %s MiB\n" "$base_s" "$base_m"
    printf "%6s  %14s  %16s\n" nodes "added time" "added peak mem"
    for n in 8 32 128 256; do
        read -r s m <<<"$(measure "$(generate "$n")" "$@")"
        printf "%6d  %12.2f s  %12d MiB\n" "$n" "$(echo "$s - $base_s" | bc -l)" "$((m - base_m))"
    done
}

echo "g++ $(g++ -dumpfullversion) ${flags[*]}, CPU time (user + sys)"
echo
echo "header-only:"
table
echo
echo "separate compilation (-DXTRACE_SEPARATE_COMPILATION):"
echo '#include <xtrace/src.hpp>' >"$out/runtime.cpp"
read -r rt_s rt_m <<<"$(measure "$out/runtime.cpp" -DXTRACE_SEPARATE_COMPILATION)"
printf "the runtime's own translation unit, compiled once per program: %.2f s, %s MiB\n" "$rt_s" "$rt_m"
table -DXTRACE_SEPARATE_COMPILATION
