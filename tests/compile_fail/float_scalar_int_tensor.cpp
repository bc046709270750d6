// A floating-point scalar with an integer tensor.
// expect: no floating-point scalar with an integer tensor
#include <xtrace/xtrace.hpp>
int main() {
    auto f = xtrace::function([](auto x) { return x * 0.5; });
    f(xt::xarray<std::int32_t>{1});
}
