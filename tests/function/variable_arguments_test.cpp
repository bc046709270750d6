// Variables passed as arguments (TensorFlow's VariableSpec): the trace reads and assigns the
// call's variable, and the signature keys on its dtype and shape, so two variables of one dtype
// and shape share a trace.

#include "support/eager_scope.hpp"
#include "support/testing.hpp"

using namespace xtrace::testing;

namespace {

auto accumulate() {
    // v += x, then 2 v; a cond and a while_loop body read v too (nested graphs see the call's
    // variable).
    return xtrace::function(
        [](auto x, auto v) {
            v.assign_add(x);
            auto doubled = xtrace::cond(
                xtrace::sum(x) >= 0.f, [&] { return v.read() * 2.f; },
                [&] { return v.read() * 2.f + 0.f; });
            auto [i, same] = xtrace::while_loop(
                [](auto k, auto) { return k < 2; },
                [&](auto k, auto y) { return std::make_tuple(k + 1, y * 0.f + v.read() * 2.f); },
                xtrace::cast<std::int32_t>(xtrace::sum(x) * 0.f), doubled);
            return std::make_tuple(doubled, same);
        },
        quiet());
}

} // namespace

TEST_CASE("testVariablesAsArguments: the call's variable is read and assigned, one trace") {
    auto f = accumulate();
    for (int round = 0; round < 4; ++round) {
        const auto shape = random_shape(3);
        const xt::xarray<float> x = random_array<float>(shape);
        const xt::xarray<float> a0 = random_array<float>(shape), b0 = random_array<float>(shape);
        xtrace::variable<float> a(a0, "a"), b(b0, "b");
        const auto traced_before = f.tracing_count();
        auto [ra, ra2] = f(x, a);
        auto [rb, rb2] = f(x, b);
        const xt::xarray<float> a1 = a0 + x, b1 = b0 + x;
        CHECK(close(a.value(), a1));
        CHECK(close(b.value(), b1)); // b's own value, not a's
        CHECK(close(ra, xt::xarray<float>(a1 * 2.f)));
        CHECK(close(rb, xt::xarray<float>(b1 * 2.f)));
        CHECK(close(ra2, ra));
        CHECK(close(rb2, rb));
        CHECK(f.tracing_count() == traced_before + 1); // a and b share the trace of their spec
        // Eagerly the same: the lambda gets the variable itself.
        eager_scope eager;
        auto [ea, ea2] = f(x, a);
        CHECK(close(a.value(), xt::xarray<float>(a1 + x)));
        CHECK(close(ea, xt::xarray<float>((a1 + x) * 2.f)));
    }
}

TEST_CASE("the signature keys on the variable's dtype and shape, as VariableSpec") {
    auto f = xtrace::function([](auto v) { return v.read() + 1; }, quiet());
    xtrace::variable<float> a(xt::xarray<float>{1.f, 2.f}, "a"), b(xt::xarray<float>{3.f, 4.f});
    xtrace::variable<float> c(xt::xarray<float>{1.f, 2.f, 3.f});
    xtrace::variable<std::int32_t> d(xt::xarray<std::int32_t>{1, 2});
    CHECK(close(f(a), xt::xarray<float>{2.f, 3.f}));
    CHECK(close(f(b), xt::xarray<float>{4.f, 5.f}));
    CHECK(f.tracing_count() == 1);
    CHECK(close(f(c), xt::xarray<float>{2.f, 3.f, 4.f}));
    CHECK(close(f(d), xt::xarray<std::int32_t>{2, 3}));
    CHECK(f.tracing_count() == 3);
    const auto reasons = f.retrace_reasons();
    REQUIRE(reasons.size() == 2);
    CHECK(reasons[0].find("arg 0: value changed variable float32[2] -> variable float32[3]") !=
          std::string::npos);
    CHECK(f.pretty_printed_signatures()[0].find("x0: variable float32[2]") != std::string::npos);
    // The graph names the stand-in after the first call's variable.
    CHECK(f.get_concrete_function(a).graph_text().find("read_variable('a')") != std::string::npos);
    auto concrete = f.get_concrete_function(a);
    CHECK(close(concrete(b), xt::xarray<float>{4.f, 5.f})); // the concrete function takes b
    CHECK_THROWS_AS(concrete(c), xtrace::signature_error);
}

TEST_CASE("gradients with respect to a variable argument, and an inlined call passing it on") {
    auto inner = xtrace::function([](auto x, auto w) { return xtrace::sum(x * w.read()); });
    auto step = xtrace::function(
        [&](auto x, auto w) {
            auto loss = inner(x, w) * 0.5f;
            auto g = xtrace::gradients(loss, w);
            w.assign_sub(g * 0.1f);
            return loss;
        },
        quiet());
    const xt::xarray<float> x = {1.f, -2.f, 3.f};
    xtrace::variable<float> w1(xt::xarray<float>{1.f, 1.f, 1.f});
    xtrace::variable<float> w2(xt::xarray<float>{0.f, 2.f, 0.f});
    CHECK(step(x, w1)() == 1.f);  // 0.5 * (1 - 2 + 3)
    CHECK(step(x, w2)() == -2.f); // 0.5 * -4
    // d loss / d w = 0.5 x: each variable moved by -0.05 x.
    CHECK(close(w1.value(), xt::xarray<float>{0.95f, 1.1f, 0.85f}));
    CHECK(close(w2.value(), xt::xarray<float>{-0.05f, 2.1f, -0.15f}));
    CHECK(step.tracing_count() == 1);
    CHECK(inner.tracing_count() == 0); // inlined into step's trace
}
