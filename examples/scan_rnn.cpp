// A recurrent layer with xtrace::scan (lax.scan, tf.scan): the step function is traced once
// into the graph, runs once per row of the sequence, and its per-step outputs come back
// stacked. The same function serves any sequence length: the trace has an unknown leading dim.

#include <xtrace/xtrace.hpp>

#include <cmath>
#include <cstdlib>
#include <iostream>

int main() {
    auto rnn = xtrace::function(
        [](auto h0, auto xs, auto w, auto u) {
            // h' = tanh(h w + x u) for each row x of xs; returns (last h, every h stacked)
            return xtrace::scan(
                [&](auto h, auto x) {
                    auto next = xtrace::tanh(xtrace::matmul(h, w) + xtrace::matmul(x, u));
                    return std::make_tuple(next, next); // the next carry, the per-step output
                },
                h0, xs);
        },
        xtrace::options{
            .input_signature = {{xtrace::spec<float>({1, 4}), xtrace::spec<float>({-1, 1, 3}),
                                 xtrace::spec<float>({4, 4}), xtrace::spec<float>({3, 4})}}});
    const xt::xarray<float> h0 = xt::zeros<float>({1, 4});
    const xt::xarray<float> w = 0.1f * xt::ones<float>({4, 4});
    const xt::xarray<float> u = 0.2f * xt::ones<float>({3, 4});
    const auto [last, states] = rnn(h0, xt::ones<float>({5, 1, 3}), w, u);   // 5 steps
    const auto [last2, states2] = rnn(h0, xt::ones<float>({8, 1, 3}), w, u); // 8: same trace
    std::cout << "states " << states.shape()[0] << " and " << states2.shape()[0]
              << ", traces: " << rnn.tracing_count() << ", last h: " << last << '\n';
    // By hand: every unit of h follows h' = tanh(0.4 h + 0.6) from 0.
    float h = 0.f;
    for (int i = 0; i < 5; ++i)
        h = std::tanh(0.4f * h + 0.6f);
    return std::abs(last(0, 0) - h) < 1e-5f && rnn.tracing_count() == 1 ? EXIT_SUCCESS
                                                                        : EXIT_FAILURE;
}
