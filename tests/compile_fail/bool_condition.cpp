// A symbolic tensor steering C++ control flow.
// expect: a symbolic tensor cannot be used as a C++ bool
#include <cstdlib>
#include <xtrace/xtrace.hpp>
int main() {
    auto f = xtrace::function([](auto x) {
        if (x > 0.f)
            std::abort();
        return x;
    });
    f(xt::xarray<float>{1.f});
}
