// A gradient with respect to an integer tensor.
// expect: a gradient with respect to an integer or bool tensor does not exist
#include <xtrace/xtrace.hpp>
int main() {
    auto f = xtrace::function([](auto x, auto n) {
        return xtrace::gradients(xtrace::sum(x * xtrace::cast<float>(n)), n);
    });
    f(xt::xarray<float>{1.f}, xt::xarray<std::int32_t>{2});
}
