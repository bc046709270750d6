// xtrace::gradients inside a function run eagerly (run_functions_eagerly(true)): the call's tape
// records every op, and the same backward pass runs over it. Each case compares the eager
// gradients with the traced ones and, where the traced ones could share a mistake, with central
// finite differences or a hand computation.

#include "autodiff/finite_differences.hpp"
#include "support/eager_scope.hpp"

using namespace xtrace::testing;

namespace {

template <class Tuple>
void check_all_near(const Tuple& a, const Tuple& b, double tol) {
    [&]<std::size_t... K>(std::index_sequence<K...>) {
        const bool each[] = {near(std::get<K>(a), std::get<K>(b), tol)...};
        for (const bool ok : each)
            CHECK(ok);
    }
    (std::make_index_sequence<std::tuple_size_v<Tuple>>{});
}

} // namespace

TEST_CASE("gradients of arguments, intermediates and an output gradient, run eagerly") {
    auto f = xtrace::function(
        [](auto x, auto w, auto dy) {
            auto h = xtrace::tanh(xtrace::matmul(x, w));
            auto y = xtrace::sum(xtrace::softmax(h, -1) * h);
            auto [gx, gw, gh] = xtrace::gradients(y, x, w, h);
            auto vjp = xtrace::gradients(xtrace::output_gradient(h * h, dy), w);
            return std::tuple(gx, gw, gh, vjp);
        },
        quiet());
    for (int trial = 0; trial < 8; ++trial) {
        const std::size_t m = rng()() % 4, k = 1 + rng()() % 4, n = 1 + rng()() % 4;
        const auto x = uniform({m, k}, -1.0, 1.0), w = uniform({k, n}, -1.0, 1.0),
                   dy = uniform({m, n}, -1.0, 1.0);
        const auto [traced, eagerly] = traced_and_eager(f, x, w, dy);
        check_all_near(eagerly, traced, 1e-12);
        // And the eager ones against differences (of y = sum(softmax(h) * h) in w).
        auto loss = xtrace::function(
            [](auto x, auto w) {
                auto h = xtrace::tanh(xtrace::matmul(x, w));
                return xtrace::sum(xtrace::softmax(h, -1) * h);
            },
            quiet());
        CHECK(near(std::get<1>(eagerly), std::get<1>(finite_differences(loss, x, w)), 1e-6));
    }
}

TEST_CASE("eager gradients of variables sum over the reads, at the values read") {
    xtrace::variable<double> v(xt::xarray<double>{0.5, -0.25, 2.0}, "v");
    auto step = xtrace::function(
        [&](auto x) {
            auto y = xtrace::sum(xtrace::sin(x * v.read()) + v.read() * v.read());
            auto g = xtrace::gradients(y, v);
            v.assign(v.read() - 0.1 * g); // read before the update: the gradient used it
            return g;
        },
        quiet());
    const xt::xarray<double> x = {1.0, 2.0, -0.7};
    const xt::xarray<double> v0 = v.value();
    const xt::xarray<double> want = x * xt::cos(x * v0) + 2.0 * v0; // by hand
    xt::xarray<double> traced = step(x);
    CHECK(near(traced, want, 1e-12));
    v.assign(v0);
    {
        eager_scope eager;
        const xt::xarray<double> eagerly = step(x);
        CHECK(near(eagerly, want, 1e-12));
    }
    CHECK(near(v.value(), v0 - 0.1 * want, 1e-12));

    // A function of no arguments reading the variable: a train step's usual form.
    auto no_args = xtrace::function(
        [&] { return xtrace::gradients(xtrace::sum(xtrace::exp(v.read())), v); }, quiet());
    const xt::xarray<double> traced0 = no_args();
    eager_scope eager;
    const xt::xarray<double> eager0 = no_args();
    CHECK(near(eager0, xt::exp(v.value()), 1e-12));
    CHECK(near(eager0, traced0, 1e-12));
}

TEST_CASE("variable reads outside any function have gradients too") {
    xtrace::variable<double> v(xt::xarray<double>{0.5, -0.25, 2.0}, "v");
    // Reads in plain code are copies; the gradient finds them (it used to say v was not read).
    const auto g = xtrace::gradients(xtrace::sum(v.read() * v.read() * v.read()), v);
    CHECK(near(xtrace::detail::evaluate(g), 3.0 * v.value() * v.value(), 1e-12));
}

TEST_CASE("stop_gradient, custom_gradient and host_function gradients, run eagerly") {
    auto f = xtrace::function(
        [](auto x) {
            auto cube = xtrace::host_function(
                [](const xt::xarray<double>& a) { return xt::xarray<double>(a * a * a); },
                [](const xt::xarray<double>& dy, const xt::xarray<double>& a) {
                    return xt::xarray<double>(dy * 3.0 * a * a);
                },
                xtrace::spec<double>({3}), x);
            // A rule that is not forward's own derivative, so that using forward's ops shows.
            auto clipped = xtrace::custom_gradient(
                [](auto a) { return a * 2.0; },
                [](auto dy, auto, auto) { return xtrace::clip(dy * 2.0, -0.5, 0.5); })(x);
            auto y = xtrace::sum(cube + clipped * 3.0 + xtrace::stop_gradient(x * x) * x);
            return xtrace::gradients(y, x);
        },
        quiet());
    const xt::xarray<double> x = {0.3, -1.2, 2.0};
    const auto [traced, eagerly] = traced_and_eager(f, x);
    // The rule sees dy = 3 (the factor after it): clip(3 * 2) = 0.5, whatever x is.
    const xt::xarray<double> want = 3.0 * x * x + 0.5 + x * x;
    CHECK(near(traced, want, 1e-12));
    CHECK(near(eagerly, want, 1e-12));

    // A host function without a gradient callback is refused eagerly as when traced.
    auto plain = xtrace::function(
        [](auto x) {
            auto h = xtrace::host_function([](const xt::xarray<double>& a) { return a; },
                                           xtrace::spec<double>({3}), x);
            return xtrace::gradients(xtrace::sum(h), x);
        },
        quiet());
    CHECK_THROWS_AS(plain(x), xtrace::tracing_error);
    eager_scope eager;
    CHECK_THROWS_WITH(plain(x), Catch::Contains("host_function"));
    CHECK(near(f(x), want, 1e-12)); // and the function still works
}

