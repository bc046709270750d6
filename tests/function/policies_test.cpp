// reduce_retracing, input_signature and max_cache_size, as tf.function's options behave.

#include "support/testing.hpp"

using namespace xtrace::testing;

namespace {
xt::xarray<float> ones(std::vector<std::size_t> shape) {
    return xt::ones<float>(shape);
}
} // namespace

TEST_CASE("reduce_retracing: shapes [2], [3], [4] trace 1, 2, 2 times") {
    std::vector<std::vector<std::int64_t>> seen;
    auto f = xtrace::function(
        [&seen](auto x) {
            seen.push_back(x.shape());
            return x * 2.f;
        },
        quiet({.reduce_retracing = true}));
    f(ones({2}));
    CHECK(f.tracing_count() == 1);
    f(ones({3}));
    CHECK(f.tracing_count() == 2);
    xt::xarray<float> r = f(ones({4}));
    CHECK(f.tracing_count() == 2);
    CHECK(r.size() == 4);
    CHECK(r(3) == 2.f);
    REQUIRE(seen.size() == 2);
    CHECK(seen[0] == std::vector<std::int64_t>{2});
    CHECK(seen[1] == std::vector<std::int64_t>{-1}); // the relaxed trace sees an unknown dim
    const auto sigs = f.pretty_printed_signatures();
    CHECK(sigs.back() == "(x0: float32[?]) -> float32[?]");
    CHECK(f.retrace_reasons() == std::vector<std::string>{"arg 0: dim 0 changed 2 -> 3"});
    // A new rank relaxes to an unknown rank, where the lambda's x.shape() has no answer: the
    // relaxed trace gives way to an exact trace of the call's shapes.
    f(ones({2, 2}));
    CHECK(f.tracing_count() == 3);
    CHECK(f.retrace_reasons().back() ==
          "arg 0: rank changed 1 -> 2 (a relaxed trace needed known dims or rank: traced this "
          "call's shapes)");
    CHECK(f.pretty_printed_signatures().back() == "(x0: float32[2,2]) -> float32[2,2]");
}

TEST_CASE("reduce_retracing: a relaxed trace binds each concrete shape without tracing") {
    int traces = 0;
    auto f = xtrace::function(
        [&traces](auto x, auto y) {
            ++traces;
            return xtrace::exp(x) + y;
        },
        quiet({.reduce_retracing = true}));
    f(ones({2, 3}), ones({3}));
    f(ones({5, 3}), ones({3}));
    CHECK(traces == 2);
    for (std::size_t n = 1; n < 40; ++n) {
        const xt::xarray<float> x = random_array<float>({n, 3});
        const xt::xarray<float> y = random_array<float>({3});
        CHECK(close(f(x, y), xt::xarray<float>(xt::exp(x) + y), 4, 1e-5));
    }
    CHECK(traces == 2);
    CHECK(f.stats().traces == 2);
}

TEST_CASE(
    "reduce_retracing: shapes that only concrete dims reveal as incompatible throw at binding") {
    auto f =
        xtrace::function([](auto x, auto y) { return x + y; }, quiet({.reduce_retracing = true}));
    f(ones({2}), ones({2}));
    f(ones({3}), ones({3})); // relaxed: ([?], [?])
    CHECK(f.tracing_count() == 2);
    CHECK_THROWS_AS(f(ones({4}), ones({5})), xtrace::shape_error);
    CHECK(f(ones({4}), ones({4})).size() == 4);
    CHECK(f(ones({4}), ones({1})).size() == 4);
    CHECK(f.tracing_count() == 2);
}

TEST_CASE("input_signature: one trace, unknown dims accept any size") {
    std::vector<std::int64_t> seen;
    auto f = xtrace::function(
        [&seen](auto x, auto y) {
            seen = x.shape();
            return x * y;
        },
        quiet({.input_signature = {{xtrace::spec<float>({-1, 3}), xtrace::spec<float>({3})}}}));
    for (std::size_t n : {1u, 2u, 7u, 100u})
        CHECK(f(ones({n, 3}), ones({3})).shape()[0] == n);
    CHECK(f.tracing_count() == 1);
    CHECK(seen == std::vector<std::int64_t>{-1, 3});
    CHECK(f.pretty_printed_signatures() ==
          std::vector<std::string>{"(x0: float32[?,3], x1: float32[3]) -> float32[?,3]"});
}

TEST_CASE(
    "input_signature: a call that does not fit names the argument, dim, expected and actual") {
    auto f = xtrace::function(
        [](auto x) { return x + 1.f; },
        quiet({.input_signature = {{xtrace::spec<float>({-1, 3})}}, .name = "predict"}));
    auto message = [&](const auto& arg) -> std::string {
        try {
            f(arg);
        } catch (const xtrace::signature_error& e) {
            return e.what();
        }
        return "no signature_error";
    };
    CHECK(message(ones({2, 4})) == "predict: arg 0 dim 1 is 4, input_signature expects 3 "
                                   "(float32[?,3], got float32[2,4])");
    CHECK(message(ones({3})) ==
          "predict: arg 0 has rank 1 (float32[3]), input_signature expects float32[?,3]");
    CHECK(message(xt::xarray<double>::from_shape({2, 3})) ==
          "predict: arg 0 has dtype float64, input_signature expects float32[?,3]");
    CHECK(f.tracing_count() == 0);
    CHECK(f(ones({2, 3})).size() == 6); // still works
}

TEST_CASE("max_cache_size evicts the least recently used trace") {
    auto f = xtrace::function([](auto x) { return x + 1.f; }, quiet({.max_cache_size = 2}));
    f(ones({1}));
    f(ones({2}));
    f(ones({1})); // [1] is now more recent than [2]
    f(ones({3})); // evicts [2]
    CHECK(f.cache_size() == 2);
    CHECK(f.stats().evictions == 1);
    f(ones({1}));
    CHECK(f.tracing_count() == 3);
    f(ones({2})); // traced again
    CHECK(f.tracing_count() == 4);
    const auto sigs = f.pretty_printed_signatures();
    CHECK(std::find(sigs.begin(), sigs.end(), "(x0: float32[3]) -> float32[3]") == sigs.end());
}

TEST_CASE("clear_cache drops every trace; the next call says why it traced") {
    auto f = xtrace::function([](auto x) { return x + 1.f; }, quiet());
    f(ones({1}));
    f.clear_cache();
    CHECK(f.cache_size() == 0);
    f(ones({1}));
    CHECK(f.tracing_count() == 2);
    CHECK(f.retrace_reasons().back() == "no cached trace (the cache was cleared or evicted)");
}
