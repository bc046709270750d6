// A cond whose else branch returns nothing while the then branch returns a tensor.
// expect: both branches must return a value
#include <xtrace/xtrace.hpp>
int main() {
    auto f = xtrace::function([](auto x) {
        return xtrace::cond(
            xtrace::sum(x) > 0.f, [&] { return x; }, [] {});
    });
    f(xt::xarray<float>{1.f});
}
