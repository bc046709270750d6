// xtrace::variable: reads at run time, assignments on every call in program order, creation on
// the first trace only, and the same results when functions run eagerly.

#include "support/eager_scope.hpp"
#include "support/testing.hpp"

#include <optional>

using namespace xtrace::testing;

TEST_CASE("reads see the value when the function runs, not when it was traced") {
    xtrace::variable<float> w(xt::xarray<float>{1.f, 2.f, 3.f}, "w");
    auto f = xtrace::function([&](auto x) { return x * w.read(); }, quiet());
    const xt::xarray<float> x = {2.f, 2.f, 2.f};
    CHECK(close(f(x), xt::xarray<float>{2.f, 4.f, 6.f}));
    w.assign(xt::xarray<float>{-1.f, 0.f, 1.f}); // plain code: immediate
    CHECK(close(w.value(), xt::xarray<float>{-1.f, 0.f, 1.f}));
    CHECK(close(f(x), xt::xarray<float>{-2.f, 0.f, 2.f}));
    CHECK(f.tracing_count() == 1);
}

template <class T>
void check_program_order() {
    // Each call: v += x; a = v; v -= 1; returns a + v (so a sees the add, not the sub).
    const auto shape = random_shape(3);
    const xt::xarray<T> start = random_array<T>(shape);
    xtrace::variable<T> v(start);
    auto f = xtrace::function(
        [&](auto x) {
            v.assign_add(x);
            auto a = v.read();
            v.assign_sub(T(1));
            return a + v.read();
        },
        quiet());
    xt::xarray<T> expected_v = start;
    for (int call = 0; call < 3; ++call) {
        const xt::xarray<T> x = random_array<T>(shape);
        const xt::xarray<T> a = expected_v + x;
        expected_v = a - T(1);
        const xt::xarray<T> expected = a + expected_v;
        if (call == 1) {
            eager_scope eager; // the same semantics when the lambda runs eagerly
            CHECK(close(f(x), expected));
        } else {
            CHECK(close(f(x), expected));
        }
        CHECK(close(v.value(), expected_v));
    }
}

TEST_CASE("assignments run on every call, in program order, on every dtype") {
    for (int round = 0; round < 4; ++round) {
        check_program_order<float>();
        check_program_order<double>();
        check_program_order<std::int32_t>();
        check_program_order<std::int64_t>();
    }
}

TEST_CASE("a variable created inside the function: allowed on the first trace only") {
    std::vector<xtrace::variable<float>> made;
    auto f = xtrace::function(
        [&](auto x) {
            made.emplace_back(xt::xarray<float>{10.f}, "counter");
            made.back().assign_add(xtrace::sum(x, {0}, xtrace::keep_dims));
            return made.back().read();
        },
        quiet());
    CHECK(close(f(xt::xarray<float>{1.f, 2.f}), xt::xarray<float>{13.f}));
    CHECK(close(f(xt::xarray<float>{1.f, 1.f}), xt::xarray<float>{15.f})); // kept alive, no retrace
    CHECK(made.size() == 1);
    try {
        f(xt::xarray<float>{1.f, 2.f, 3.f}); // a new shape: a second trace
        FAIL("no tracing_error");
    } catch (const xtrace::tracing_error& e) {
        const std::string m = e.what();
        CHECK(m.find("variable 'counter' was created on a later trace") != std::string::npos);
        CHECK(m.find("only be created on the first trace") != std::string::npos);
    }
    CHECK(close(f(xt::xarray<float>{0.f, 1.f}), xt::xarray<float>{16.f})); // still works
    CHECK(f.tracing_count() == 1);
}

namespace {
struct model {
    std::optional<xtrace::variable<double>> scale;
    auto operator()(const auto& x) {
        if (!scale)
            scale.emplace(2.0, "scale");
        scale->assign(scale->read() + 1.0);
        return x * scale->read();
    }
};
} // namespace

TEST_CASE("guarded creation: the first trace makes the variable, later traces reuse it") {
    model m;
    auto f = xtrace::function([&](auto x) { return m(x); }, quiet());
    CHECK(close(f(xt::xarray<double>{1.0}), xt::xarray<double>{3.0}));
    CHECK(close(f(xt::xarray<double>{1.0, 1.0}), xt::xarray<double>{4.0, 4.0})); // retraced
    CHECK(f.tracing_count() == 2);
    CHECK(m.scale->value()() == 4.0);
}

TEST_CASE("assigning another shape is a shape_error, traced or not") {
    xtrace::variable<float> v(xt::xarray<float>{1.f, 2.f}, "v");
    CHECK(shape_error_message([&] { v.assign(xt::xarray<float>{1.f}); }) ==
          "xtrace::variable::assign: variable 'v' has shape [2], the value assigned has shape [1]");
    auto f = xtrace::function(
        [&](auto x) {
            v.assign(x);
            return x;
        },
        quiet());
    CHECK(shape_error_message([&] {
              f(xt::xarray<float>{1.f, 2.f, 3.f});
          }) ==
          "xtrace::variable::assign: variable 'v' has shape [2], the value assigned has shape [3]");
    auto g = xtrace::function(
        [&](auto x) {
            v.assign(x);
            return x;
        },
        quiet({.input_signature = {{xtrace::spec<float>({-1})}}}));
    CHECK(shape_error_message([&] {
              g(xt::xarray<float>{1.f, 2.f, 3.f});
          }) ==
          "xtrace::variable::assign: variable 'v' has shape [2], the value assigned has shape [3]");
    g(xt::xarray<float>{5.f, 6.f});
    CHECK(close(v.value(), xt::xarray<float>{5.f, 6.f}));
}

TEST_CASE("assignments inside cond run only when taken, inside while_loop once per iteration") {
    xtrace::variable<std::int32_t> taken(0), steps(0);
    auto f = xtrace::function(
        [&](auto x) {
            xtrace::cond(
                xtrace::sum(x) > 0, [&] { taken.assign_add(1); }, [] {});
            return xtrace::while_loop([](auto v) { return xtrace::sum(v) < 20; },
                                      [&](auto v) {
                                          steps.assign_add(1);
                                          return v + 3;
                                      },
                                      x);
        },
        quiet());
    for (bool eager_mode : {false, true}) {
        eager_scope eager(eager_mode);
        taken.assign(0);
        steps.assign(0);
        CHECK(close(f(xt::xarray<std::int32_t>{1, 2}), xt::xarray<std::int32_t>{10, 11}));
        CHECK(close(f(xt::xarray<std::int32_t>{-1, -2}), xt::xarray<std::int32_t>{11, 10}));
        CHECK(taken.value()() == 1);
        CHECK(steps.value()() == 3 + 4);
    }
}

TEST_CASE("a scalar assigned inside a function fills the variable") {
    xtrace::variable<double> v(xt::xarray<double>{{1.0, 2.0}, {3.0, 4.0}});
    auto reset = xtrace::function(
        [&](auto x) {
            v.assign(0.5);
            return x;
        },
        quiet());
    reset(xt::xarray<double>{1.0});
    CHECK(close(v.value(), xt::xarray<double>{{0.5, 0.5}, {0.5, 0.5}}));
    v.assign(7);
    CHECK(close(v.value(), xt::xarray<double>{{7.0, 7.0}, {7.0, 7.0}}));
}
