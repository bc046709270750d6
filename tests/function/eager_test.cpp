// run_functions_eagerly: the same results as the traced path, with C++ side effects every call.

#include "support/eager_scope.hpp"
#include "support/testing.hpp"

using namespace xtrace::testing;

TEST_CASE("the switch is global and readable") {
    CHECK_FALSE(xtrace::functions_run_eagerly());
    {
        eager_scope eager;
        CHECK(xtrace::functions_run_eagerly());
    }
    CHECK_FALSE(xtrace::functions_run_eagerly());
}

TEST_CASE("eagerly, the lambda runs on every call and sees concrete shapes") {
    int runs = 0;
    std::vector<std::int64_t> seen;
    auto f = xtrace::function([&](auto x) {
        ++runs;
        seen = x.shape();
        return xtrace::sigmoid(x) * 2.f;
    });
    const xt::xarray<float> a = random_array<float>({4, 5});
    xt::xarray<float> traced = f(a);
    f(a);
    CHECK(runs == 1);
    {
        eager_scope eager;
        xt::xarray<float> e1 = f(a);
        xt::xarray<float> e2 = f(a);
        CHECK(runs == 3);
        CHECK(close(e1, traced));
        CHECK((e1 == e2));
    }
    CHECK(seen == std::vector<std::int64_t>{4, 5});
    CHECK(f.tracing_count() == 1); // eager calls do not trace
}

TEST_CASE("inside a trace, shape(), rank() and dtype() describe the symbolic tensor") {
    auto f = xtrace::function([](auto x, auto y) {
        CHECK(x.shape() == std::vector<std::int64_t>{2, 3});
        CHECK(x.rank() == 2);
        CHECK(x.dtype() == xtrace::dtype::float32);
        CHECK(y.dtype() == xtrace::dtype::int64);
        auto z = x * 2.f;
        CHECK(z.shape() == std::vector<std::int64_t>{2, 3});
        return z;
    });
    f(xt::xarray<float>::from_shape({2, 3}), xt::xarray<std::int64_t>{1});
}
