// Why both branches of a cond return a value. A traced function cannot branch on a tensor with
// a C++ `if` (the value does not exist while tracing), so it records both branches and picks one
// when it runs; the result must exist whichever is taken. A branch that returns nothing while
// the other returns a tensor does not compile, as AutoGraph rejects a Python `if` that sets a
// variable in one branch only.

#include <xtrace/xtrace.hpp>

#include <cmath>
#include <cstdlib>
#include <iostream>

int main() {
    auto clip_norm = xtrace::function([](auto x, auto max_norm) {
        auto norm = xtrace::sqrt(xtrace::sum(xtrace::square(x)));
        // if (norm > max_norm) ...            // does not compile: use xtrace::cond
        return xtrace::cond(
            norm > max_norm, [&] { return x * (max_norm / norm); }, // then: rescale
            [&] { return x; });                                     // else: must return too
        // [&] {}                                // would not compile: the else branch returns
        //                                       // nothing, so the result would not exist
    });
    const xt::xarray<float> small = {0.3f, 0.4f}, large = {3.f, 4.f};
    const xt::xarray<float> limit = 1.f;
    const xt::xarray<float> a = clip_norm(small, limit); // {0.3, 0.4}: the else branch ran
    const xt::xarray<float> b = clip_norm(large, limit); // {0.6, 0.8}: the then branch ran
    std::cout << a << ' ' << b << " traces: " << clip_norm.tracing_count() << '\n';

    // Branches that only have effects return nothing, both of them.
    auto report = xtrace::function([](auto x) {
        xtrace::cond(
            xtrace::min(x) < 0.f, [&] { xtrace::print("negative entries in", x); }, [] {});
        return xtrace::relu(x);
    });
    report(xt::xarray<float>{1.f, -1.f}); // prints
    report(xt::xarray<float>{1.f, 2.f});  // does not
    return std::abs(b(0) - 0.6f) < 1e-6f && a(0) == 0.3f ? EXIT_SUCCESS : EXIT_FAILURE;
}
