#include <xtrace/xtrace.hpp>

int main() {
    auto f = xtrace::function([](auto x) { return xtrace::exp(x) * 2.f; });
    const xt::xarray<float> a = {0.f, 0.f};
    const xt::xarray<float> r = f(a);
    return (r(0) == 2.f && r(1) == 2.f && f.tracing_count() == 1) ? 0 : 1;
}
