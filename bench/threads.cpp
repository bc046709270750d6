// Threads: each workload on 1 thread (options::max_threads = 1, the anchor) and on every core
// (max_threads = 0), into caller-owned results so that allocation stays out of the timing.
// Before timing, the two results are compared bit for bit. The 16-float GELU shows what a call
// below the work threshold pays for the threading machinery (nothing is spawned there). The two
// products of 64 rows are one row panel each, so a second thread only helps by running them at
// once (independent steps, plan/concurrency.hpp).

#include "gelu_reference.hpp"
#include "ratio_reporter.hpp"

#include <cstdio>
#include <cstring>
#include <functional>
#include <string>

namespace {

using xtrace::bench::gelu;
using xtrace::bench::gelu_input;

xtrace::options threads(int n, bool fusion = true) {
    xtrace::options o;
    o.max_threads = n;
    o.static_fusion = fusion;
    return o;
}

// One workload: given the options, a call that runs its traced function (traced once, when
// made) into `out`.
struct workload {
    std::string name;
    std::function<std::function<void(xt::xarray<float>&)>(const xtrace::options&)> make;
};

std::vector<workload> workloads() {
    const auto g20 = std::make_shared<xt::xarray<float>>(gelu_input(std::size_t(1) << 20));
    const auto g16 = std::make_shared<xt::xarray<float>>(gelu_input(16));
    auto s = std::make_shared<xt::xarray<float>>(gelu_input(std::size_t(8192) * 1024));
    s->reshape({8192, 1024});
    auto m = std::make_shared<xt::xarray<float>>(gelu_input(std::size_t(512) * 512));
    m->reshape({512, 512});
    auto d = std::make_shared<xt::xarray<float>>(gelu_input(std::size_t(1) << 20));
    d->reshape({1024, 1024});
    auto rows64 = std::make_shared<xt::xarray<float>>(gelu_input(std::size_t(64) * 512));
    rows64->reshape({64, 512});
    auto bind = [](auto body, auto input, bool fusion) {
        return [body, input, fusion](const xtrace::options& o) {
            xtrace::options opts = o;
            opts.static_fusion = fusion;
            auto f = xtrace::function(body, opts);
            return std::function<void(xt::xarray<float>&)>(
                [f, input](xt::xarray<float>& out) { f.call_into(out, *input); });
        };
    };
    auto bind2 = [](auto body, auto a, auto b) {
        return [body, a, b](const xtrace::options& o) {
            auto f = xtrace::function(body, o);
            return std::function<void(xt::xarray<float>&)>(
                [f, a, b](xt::xarray<float>& out) { f.call_into(out, *a, *b); });
        };
    };
    auto softmax = [](auto x) { return xtrace::softmax(x, 1); };
    auto products = [](auto x, auto w) {
        return xtrace::matmul(x, w) + xtrace::matmul(x, xtrace::transpose(w));
    };
    auto matmul = [](auto x) { return xtrace::matmul(x, x); };
    auto squares = [](auto x) { return xtrace::sum((x - 0.5f) * (x - 0.5f), {1}); };
    return {{"gelu_2^20_fused", bind(gelu, g20, true)},
            {"gelu_2^20_interpreted", bind(gelu, g20, false)},
            {"softmax_8192x1024", bind(softmax, s, true)},
            {"row_sum_sq_1024x1024", bind(squares, d, true)},
            {"matmul_512", bind(matmul, m, true)},
            {"two_products_64x512x512", bind2(products, rows64, m)},
            {"gelu_16", bind(gelu, g16, true)}};
}

} // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    static const auto all = workloads();
    for (const workload& w : all) {
        xt::xarray<float> one, many;
        w.make(threads(1))(one);
        w.make(threads(0))(many);
        const bool same = one.shape() == many.shape() &&
                          std::memcmp(one.data(), many.data(), one.size() * sizeof(float)) == 0;
        std::printf("%-24s 1 thread vs every core: %s\n", w.name.c_str(),
                    same ? "bit-identical" : "DIFFERENT BITS");
        if (!same)
            return 1;
        for (int n : {1, 0}) {
            const std::string name = (n == 1 ? "1_thread/" : "all_cores/") + w.name;
            benchmark::RegisterBenchmark(name.c_str(), [&w, n](benchmark::State& state) {
                const auto call = w.make(threads(n));
                xt::xarray<float> out;
                call(out); // traced here, outside the timing
                for (auto _ : state) {
                    call(out);
                    benchmark::DoNotOptimize(out.data());
                }
            })->UseRealTime();
        }
    }
    xtrace::bench::ratio_reporter reporter("1_thread");
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
}
