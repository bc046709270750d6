// matmul n x n x n in float: xtrace's traced matmul against the same BLAS's cblas_sgemm (the
// anchor), called directly in the same run. Built twice: bench_matmul runs xtrace's built-in
// kernel, bench_matmul_blas its CBLAS backend (XTRACE_USE_BLAS), whose overhead over a direct
// sgemm call is what the ratio shows. When Eigen is found, Eigen's own product (row-major maps,
// `noalias`) runs in the same table. Everything runs on 1 thread: xtrace with max_threads = 1,
// OpenBLAS under OPENBLAS_NUM_THREADS=1 (scripts/bench.sh sets it). Reports GFLOP/s as a counter.

#include "ratio_reporter.hpp"

#include <xtrace/xtrace.hpp>

#include <cblas.h>

#if defined(XTRACE_BENCH_HAVE_EIGEN)
#include <Eigen/Core>
#endif

namespace {

xt::xarray<float> input(std::size_t n, float phase) {
    auto x = xt::xarray<float>::from_shape({n, n});
    for (std::size_t i = 0; i < x.size(); ++i)
        x.data()[i] = static_cast<float>((i * 13 + static_cast<std::size_t>(phase)) % 97) * 0.01f;
    return x;
}

void flops(benchmark::State& state, std::size_t n) {
    state.counters["GFLOP/s"] = benchmark::Counter(
        2.0 * static_cast<double>(n * n * n) * static_cast<double>(state.iterations()),
        benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}

void cblas_sgemm_direct(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const xt::xarray<float> a = input(n, 0), b = input(n, 5);
    xt::xarray<float> c = xt::xarray<float>::from_shape({n, n});
    const int ni = static_cast<int>(n);
    for (auto _ : state) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni, 1.f, a.data(), ni,
                    b.data(), ni, 0.f, c.data(), ni);
        benchmark::DoNotOptimize(c.data());
        benchmark::ClobberMemory();
    }
    flops(state, n);
}

#if defined(XTRACE_BENCH_HAVE_EIGEN)
void eigen_product(benchmark::State& state) {
    using matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    const auto n = static_cast<std::size_t>(state.range(0));
    const xt::xarray<float> a = input(n, 0), b = input(n, 5);
    const auto ni = static_cast<Eigen::Index>(n);
    const Eigen::Map<const matrix> ea(a.data(), ni, ni), eb(b.data(), ni, ni);
    matrix c(ni, ni);
    for (auto _ : state) {
        c.noalias() = ea * eb;
        benchmark::DoNotOptimize(c.data());
        benchmark::ClobberMemory();
    }
    flops(state, n);
}
#endif

auto product = xtrace::function([](auto a, auto b) { return xtrace::matmul(a, b); },
                                xtrace::options{.max_threads = 1});

void xtrace_matmul(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const xt::xarray<float> a = input(n, 0), b = input(n, 5);
    xt::xarray<float> c = product(a, b);
    for (auto _ : state) {
        product.call_into(c, a, b);
        benchmark::DoNotOptimize(c.data());
        benchmark::ClobberMemory();
    }
    flops(state, n);
}

} // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    for (auto* b : {
             benchmark::RegisterBenchmark("cblas_sgemm", cblas_sgemm_direct),
#if defined(XTRACE_BENCH_HAVE_EIGEN)
                 benchmark::RegisterBenchmark("eigen", eigen_product),
#endif
#if defined(XTRACE_USE_BLAS)
                 benchmark::RegisterBenchmark("xtrace_blas", xtrace_matmul)
#else
                    benchmark::RegisterBenchmark("xtrace_builtin", xtrace_matmul)
#endif
         })
        b->RangeMultiplier(2)->Range(64, 1024);
    xtrace::bench::ratio_reporter reporter("cblas_sgemm");
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
}
