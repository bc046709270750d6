// A generic lambda with one concrete tensor parameter.
// expect: the lambda cannot be called with its tensor arguments as symbolic tensors
#include <xtrace/xtrace.hpp>
int main() {
    auto f = xtrace::function([](auto x, const xt::xarray<float>& y) { return x; });
    f(xt::xarray<float>{1.f}, xt::xarray<float>{1.f});
}
