// A tensor of an element type xtrace does not support.
// expect: tensors must hold float, double, std::int32_t, std::int64_t or bool
#include <complex>
#include <xtrace/xtrace.hpp>
int main() {
    auto f = xtrace::function([](auto x) { return x + x; });
    const xt::xarray<std::complex<float>> a = xt::zeros<std::complex<float>>({2});
    f(a);
}
