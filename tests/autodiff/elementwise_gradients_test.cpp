// Gradients of elementwise ops, with broadcasting, against central finite differences in double;
// conventions at kinks and ties against hand-computed values (TensorFlow's choices).

#include "autodiff/finite_differences.hpp"

using namespace xtrace::testing;

TEST_CASE("unary ops: gradients match finite differences on random shapes") {
    for (int trial = 0; trial < 4; ++trial) {
        const auto shape = random_shape(3);
        const auto x = uniform(shape, 0.2, 2.0);  // positive: log, sqrt, rsqrt
        const auto s = uniform(shape, -2.0, 2.0); // signed
        const auto w = uniform(shape, -1.0, 1.0); // a random cotangent, as sum(f(x) * w)
        // sum(f(x) * w) with a random w: a random cotangent (w's gradient is checked too)
        auto with = [](auto f) { return [f](auto a, auto v) { return xtrace::sum(f(a) * v); }; };
        check_gradients(with([](auto a) { return xtrace::exp(a); }), x, w);
        check_gradients(with([](auto a) { return xtrace::log(a); }), x, w);
        check_gradients(with([](auto a) { return xtrace::sqrt(a); }), x, w);
        check_gradients(with([](auto a) { return xtrace::rsqrt(a); }), x, w);
        check_gradients(with([](auto a) { return xtrace::sin(a); }), s, w);
        check_gradients(with([](auto a) { return xtrace::cos(a); }), s, w);
        check_gradients(with([](auto a) { return xtrace::tanh(a); }), s, w);
        check_gradients(with([](auto a) { return xtrace::sigmoid(a); }), s, w);
        check_gradients(with([](auto a) { return xtrace::erf(a); }), s, w);
        check_gradients(with([](auto a) { return -a; }), s, w);
        check_gradients(with([](auto a) { return xtrace::square(a); }), s, w);
        check_gradients(with([](auto a) { return xtrace::abs(a) * 3.0; }), x, w); // away from 0
        check_gradients(with([](auto a) { return xtrace::relu(a); }), x, w);      // away from 0
        check_gradients(with([](auto a) { return xtrace::relu(-a); }), x, w);
        check_gradients(with([](auto a) { return 1.0 / a + a / 2.0 - 3.0; }), x, w);
    }
}

TEST_CASE("binary ops with broadcasting: gradients are summed back to each operand's shape") {
    const std::vector<std::pair<std::vector<std::size_t>, std::vector<std::size_t>>> shapes = {
        {{3, 4}, {4}}, {{3, 4}, {3, 1}}, {{2, 1, 4}, {3, 1}}, {{5}, {}}, {{}, {2, 3}}};
    for (const auto& [sa, sb] : shapes) {
        const auto a = uniform(sa, 0.5, 2.0), b = uniform(sb, 0.5, 2.0);
        check_gradients([](auto x, auto y) { return xtrace::sum(x + y); }, a, b);
        check_gradients([](auto x, auto y) { return xtrace::sum(xtrace::square(x - y)); }, a, b);
        check_gradients([](auto x, auto y) { return xtrace::sum(x * y * x); }, a, b);
        check_gradients([](auto x, auto y) { return xtrace::sum(x / y); }, a, b);
        check_gradients([](auto x, auto y) { return xtrace::sum(xtrace::pow(x, y)); }, a, b);
        // minimum / maximum away from ties: shift one operand so that no element is equal
        const xt::xarray<double> c = b + 0.0123;
        check_gradients([](auto x, auto y) { return xtrace::sum(xtrace::maximum(x, y)); }, a, c);
        check_gradients([](auto x, auto y) { return xtrace::sum(xtrace::minimum(x, y) * x); }, a,
                        c);
    }
}

TEST_CASE("where, clip and casts between float types") {
    const auto a = uniform({4, 5}, -2.0, 2.0), b = uniform({5}, -2.0, 2.0);
    check_gradients([](auto x, auto y) { return xtrace::sum(xtrace::where(x > 0.3, x * y, y)); }, a,
                    b);
    const xt::xarray<double> lo = b + 0.0071; // no element of a on a bound
    check_gradients([](auto x, auto l) { return xtrace::sum(xtrace::clip(x, l, l + 1.5) * x); }, a,
                    lo);
    // Through float32 finite differences would measure rounding: the exact gradient is 2.
    auto through_float = xtrace::function(xtrace::grad(
        [](auto x) { return xtrace::sum(xtrace::cast<double>(xtrace::cast<float>(x) * 2.f)); }));
    CHECK((through_float(a) == xt::xarray<double>(xt::full_like(a, 2.0))));
}

TEST_CASE("kinks and ties follow TensorFlow: abs and relu at 0 give 0, ties go to the first "
          "operand, sqrt at 0 is inf, floor has no gradient") {
    const xt::xarray<double> x = {-1.0, 0.0, 2.0};
    auto f = xtrace::function(xtrace::grad([](auto a) { return xtrace::sum(xtrace::abs(a)); }));
    CHECK((f(x) == xt::xarray<double>{-1.0, 0.0, 1.0}));
    auto r = xtrace::function(xtrace::grad([](auto a) { return xtrace::sum(xtrace::relu(a)); }));
    CHECK((r(x) == xt::xarray<double>{0.0, 0.0, 1.0}));
    auto m = xtrace::function(xtrace::grad(
        [](auto a, auto b) { return xtrace::sum(xtrace::maximum(a, b) + xtrace::minimum(a, b)); },
        xtrace::argnums<0, 1>));
    const xt::xarray<double> p = {1.0, 2.0, 3.0}, q = {1.0, 5.0, 0.0};
    auto [ga, gb] = m(p, q);
    CHECK((ga == xt::xarray<double>{2.0, 1.0, 1.0})); // tie: both max and min pick a
    CHECK((gb == xt::xarray<double>{0.0, 1.0, 1.0}));
    auto s = xtrace::function(xtrace::grad([](auto a) { return xtrace::sum(xtrace::sqrt(a)); }));
    const xt::xarray<double> z = {0.0, 4.0};
    const xt::xarray<double> gs = s(z);
    CHECK(std::isinf(gs(0)));
    CHECK(gs(1) == 0.25);
    auto fl = xtrace::function(
        xtrace::grad([](auto a) { return xtrace::sum(xtrace::floor(a) + a * 2.0); }));
    CHECK((fl(x) == xt::xarray<double>{2.0, 2.0, 2.0}));
    // clip: inside the range x gets the gradient, at the bounds too, outside the bound does
    auto c = xtrace::function(
        xtrace::grad([](auto a, auto lo) { return xtrace::sum(xtrace::clip(a, lo, lo + 1.0)); },
                     xtrace::argnums<0, 1>));
    const xt::xarray<double> cx = {-1.0, 0.0, 0.5, 1.0, 2.0}, clo = {0.0};
    auto [gx, glo] = c(cx, clo);
    CHECK((gx == xt::xarray<double>{0.0, 1.0, 1.0, 1.0, 0.0}));
    CHECK((glo == xt::xarray<double>{2.0})); // below (-1) and above (2)
}
