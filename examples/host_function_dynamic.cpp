// A host_function whose result dims are known only when its callback returns: the graph before
// it runs, then the callback, then the rest, planned for the length the callback returned.

#include <xtrace/xtrace.hpp>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <vector>

// Examples run as tests: a broken promise fails the run.
void expect(bool ok, const char* what) {
    if (!ok) {
        std::cerr << "unexpected: " << what << "\n";
        std::exit(1);
    }
}

int main() {
    // The distinct values of x, sorted, scaled to a largest value of 1: how many there are is
    // known only at run time, so the spec's dim is -1 (tf.py_function's unknown shape).
    auto distinct = xtrace::function([](auto x) {
        auto values = xtrace::host_function(
            [](const xt::xarray<float>& a) {
                std::vector<float> v(a.begin(), a.end());
                std::sort(v.begin(), v.end());
                v.erase(std::unique(v.begin(), v.end()), v.end());
                xt::xarray<float> out = xt::xarray<float>::from_shape({v.size()});
                std::copy(v.begin(), v.end(), out.begin());
                return out;
            },
            xtrace::spec<float>({-1}), x);
        return values / xtrace::max(xtrace::abs(values));
    });
    const xt::xarray<float> a = distinct(xt::xarray<float>{4.f, 2.f, 4.f, 1.f});
    const xt::xarray<float> b = distinct(xt::xarray<float>{3.f, 3.f, 3.f, 3.f});
    std::cout << a << "\n" << b << "\n"; // {0.25, 0.5, 1.}, {1.}
    expect(a.size() == 3 && b.size() == 1, "one trace, results of any length");
    expect(distinct.tracing_count() == 1, "one trace");
}
