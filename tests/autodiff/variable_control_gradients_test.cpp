// Gradients with respect to variables read inside cond branches, while_loop and scan bodies:
// each read counts as a capture of the variable's value, so the variable's gradient is the one
// the same code gets when the value is passed in as an argument (itself checked against finite
// differences in control_gradients_test and scan_gradients_test), and hand values.

#include "autodiff/finite_differences.hpp"
#include "support/eager_scope.hpp"

using namespace xtrace::testing;

namespace {

/// The RNN of control_gradients_test, run for 2 to 5 steps as h0 decides: `w` and `b` are read
/// through `read_w`/`read_b`, inside the loop body.
template <class H, class RW, class RB>
auto rnn_loss(const H& h0, const RW& read_w, const RB& read_b) {
    auto steps = xtrace::floor(xtrace::sum(xtrace::abs(h0)) * 2.0) + 2.0;
    auto [t, h] = xtrace::while_loop(
        [&](auto k, auto) { return k < steps; },
        [&](auto k, auto s) {
            return std::tuple(k + 1.0, xtrace::tanh(xtrace::matmul(s, read_w()) + read_b()));
        },
        steps * 0.0, h0);
    (void)t;
    return xtrace::sum(h * h);
}

/// rnn_loss with the weights passed in as arguments.
constexpr auto rnn_of_arguments = [](auto h0, auto w, auto b) {
    return rnn_loss(
        h0, [&] { return w; }, [&] { return b; });
};

/// Rows of xs scanned with a carry, both scaled by the value `read_a` gives, read in the body.
template <class X, class RA>
auto scan_loss(const X& xs, const RA& read_a) {
    auto [c, ys] = xtrace::scan(
        [&](auto carry, auto row) {
            auto next = xtrace::sin(carry * read_a() + row);
            return std::tuple(next, next * read_a());
        },
        xtrace::sum(xs, {0}) * 0.0 + 0.25, xs);
    return xtrace::sum(c) + xtrace::sum(ys * ys);
}

/// A loop whose body reads `read_a` in one branch of a cond, inside a branch of another cond.
template <class X, class RA>
auto nested_loss(const X& x, const RA& read_a) {
    return xtrace::cond(
        xtrace::sum(x) > -100.0,
        [&] {
            auto v = xtrace::while_loop([](auto s) { return xtrace::sum(s * s) < 20.0; },
                                        [&](auto s) {
                                            return xtrace::cond(
                                                xtrace::sum(s) > 0.0,
                                                [&] { return s * 1.5 + read_a() * read_a(); },
                                                [&] { return s * 1.5 - 0.5; });
                                        },
                                        x);
            return xtrace::sum(v * read_a());
        },
        [&] { return xtrace::sum(x); });
}

} // namespace

TEST_CASE("a variable read in a cond branch: its gradient is the taken branch's") {
    xtrace::variable<double> w(xt::xarray<double>{0.5, -1.5}, "w");
    auto f = xtrace::function(
        [&](auto x) {
            auto y = xtrace::cond(
                xtrace::sum(x) > 0.0, [&] { return x * w.read(); }, [&] { return x * 3.0; });
            // Read outside the cond too: both reads count.
            return xtrace::gradients(xtrace::sum(y * w.read()), w);
        },
        quiet());
    const xt::xarray<double> wv = {0.5, -1.5};
    for (const xt::xarray<double>& x : {xt::xarray<double>{1.0, 2.0}, {-1.0, -4.0}}) {
        // taken: sum(x w^2) gives 2 x w; not taken: sum(3 x w) gives 3 x
        const xt::xarray<double> want =
            xt::sum(x)() > 0 ? xt::xarray<double>(2.0 * x * wv) : xt::xarray<double>(3.0 * x);
        CHECK(near(f(x), want, 1e-12));
        const eager_scope eagerly;
        CHECK(near(f(x), want, 1e-12));
    }
    CHECK(f.tracing_count() == 1);
}

