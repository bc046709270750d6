// An inner traced function's input_signature holds when it is inlined into another trace, as
// in TensorFlow's nested tf.function calls (testNestedInputSignature and the "inner function
// sees its own signature" behaviour of polymorphic_function_test.py).

#include "support/eager_scope.hpp"
#include "support/testing.hpp"

using namespace xtrace::testing;
using Catch::Matchers::Contains;

namespace {

template <class T>
bool identical_values(const xt::xarray<T>& a, const xt::xarray<T>& b) {
    return a.shape() == b.shape() && a == b;
}

xtrace::options with_signature(std::vector<xtrace::tensor_spec> specs, std::string name) {
    xtrace::options o = quiet();
    o.input_signature = std::move(specs);
    o.name = std::move(name);
    return o;
}

} // namespace

TEST_CASE("testNestedInputSignature: the inlined function sees its signature's dims") {
    // inner has signature [1]; outer's tensor is [?]: inside inner the dim is 1.
    auto inner = xtrace::function(
        [](auto x) {
            CHECK(x.shape() == std::vector<std::int64_t>{1});
            return x * 3.f;
        },
        with_signature({xtrace::spec<float>({1})}, "inner"));
    auto outer = xtrace::function([&](auto x) { return inner(x) + 1.f; },
                                  with_signature({xtrace::spec<float>({-1})}, "outer"));
    const xt::xarray<float> one = {2.f};
    CHECK(identical_values(outer(one), xt::xarray<float>{7.f}));
    // The outer trace serves [?]; a call whose dim is not 1 breaks the inner signature.
    CHECK_THROWS_AS(outer(xt::xarray<float>{1.f, 2.f}), xtrace::signature_error);
    CHECK_THROWS_WITH(outer(xt::xarray<float>{1.f, 2.f}),
                      Contains("inner: arg 0 of an inlined call must have shape [1], it has [2]"));
    CHECK(identical_values(outer(one), xt::xarray<float>{7.f})); // still works after the error
    CHECK(outer.tracing_count() == 1);
}

TEST_CASE("a known mismatch with the inner signature is a signature_error at trace time") {
    auto inner = xtrace::function([](auto x) { return x * 2.f; },
                                  with_signature({xtrace::spec<float>({3})}, "inner"));
    auto outer = xtrace::function([&](auto x) { return inner(x); }, quiet());
    CHECK_THROWS_WITH(outer(xt::xarray<float>{1.f, 2.f}),
                      Contains("inner: arg 0 of an inlined call must have shape [3], it has [2]"));
    CHECK(outer.tracing_count() == 0); // the failed trace left the cache as it was
    CHECK(identical_values(outer(xt::xarray<float>{1.f, 2.f, 3.f}),
                           xt::xarray<float>{2.f, 4.f, 6.f}));
    auto wrong_type = xtrace::function([&](auto x) { return inner(x); }, quiet());
    CHECK_THROWS_WITH(wrong_type(xt::xarray<double>{1.0, 2.0, 3.0}),
                      Contains("is float64, the input_signature says float32[3]"));
}

TEST_CASE("the inner signature holds on the eager path too") {
    auto inner = xtrace::function([](auto x) { return x * 2.f; },
                                  with_signature({xtrace::spec<float>({-1, 2})}, "inner"));
    auto outer = xtrace::function([&](auto x) { return inner(x) - 1.f; }, quiet());
    const xt::xarray<float> good = {{1.f, 2.f}}, bad = {1.f, 2.f};
    {
        eager_scope eager;
        CHECK(identical_values(outer(good), xt::xarray<float>{{1.f, 3.f}}));
        CHECK_THROWS_AS(outer(bad), xtrace::signature_error);
    }
    CHECK(identical_values(outer(good), xt::xarray<float>{{1.f, 3.f}}));
    CHECK_THROWS_AS(outer(bad), xtrace::signature_error);
}

TEST_CASE("the check is one identity node, through which gradients flow") {
    auto inner = xtrace::function([](auto x) { return x * x; },
                                  with_signature({xtrace::spec<double>({3})}, "inner"));
    auto loss = [&](auto x) { return xtrace::sum(inner(x)); };
    auto g = xtrace::function(xtrace::grad(loss), quiet());
    const xt::xarray<double> x = {1.0, -2.0, 0.5};
    CHECK(identical_values(g(x), xt::xarray<double>{2.0, -4.0, 1.0}));
    auto outer = xtrace::function([&](auto x) { return inner(x) + 1.0; }, quiet());
    const auto cf = outer.get_concrete_function(xtrace::spec<double>({-1}));
    CHECK(cf.graph_text().find("%1 = ensure_shape(%0, [3]) : float64[3]") != std::string::npos);
    CHECK(cf.plan_text({{3}}).find("ensure_shape") != std::string::npos); // fused, as an identity
    CHECK_THROWS_AS(cf(xt::xarray<double>{1.0, 2.0}), xtrace::signature_error);
    // Dims the calling trace already knows need no node.
    auto exact = xtrace::function([&](auto x) { return inner(x) + 1.0; }, quiet());
    const auto known = exact.get_concrete_function(xtrace::spec<double>({3}));
    CHECK(known.graph_text().find("ensure_shape") == std::string::npos);
}
