// Gradients through scan: the carries each step starts from are stacked by a second scan, and a
// scan in the other direction applies the body's vector-Jacobian product step by step. Checked
// against central finite differences in double.

#include "autodiff/finite_differences.hpp"
#include "support/eager_scope.hpp"

#include <xtrace/ext/xtensor_extras.hpp>

using namespace xtrace::testing;

TEST_CASE("scan: a running product, through the final carry and the stacked outputs") {
    auto f = [](auto init, auto xs) {
        auto [last, ys] = xtrace::scan(
            [](auto a, auto x) {
                auto next = a * x;
                return std::tuple(next, xtrace::sin(next));
            },
            init, xs);
        return xtrace::sum(ys) + xtrace::sum(last * last);
    };
    check_gradients(f, uniform({3}, 0.5, 1.5), uniform({4, 3}, -1.2, 1.2));
    // By hand, for two steps of scalars: ys = (sin(a x0), sin(a x0 x1)), last = a x0 x1.
    auto g = xtrace::function(xtrace::grad(f, xtrace::argnums<0, 1>), quiet());
    const double a = 0.7, x0 = 1.3, x1 = -0.4;
    const auto [da, dxs] = g(xt::xarray<double>(a), xt::xarray<double>{x0, x1});
    const double p = a * x0 * x1;
    const double want_da = std::cos(a * x0) * x0 + (std::cos(p) + 2 * p) * x0 * x1;
    CHECK(std::abs(da() - want_da) < 1e-12);
    CHECK(std::abs(dxs(0) - (std::cos(a * x0) * a + (std::cos(p) + 2 * p) * a * x1)) < 1e-12);
    CHECK(std::abs(dxs(1) - (std::cos(p) + 2 * p) * a * x0) < 1e-12);
}

TEST_CASE("scan: an RNN with captured weights, an int counter carry, several scanned inputs") {
    auto rnn = [](auto h0, auto xs, auto gates, auto w, auto u) {
        auto [k, h, hs] = xtrace::scan(
            [&](auto i, auto s, auto x, auto gate) {
                auto next = xtrace::tanh(xtrace::matmul(s, w) + xtrace::matmul(x, u)) * gate;
                return std::tuple(i + 1, next, xtrace::sum(next, {1}));
            },
            std::tuple(xtrace::erase(xtrace::cast<std::int32_t>(xtrace::sum(h0) * 0.0)), h0),
            std::tuple(xs, gates));
        (void)k;
        return xtrace::sum(h * h) + xtrace::sum(xtrace::square(hs));
    };
    check_gradients(rnn, uniform({2, 3}, -1.0, 1.0), uniform({5, 2, 4}, -1.0, 1.0),
                    uniform({5, 2, 3}, 0.5, 1.0), uniform({3, 3}, -0.6, 0.6),
                    uniform({4, 3}, -0.6, 0.6));
}

TEST_CASE("scan: zero steps, unknown lengths, and a map without carries") {
    auto f = [](auto init, auto xs) {
        auto [c, ys] =
            xtrace::scan([](auto a, auto x) { return std::tuple(a + x, a * x); }, init, xs);
        return xtrace::sum(c * c) + xtrace::sum(ys);
    };
    auto g = xtrace::function(xtrace::grad(f, xtrace::argnums<0, 1>), quiet());
    const xt::xarray<double> init = {1.0, -2.0};
    // No steps: the final carry is init, so d/dinit = 2 init; xs is [0, 2] and so is its gradient.
    const auto [dinit, dxs] = g(init, xt::xarray<double>::from_shape({0, 2}));
    CHECK(close(dinit, xt::xarray<double>(2.0 * init)));
    CHECK(dxs.shape() == std::vector<std::size_t>{0, 2});
    for (std::size_t n : {1u, 3u, 6u}) // one relaxed trace serves every length
        check_gradients(f, uniform({2}, -1.0, 1.0), uniform({n, 2}, -1.0, 1.0));
    auto map = [](auto xs, auto w) {
        auto ys = xtrace::scan([&](auto x) { return xtrace::exp(x * w); }, std::tuple<>(), xs);
        return xtrace::sum(ys);
    };
    check_gradients(map, uniform({4, 3}, -1.0, 1.0), uniform({3}, -0.5, 0.5));
}

TEST_CASE("scan: second order, eager mode, and a scan inside the gradient of a scan") {
    auto f = [](auto init, auto xs) {
        auto [c, ys] = xtrace::scan(
            [](auto a, auto x) { return std::tuple(xtrace::tanh(a * x), a); }, init, xs);
        return xtrace::sum(c) + xtrace::sum(ys * ys);
    };
    // d/dinit of (d/dinit f): the backward scan differentiated again.
    auto second = [&](auto init, auto xs) {
        auto first = xtrace::grad(f, xtrace::argnums<0>)(init, xs);
        return xtrace::sum(first);
    };
    check_gradients(second, uniform({3}, -0.8, 0.8), uniform({4, 3}, -1.0, 1.0));
    const xt::xarray<double> init = uniform({3}, -0.8, 0.8), xs = uniform({4, 3}, -1.0, 1.0);
    auto g = xtrace::function(xtrace::grad(f, xtrace::argnums<0, 1>), quiet());
    const auto traced = g(init, xs);
    eager_scope eager;
    const auto eagerly = g(init, xs);
    CHECK(close(std::get<0>(traced), std::get<0>(eagerly), 4, 1e-12));
    CHECK(close(std::get<1>(traced), std::get<1>(eagerly), 4, 1e-12));
}

TEST_CASE("scan: a body with side effects cannot be differentiated, and says so") {
    auto f = xtrace::function(
        [](auto init, auto xs) {
            auto [c, ys] = xtrace::scan(
                [](auto a, auto x) {
                    xtrace::print("step", a);
                    return std::tuple(a * x, a);
                },
                init, xs);
            return xtrace::gradients(xtrace::sum(ys), init);
        },
        quiet());
    CHECK_THROWS_WITH(f(xt::xarray<double>(1.), xt::xarray<double>{2., 3.}),
                      Catch::Matchers::Contains("a scan with side effects (print)"));
}
