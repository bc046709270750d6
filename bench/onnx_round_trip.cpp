// The cost of going through a file: a traced function, and the same function exported to ONNX
// and loaded back, called on the same arguments (a cache hit, output allocation included).
//   gelu_16, gelu_2^20: GELU on 16 and 2^20 floats: the traced call with its statically fused
//     kernel (the anchor), the traced call on the interpreter, the loaded model;
//   mlp_64: relu(x W1 + b1) W2 + b2, softmax, batch 64, 256 -> 512 -> 10, weights in variables
//     (initializers once exported).
// The loaded model's library is compiled here with the benchmark's own flags (bench/CMakeLists),
// so both sides run the same kernels.

#include "gelu_reference.hpp"
#include "ratio_reporter.hpp"

#include <xtrace/onnx.hpp>
#include <xtrace/xtrace.hpp>

namespace {

using xtrace::bench::gelu;
using xtrace::bench::gelu_input;

template <class F, class... A>
void run(benchmark::State& state, const F& f, const A&... args) {
    for (auto _ : state) {
        auto r = f(args...);
        benchmark::DoNotOptimize(r);
    }
}

void register_gelu(std::size_t n, const std::string& size) {
    const auto x = std::make_shared<xt::xarray<float>>(gelu_input(n));
    auto fused = xtrace::function(gelu);
    auto interpreted = xtrace::function(gelu, {.static_fusion = false});
    const auto model = xtrace::onnx::load_bytes(xtrace::onnx::export_model(fused, *x));
    benchmark::RegisterBenchmark(("traced/" + size).c_str(),
                                 [=](benchmark::State& s) { run(s, fused, *x); });
    benchmark::RegisterBenchmark(("traced_interpreter/" + size).c_str(),
                                 [=](benchmark::State& s) { run(s, interpreted, *x); });
    benchmark::RegisterBenchmark(("loaded/" + size).c_str(),
                                 [=](benchmark::State& s) { run(s, model, *x); });
}

void register_mlp() {
    auto random = [](std::vector<std::size_t> shape, float scale) {
        xt::xarray<float> a = xt::xarray<float>::from_shape(shape);
        std::uint32_t state = 12345;
        for (auto& v : a) {
            state = state * 1664525u + 1013904223u;
            v = (static_cast<float>(state >> 8) / 16777216.f - 0.5f) * scale;
        }
        return a;
    };
    auto w1 = std::make_shared<xtrace::variable<float>>(random({256, 512}, 0.1f));
    auto b1 = std::make_shared<xtrace::variable<float>>(random({512}, 0.1f));
    auto w2 = std::make_shared<xtrace::variable<float>>(random({512, 10}, 0.1f));
    auto b2 = std::make_shared<xtrace::variable<float>>(random({10}, 0.1f));
    auto predict = xtrace::function([=](auto x) {
        auto h = xtrace::relu(xtrace::matmul(x, w1->read()) + b1->read());
        return xtrace::softmax(xtrace::matmul(h, w2->read()) + b2->read());
    });
    const auto x = std::make_shared<xt::xarray<float>>(random({64, 256}, 2.f));
    const auto model = xtrace::onnx::load_bytes(
        xtrace::onnx::export_model(predict, xtrace::spec<float>({-1, 256})));
    benchmark::RegisterBenchmark("traced/mlp_64",
                                 [=](benchmark::State& s) { run(s, predict, *x); });
    benchmark::RegisterBenchmark("loaded/mlp_64", [=](benchmark::State& s) { run(s, model, *x); });
}

} // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    register_gelu(16, "gelu_16");
    register_gelu(std::size_t(1) << 20, "gelu_2^20");
    register_mlp();
    xtrace::bench::ratio_reporter reporter("traced");
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
}
