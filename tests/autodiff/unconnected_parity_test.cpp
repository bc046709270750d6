// Traced and eager gradients agree on what is connected: a control node's results are values of
// their own (a loop that ran no step, or a cond branch that returns its input, does not make
// its result the same tensor as the input), an empty stack of a scan that ran no step is still
// a value of the call, and a stop_gradient inside a body cuts the path as it does outside.
// Regressions from the random-program differential tester (program seeds 21004800, 21042549,
// 21066894, 23348174, 29179396, 1209540).

#include "autodiff/finite_differences.hpp"
#include "support/eager_scope.hpp"

using namespace xtrace::testing;

TEST_CASE("a loop that ran no step, and a cond branch returning its input, give new values") {
    // y depends on x directly; the loop's and the cond's results are not what y was computed
    // from, so their gradients are zeros, as TensorFlow's graph mode gives.
    auto f = xtrace::function(
        [](auto x, auto n) {
            auto [k, v] =
                xtrace::while_loop([&](auto i, auto) { return i < n; },
                                   [](auto i, auto s) { return std::tuple(i + 1, -s); }, n * 0, x);
            (void)k;
            auto c = xtrace::cond(
                xtrace::sum(x) > -1e30, [&] { return x; }, [&] { return x * 2.0; });
            return xtrace::gradients(xtrace::sum(x * 3.0), v, c, x);
        },
        quiet());
    const xt::xarray<double> x = {1.0, -2.0};
    for (std::int32_t n : {0, 2}) {
        const auto [traced, eagerly] = traced_and_eager(f, x, xt::xarray<std::int32_t>(n));
        const xt::xarray<double> zeros = xt::zeros<double>({2}), threes = {3.0, 3.0};
        CHECK(std::get<0>(traced) == zeros);
        CHECK(std::get<0>(eagerly) == zeros);
        CHECK(std::get<1>(traced) == zeros);
        CHECK(std::get<1>(eagerly) == zeros);
        CHECK(std::get<2>(traced) == threes);
        CHECK(std::get<2>(eagerly) == threes);
    }
}

TEST_CASE("the stacked outputs of a scan that ran no step are a gradient target eagerly too") {
    auto f = xtrace::function(
        [](auto c0, auto xs) {
            auto [c, ys] = xtrace::scan(
                [](auto a, auto x) { return std::tuple(a + 1.f, xtrace::relu(x) * a); }, c0, xs);
            return xtrace::gradients(xtrace::sum(ys) + xtrace::sum(c), ys);
        },
        quiet());
    for (std::size_t steps : {0u, 3u}) {
        const auto xs = random_array<float>({steps, 2});
        const auto [traced, eagerly] = traced_and_eager(f, xt::xarray<float>(1.f), xs);
        const xt::xarray<float> ones = xt::ones<float>({steps, std::size_t(2)});
        CHECK(traced == ones);
        CHECK(eagerly == ones);
    }
}

TEST_CASE("a stop_gradient inside a scan body cuts the path to a host function before it") {
    // The scanned values come from a host function without a gradient: the body only reads them
    // through stop_gradient, so no gradient reaches it and none is asked of it.
    auto f = xtrace::function(
        [](auto x) {
            auto hosted = xtrace::host_function(
                [](const xt::xarray<float>& h) { return xt::xarray<float>(xt::flatten(h)); },
                xtrace::spec<float>({-1}), x);
            auto c = xtrace::scan([](auto a, auto v) { return a * 2.f + xtrace::stop_gradient(v); },
                                  x * 0.f + 1.f, hosted);
            return xtrace::gradients(xtrace::sum(c), x);
        },
        quiet());
    const xt::xarray<float> x = {0.5f, 1.5f};
    const auto [traced, eagerly] = traced_and_eager(f, x);
    CHECK(traced == xt::xarray<float>(xt::zeros<float>({2})));
    CHECK(eagerly == traced);
}

