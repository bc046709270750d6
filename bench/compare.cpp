// The comparison behind docs/speedup.png (scripts/bench.sh runs it): two elementwise programs,
// a 2-op `2*x + 1` and the 16-node GELU, from 16 to 2^24 floats, on 1 and 2 threads, against
// a hand-written xsimd loop (the anchor; on 2 threads split by oneTBB into the same chunks as
// xtrace's), xtensor's lazy expressions, xtrace's own op-by-op eager mode and, when Eigen is
// found, Eigen's Tensor module on a ThreadPoolDevice. Built twice by CMake: bench_compare, and
// bench_compare_xsimd with XTENSOR_USE_XSIMD (xtensor's vectorised, aligned configuration).
//
// Benchmarks are named <variant>/<program>/<threads>t/<size>; the ratio table at the end is
// against hand_xsimd of the same program, threads and size. Variants:
//   hand_xsimd     the hand loop into a preallocated buffer
//   traced_into    f.call_into(out, x): a cache hit into the caller's array
//   traced         out = f(x): a cache hit that allocates its result
//   eager          the same f under run_functions_eagerly(true): every op a new xt::xarray
//   xtensor_lazy   xt::noalias(out) = <the xtensor expression>, serial
//   eigen_tensor   out.device(pool) = <the Eigen Tensor expression>

#include "gelu_reference.hpp"
#include "ratio_reporter.hpp"

#include <xtrace/xtrace.hpp>

#include <xtrace/ext/xsimd.hpp>
#include <xtrace/ext/xtensor_extras.hpp>

#if defined(XTRACE_BENCH_HAVE_EIGEN)
#define EIGEN_USE_THREADS
#include <unsupported/Eigen/CXX11/Tensor>
#endif

#if defined(XTRACE_USE_TBB)
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#endif

#include <memory>
#include <string>

namespace {

using xtrace::bench::gelu_input;

/// `2*x + 1`, the smallest program worth a function: two ops.
constexpr auto affine = [](auto x) { return 2.f * x + 1.f; };

void hand_affine(const float* in, float* out, std::size_t n) {
    using B = xsimd::batch<float>;
    std::size_t i = 0;
    for (; i + B::size <= n; i += B::size)
        (2.f * B::load_unaligned(in + i) + 1.f).store_unaligned(out + i);
    for (; i < n; ++i)
        out[i] = 2.f * in[i] + 1.f;
}

/// Runs `loop(in, out, n)` over [0, n) on `threads` threads, in chunks of at least 2^15
/// elements (what xtrace uses), or in one piece on 1 thread.
template <class Loop>
void hand_on_threads(Loop loop, const float* in, float* out, std::size_t n, int threads) {
#if defined(XTRACE_USE_TBB)
    constexpr std::size_t chunk = std::size_t(1) << 15;
    if (threads > 1 && n > chunk) {
        static tbb::task_arena arena(2);
        arena.execute([&] {
            tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, chunk), [&](const auto& r) {
                loop(in + r.begin(), out + r.begin(), r.size());
            });
        });
        return;
    }
#endif
    (void)threads;
    loop(in, out, n);
}

/// Whether Body is the 2-op program (the other is GELU): picks the xtensor and Eigen spelling.
template <class Body>
constexpr bool is_affine = std::is_same_v<Body, std::remove_const_t<decltype(affine)>>;

template <class Body>
void register_program(const char* name, Body body, void (*hand)(const float*, float*, std::size_t),
                      std::size_t n, int threads) {
    const std::string key =
        std::string("/") + name + "/" + std::to_string(threads) + "t/" + std::to_string(n);
    auto input = std::make_shared<const xt::xarray<float>>(gelu_input(n));
    auto reg = [&](const char* variant, auto run) {
        benchmark::RegisterBenchmark((variant + key).c_str(), run)->UseRealTime();
    };
    xtrace::options opts;
    opts.max_threads = threads;

    reg("hand_xsimd", [=](benchmark::State& state) {
        xt::xarray<float> out = xt::xarray<float>::from_shape({n});
        hand(input->data(), out.data(), n); // touch every page outside the timing
        for (auto _ : state) {
            hand_on_threads(hand, input->data(), out.data(), n, threads);
            benchmark::DoNotOptimize(out.data());
            benchmark::ClobberMemory();
        }
    });
    reg("traced_into", [=](benchmark::State& state) {
        auto f = xtrace::function(body, opts);
        xt::xarray<float> out;
        f.call_into(out, *input); // traced here, outside the timing
        for (auto _ : state) {
            f.call_into(out, *input);
            benchmark::DoNotOptimize(out.data());
        }
    });
    reg("traced", [=](benchmark::State& state) {
        auto f = xtrace::function(body, opts);
        f(*input);
        for (auto _ : state) {
            xt::xarray<float> out = f(*input);
            benchmark::DoNotOptimize(out.data());
        }
    });
    if (threads == 1) {
        // Op-by-op evaluation and xtensor's assignment are serial: measured on 1 thread only.
        reg("eager", [=](benchmark::State& state) {
            auto f = xtrace::function(body, opts);
            xtrace::run_functions_eagerly(true);
            for (auto _ : state) {
                xt::xarray<float> out = f(*input);
                benchmark::DoNotOptimize(out.data());
            }
            xtrace::run_functions_eagerly(false);
        });
        reg("xtensor_lazy", [=](benchmark::State& state) {
            const xt::xarray<float>& x = *input;
            xt::xarray<float> out = xt::zeros<float>({n}); // every page touched
            for (auto _ : state) {
                if constexpr (is_affine<Body>)
                    xt::noalias(out) = 2.f * x + 1.f;
                else
                    xt::noalias(out) =
                        0.5f * x * (1.f + xt::tanh(0.7978845608f * (x + 0.044715f * x * x * x)));
                benchmark::DoNotOptimize(out.data());
                benchmark::ClobberMemory();
            }
        });
    }
#if defined(XTRACE_BENCH_HAVE_EIGEN)
    reg("eigen_tensor", [=](benchmark::State& state) {
        Eigen::ThreadPool pool(threads);
        Eigen::ThreadPoolDevice device(&pool, threads);
        const auto size = static_cast<Eigen::Index>(n);
        Eigen::TensorMap<const Eigen::Tensor<float, 1>> x(input->data(), size);
        Eigen::Tensor<float, 1> out(size);
        out.setZero(); // every page touched outside the timing
        for (auto _ : state) {
            if constexpr (is_affine<Body>)
                out.device(device) = x * 2.f + 1.f;
            else
                out.device(device) =
                    x * 0.5f * (((x + x * x * x * 0.044715f) * 0.7978845608f).tanh() + 1.f);
            benchmark::DoNotOptimize(out.data());
            benchmark::ClobberMemory();
        }
    });
#endif
}

} // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    for (int threads : {1, 2})
        for (std::size_t n : {std::size_t(16), std::size_t(256), std::size_t(4096),
                              std::size_t(1) << 16, std::size_t(1) << 20, std::size_t(1) << 24}) {
            register_program("affine", affine, hand_affine, n, threads);
            register_program("gelu", xtrace::bench::gelu, xtrace::bench::hand_gelu, n, threads);
        }
    xtrace::bench::ratio_reporter reporter("hand_xsimd");
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
}
