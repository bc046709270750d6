// Gradients through cond: a cond over the branches' gradients, taking the same branch; against
// finite differences (away from the predicate's switching point) and hand values.

#include "autodiff/finite_differences.hpp"

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

TEST_CASE("what cannot be differentiated through control flow says so") {
    auto loop = xtrace::function(
        [](auto x) {
            auto y = xtrace::while_loop([](auto v) { return xtrace::sum(v) < 10.0; },
                                        [](auto v) { return v * 2.0; }, x);
            return xtrace::gradients(xtrace::sum(y), x);
        },
        quiet());
    const xt::xarray<double> x = {1.0, 2.0};
    CHECK_THROWS_WITH(loop(x), Catch::Matchers::Contains("while_loop has no gradient yet"));
    xtrace::variable<double> w(2.0, "w");
    auto with_variable = xtrace::function(
        [&](auto x) {
            auto y = xtrace::cond(
                xtrace::sum(x) > 0.0, [&] { return x * w.read(); }, [&] { return x; });
            return xtrace::gradients(xtrace::sum(y), w);
        },
        quiet());
    CHECK_THROWS_WITH(with_variable(x),
                      Catch::Matchers::Contains("read inside a cond branch or loop body"));
    // Read outside too: the branch's read must not be silently left out of the sum.
    auto also_outside = xtrace::function(
        [&](auto x) {
            auto y = xtrace::cond(
                xtrace::sum(x) > 0.0, [&] { return x * w.read(); }, [&] { return x; });
            return xtrace::gradients(xtrace::sum(y * w.read()), w);
        },
        quiet());
    CHECK_THROWS_WITH(also_outside(x), Catch::Matchers::Contains("read inside a cond branch"));
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
}
