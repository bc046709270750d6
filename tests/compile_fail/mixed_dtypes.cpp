// Tensors of different dtypes combined without a cast.
// expect: tensors of different dtypes cannot be combined
#include <xtrace/xtrace.hpp>
int main() {
    auto f = xtrace::function([](auto x, auto y) { return x + y; });
    f(xt::xarray<float>{1.f}, xt::xarray<double>{1.0});
}
