// gradients() in use: variables, intermediates, unknown dims, second order, stop_gradient,
// output gradients, errors, and a train step against its hand-derived gradients.

#include "autodiff/finite_differences.hpp"

using namespace xtrace::testing;

TEST_CASE("a variable's gradient sums over all its reads; intermediates and unused targets") {
    xtrace::variable<double> w(xt::xarray<double>{0.5, -1.0, 2.0}, "w");
    auto f = xtrace::function(
        [&](auto x) {
            auto h = x * w.read();                  // first read
            auto y = xtrace::sum(h * h + w.read()); // second read
            auto [gw, gh, gx, unused] = xtrace::gradients(y, w, h, x, x * 3.0);
            return std::tuple(gw, gh, gx, unused);
        },
        quiet());
    const xt::xarray<double> x = {1.0, 2.0, -3.0};
    const xt::xarray<double> wv = {0.5, -1.0, 2.0};
    auto [gw, gh, gx, unused] = f(x);
    // y = sum((x w)^2 + w): dy/dw = 2 x^2 w + 1, dy/dh = 2 h, dy/dx = 2 x w^2
    CHECK(near(gw, xt::xarray<double>(2.0 * x * x * wv + 1.0)));
    CHECK(near(gh, xt::xarray<double>(2.0 * x * wv)));
    CHECK(near(gx, xt::xarray<double>(2.0 * x * wv * wv)));
    CHECK((unused == xt::xarray<double>{0.0, 0.0, 0.0})); // y does not depend on x * 3
    // The variable is read when the graph runs: a new value gives new gradients, no retrace.
    w.assign(xt::xarray<double>{1.0, 1.0, 1.0});
    auto [gw2, gh2, gx2, unused2] = f(x);
    CHECK(near(gx2, xt::xarray<double>(2.0 * x)));
    CHECK(f.tracing_count() == 1);
}

TEST_CASE("gradients on a relaxed trace with unknown dims, through broadcasting") {
    auto loss = [](auto x, auto b) { return xtrace::sum(xtrace::square(x + b) * x); };
    auto g = xtrace::function(
        xtrace::grad(loss, xtrace::argnums<0, 1>),
        quiet({.input_signature = {{xtrace::spec<double>({-1, -1}), xtrace::spec<double>({-1})}}}));
    for (auto [rows, cols, bias] : {std::tuple<std::size_t, std::size_t, std::size_t>{3, 4, 4},
                                    {2, 5, 1},
                                    {1, 1, 1},
                                    {4, 1, 1}}) {
        const auto x = uniform({rows, cols}, -1.0, 1.0), b = uniform({bias}, -1.0, 1.0);
        auto value = xtrace::function(loss, quiet());
        const auto [wx, wb] = finite_differences(value, x, b);
        auto [gx, gb] = g(x, b);
        CHECK(near(gx, wx));
        CHECK(near(gb, wb)); // summed over rows, and over columns when bias has 1 element
    }
    CHECK(g.tracing_count() == 1);
}

TEST_CASE("second order: the gradient of a gradient (Hessian-vector products)") {
    // y = sum(x^3): dy/dx = 3 x^2; d(sum(dy/dx * v))/dx = 6 x v
    auto hvp = xtrace::function(
        [](auto x, auto v) {
            auto g = xtrace::gradients(xtrace::sum(x * x * x), x);
            return xtrace::gradients(xtrace::sum(g * v), x);
        },
        quiet());
    const auto x = uniform({5}, -2.0, 2.0), v = uniform({5}, -1.0, 1.0);
    CHECK(near(hvp(x, v), xt::xarray<double>(6.0 * x * v)));
    // Through a reduction and a matmul: H of sum(tanh(A x)) applied to v, against differences
    // of the first gradient.
    auto first = [](auto a, auto x) {
        return xtrace::gradients(xtrace::sum(xtrace::tanh(xtrace::matmul(a, x))), x);
    };
    auto second = xtrace::function(
        [&](auto a, auto x, auto v) { return xtrace::gradients(xtrace::sum(first(a, x) * v), x); },
        quiet());
    const auto a = uniform({3, 4}, -1.0, 1.0), x2 = uniform({4, 2}, -1.0, 1.0),
               v2 = uniform({4, 2}, -1.0, 1.0);
    auto inner = xtrace::function(
        [&](auto a_, auto x_, auto v_) { return xtrace::sum(first(a_, x_) * v_); }, quiet());
    const auto fd = finite_differences(inner, a, x2, v2);
    CHECK(near(second(a, x2, v2), std::get<1>(fd)));
}

