// A reduction fed by elementwise work: the squared distance sum((x - y)^2), over all 2^20
// floats and per row of 1024 x 1024. A hand-written xsimd loop (the anchor), xtensor's lazy
// reducer, op-by-op evaluation into temporaries, and xtrace, whose reduction runs inside the
// region computing (x - y)^2 so that the difference is never stored.

#include "ratio_reporter.hpp"

#include <xtrace/xtrace.hpp>

#include <xtrace/ext/xsimd.hpp>
#include <xtrace/ext/xtensor_extras.hpp>

namespace {

constexpr std::size_t rows = 1024, cols = 1024;

xt::xarray<float> input(float phase) {
    auto x = xt::xarray<float>::from_shape({rows, cols});
    for (std::size_t i = 0; i < x.size(); ++i)
        x.data()[i] = static_cast<float>((i * 7 + static_cast<std::size_t>(phase)) % 1000) * 0.002f;
    return x;
}

// Range 0: reduce everything; range 1: one result per row.
bool per_row(const benchmark::State& state) {
    return state.range(0) == 1;
}

void hand_xsimd(benchmark::State& state) {
    const xt::xarray<float> x = input(0), y = input(3);
    const std::size_t run = per_row(state) ? cols : rows * cols, runs = rows * cols / run;
    std::vector<float> out(runs);
    using B = xsimd::batch<float>;
    for (auto _ : state) {
        for (std::size_t r = 0; r < runs; ++r) {
            const float* a = x.data() + r * run;
            const float* b = y.data() + r * run;
            B s0(0.f), s1(0.f), s2(0.f), s3(0.f);
            std::size_t i = 0;
            for (; i + 4 * B::size <= run; i += 4 * B::size) {
                const B d0 = B::load_unaligned(a + i) - B::load_unaligned(b + i);
                const B d1 =
                    B::load_unaligned(a + i + B::size) - B::load_unaligned(b + i + B::size);
                const B d2 =
                    B::load_unaligned(a + i + 2 * B::size) - B::load_unaligned(b + i + 2 * B::size);
                const B d3 =
                    B::load_unaligned(a + i + 3 * B::size) - B::load_unaligned(b + i + 3 * B::size);
                s0 = xsimd::fma(d0, d0, s0);
                s1 = xsimd::fma(d1, d1, s1);
                s2 = xsimd::fma(d2, d2, s2);
                s3 = xsimd::fma(d3, d3, s3);
            }
            float s = xsimd::hadd((s0 + s1) + (s2 + s3));
            for (; i < run; ++i)
                s += (a[i] - b[i]) * (a[i] - b[i]);
            out[r] = s;
        }
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
}

void xtensor_lazy(benchmark::State& state) {
    const xt::xarray<float> x = input(0), y = input(3);
    for (auto _ : state) {
        xt::xarray<float> s = per_row(state) ? xt::xarray<float>(xt::sum(xt::square(x - y), {1}))
                                             : xt::xarray<float>(xt::sum(xt::square(x - y)));
        benchmark::DoNotOptimize(s.data());
    }
}

void op_by_op(benchmark::State& state) {
    const xt::xarray<float> x = input(0), y = input(3);
    for (auto _ : state) {
        xt::xarray<float> d = x - y;
        xt::xarray<float> d2 = d * d;
        xt::xarray<float> s =
            per_row(state) ? xt::xarray<float>(xt::sum(d2, {1})) : xt::xarray<float>(xt::sum(d2));
        benchmark::DoNotOptimize(s.data());
    }
}

// On 1 thread, as the loop it is measured against.
auto distance = xtrace::function(
    [](auto x, auto y, bool rows_only) {
        auto d = xtrace::square(x - y);
        return xtrace::erase(rows_only ? xtrace::erase(xtrace::sum(d, {1}))
                                       : xtrace::erase(xtrace::sum(d)));
    },
    xtrace::options{.max_threads = 1});

void traced(benchmark::State& state) {
    const xt::xarray<float> x = input(0), y = input(3);
    distance(x, y, per_row(state)); // trace outside the timed loop
    for (auto _ : state) {
        xt::xarray<float> s = distance(x, y, per_row(state));
        benchmark::DoNotOptimize(s.data());
    }
}

} // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    for (std::int64_t mode : {0, 1}) {
        benchmark::RegisterBenchmark("hand_xsimd", hand_xsimd)->Arg(mode);
        benchmark::RegisterBenchmark("xtensor_lazy", xtensor_lazy)->Arg(mode);
        benchmark::RegisterBenchmark("op_by_op", op_by_op)->Arg(mode);
        benchmark::RegisterBenchmark("xtrace", traced)->Arg(mode);
    }
    std::printf("size 0: sum over all 2^20 elements; size 1: per row of 1024 x 1024\n");
    xtrace::bench::ratio_reporter reporter("hand_xsimd");
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
}
