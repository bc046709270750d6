// get_concrete_function: trace without running, then call the one graph.

#include "support/testing.hpp"

using namespace xtrace::testing;

TEST_CASE("get_concrete_function traces once without running and is callable") {
    int traces = 0;
    auto f = xtrace::function(
        [&traces](auto x, auto y) {
            ++traces;
            return xtrace::exp(x) * y + 1.0f;
        },
        quiet({.name = "model"}));
    auto cf = f.get_concrete_function(xtrace::spec<float>({-1, 3}), xtrace::spec<float>({3}));
    CHECK(traces == 1);
    CHECK(f.tracing_count() == 1);
    CHECK(cf.signature() == "(x0: float32[?,3], x1: float32[3]) -> float32[?,3]");
    const xt::xarray<float> a = random_array<float>({4, 3});
    const xt::xarray<float> b = random_array<float>({3});
    CHECK(close(cf(a, b), xt::xarray<float>(xt::exp(a) * b + 1.f)));
    CHECK(cf(xt::xarray<float>(random_array<float>({9, 3})), b).shape()[0] == 9);
    CHECK(traces == 1);
    // The same specs again: the cached trace.
    f.get_concrete_function(xtrace::spec<float>({-1, 3}), xtrace::spec<float>({3}));
    CHECK(f.tracing_count() == 1);
    // A call through f that fits the concrete trace reuses it.
    f(a, b);
    CHECK(f.tracing_count() == 1);
}

TEST_CASE("a concrete function checks its spec") {
    auto f = xtrace::function([](auto x) { return x * 2; }, quiet({.name = "double_it"}));
    auto cf = f.get_concrete_function(xtrace::spec<std::int32_t>({2, -1}));
    try {
        cf(xt::xarray<std::int32_t>::from_shape({3, 3}));
        FAIL("no signature_error");
    } catch (const xtrace::signature_error& e) {
        CHECK(std::string(e.what()) == "double_it: arg 0 dim 0 is 3, the concrete function's "
                                       "signature expects 2 (int32[2,?], got int32[3,3])");
    }
    CHECK_THROWS_AS(cf(xt::xarray<std::int64_t>::from_shape({2, 3})), xtrace::signature_error);
    CHECK(cf(xt::xarray<std::int32_t>{{1, 2}, {3, 4}})(1, 1) == 8);
}

TEST_CASE("graph_text and to_dot describe the traced graph") {
    auto f = xtrace::function([](auto x, auto y) { return xtrace::exp(x) * y + 1.0f; });
    auto cf = f.get_concrete_function(xtrace::spec<float>({-1, 3}), xtrace::spec<float>({3}));
    CHECK(cf.graph_text() == "%0 = arg 0 : float32[?,3]\n"
                             "%1 = arg 1 : float32[3]\n"
                             "%2 = exp(%0) : float32[?,3]\n"
                             "%3 = mul(%2, %1) : float32[?,3]\n"
                             "%4 = constant 1 : float32[]\n"
                             "%5 = add(%3, %4) : float32[?,3]\n"
                             "return %5\n");
    const std::string dot = cf.to_dot();
    CHECK(dot.rfind("digraph", 0) == 0);
    CHECK(dot.find("n2 -> n3;") != std::string::npos);
    CHECK(dot.find("label=\"exp\\nfloat32[?,3]\"") != std::string::npos);
}

TEST_CASE("static arguments in a concrete function's specs") {
    auto f = xtrace::function([](auto x, int k) { return x * k; });
    auto cf = f.get_concrete_function(xtrace::spec<std::int64_t>({2}), 3);
    CHECK(cf.signature() == "(x0: int64[2], x1: 3) -> int64[2]");
    CHECK(cf(xt::xarray<std::int64_t>{1, 2}, 3)(1) == 6);
    CHECK_THROWS_AS(cf(xt::xarray<std::int64_t>{1, 2}, 4), xtrace::signature_error);
}

TEST_CASE("a concrete function prints the plan its calls run") {
    auto f = xtrace::function([](auto x, auto y) { return xtrace::exp(x) * y + 1.0f; },
                              quiet({.name = "model"}));
    auto known = f.get_concrete_function(xtrace::spec<float>({2, 3}), xtrace::spec<float>({3}));
    // One region over [2,3]: x read in place, y gathered (broadcast), the constant splatted, and
    // the three ops run as one fused piece compiled from the expression's type.
    const std::string text = known.plan_text();
    INFO(text);
    CHECK(text.rfind("plan: 1 step, temps 0 bytes", 0) == 0);
    CHECK(text.find("step 0: region [2,3], 1 node") != std::string::npos);
    CHECK(text.find("= fused 3 ops (s0, s1, s2) : float32 -> output 0") != std::string::npos);
    CHECK(text.find("in s1: %1 arg 1") != std::string::npos);
    CHECK(text.find("constant 1, splat") != std::string::npos);
    CHECK(text.find("-> output 0") != std::string::npos);
    CHECK(known.plan_text({{2, 3}, {3}}) == text);

    auto open = f.get_concrete_function(xtrace::spec<float>({-1, 3}), xtrace::spec<float>({3}));
    CHECK_THROWS_AS(open.plan_text(), xtrace::signature_error); // which shapes?
    CHECK(open.plan_text({{5, 3}, {3}}).find("region [5,3]") != std::string::npos);
    CHECK_THROWS_AS(open.plan_text({{5, 4}, {3}}), xtrace::signature_error); // dim 1 is 3
    CHECK_THROWS_AS(open.plan_text({{5, 3}}), xtrace::signature_error);      // one shape short
    CHECK_THROWS_AS(open.plan_text({{5, 3}, {3}, {3}}), xtrace::signature_error);
    // Still callable after the errors.
    const xt::xarray<float> a = random_array<float>({5, 3}), b = random_array<float>({3});
    CHECK(close(open(a, b), xt::xarray<float>(xt::exp(a) * b + 1.f)));
}