TEST_CASE("an RNN whose weights are variables read in the while_loop body: the gradient the "
          "same RNN gets with the weights as arguments") {
    const auto w0 = uniform({3, 3}, -0.8, 0.8), b0 = uniform({3}, -0.5, 0.5);
    xtrace::variable<double> w(w0, "w"), b(b0, "b");
    auto with_variables = xtrace::function(
        [&](auto h0) {
            auto loss = rnn_loss(
                h0, [&] { return w.read(); }, [&] { return b.read(); });
            auto [gw, gb, gh] = xtrace::gradients(loss, w, b, h0);
            return std::tuple(loss, gw, gb, gh);
        },
        quiet());
    auto with_arguments = xtrace::function(
        xtrace::value_and_grad(rnn_of_arguments, xtrace::argnums<0, 1, 2>), quiet());
    for (int trial = 0; trial < 3; ++trial) {
        const auto h0 = uniform({2, 3}, -0.3, 0.3);
        auto [loss, gw, gb, gh] = with_variables(h0);
        auto [want_loss, want_gh, want_gw, want_gb] = with_arguments(h0, w0, b0);
        CHECK(near(loss, want_loss, 1e-12));
        CHECK(near(gh, want_gh, 1e-12));
        CHECK(near(gw, want_gw, 1e-12));
        CHECK(near(gb, want_gb, 1e-12));
        CHECK(xt::amax(xt::abs(gw))() > 1e-3); // the loop ran: the weights matter
        const eager_scope eagerly;
        auto [e_loss, e_gw, e_gb, e_gh] = with_variables(h0);
        CHECK(near(e_gw, gw, 1e-10));
        CHECK(near(e_gb, gb, 1e-10));
    }
    CHECK(with_variables.tracing_count() == 1);
}

TEST_CASE("a train step: weights read in a loop, updated from their gradients after it") {
    const auto w0 = uniform({3, 3}, -0.8, 0.8), b0 = uniform({3}, -0.5, 0.5);
    xtrace::variable<double> w(w0, "w"), b(b0, "b");
    auto step = xtrace::function(
        [&](auto h0) {
            auto loss = rnn_loss(
                h0, [&] { return w.read(); }, [&] { return b.read(); });
            auto [gw, gb] = xtrace::gradients(loss, w, b);
            w.assign_sub(gw * 0.1);
            b.assign_sub(gb * 0.1);
            return loss;
        },
        quiet());
    auto grads = xtrace::function(xtrace::grad(rnn_of_arguments, xtrace::argnums<1, 2>), quiet());
    xt::xarray<double> wv = w0, bv = b0;
    for (int k = 0; k < 3; ++k) {
        const auto h0 = uniform({2, 3}, -0.3, 0.3);
        auto [gw, gb] = grads(h0, wv, bv);
        step(h0);
        wv = wv - 0.1 * gw;
        bv = bv - 0.1 * gb;
        CHECK(near(w.value(), wv, 1e-12));
        CHECK(near(b.value(), bv, 1e-12));
    }
}

TEST_CASE("variables read in a scan body, and at depth: a cond in a loop in a cond") {
    const auto a0 = uniform({3}, -0.9, 0.9);
    xtrace::variable<double> a(a0, "a");
    auto by_variable = xtrace::function(
        [&](auto xs, auto x) {
            auto read = [&] { return a.read(); };
            return xtrace::gradients(scan_loss(xs, read) + nested_loss(x, read), a);
        },
        quiet());
    auto value = [](auto xs, auto x, auto av) {
        auto read = [&] { return av; };
        return scan_loss(xs, read) + nested_loss(x, read);
    };
    auto by_argument = xtrace::function(xtrace::grad(value, xtrace::argnums<2>), quiet());
    for (std::size_t rows : {0, 1, 5}) {
        const auto xs = uniform({rows, 3}, -1.0, 1.0), x = uniform({3}, 0.1, 0.5);
        const auto want = by_argument(xs, x, a0);
        CHECK(near(by_variable(xs, x), want, 1e-12));
        CHECK(xt::amax(xt::abs(want))() > 1e-3);
        check_gradients(value, xs, x, a0); // the argument form against finite differences
        const eager_scope eagerly;
        CHECK(near(by_variable(xs, x), want, 1e-10));
    }
}

