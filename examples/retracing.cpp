// Tracing and retracing: what runs when, what is in the cache key, and the two ways to trace
// fewer times.

#include <xtrace/xtrace.hpp>

#include <cstdlib>
#include <iostream>

// Examples run as tests: a broken promise fails the run.
void expect(bool ok, const char* what) {
    if (!ok) {
        std::cerr << "unexpected: " << what << "\n";
        std::exit(1);
    }
}

int main() {
    // C++ side effects run while tracing only; the graph runs on every call.
    int traced = 0;
    auto scale = xtrace::function([&traced](auto x, float factor) {
        ++traced; // runs once per trace, like a Python print inside tf.function
        return x * factor;
    });
    xt::xarray<float> v = {1.f, 2.f, 3.f};
    scale(v, 2.f);
    scale(v, 2.f); // same shapes, same static value: cached
    scale(v, 3.f); // a static argument's value is part of the key: traces again
    expect(traced == 2, "two traces");
    for (const auto& reason : scale.retrace_reasons())
        std::cout << reason << "\n"; // arg 1: value changed 2 -> 3

    // reduce_retracing: the second shape traces a relaxed signature that later shapes reuse.
    auto relaxed = xtrace::function([](auto x) { return xtrace::sqrt(x) + 1.f; },
                                    xtrace::options{.reduce_retracing = true});
    for (std::size_t n : {2, 3, 4, 5})
        relaxed(xt::xarray<float>(xt::ones<float>({n})));
    expect(relaxed.tracing_count() == 2, "shapes [2], [3], [4], [5] trace twice");
    for (const auto& sig : relaxed.pretty_printed_signatures())
        std::cout << sig << "\n"; // (x0: float32[2]) -> float32[2], (x0: float32[?]) -> float32[?]

    // reduce_retracing relaxes ranks too, as TensorFlow does: [], [1], [2], [3] trace 1, 2, 2, 2.
    auto centred = xtrace::function([](auto x) { return x - xtrace::mean(x); },
                                    xtrace::options{.reduce_retracing = true});
    centred(xt::xarray<float>(1.f));
    centred(xt::xarray<float>{1.f});                    // rank changed 0 -> 1: traces float32[...]
    centred(xt::xarray<float>{1.f, 2.f});               // fits float32[...]
    centred(xt::xarray<float>{{1.f, 2.f}, {3.f, 4.f}}); // so does a matrix
    expect(centred.tracing_count() == 2, "an unknown rank serves every later shape");

    // A spec of any rank: one trace for scalars, vectors and matrices alike.
    auto peak = xtrace::function(
        [](auto x) { return xtrace::max(xtrace::abs(x)); },
        xtrace::options{.input_signature = {{xtrace::spec<float>(xtrace::any_rank)}}});
    peak(xt::xarray<float>(-3.f));
    peak(xt::xarray<float>{{1.f, -4.f}, {2.f, 0.f}});
    expect(peak.tracing_count() == 1, "one trace for every rank");

    // input_signature: one trace for every batch size; other shapes are rejected.
    auto predict =
        xtrace::function([](auto x, auto w) { return xtrace::sigmoid(x * w); },
                         xtrace::options{.input_signature = {{xtrace::spec<float>({-1, 3}),
                                                              xtrace::spec<float>({3})}},
                                         .name = "predict"});
    xt::xarray<float> w = {0.5f, -1.f, 2.f};
    for (std::size_t batch : {1, 8, 32})
        predict(xt::xarray<float>(xt::ones<float>({batch, std::size_t(3)})), w);
    expect(predict.tracing_count() == 1, "one trace for every batch size");
    try {
        predict(xt::xarray<float>(xt::ones<float>({2, 4})), w);
    } catch (const xtrace::signature_error& e) {
        std::cout << e.what() << "\n"; // predict: arg 0 dim 1 is 4, input_signature expects 3 ...
    }

    // A concrete function: trace without running, look at the graph, call it.
    auto cf = predict.get_concrete_function(xtrace::spec<float>({-1, 3}), xtrace::spec<float>({3}));
    std::cout << cf.signature() << "\n" << cf.graph_text();
}
