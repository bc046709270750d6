// xtrace::print runs on every call, in program order; a plain std::cout runs while tracing.

#include "support/eager_scope.hpp"
#include "support/testing.hpp"

#include <sstream>

using namespace xtrace::testing;

TEST_CASE("print runs on every call and std::cout only while tracing") {
    auto f = xtrace::function(
        [](auto x) {
            std::cout << "tracing\n";
            xtrace::print("x", x);
            auto y = x * 2;
            xtrace::print("then");
            xtrace::print("y x", y, x > 1);
            return y + 1;
        },
        quiet());
    const xt::xarray<std::int32_t> a = {1, 2};
    std::string once;
    {
        cout_capture c;
        f(a);
        once = c.text();
    }
    const std::string per_call = "x {1, 2}\nthen\ny x {2, 4} {false,  true}\n";
    CHECK(once == "tracing\n" + per_call);
    {
        cout_capture c;
        f(a);
        f(a);
        CHECK(c.text() == per_call + per_call);
    }
    {
        eager_scope eager;
        cout_capture c;
        f(a);
        CHECK(c.text() == "tracing\n" + per_call);
    }
}

TEST_CASE("print of strided arguments and from an inlined traced function") {
    auto inner = xtrace::function([](auto x) {
        xtrace::print("inner", x);
        return x;
    });
    auto outer = xtrace::function([&](auto x) { return inner(xtrace::transpose(x)) * 1.0; });
    const xt::xarray<double> a = {{1.0, 2.0}, {3.0, 4.0}};
    cout_capture c;
    outer(a);
    outer(a);
    const std::string line = "inner {{ 1.,  3.},\n { 2.,  4.}}\n";
    CHECK(c.text() == line + line);
    CHECK(outer.tracing_count() == 1);
}
