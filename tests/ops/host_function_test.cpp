// host_function: C++ on concrete values, every call, result checked against its spec.

#include "support/eager_scope.hpp"
#include "support/testing.hpp"

#include <xtrace/ext/xtensor_extras.hpp>

using namespace xtrace::testing;

TEST_CASE("the callback runs on every call with concrete values; its result flows on") {
    int calls = 0;
    auto f = xtrace::function(
        [&](auto x, auto y) {
            auto z = xtrace::host_function(
                [&](const xt::xarray<double>& a, const xt::xarray<std::int32_t>& b) {
                    ++calls;
                    return xt::xarray<double>(a * xt::cast<double>(b));
                },
                xtrace::spec<double>({2, 3}), xtrace::transpose(x), y);
            return z + 1.0;
        },
        quiet());
    const xt::xarray<double> x = random_array<double>({3, 2});
    const xt::xarray<std::int32_t> y = random_array<std::int32_t>({2, 3}, -5, 5);
    const xt::xarray<double> expected = xt::transpose(x) * xt::cast<double>(y) + 1.0;
    auto [traced, eager] = both_paths(f, x, y);
    CHECK(close(traced, expected));
    CHECK(close(eager, expected));
    CHECK(close(f(x, y), expected));
    CHECK(calls == 4); // traced, interpreted copy, eager, and the last call: none while tracing
}

TEST_CASE("a result that does not match the spec is a signature_error; fn's exceptions pass") {
    bool fail = false;
    auto f = xtrace::function(
        [&](auto x) {
            return xtrace::host_function(
                [&](const xt::xarray<float>& a) {
                    if (fail)
                        throw std::domain_error("callback failed");
                    return xt::xarray<float>(xt::concatenate(xt::xtuple(a, a)));
                },
                xtrace::spec<float>({4}), x);
        },
        quiet());
    const xt::xarray<float> two = {1.f, 2.f};
    CHECK(f(two).size() == 4);
    try {
        f(xt::xarray<float>{1.f, 2.f, 3.f});
        FAIL("no signature_error");
    } catch (const xtrace::signature_error& e) {
        CHECK(std::string(e.what()) ==
              "xtrace::host_function: the callback returned float32[6], its spec says float32[4]");
    }
    fail = true;
    CHECK_THROWS_AS(f(two), std::domain_error);
    fail = false;
    CHECK(f(two).size() == 4); // still works
}

TEST_CASE("a spec with unknown dims inside a while_loop body cannot be traced") {
    auto f = xtrace::function(
        [](auto x) {
            return xtrace::while_loop(
                [](auto v) { return xtrace::sum(v) < 10.f; },
                [](auto v) {
                    return xtrace::host_function(
                        [](const xt::xarray<float>& a) { return xt::xarray<float>(a + 1.f); },
                        xtrace::spec<float>({-1}), v);
                },
                x);
        },
        quiet());
    CHECK_THROWS_AS(f(xt::xarray<float>{1.f}), xtrace::tracing_error);
    CHECK(f.tracing_count() == 0);
}
