// The gradient of an RNN written as a while_loop of N steps (hidden size 32, a trip count known
// only at run time), against the forward pass alone (the anchor), as N grows: at a function's
// top level the gradient stores each iteration (linear in N); taken inside a cond branch it
// recomputes each iteration's state from the start instead (quadratic in N).

#include "normal_array.hpp"
#include "ratio_reporter.hpp"

#include <xtrace/xtrace.hpp>

#include <random>

namespace {

using xtrace::bench::normal_array;

// sum(h_N^2) for h_{k+1} = tanh(h_k w + b), while k < n.
auto rnn_loss = [](auto h0, auto w, auto b, auto n) {
    auto [k, h] = xtrace::while_loop(
        [&](auto i, auto) { return i < n; },
        [&](auto i, auto s) { return std::tuple(i + 1, xtrace::tanh(xtrace::matmul(s, w) + b)); },
        n * 0, h0);
    (void)k;
    return xtrace::sum(h * h);
};

enum class variant { forward, stored, recomputed };

template <variant V>
void loop(benchmark::State& state) {
    std::mt19937 gen(5);
    const xt::xarray<float> h0 = normal_array({1, 32}, 1.f, gen),
                            w = normal_array({32, 32}, 0.2f, gen),
                            b = normal_array({32}, 0.1f, gen);
    const xt::xarray<std::int32_t> n(static_cast<std::int32_t>(state.range(0)));
    auto f = xtrace::function(
        [](auto h0, auto w, auto b, auto n) {
            if constexpr (V == variant::forward) {
                return rnn_loss(h0, w, b, n);
            } else if constexpr (V == variant::stored) {
                return xtrace::gradients(rnn_loss(h0, w, b, n), w);
            } else { // in a branch, where a length known only at run time cannot be planned
                return xtrace::cond(
                    xtrace::sum(b) > -1e30f,
                    [&] { return xtrace::gradients(rnn_loss(h0, w, b, n), w); },
                    [&] { return w * 0.f; });
            }
        },
        xtrace::options{.max_threads = 1});
    f(h0, w, b, n);
    for (auto _ : state) {
        auto r = f(h0, w, b, n);
        benchmark::DoNotOptimize(r.data());
    }
}

} // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    for (long n : {10L, 100L, 1000L}) {
        benchmark::RegisterBenchmark("forward", loop<variant::forward>)->Arg(n);
        benchmark::RegisterBenchmark("stored", loop<variant::stored>)->Arg(n);
        benchmark::RegisterBenchmark("recomputed", loop<variant::recomputed>)->Arg(n);
    }
    xtrace::bench::ratio_reporter reporter("forward");
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
}