TEST_CASE("eager gradients through while_loop, cond and scan, and of gradients") {
    // n: the trip count, an int32 tensor (known only at run time) or a C++ int.
    auto forward = [](auto x, auto n) {
        const auto h = std::get<1>(xtrace::while_loop(
            [&](auto i, auto) { return i < n; },
            [](auto i, auto h) { return std::tuple(i + 1, xtrace::tanh(h * 1.3) + 0.1); },
            xtrace::erase(xtrace::cast<std::int32_t>(xtrace::sum(x) * 0.0)), x));
        auto c = xtrace::cond(
            xtrace::sum(h) > 0.0, [&] { return h * h; }, [&] { return xtrace::sin(h); });
        auto [carry, rows] = xtrace::scan(
            [](auto carry, auto row) { return std::tuple(xtrace::tanh(carry * row), carry * row); },
            xtrace::erase(xtrace::sum(c, {0})), xtrace::erase(c));
        return xtrace::sum(rows) + xtrace::sum(carry);
    };
    auto f = xtrace::function(
        [&](auto x, auto n) {
            auto y = forward(x, n);
            auto g = xtrace::gradients(y, x);
            auto hv = xtrace::gradients(xtrace::sum(g * x), x); // a Hessian-vector product
            return std::tuple(g, hv);
        },
        quiet());
    for (int trips : {0, 1, 5}) {
        const auto x = uniform({3, 2}, -1.0, 1.0);
        const xt::xarray<std::int32_t> n = trips;
        const auto [traced, eagerly] = traced_and_eager(f, x, n);
        check_all_near(eagerly, traced, 1e-10);
        auto value = xtrace::function([&](auto x) { return forward(x, trips); }, quiet());
        CHECK(near(std::get<0>(eagerly), std::get<0>(finite_differences(value, x)), 1e-6));
    }
}

TEST_CASE("scans and loops run eagerly keep their rows, stacks and variable reads on the tape") {
    xtrace::variable<double> v(xt::xarray<double>{{0.5, -0.25}, {2.0, 0.3}, {-1.0, 0.7}}, "v");
    auto forward = [&](auto x) {
        auto shift = xtrace::sum(xtrace::tanh(x)) * 0.5; // captured by fn, not passed in
        auto [c, rows] = xtrace::scan(
            [&](auto carry, auto row) {
                return std::tuple(xtrace::sin(carry * row) + shift, carry * row);
            },
            xtrace::erase(xtrace::sum(x, {0})), x);
        // A loop and a scan over variable reads only: run on deferred values when eager.
        auto [i, h] = xtrace::while_loop(
            [](auto i, auto) { return i < 3; },
            [](auto i, auto h) { return std::tuple(i + 1, xtrace::tanh(h * 1.2)); },
            xtrace::erase(xtrace::cast<std::int32_t>(xtrace::sum(v.read()) * 0.0)), v.read());
        (void)i;
        auto [vc, vrows] = xtrace::scan(
            [](auto carry, auto row) { return std::tuple(carry + row * row, carry * row); },
            xtrace::erase(xtrace::sum(v.read(), {0}) * 0.5), v.read());
        return xtrace::sum(rows) + xtrace::sum(c) + xtrace::sum(h * xtrace::sum(x)) +
               xtrace::sum(vrows) + xtrace::sum(vc);
    };
    auto f = xtrace::function([&](auto x) { return xtrace::gradients(forward(x), x, v); }, quiet());
    auto value = xtrace::function(forward, quiet());
    for (std::size_t rows : {0, 1, 4}) {
        const auto x = uniform({rows, 2}, -1.0, 1.0);
        const auto [traced, eagerly] = traced_and_eager(f, x);
        check_all_near(eagerly, traced, 1e-10);
        CHECK(near(std::get<0>(eagerly), std::get<0>(finite_differences(value, x)), 1e-6));
        CHECK(xt::amax(xt::abs(std::get<1>(eagerly)))() > 0.1); // v's reads reached
    }
}

TEST_CASE("eager gradients say what is wrong, and the function still works") {
    auto f =
        xtrace::function([](auto x) { return xtrace::gradients(xtrace::sum(x * x), x); }, quiet());
    const xt::xarray<double> x = {1.0, 2.0};
    eager_scope eager;
    // y computed outside the function: no tape recorded it.
    const xtrace::eager_tensor<double> outside(x);
    CHECK_THROWS_WITH(xtrace::gradients(xtrace::sum(outside), outside),
                      Catch::Contains("outside any function"));
    CHECK(near(f(x), 2.0 * x, 1e-12));

    CHECK(near(f(x), 2.0 * x, 1e-12));
}
