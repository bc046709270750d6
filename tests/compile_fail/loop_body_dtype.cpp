// A while_loop body that changes a loop variable's dtype.
// expect: body_fn must return one tensor per loop variable, each of its loop variable's dtype
#include <xtrace/xtrace.hpp>
int main() {
    auto f = xtrace::function([](auto x) {
        return xtrace::while_loop([](auto v) { return xtrace::sum(v) < 10.f; },
                                  [](auto v) { return xtrace::cast<double>(v); }, x);
    });
    f(xt::xarray<float>{1.f});
}
