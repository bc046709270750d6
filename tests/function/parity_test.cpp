// tf.function and JAX behaviours, each test named after the peer test it mirrors.

#include "support/testing.hpp"

#include <optional>

using namespace xtrace::testing;

TEST_CASE("testInputSignatureMismatchOnGetConcreteFunction: a spec the signature rejects") {
    xtrace::options o = quiet();
    o.input_signature = {{xtrace::spec<float>({2})}};
    auto f = xtrace::function([](auto x) { return x * 2.f; }, o);
    auto cf = f.get_concrete_function(xtrace::spec<float>({2}));
    CHECK(f.tracing_count() == 1);
    CHECK_THROWS_AS(f.get_concrete_function(xtrace::spec<float>({3})), xtrace::signature_error);
    CHECK(f.tracing_count() == 1);
    CHECK((cf(xt::xarray<float>{1.f, 2.f}) == xt::xarray<float>{2.f, 4.f}));
}

TEST_CASE("testCacheTensorSpecIdenticalToTensor: a tensor stands for its spec") {
    auto f = xtrace::function([](auto x) { return x + 1.f; }, quiet());
    const xt::xarray<float> a = {1.f, 2.f, 3.f};
    auto cf = f.get_concrete_function(a);
    CHECK(f.tracing_count() == 1);
    f.get_concrete_function(xtrace::spec<float>({3}));
    f(a);
    CHECK(f.tracing_count() == 1);
    CHECK((cf(a) == xt::xarray<float>{2.f, 3.f, 4.f}));
    CHECK(cf.signature().find("float32[3]") != std::string::npos);
}

TEST_CASE("test_clear_cache_with_variable: after clear_cache the next trace is a first trace") {
    std::optional<xtrace::variable<float>> v;
    auto f = xtrace::function(
        [&](auto x) {
            v.emplace(xt::xarray<float>{1.f}); // created on every trace: allowed on first ones
            return x * v->read();
        },
        quiet());
    const xt::xarray<float> a = {3.f};
    CHECK((f(a) == xt::xarray<float>{3.f}));
    CHECK_THROWS_AS(f(xt::xarray<float>{1.f, 2.f}), xtrace::tracing_error);
    f.clear_cache();
    CHECK((f(xt::xarray<float>{1.f, 2.f}) == xt::xarray<float>{1.f, 2.f}));
}

TEST_CASE("explain_cache_misses: the nearest trace has the same rank, then the fewest changes") {
    auto f = xtrace::function([](auto x) { return x * 2.f; }, quiet());
    f(xt::xarray<float>(xt::zeros<float>({10, 20})));
    f(xt::xarray<float>(xt::zeros<float>({10, 20, 3})));
    f(xt::xarray<float>(xt::zeros<float>({10, 2})));
    const auto reasons = f.retrace_reasons();
    REQUIRE(reasons.size() == 2);
    CHECK(reasons[1] == "arg 0: dim 1 changed 20 -> 2");
}

TEST_CASE("test_escaped_tracer_shape_dtype: the error names dtype, shape and function") {
    std::optional<xtrace::erased<double>> kept;
    xtrace::options o = quiet();
    o.name = "leaky";
    auto f = xtrace::function(
        [&](auto x) {
            if constexpr (xtrace::symbolic_tensor<decltype(x)>)
                kept = xtrace::erase(x * 2.);
            return x;
        },
        o);
    f(xt::xarray<double>(xt::zeros<double>({2, 3})));
    try {
        auto y = xtrace::exp(*kept);
        (void)y;
        FAIL("no tracing_error");
    } catch (const xtrace::tracing_error& e) {
        const std::string what = e.what();
        CHECK(what.find("float64[2,3]") != std::string::npos);
        CHECK(what.find("leaky") != std::string::npos);
        CHECK(what.find("xtrace::exp") != std::string::npos);
    }
    CHECK_THROWS_WITH(kept->shape(), Catch::Matchers::Contains("float64[2,3]"));
}

