// Gradients through cond: a cond over the branches' gradients, taking the same branch; against
// finite differences (away from the predicate's switching point) and hand values.

#include "autodiff/finite_differences.hpp"
#include "support/eager_scope.hpp"

using namespace xtrace::testing;

TEST_CASE("cond: the taken branch's gradient, for values captured by either branch") {
    auto f = [](auto x, auto y) {
        auto r = xtrace::cond(
            xtrace::sum(x) > 0.0, [&] { return x * y + xtrace::sin(x); },
            [&] { return xtrace::exp(x) * 2.0; });
        return xtrace::sum(r * r);
    };
    for (double shift : {1.0, -1.0}) { // both branches
        const xt::xarray<double> x = uniform({2, 3}, -0.5, 0.5) + shift;
        const auto y = uniform({3}, -1.0, 1.0);
        check_gradients(f, x, y);
    }
}

TEST_CASE("cond with several results, a result left unused, and a branch that ignores an input") {
    auto f = [](auto x, auto y) {
        auto [a, b, c] = xtrace::cond(
            xtrace::sum(y) > 0.0, [&] { return std::tuple(x * 2.0, x * y, y * 0.0 + 1.0); },
            [&] { return std::tuple(xtrace::tanh(y) + x * 0.0, y * 3.0, x); });
        (void)c;
        return xtrace::sum(a) + xtrace::sum(xtrace::square(b));
    };
    for (double shift : {1.0, -1.0}) {
        const auto x = uniform({4}, -1.0, 1.0);
        const xt::xarray<double> y = uniform({4}, -0.3, 0.3) + shift;
        check_gradients(f, x, y);
    }
}

TEST_CASE("nested conds, and gradients of an input used outside the cond too") {
    auto f = [](auto x) {
        auto inner = [&](auto v) {
            return xtrace::cond(
                xtrace::max(v) > 1.0, [&] { return v * v; }, [&] { return -v; });
        };
        auto r = xtrace::cond(
            xtrace::min(x) > -5.0, [&] { return inner(x * 2.0); }, [&] { return x; });
        return xtrace::sum(r * x);
    };
    check_gradients(f, uniform({5}, 0.6, 1.0));  // inner takes v * v
    check_gradients(f, uniform({5}, -0.9, 0.4)); // inner takes -v
}

TEST_CASE("while_loop: gradients through a data-dependent trip count, loop variables and "
          "captured values") {
    // v grows until its sum passes 10: the trip count depends on x, the gradient follows it.
    auto f = [](auto x, auto c) {
        auto v = xtrace::while_loop([](auto s) { return xtrace::sum(s) < 10.0; },
                                    [&](auto s) { return s * 1.25 + xtrace::sin(c); }, x);
        return xtrace::sum(xtrace::square(v));
    };
    check_gradients(f, uniform({3}, 0.2, 0.9), uniform({3}, 0.1, 0.5));
    // Zero iterations: the gradient is the seed's.
    check_gradients(f, uniform({3}, 4.0, 5.0), uniform({3}, 0.1, 0.5));
    // Cut short by maximum_iterations: 3 steps, whatever the sum.
    auto capped = [](auto x, auto c) {
        auto v = xtrace::while_loop([](auto s) { return xtrace::sum(s) < 1e9; },
                                    [&](auto s) { return xtrace::tanh(s * c) + 0.5; }, x,
                                    xtrace::maximum_iterations(3));
        return xtrace::sum(v * c);
    };
    check_gradients(capped, uniform({4}, -1.0, 1.0), uniform({4}, 0.5, 1.5));
}

TEST_CASE("while_loop under run_functions_eagerly: the gradient a trace gives, not zeros") {
    // Regression: recorded on deferred tensors, the loop ran at once and its results no longer
    // depended on x, so grad gave zeros.
    auto f = [](auto x) {
        auto v = xtrace::while_loop([](auto s) { return xtrace::sum(s) < 10.0; },
                                    [&](auto s) { return s * 1.25 + xtrace::sin(x); }, x);
        return xtrace::sum(xtrace::square(v));
    };
    auto g = xtrace::function(xtrace::grad(f), quiet());
    const xt::xarray<double> x = {0.5, 0.7};
    const xt::xarray<double> traced = g(x);
    eager_scope eager;
    const xt::xarray<double> eagerly = g(x);
    CHECK(close(eagerly, traced, 4, 1e-12));
    CHECK(xt::amax(xt::abs(eagerly))() > 1.0);
}

TEST_CASE("while_loop: an RNN over a fixed number of steps, an int counter among the loop "
          "variables") {
    auto rnn = [](auto h0, auto w, auto b) {
        auto [i, h] = xtrace::while_loop(
            [](auto k, auto) { return k < 4; },
            [&](auto k, auto s) {
                return std::tuple(k + 1, xtrace::tanh(xtrace::matmul(s, w) + b));
            },
            xtrace::erase(xtrace::cast<std::int32_t>(xtrace::sum(h0) * 0.0)), h0);
        (void)i;
        return xtrace::sum(h * h);
    };
    check_gradients(rnn, uniform({2, 3}, -1.0, 1.0), uniform({3, 3}, -0.8, 0.8),
                    uniform({3}, -0.5, 0.5));
}

TEST_CASE("what cannot be differentiated through control flow says so") {
    const xt::xarray<double> x = {1.0, 2.0};
    auto with_print = xtrace::function(
        [](auto x) {
            auto y = xtrace::cond(
                xtrace::sum(x) > 0.0,
                [&] {
                    xtrace::print("then", x);
                    return x * 2.0;
                },
                [&] { return x; });
            return xtrace::gradients(xtrace::sum(y), x);
        },
        quiet());
    CHECK_THROWS_WITH(with_print(x), Catch::Matchers::Contains("side effects (print)"));
    // A custom gradient's rule stays with the trace that recorded it: inside a branch it would
    // be lost on the way back, so it is refused rather than replaced by zeros.
    auto twice = xtrace::custom_gradient([](auto v) { return v * 1.0; },
                                         [](auto dy, auto, auto) { return dy * 2.0; });
    auto with_custom = xtrace::function(
        [&](auto x) {
            auto y = xtrace::cond(
                xtrace::sum(x) > 0.0, [&] { return twice(x); }, [&] { return x; });
            return xtrace::gradients(xtrace::sum(y), x);
        },
        quiet());
    CHECK_THROWS_WITH(with_custom(x), Catch::Matchers::Contains("custom_gradient inside a cond"));
    auto outside =
        xtrace::function(xtrace::grad([&](auto v) { return xtrace::sum(twice(v)); }), quiet());
    CHECK((outside(x) == xt::xarray<double>{2.0, 2.0}));
}
