// The cost of the cache: a hit on a 16-float GELU, returning a fresh result, writing into the
// caller's, or into its donated argument (anchor: the same GELU hand-written with xsimd on 16
// floats), and a first trace of a graph of 20+ nodes (cache cleared every iteration: trace,
// plan, run). The graph has 23 nodes after CSE (1 argument, 7 constants, 15 ops).

#include "ratio_reporter.hpp"

#include <xtrace/xtrace.hpp>

#include <xtrace/ext/xsimd.hpp>

namespace {

auto gelu = xtrace::function([](auto x) {
    return 0.5f * x * (1.f + xtrace::tanh(0.7978845608f * (x + 0.044715f * x * x * x)));
});

auto twenty = xtrace::function([](auto x) {
    auto a = x * 1.5f + 2.f;
    auto b = xtrace::tanh(x) - xtrace::sigmoid(x * 0.5f);
    auto c = xtrace::exp(-(x * x)) + 1.f;
    return (a * b) / c + xtrace::relu(x - 0.25f) * 3.f;
});

xt::xarray<float> input() {
    xt::xarray<float> x = xt::xarray<float>::from_shape({16});
    for (std::size_t i = 0; i < 16; ++i)
        x(i) = static_cast<float>(i) * 0.3f - 2.f;
    return x;
}

void hand_xsimd(benchmark::State& state) {
    const xt::xarray<float> x = input();
    xt::xarray<float> y = xt::xarray<float>::from_shape({16});
    using B = xsimd::batch<float>;
    for (auto _ : state) {
        for (std::size_t i = 0; i + B::size <= 16; i += B::size) {
            const B v = B::load_unaligned(x.data() + i);
            (0.5f * v * (1.f + xsimd::tanh(0.7978845608f * (v + 0.044715f * v * v * v))))
                .store_unaligned(y.data() + i);
        }
        benchmark::DoNotOptimize(y.data());
        benchmark::ClobberMemory();
    }
}

void cache_hit(benchmark::State& state) {
    const xt::xarray<float> x = input();
    gelu(x);
    for (auto _ : state) {
        auto y = gelu(x);
        benchmark::DoNotOptimize(y.data());
    }
}

void cache_hit_into(benchmark::State& state) { // into a result the caller owns: no allocation
    const xt::xarray<float> x = input();
    xt::xarray<float> y = gelu(x);
    for (auto _ : state) {
        gelu.call_into(y, x);
        benchmark::DoNotOptimize(y.data());
        benchmark::ClobberMemory();
    }
}

void cache_hit_donated(benchmark::State& state) { // x = f(std::move(x)): x's buffer reused
    xt::xarray<float> x = input();
    for (auto _ : state) {
        x = gelu(std::move(x));
        benchmark::DoNotOptimize(x.data());
        benchmark::ClobberMemory();
    }
}

void first_trace(benchmark::State& state) {
    const xt::xarray<float> x = input();
    for (auto _ : state) {
        twenty.clear_cache();
        auto y = twenty(x);
        benchmark::DoNotOptimize(y.data());
    }
}

} // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    benchmark::RegisterBenchmark("hand_xsimd/16", hand_xsimd);
    benchmark::RegisterBenchmark("cache_hit/16", cache_hit);
    benchmark::RegisterBenchmark("cache_hit_into/16", cache_hit_into);
    benchmark::RegisterBenchmark("cache_hit_donated/16", cache_hit_donated);
    benchmark::RegisterBenchmark("first_trace/16", first_trace);
    xtrace::bench::ratio_reporter reporter("hand_xsimd");
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
}
