// GELU, 0.5*x*(1+tanh(0.7978845608*(x+0.044715*x^3))), on 16, 2^20 and 2^24 floats:
// a hand-written xsimd loop (the anchor), xtensor's lazy assignment, op-by-op evaluation into
// temporaries, and xtrace's traced call (a cache hit, output allocation included), both with the
// statically fused kernel (the default) and through the block interpreter.

#include "gelu_reference.hpp"
#include "ratio_reporter.hpp"

#include <xtrace/xtrace.hpp>

#include <xtrace/ext/xsimd.hpp>
#include <xtrace/ext/xtensor_extras.hpp>

namespace {

const std::vector<std::size_t> sizes{16, std::size_t(1) << 20, std::size_t(1) << 24};

using xtrace::bench::gelu_input;

void hand_xsimd(benchmark::State& state) {
    const std::size_t n = static_cast<std::size_t>(state.range(0));
    const xt::xarray<float> x = gelu_input(n);
    xt::xarray<float> y = xt::xarray<float>::from_shape({n});
    for (auto _ : state) {
        xtrace::bench::hand_gelu(x.data(), y.data(), n);
        benchmark::DoNotOptimize(y.data());
        benchmark::ClobberMemory();
    }
}

void xtensor_lazy(benchmark::State& state) {
    const std::size_t n = static_cast<std::size_t>(state.range(0));
    const xt::xarray<float> x = gelu_input(n);
    xt::xarray<float> y = xt::xarray<float>::from_shape({n});
    for (auto _ : state) {
        xt::noalias(y) = 0.5f * x * (1.f + xt::tanh(0.7978845608f * (x + 0.044715f * x * x * x)));
        benchmark::DoNotOptimize(y.data());
        benchmark::ClobberMemory();
    }
}

void op_by_op(benchmark::State& state) {
    const std::size_t n = static_cast<std::size_t>(state.range(0));
    const xt::xarray<float> x = gelu_input(n);
    for (auto _ : state) {
        xt::xarray<float> x2 = x * x;
        xt::xarray<float> x3 = x2 * x;
        xt::xarray<float> t1 = 0.044715f * x3;
        xt::xarray<float> t2 = x + t1;
        xt::xarray<float> t3 = 0.7978845608f * t2;
        xt::xarray<float> t4 = xt::tanh(t3);
        xt::xarray<float> t5 = 1.f + t4;
        xt::xarray<float> t6 = 0.5f * x;
        xt::xarray<float> y = t6 * t5;
        benchmark::DoNotOptimize(y.data());
    }
}

// On 1 thread, as the loops they are measured against (bench_threads measures threads).
auto gelu = xtrace::function(xtrace::bench::gelu, xtrace::options{.max_threads = 1});
auto gelu_interpreted = xtrace::function(xtrace::bench::gelu,
                                         xtrace::options{.static_fusion = false, .max_threads = 1});

template <auto& F>
void traced(benchmark::State& state) {
    const std::size_t n = static_cast<std::size_t>(state.range(0));
    const xt::xarray<float> x = gelu_input(n);
    F(x); // trace outside the timed loop: this measures cache hits
    for (auto _ : state) {
        xt::xarray<float> y = F(x);
        benchmark::DoNotOptimize(y.data());
    }
}

void register_all() {
    for (std::size_t n : sizes) {
        const auto size = static_cast<std::int64_t>(n);
        benchmark::RegisterBenchmark("hand_xsimd", hand_xsimd)->Arg(size);
        benchmark::RegisterBenchmark("xtensor_lazy", xtensor_lazy)->Arg(size);
        benchmark::RegisterBenchmark("op_by_op", op_by_op)->Arg(size);
        benchmark::RegisterBenchmark("xtrace", traced<gelu>)->Arg(size);
        benchmark::RegisterBenchmark("xtrace_interpreter", traced<gelu_interpreted>)->Arg(size);
    }
}

} // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    register_all();
    xtrace::bench::ratio_reporter reporter("hand_xsimd");
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
}
