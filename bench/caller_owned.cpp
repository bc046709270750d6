// What a fresh result costs: GELU on 2^20 and 2^24 floats as `r = f(x)` (a new xt::xarray per
// call) against `f.call_into(r, x)` (the caller's array, written in place) and `x =
// f(std::move(x))` (the argument donated), and the hand xsimd loop as the anchor. Built twice: as
// is, and with XTENSOR_USE_XSIMD (xtensor then allocates through xsimd's aligned allocator, as
// vcpkg's xtensor[xsimd] does). Each variant reports the minor page faults per call (getrusage)
// beside its time. Every variant runs on 1 thread, as the hand loop does.

#include "gelu_reference.hpp"
#include "ratio_reporter.hpp"

#include <sys/resource.h>

#include <algorithm>

namespace {

const std::vector<std::size_t> sizes{std::size_t(1) << 20, std::size_t(1) << 24};

using xtrace::bench::gelu_input;

const auto gelu_function = [] {
    return xtrace::function(xtrace::bench::gelu, xtrace::options{.max_threads = 1});
};

long minor_faults() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
}

// Runs `body` in the benchmark loop and reports minor page faults per iteration.
template <class Body>
void measured(benchmark::State& state, Body&& body) {
    const long before = minor_faults();
    for (auto _ : state)
        body();
    state.counters["faults/call"] = benchmark::Counter(
        static_cast<double>(minor_faults() - before) / static_cast<double>(state.iterations()));
}

void hand_xsimd(benchmark::State& state) {
    const std::size_t n = static_cast<std::size_t>(state.range(0));
    const xt::xarray<float> x = gelu_input(n);
    xt::xarray<float> y = xt::xarray<float>::from_shape({n});
    xtrace::bench::hand_gelu(x.data(), y.data(), n); // the buffer's pages mapped before timing
    measured(state, [&] {
        xtrace::bench::hand_gelu(x.data(), y.data(), n);
        benchmark::DoNotOptimize(y.data());
        benchmark::ClobberMemory();
    });
}

void fresh_result(benchmark::State& state) {
    const std::size_t n = static_cast<std::size_t>(state.range(0));
    const xt::xarray<float> x = gelu_input(n);
    auto f = gelu_function();
    xt::xarray<float> r = f(x);
    measured(state, [&] {
        r = f(x);
        benchmark::DoNotOptimize(r.data());
    });
}

void call_into(benchmark::State& state) {
    const std::size_t n = static_cast<std::size_t>(state.range(0));
    const xt::xarray<float> x = gelu_input(n);
    auto f = gelu_function();
    xt::xarray<float> r;
    f.call_into(r, x);
    measured(state, [&] {
        f.call_into(r, x);
        benchmark::DoNotOptimize(r.data());
    });
}

// x = f(std::move(x)): the argument's buffer becomes the result (donation). Each call starts
// from the input's values again, copied in untimed: GELU of GELU of ... shrinks every value
// towards zero, and after some 130 calls most are subnormal, which costs Intel cores a
// microcode assist per operation (4.9x the hand loop at 2^20 floats on an Ice Lake Xeon).
void donated(benchmark::State& state) {
    const std::size_t n = static_cast<std::size_t>(state.range(0));
    const xt::xarray<float> input = gelu_input(n);
    xt::xarray<float> x = input;
    auto f = gelu_function();
    x = f(std::move(x));
    measured(state, [&] {
        state.PauseTiming();
        std::copy(input.begin(), input.end(), x.begin());
        state.ResumeTiming();
        x = f(std::move(x));
        benchmark::DoNotOptimize(x.data());
    });
}

} // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    for (std::size_t size : sizes) {
        benchmark::RegisterBenchmark("hand_xsimd", hand_xsimd)->Arg(static_cast<long>(size));
        benchmark::RegisterBenchmark("r=f(x)", fresh_result)->Arg(static_cast<long>(size));
        benchmark::RegisterBenchmark("call_into", call_into)->Arg(static_cast<long>(size));
        benchmark::RegisterBenchmark("x=f(move(x))", donated)->Arg(static_cast<long>(size));
    }
    xtrace::bench::ratio_reporter reporter("hand_xsimd");
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
}