TEST_CASE("stop_gradient, output gradients and value_and_grad") {
    auto f = xtrace::function(
        xtrace::grad([](auto x) { return xtrace::sum(x * xtrace::stop_gradient(x)); }), quiet());
    const xt::xarray<double> x = {1.0, -2.0, 3.0};
    CHECK((f(x) == x)); // d(x * c)/dx with c = x held constant
    auto vjp = xtrace::function(
        [](auto x, auto dy) { return xtrace::gradients(xtrace::output_gradient(x * x, dy), x); },
        quiet());
    const xt::xarray<double> dy = {1.0, 0.5, 2.0};
    CHECK((vjp(x, dy) == xt::xarray<double>(2.0 * x * dy)));
    auto vg =
        xtrace::function(xtrace::value_and_grad([](auto x, auto y) { return xtrace::sum(x * y); },
                                                xtrace::argnums<0, 1>),
                         quiet());
    const xt::xarray<double> y = {2.0, 2.0, 2.0};
    auto [value, gx, gy] = vg(x, y);
    CHECK(value() == 4.0);
    CHECK((gx == y));
    CHECK((gy == x));
}

TEST_CASE("what has no gradient says so") {
    auto through_host = xtrace::function(
        [](auto x) {
            auto y = xtrace::host_function([](const xt::xarray<double>& v) { return v; },
                                           xtrace::spec<double>({2}), x);
            return xtrace::gradients(xtrace::sum(y * x), x);
        },
        quiet());
    const xt::xarray<double> x = {1.0, 2.0};
    CHECK_THROWS_WITH(through_host(x), Catch::Matchers::Contains("host_function has no gradient"));
    auto not_scalar =
        xtrace::function([](auto x) { return xtrace::gradients(x * 2.0, x); }, quiet());
    CHECK_THROWS_AS(not_scalar(x), xtrace::tracing_error);
    // The function still works after the errors, and a good function beside them too.
    CHECK_THROWS_AS(not_scalar(x), xtrace::tracing_error);
    auto good = xtrace::function(xtrace::grad([](auto a) { return xtrace::sum(a * a); }), quiet());
    CHECK((good(x) == xt::xarray<double>{2.0, 4.0}));
}

TEST_CASE("a train step with gradients() agrees with its hand-derived gradients") {
    const auto x = xt::xarray<float>(uniform({64, 2}, -1.0, 1.0));
    const auto t = xt::xarray<float>(uniform({64, 1}, -1.0, 1.0));
    const auto w1 = xt::xarray<float>(uniform({2, 16}, -0.5, 0.5));
    const auto b1 = xt::xarray<float>(uniform({16}, -0.1, 0.1));
    const auto w2 = xt::xarray<float>(uniform({16, 1}, -0.5, 0.5));
    const auto b2 = xt::xarray<float>(uniform({1}, -0.1, 0.1));
    auto both = xtrace::function(
        [](auto x, auto target, auto w1, auto b1, auto w2, auto b2) {
            auto h = xtrace::relu(xtrace::matmul(x, w1) + b1);
            auto y = xtrace::matmul(h, w2) + b2;
            auto err = y - target;
            auto loss = xtrace::mean(xtrace::square(err));
            auto [gw1, gb1, gw2, gb2] = xtrace::gradients(loss, w1, b1, w2, b2);
            // By hand, as examples/mlp_train_step.cpp writes them.
            auto dy = err * (2.f / static_cast<float>(x.shape()[0]));
            auto dh = xtrace::where(h > 0.f, xtrace::matmul(dy, xtrace::transpose(w2)), 0.f);
            return std::tuple(
                gw1 - xtrace::matmul(xtrace::transpose(x), dh), gb1 - xtrace::sum(dh, {0}),
                gw2 - xtrace::matmul(xtrace::transpose(h), dy), gb2 - xtrace::sum(dy, {0}));
        },
        quiet());
    auto [d1, e1, d2, e2] = both(x, t, w1, b1, w2, b2);
    CHECK(xt::amax(xt::abs(d1))() < 1e-6f);
    CHECK(xt::amax(xt::abs(e1))() < 1e-6f);
    CHECK(xt::amax(xt::abs(d2))() < 1e-6f);
    CHECK(xt::amax(xt::abs(e2))() < 1e-6f);
}