TEST_CASE("get_concrete_function reuses a relaxed trace that fits the spec") {
    xtrace::options o = quiet();
    o.reduce_retracing = true;
    auto f = xtrace::function([](auto x) { return x * 2.f; }, o);
    f(xt::xarray<float>(xt::zeros<float>({1, 1})));
    f(xt::xarray<float>(xt::zeros<float>({2, 3}))); // relaxed to [?,?]
    CHECK(f.tracing_count() == 2);
    auto cf = f.get_concrete_function(xtrace::spec<float>({2, 1}));
    CHECK(f.tracing_count() == 2);
    CHECK(cf.signature().find("[?,?]") != std::string::npos);
}

TEST_CASE("testVariableInitializerNotConstant: a variable initialised from a traced value") {
    std::optional<xtrace::variable<float>> v;
    auto f = xtrace::function(
        [&](auto x) {
            if (!v)
                v.emplace(2.f * x); // its value comes from the first call's x
            v->assign_add(1.f);
            return v->read();
        },
        quiet());
    const xt::xarray<float> a = {1.f, 2.f};
    CHECK((f(a) == xt::xarray<float>{3.f, 5.f})); // initialised, then incremented
    CHECK((f(xt::xarray<float>{7.f, 7.f}) == xt::xarray<float>{4.f, 6.f}));
    CHECK((v->value() == xt::xarray<float>{4.f, 6.f}));
    CHECK(f.tracing_count() == 1);
    xtrace::variable<float> e(xtrace::eager_tensor<float>(xt::xarray<float>{1.f, 2.f})); // eager
    CHECK((e.value() == xt::xarray<float>{1.f, 2.f}));
}

TEST_CASE("testNestedFunctionWithNoArguments: a no-argument function is inlined into its caller") {
    xtrace::variable<float> v(xt::xarray<float>{1.f, 2.f}, "v");
    int inner_traced = 0;
    auto read_twice = xtrace::function([&] {
        ++inner_traced;
        return v.read() * 2.f;
    });
    auto outer = xtrace::function([&](auto x) { return x + read_twice(); });
    const xt::xarray<float> x = {10.f, 20.f};
    CHECK((outer(x) == xt::xarray<float>{12.f, 24.f}));
    v.assign(xt::xarray<float>{5.f, 6.f});
    CHECK((outer(x) == xt::xarray<float>{20.f, 32.f})); // the graph reads v, not a copy
    CHECK(outer.tracing_count() == 1);
    CHECK(read_twice.tracing_count() == 0); // inlined: it never traced on its own
    CHECK(inner_traced == 1);
    CHECK(outer.get_concrete_function(x).graph_text().find("read_variable") != std::string::npos);

    // From plain code it runs its own graph, and its result is the value.
    const xt::xarray<float> direct = read_twice();
    CHECK((direct == xt::xarray<float>{10.f, 12.f}));
    CHECK(read_twice()(1) == 12.f);
    CHECK(read_twice.tracing_count() == 1);
    v.assign(xt::xarray<float>{0.f, 1.f});
    CHECK((xt::xarray<float>(read_twice()) == xt::xarray<float>{0.f, 2.f}));
    CHECK(read_twice.tracing_count() == 1);

    // Several results, and eagerly the same.
    auto both = xtrace::function([&] { return std::make_tuple(v.read() + 1.f, v.read() > 0.f); });
    auto use_both = xtrace::function([&](auto x) {
        auto [a, positive] = both();
        return xtrace::where(positive, x * a, x);
    });
    CHECK((use_both(x) == xt::xarray<float>{10.f, 40.f}));
    {
        struct eager {
            eager() { xtrace::run_functions_eagerly(true); }
            ~eager() { xtrace::run_functions_eagerly(false); }
        } on;
        v.assign(xt::xarray<float>{3.f, -1.f});
        CHECK((use_both(x) == xt::xarray<float>{40.f, 20.f}));
        const auto [a, positive] = both();
        CHECK((a.value() == xt::xarray<float>{4.f, 0.f}));
        CHECK(positive(0));
    }
    CHECK((use_both(x) == xt::xarray<float>{40.f, 20.f}));
    CHECK(use_both.tracing_count() == 1);
}
