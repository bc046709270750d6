// A scan whose fn returns a carry in another dtype.
// expect: fn must return the next carries first, each in its carry's dtype
#include <xtrace/xtrace.hpp>
int main() {
    auto f = xtrace::function([](auto c, auto xs) {
        return xtrace::scan(
            [](auto a, auto x) { return std::tuple(xtrace::cast<double>(a + x), x); }, c, xs);
    });
    f(xt::xarray<float>(0.f), xt::xarray<float>{1.f});
}
