// A lambda whose second parameter is a concrete xtensor type, so it cannot be traced.
// expect: the lambda's parameter I (see 'with I = ...' above) cannot take a symbolic tensor
#include <xtrace/xtrace.hpp>
int main() {
    auto f =
        xtrace::function([](const xt::xarray<float>& x, const xt::xarray<float>& y) { return x; });
    f(xt::xarray<float>{1.f}, xt::xarray<float>{1.f});
}