TEST_CASE("a scanned value that reaches only an unused per-step output gets no gradient") {
    // Only the final carry is used; the scanned values (from a host function without a
    // gradient) reach the per-step outputs alone, which no gradient comes back from.
    auto f = xtrace::function(
        [](auto x, auto n) {
            auto hosted = xtrace::host_function(
                [](const xt::xarray<float>& h) { return xt::xarray<float>(xt::flatten(h)); },
                xtrace::spec<float>({-1}), x);
            auto [c, ys] = xtrace::scan(
                [](auto a, auto v) { return std::tuple(a * 2.f + 1.f, xtrace::cos(v) + a); },
                xtrace::cast<float>(n), hosted);
            (void)ys;
            return xtrace::gradients(xtrace::sum(c) + xtrace::sum(x), x);
        },
        quiet());
    const xt::xarray<float> x = {0.5f, 1.5f, -2.f};
    const auto [traced, eagerly] = traced_and_eager(f, x, xt::xarray<std::int32_t>(3));
    const xt::xarray<float> ones = xt::ones<float>({3});
    CHECK(traced == ones);
    CHECK(eagerly == ones);
}

TEST_CASE("a value computed from x through a comparison gets no gradient, nor asks one") {
    // The host function reads x only through a bool and a cast back to float: no gradient
    // flows along that path, so the host function needs none.
    auto f = xtrace::function(
        [](auto x) {
            auto hosted = xtrace::host_function(
                [](const xt::xarray<float>& h) { return xt::xarray<float>(xt::flatten(h)); },
                xtrace::spec<float>({-1}), xtrace::cast<float>(x > 0.f));
            return xtrace::gradients(xtrace::sum(hosted) + xtrace::sum(x * 2.f), x);
        },
        quiet());
    const xt::xarray<float> x = {0.5f, -1.5f};
    const auto [traced, eagerly] = traced_and_eager(f, x);
    const xt::xarray<float> twos = {2.f, 2.f};
    CHECK(traced == twos);
    CHECK(eagerly == twos);
}

TEST_CASE("a value computed twice the same way is two values: neither is the other's target") {
    // a and b are the same cast of x, computed twice. y is computed from a only, so its
    // gradient with respect to b is zeros, traced and eagerly, as two casts are two tensors in
    // TensorFlow; merging equal nodes must not make b a path to y. Integer x is cast again
    // from a constant eagerly, float x from x's node on the tape: both must agree.
    auto f = xtrace::function(
        [](auto x) {
            auto a = xtrace::cast<double>(x);
            auto b = xtrace::cast<double>(x);
            auto y = xtrace::sum(xtrace::exp(a));
            return xtrace::gradients(y, b, a);
        },
        quiet());
    auto check = [&](const auto& x, bool same) {
        const auto [traced, eagerly] = traced_and_eager(f, x);
        const xt::xarray<double> e = xt::exp(xt::cast<double>(x));
        const xt::xarray<double> db = same ? e : xt::xarray<double>(xt::zeros<double>({x.size()}));
        CHECK(close(std::get<0>(traced), db, 4, 1e-12));
        CHECK(close(std::get<0>(eagerly), db, 4, 1e-12));
        CHECK(close(std::get<1>(traced), e, 4, 1e-12));
        CHECK(close(std::get<1>(eagerly), e, 4, 1e-12));
    };
    check(xt::xarray<std::int32_t>{1, -2, 3}, false);
    check(xt::xarray<float>{0.5f, -1.f}, false);
    check(xt::xarray<double>{2.0}, true); // a cast to x's own dtype is x (tf.cast too): b is a
}

TEST_CASE("a host function without a gradient is refused while tracing on a path not taken") {
    // Tracing differentiates both branches, as TensorFlow's graph mode does; the eager tape
    // holds the branch that ran, which here gives the host function's value no gradient
    // (floor's is none). Program seed 1510688 of the differential tester.
    auto f = xtrace::function(
        [](auto x, auto p) {
            auto hosted = xtrace::host_function(
                [](const xt::xarray<float>& h) { return xt::xarray<float>(xt::flatten(h)); },
                xtrace::spec<float>({-1}), x);
            auto v = xtrace::cond(
                p, [&] { return xtrace::exp(hosted); }, [&] { return xtrace::floor(hosted); });
            return xtrace::gradients(xtrace::sum(v) + xtrace::sum(x), x);
        },
        quiet());
    const xt::xarray<float> x = {0.5f, 1.5f};
    const xt::xarray<bool> no(false), yes(true);
    CHECK_THROWS_AS(f(x, no), xtrace::tracing_error);
    {
        eager_scope eager;
        const xt::xarray<float> ones = {1.f, 1.f}, eagerly = f(x, no);
        CHECK(eagerly == ones);
        CHECK_THROWS_AS(f(x, yes), xtrace::tracing_error);
    }
    CHECK_THROWS_AS(f(x, yes), xtrace::tracing_error); // and the function still answers
}
