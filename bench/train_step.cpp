// A train step of a 2-layer MLP (mean squared error, plain gradient descent): gradients taken
// by xtrace::gradients against the same step with hand-derived gradients (the anchor), both
// traced; batch 64, sizes 2 -> 16 -> 1 and 256 -> 512 -> 10.

#include "normal_array.hpp"
#include "ratio_reporter.hpp"

#include <xtrace/xtrace.hpp>

#include <random>

namespace {

using xtrace::bench::normal_array;

struct model {
    xtrace::variable<float> w1, b1, w2, b2;
    model(std::size_t in, std::size_t hidden, std::size_t out, std::mt19937& gen)
        : w1(normal_array({in, hidden}, 0.1f, gen)), b1(normal_array({hidden}, 0.1f, gen)),
          w2(normal_array({hidden, out}, 0.1f, gen)), b2(normal_array({out}, 0.1f, gen)) {}
};

template <bool Automatic>
void train_step(benchmark::State& state) {
    const auto in = static_cast<std::size_t>(state.range(0));
    const std::size_t hidden = in == 2 ? 16 : 512, out = in == 2 ? 1 : 10;
    std::mt19937 gen(3);
    model m(in, hidden, out, gen);
    const xt::xarray<float> x = normal_array({64, in}, 1.f, gen),
                            t = normal_array({64, out}, 1.f, gen);
    auto step = xtrace::function(
        [&](auto x, auto target) {
            auto w1 = m.w1.read(), b1 = m.b1.read(), w2 = m.w2.read(), b2 = m.b2.read();
            auto h = xtrace::relu(xtrace::matmul(x, w1) + b1);
            auto y = xtrace::matmul(h, w2) + b2;
            auto err = y - target;
            auto loss = xtrace::mean(xtrace::square(err));
            const float rate = 1e-3f;
            if constexpr (Automatic) {
                auto [gw1, gb1, gw2, gb2] = xtrace::gradients(loss, m.w1, m.b1, m.w2, m.b2);
                m.w1.assign_sub(gw1 * rate);
                m.b1.assign_sub(gb1 * rate);
                m.w2.assign_sub(gw2 * rate);
                m.b2.assign_sub(gb2 * rate);
            } else {
                auto dy = err * (2.f / static_cast<float>(64 * target.shape()[1]));
                auto dh = xtrace::where(h > 0.f, xtrace::matmul(dy, xtrace::transpose(w2)), 0.f);
                m.w2.assign_sub(xtrace::matmul(xtrace::transpose(h), dy) * rate);
                m.b2.assign_sub(xtrace::sum(dy, {0}) * rate);
                m.w1.assign_sub(xtrace::matmul(xtrace::transpose(x), dh) * rate);
                m.b1.assign_sub(xtrace::sum(dh, {0}) * rate);
            }
            return loss;
        },
        xtrace::options{.max_threads = 1}); // PyTorch's anchor runs on 1 thread too
    step(x, t);
    for (auto _ : state) {
        auto loss = step(x, t);
        benchmark::DoNotOptimize(loss.data());
    }
}

} // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    for (long in : {2L, 256L}) {
        benchmark::RegisterBenchmark("hand", train_step<false>)->Arg(in);
        benchmark::RegisterBenchmark("gradients", train_step<true>)->Arg(in);
    }
    xtrace::bench::ratio_reporter reporter("hand");
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
}
