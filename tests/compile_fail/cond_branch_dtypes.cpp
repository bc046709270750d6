// cond branches that return different dtypes.
// expect: the then branch and the else branch return different dtypes
#include <xtrace/xtrace.hpp>
int main() {
    auto f = xtrace::function([](auto x) {
        return xtrace::cond(
            xtrace::sum(x) > 0.f, [&] { return x; }, [&] { return xtrace::cast<double>(x); });
    });
    f(xt::xarray<float>{1.f});
}
