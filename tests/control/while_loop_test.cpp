// while_loop: one or several loop variables, captures, nesting with cond, zero iterations,
// effects per iteration, and the shape errors.

#include "support/eager_scope.hpp"
#include "support/testing.hpp"

using namespace xtrace::testing;

namespace {

template <class T>
void check_doubling() {
    // x doubles (plus y) until its sum passes `limit`: a trip count known only at run time.
    auto f = xtrace::function(
        [](auto x, auto y, auto limit) {
            return xtrace::while_loop([&](auto v) { return xtrace::sum(v) < limit; },
                                      [&](auto v) { return v * 2 + y; }, x);
        },
        quiet());
    for (int round = 0; round < 10; ++round) {
        const auto shape = random_shape(3);
        const xt::xarray<T> x = random_array<T>(shape, 1, 3);
        const xt::xarray<T> y = random_array<T>(broadcastable_to(shape), 0, 2);
        const xt::xarray<T> limit = T(std::uniform_int_distribution<int>(-5, 300)(rng()));
        xt::xarray<T> expected = x;
        for (;;) {
            T total = 0;
            for (T v : expected)
                total += v;
            if (!(total < limit()))
                break;
            expected = xt::xarray<T>(expected * T(2) + y);
        }
        auto [traced, eager] = both_paths(f, x, y, limit);
        CHECK(close(traced, expected));
        CHECK(close(eager, expected));
    }
}

} // namespace

TEST_CASE("a loop whose trip count depends on values runs in the graph") {
    check_doubling<float>();
    check_doubling<double>();
    check_doubling<std::int32_t>();
    check_doubling<std::int64_t>();
}

TEST_CASE("several loop variables, a captured tensor, and a cond in the body") {
    // acc = sum over i < n of (i odd ? x * i : -x), with i and acc the loop variables.
    auto f = xtrace::function(
        [](auto x, auto n) {
            auto i0 = xtrace::cast<std::int64_t>(n * 0);
            auto acc0 = x * 0.0;
            return xtrace::while_loop(
                [&](auto i, auto) { return i < n; },
                [&](auto i, auto acc) {
                    auto odd = xtrace::cast<std::int64_t>(i - (i / 2) * 2) == 1;
                    auto term = xtrace::cond(
                        odd, [&] { return x * xtrace::cast<double>(i); }, [&] { return -x; });
                    return std::tuple(i + 1, acc + term);
                },
                i0, acc0);
        },
        quiet());
    for (int round = 0; round < 8; ++round) {
        const xt::xarray<double> x = random_array<double>(random_shape(3));
        const std::int64_t count = std::uniform_int_distribution<int>(0, 7)(rng());
        const xt::xarray<std::int64_t> n = count;
        xt::xarray<double> acc = x * 0.0;
        for (std::int64_t i = 0; i < count; ++i)
            acc = xt::xarray<double>(
                acc + (i % 2 == 1 ? xt::xarray<double>(x * double(i)) : xt::xarray<double>(-x)));
        auto [traced, eager] = both_paths(f, x, n);
        CHECK(std::get<0>(traced)() == count);
        CHECK(close(std::get<1>(traced), acc, 8));
        CHECK(std::get<0>(eager)() == count);
        CHECK(close(std::get<1>(eager), acc, 8));
    }
}

TEST_CASE("zero iterations give the initial values; the body's print runs once per iteration") {
    auto f = xtrace::function(
        [](auto x, auto n) {
            return xtrace::while_loop([&](auto v) { return xtrace::sum(v) < n; },
                                      [&](auto v) {
                                          xtrace::print("step", v);
                                          return v + 1;
                                      },
                                      x);
        },
        quiet());
    cout_capture out;
    const xt::xarray<int> x = {0, 1};
    CHECK(close(f(x, xt::xarray<int>(0)), x));
    CHECK(out.text().empty());
    CHECK(close(f(x, xt::xarray<int>(4)), xt::xarray<int>{2, 3}));
    CHECK(out.text() == "step {0, 1}\nstep {1, 2}\n");
}

TEST_CASE("a body that changes a loop variable's shape is a shape_error, as in TensorFlow") {
    auto f = xtrace::function(
        [](auto x) {
            return xtrace::while_loop([](auto v) { return xtrace::sum(v) < 10.f; },
                                      [](auto v) { return xtrace::expand_dims(v, 0); }, x);
        },
        quiet());
    CHECK(shape_error_message([&] { f(xt::xarray<float>{1.f}); }) ==
          "xtrace::while_loop: loop variable 0 has shape (1,) before the loop, but shape (1, 1) "
          "after one iteration; the body must keep each loop variable's shape");

    // Unknown dims: checked per call, before the loop runs.
    auto g = xtrace::function(
        [](auto x) {
            return xtrace::while_loop([](auto v) { return xtrace::sum(v) < 10.f; },
                                      [](auto v) {
                                          return xtrace::broadcast_to(
                                              xtrace::sum(v, {0}, xtrace::keep_dims), {2});
                                      },
                                      x);
        },
        quiet({.input_signature = {{xtrace::spec<float>({-1})}}}));
    CHECK(shape_error_message([&] {
              g(xt::xarray<float>{1.f, 1.f, 1.f});
          }) ==
          "xtrace::while_loop: loop variable 0 has shape (3,) before the loop, but shape (2,) "
          "after one iteration; the body must keep each loop variable's shape");
    CHECK(close(g(xt::xarray<float>{1.f, 2.f}), xt::xarray<float>{6.f, 6.f}));
}

TEST_CASE("cond_fn must give a 0-d bool tensor") {
    auto f = xtrace::function(
        [](auto x) {
            return xtrace::while_loop([](auto v) { return v < 10.f; },
                                      [](auto v) { return v + 1.f; }, x);
        },
        quiet());
    CHECK(shape_error_message([&] {
              f(xt::xarray<float>{1.f, 2.f});
          }) == "xtrace::while_loop: cond_fn's result must be a 0-d bool tensor, got shape [2]");
    CHECK(close(f(xt::xarray<float>(1.5f)), xt::xarray<float>(10.5f)));
    xtrace::testing::eager_scope eager;
    CHECK(shape_error_message([&] {
              f(xt::xarray<float>{1.f, 2.f});
          }) == "xtrace::while_loop: cond_fn's result must be a 0-d bool tensor, got shape [2]");
}
