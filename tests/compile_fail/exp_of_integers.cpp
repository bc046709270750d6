// A floating-point op on an integer tensor.
// expect: this op needs a floating-point tensor
#include <xtrace/xtrace.hpp>
int main() {
    auto f = xtrace::function([](auto x) { return xtrace::exp(x); });
    f(xt::xarray<std::int64_t>{1});
}