TEST_CASE("custom_gradient replaces the gradient of its forward ops") {
    // log(1 + exp(x)) with the stable gradient sigmoid(x), as tf.custom_gradient's example.
    auto softplus =
        xtrace::custom_gradient([](auto x) { return xtrace::log(1.0 + xtrace::exp(x)); },
                                [](auto dy, auto x, auto) { return dy * xtrace::sigmoid(x); });
    auto g =
        xtrace::function(xtrace::grad([&](auto x) { return xtrace::sum(softplus(x)); }), quiet());
    const xt::xarray<double> x = {-800.0, 0.0, 3.0, 800.0};
    const xt::xarray<double> got = g(x);
    // exp(800) is inf: through the forward ops the gradient would be inf/inf = NaN there.
    CHECK(got(0) == 0.0);
    CHECK(got(1) == 0.5);
    CHECK(got(2) == 1.0 / (1.0 + std::exp(-3.0)));
    CHECK(got(3) == 1.0);
    // Several inputs, and a rule that uses y: d(a*b)/da = dy*b, deliberately scaled by 2 to show
    // it is the rule that counts, not the forward op.
    auto product = xtrace::custom_gradient(
        [](auto a, auto b) { return a * b; },
        [](auto dy, auto a, auto b, auto y) { return std::tuple(dy * b * 2.0, dy * a + y * 0.0); });
    auto gp =
        xtrace::function(xtrace::grad([&](auto a, auto b) { return xtrace::sum(product(a, b)); },
                                      xtrace::argnums<0, 1>),
                         quiet());
    const xt::xarray<double> a = {1.0, 2.0}, b = {3.0, 4.0};
    auto [ga, gb] = gp(a, b);
    CHECK((ga == xt::xarray<double>{6.0, 8.0}));
    CHECK((gb == a));
    // Forward values are forward's.
    auto v = xtrace::function([&](auto a_, auto b_) { return product(a_, b_); }, quiet());
    CHECK((v(a, b) == xt::xarray<double>{3.0, 8.0}));
}

TEST_CASE("a host_function with a gradient callback is differentiable") {
    // x^3 and x*y computed on the host, their gradients too.
    auto cube = [](const auto& x, const auto& y) {
        return xtrace::host_function(
            [](const xt::xarray<double>& a, const xt::xarray<double>& b) {
                return xt::xarray<double>(a * a * a * b);
            },
            [](const xt::xarray<double>& dy, const xt::xarray<double>& a,
               const xt::xarray<double>& b) {
                return std::tuple(xt::xarray<double>(dy * 3.0 * a * a * b),
                                  xt::xarray<double>(dy * a * a * a));
            },
            xtrace::spec<double>({3}), x, y);
    };
    check_gradients([&](auto x, auto y) { return xtrace::sum(xtrace::sin(cube(x, y))); },
                    uniform({3}, -1.0, 1.0), uniform({3}, -1.0, 1.0));
    // Without a callback it says so (see "what has no gradient says so").
}

TEST_CASE("grad and value_and_grad give the same gradients when functions run eagerly") {
    auto loss = [](auto x, auto w) {
        return xtrace::mean(xtrace::square(xtrace::tanh(xtrace::matmul(x, w)) - 0.5));
    };
    auto g = xtrace::function(xtrace::grad(loss, xtrace::argnums<0, 1>), quiet());
    auto vg = xtrace::function(xtrace::value_and_grad(loss, xtrace::argnums<1>), quiet());
    const auto x = uniform({3, 4}, -1.0, 1.0), w = uniform({4, 2}, -1.0, 1.0);
    auto [tx, tw] = g(x, w);
    auto [tv, tvw] = vg(x, w);
    xtrace::run_functions_eagerly(true);
    auto [ex, ew] = g(x, w);
    auto [ev, evw] = vg(x, w);
    xtrace::run_functions_eagerly(false);
    CHECK(near(ex, tx, 1e-12));
    CHECK(near(ew, tw, 1e-12));
    CHECK(std::abs(ev() - tv()) < 1e-12);
    CHECK(near(evw, tvw, 1e-12));
    CHECK(g.tracing_count() == 1); // the eager calls traced nothing
}
