// Bad input gets a typed exception that names the op, the argument and the shapes; the function
// keeps working afterwards.

#include "support/eager_scope.hpp"
#include "support/testing.hpp"

using namespace xtrace::testing;

TEST_CASE("an incompatible broadcast throws shape_error naming the op and both shapes") {
    auto f = xtrace::function([](auto x, auto y) { return xtrace::exp(x) * y; });
    const xt::xarray<float> a = xt::xarray<float>::from_shape({2, 3});
    const xt::xarray<float> b = xt::xarray<float>::from_shape({4});
    const std::string traced = shape_error_message([&] { f(a, b); });
    CHECK(traced == "xtrace::mul: cannot broadcast shapes [2,3] and [4]");
    {
        eager_scope eager;
        CHECK(shape_error_message([&] { f(a, b); }) == traced);
    }
    // The failed trace left nothing behind, and good calls still work.
    CHECK(f.cache_size() == 0);
    CHECK(f.tracing_count() == 0);
    const xt::xarray<float> c = xt::ones<float>({3});
    CHECK(f(a, c).shape()[1] == 3);
    CHECK(f.tracing_count() == 1);
}

TEST_CASE("shape_error is an xtrace::error is a std::runtime_error") {
    auto f = xtrace::function([](auto x, auto y) { return x + y; });
    const xt::xarray<int> a = {1, 2};
    const xt::xarray<int> b = {1, 2, 3};
    CHECK_THROWS_AS(f(a, b), xtrace::shape_error);
    CHECK_THROWS_AS(f(a, b), xtrace::error);
    CHECK_THROWS_AS(f(a, b), std::runtime_error);
}

TEST_CASE("an exception from the lambda while tracing reaches the caller; the cache is unchanged") {
    bool fail = true;
    auto f = xtrace::function([&fail](auto x) {
        if (fail)
            throw std::logic_error("lambda failed");
        return x + 1;
    });
    const xt::xarray<float> a = {1.f};
    CHECK_THROWS_AS(f(a), std::logic_error);
    CHECK(f.cache_size() == 0);
    fail = false;
    CHECK(f(a)(0) == 2.f);
    CHECK(f.tracing_count() == 1);
}

TEST_CASE("a symbolic tensor kept past its trace cannot be used") {
    std::optional<xtrace::arg<0, float>> kept;
    auto f = xtrace::function([&kept](auto x) {
        if constexpr (xtrace::symbolic_tensor<decltype(x)>)
            kept.emplace(x);
        return x + 1.f;
    });
    f(xt::xarray<float>{1.f});
    REQUIRE(kept.has_value());
    CHECK_THROWS_AS(kept->shape(), xtrace::tracing_error);
    CHECK_THROWS_AS(xtrace::exp(*kept), xtrace::tracing_error);
}

TEST_CASE("rank above the supported maximum is a signature_error naming the argument") {
    auto f = xtrace::function([](auto x) { return x + 1.f; });
    std::vector<std::size_t> shape(XTRACE_MAX_RANK + 1, 1);
    const xt::xarray<float> a = xt::xarray<float>::from_shape(shape);
    try {
        f(a);
        FAIL("no exception");
    } catch (const xtrace::signature_error& e) {
        CHECK(std::string(e.what()).find("arg 0 has rank 17") != std::string::npos);
    }
}

TEST_CASE("a variable argument of rank above the maximum is a signature_error naming it") {
    auto f = xtrace::function([](auto x, auto v) { return x + v.read(); });
    std::vector<std::size_t> shape(XTRACE_MAX_RANK + 1, 1);
    xtrace::variable<float> deep(xt::xarray<float>::from_shape(shape), "deep");
    const xt::xarray<float> x{1.f};
    try {
        f(x, deep);
        FAIL("no exception");
    } catch (const xtrace::signature_error& e) {
        CHECK(std::string(e.what()).find("arg 1 has rank 17") != std::string::npos);
    }
    xtrace::variable<float> flat(xt::xarray<float>{2.f}, "flat");
    const xt::xarray<float> r = f(x, flat); // the function still answers
    CHECK(r(0) == 3.f);
}
