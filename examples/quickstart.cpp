// The first example of the README: trace once, reuse the graph, retrace on a new shape.

#include <xtrace/xtrace.hpp>

#include <iostream>
#include <xtrace/ext/xtensor_extras.hpp>

int main() {
    auto f = xtrace::function([](auto x, auto y) { return xtrace::exp(x) * y + 1.0f; });

    xt::xarray<float> a = {{0.f, 1.f, 2.f}, {3.f, 4.f, 5.f}};
    xt::xarray<float> b = {1.f, 0.5f, 0.25f};

    xt::xarray<float> r = f(a, b); // first call: traces, then runs the graph
    std::cout << "f(a, b) =\n" << r << "\n";
    std::cout << "tracing count after the first call: " << f.tracing_count() << "\n";

    f(a * 2.f, b); // same signature (float32[2,3], float32[3]): a cache hit
    std::cout << "after a call with the same shapes:   " << f.tracing_count() << "\n";

    xt::xarray<float> c = {{1.f, 2.f, 3.f}};
    f(c, b); // new shape float32[1,3]: traces again
    std::cout << "after a call with a new shape:       " << f.tracing_count() << "\n";

    for (const auto& reason : f.retrace_reasons())
        std::cout << "retraced because " << reason << "\n";
    for (const auto& sig : f.pretty_printed_signatures())
        std::cout << "cached: " << sig << "\n";

    const auto s = f.stats();
    std::cout << "calls " << s.calls << ", cache hits " << s.cache_hits << ", traces " << s.traces
              << "\n";
}