TEST_CASE("a variable read in control flow that no gradient reaches: zeros") {
    xtrace::variable<double> a(xt::xarray<double>{1.0, 2.0}, "a");
    auto f = xtrace::function(
        [&](auto x) {
            auto unused = xtrace::cond(
                xtrace::sum(x) > 0.0, [&] { return x * a.read(); }, [&] { return x; });
            (void)unused;
            auto stopped = xtrace::while_loop([](auto s) { return xtrace::sum(s) < 10.0; },
                                              [&](auto s) { return s + a.read() * 0.0 + 1.0; }, x);
            return xtrace::gradients(xtrace::sum(xtrace::stop_gradient(stopped) * x), a);
        },
        quiet());
    CHECK((f(xt::xarray<double>{1.0, 2.0}) == xt::xarray<double>{0.0, 0.0}));
}

TEST_CASE("a variable read in control flow and assigned before its gradient is asked for, or "
          "inside the loop, is refused with a reason; the functions still work after") {
    xtrace::variable<double> a(xt::xarray<double>{1.0, 2.0}, "a");
    bool assign_first = true;
    auto assigned_after = xtrace::function(
        [&](auto x) {
            auto v = xtrace::while_loop([](auto s) { return xtrace::sum(s) < 10.0; },
                                        [&](auto s) { return s * a.read() + 1.0; }, x);
            if (assign_first)
                a.assign(a.read() * 2.0);
            return xtrace::gradients(xtrace::sum(v), a);
        },
        quiet());
    const xt::xarray<double> x = {0.5, 0.25};
    CHECK_THROWS_AS(assigned_after(x), xtrace::tracing_error);
    CHECK_THROWS_WITH(assigned_after(x),
                      Catch::Matchers::Contains("variable 'a'") &&
                          Catch::Matchers::Contains("read inside a while_loop and assigned after "
                                                    "it") &&
                          Catch::Matchers::Contains("before assigning"));
    assign_first = false; // the next trace asks first
    CHECK(xt::all(xt::isfinite(assigned_after(x))));
    CHECK((a.value() == xt::xarray<double>{1.0, 2.0}));
    auto assigned_inside = xtrace::function(
        [&](auto x) {
            auto v = xtrace::while_loop([](auto s) { return xtrace::sum(s) < 10.0; },
                                        [&](auto s) {
                                            a.assign_add(s * 0.0);
                                            return s * a.read() + 1.0;
                                        },
                                        x);
            return xtrace::gradients(xtrace::sum(v), a);
        },
        quiet());
    CHECK_THROWS_WITH(assigned_inside(x), Catch::Matchers::Contains("side effects (assign"));
}

TEST_CASE("a loop body reading a variable that is assigned after the loop, before gradients: "
          "refused, not replayed with the new value") {
    // The backward pass replays the body; a read there would see u's new value, not the one
    // the loop saw, and give a wrong gradient with respect to x.
    xtrace::variable<double> u(xt::xarray<double>{2.0, 3.0}, "u");
    auto f = xtrace::function(
        [&](auto x) {
            auto [k, v] = xtrace::while_loop(
                [](auto i, auto) { return i < 2; },
                [&](auto i, auto s) { return std::tuple(i + 1, s * u.read()); },
                xtrace::erase(xtrace::cast<std::int32_t>(xtrace::sum(x) * 0.0)), x);
            (void)k;
            u.assign(u.read() * 10.0);
            return xtrace::gradients(xtrace::sum(v), x);
        },
        quiet());
    CHECK_THROWS_WITH(f(xt::xarray<double>{1.0, 1.0}),
                      Catch::Matchers::Contains("variable 'u'") &&
                          Catch::Matchers::Contains("assigned after it"));
    CHECK((u.value() == xt::xarray<double>{2.0, 3.0}));
}
