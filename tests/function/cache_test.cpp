// When a traced function traces, and what a trace keeps: tf.function's rules, in C++.

#include "support/testing.hpp"

#include <optional>
#include <string>
#include <thread>

using namespace xtrace::testing;

TEST_CASE("same signature reuses the trace, a new shape or dtype traces again") {
    int traced = 0;
    auto f = xtrace::function(
        [&traced](auto x) {
            ++traced; // plain C++: runs while tracing only
            return x * 2;
        },
        quiet());
    const xt::xarray<float> a = {1.f, 2.f, 3.f};
    const xt::xarray<float> b = {4.f, 5.f, 6.f};
    const xt::xarray<float> c = {1.f, 2.f};
    const xt::xarray<double> d = {1.0, 2.0, 3.0};
    f(a);
    f(b);
    CHECK(traced == 1);
    CHECK(f.tracing_count() == 1);
    f(c);
    CHECK(f.tracing_count() == 2);
    f(d);
    CHECK(f.tracing_count() == 3);
    f(a);
    f(c);
    f(d);
    CHECK(f.tracing_count() == 3);
    CHECK(f.cache_size() == 3);
    CHECK(traced == 3);
    const auto s = f.stats();
    CHECK(s.calls == 7);
    CHECK(s.cache_hits == 4);
    CHECK(s.traces == 3);
    CHECK(s.running_time.count() > 0);
    CHECK(s.tracing_time.count() > 0);
}

TEST_CASE("static arguments are passed through and part of the key") {
    int traced = 0;
    enum class mode { plus, minus };
    auto f = xtrace::function(
        [&traced](auto x, double k, mode m, std::string tag) {
            ++traced;
            CHECK(!tag.empty());
            // Branches of different expression types meet in xtrace::erase's type.
            return m == mode::plus ? xtrace::erase(x + k) : xtrace::erase(x - k);
        },
        quiet());
    const xt::xarray<float> a = {1.f, 2.f};
    CHECK((f(a, 1.0, mode::plus, std::string("t")) == xt::xarray<float>{2.f, 3.f}));
    CHECK((f(a, 1.0, mode::plus, std::string("t")) == xt::xarray<float>{2.f, 3.f}));
    CHECK(traced == 1);
    CHECK((f(a, 2.0, mode::plus, std::string("t")) == xt::xarray<float>{3.f, 4.f}));
    CHECK((f(a, 2.0, mode::minus, std::string("t")) == xt::xarray<float>{-1.f, 0.f}));
    CHECK((f(a, 2.0, mode::minus, std::string("u")) == xt::xarray<float>{-1.f, 0.f}));
    CHECK(traced == 4);
    CHECK(f.tracing_count() == 4);
    const auto reasons = f.retrace_reasons();
    REQUIRE(reasons.size() == 3);
    CHECK(reasons[0] == "arg 1: value changed 1 -> 2");
    CHECK(reasons[1] == "arg 2: value changed 0 -> 1");
    CHECK(reasons[2] == "arg 3: value changed \"t\" -> \"u\"");
}

TEST_CASE("retrace reasons name the argument, the dim and the values") {
    auto f = xtrace::function([](auto x, auto y) { return x + y; }, quiet());
    f(xt::xarray<float>::from_shape({2, 3}), xt::xarray<float>::from_shape({3}));
    f(xt::xarray<float>::from_shape({2, 4}), xt::xarray<float>::from_shape({4}));
    f(xt::xarray<double>::from_shape({2, 4}), xt::xarray<double>::from_shape({4}));
    const auto r = f.retrace_reasons();
    REQUIRE(r.size() == 2);
    CHECK(r[0] == "arg 0: dim 1 changed 3 -> 4; arg 1: dim 0 changed 3 -> 4");
    CHECK(r[1] == "arg 0: dtype float32 -> float64; arg 1: dtype float32 -> float64");
    const auto sigs = f.pretty_printed_signatures();
    REQUIRE(sigs.size() == 3);
    CHECK(sigs[0] == "(x0: float32[2,3], x1: float32[3]) -> float32[2,3]");
}

TEST_CASE("tuple and pair results come back as tuples of xarrays") {
    auto f = xtrace::function([](auto x) { return std::make_pair(x + 1, x > 0.f); });
    auto g =
        xtrace::function([](auto x) { return std::make_tuple(x, xtrace::cast<std::int64_t>(x)); });
    const xt::xarray<float> a = {-1.f, 2.f};
    std::tuple<xt::xarray<float>, xt::xarray<bool>> r = f(a);
    CHECK((std::get<0>(r) == xt::xarray<float>{0.f, 3.f}));
    CHECK((std::get<1>(r) == xt::xarray<bool>{false, true}));
    auto [same, as_int] = g(a);
    CHECK((same == a));
    CHECK((as_int == xt::xarray<std::int64_t>{-1, 2}));
}

TEST_CASE("a traced function called from inside another trace is inlined") {
    auto inner = xtrace::function([](auto x) { return xtrace::exp(x) + 1.f; });
    auto outer = xtrace::function([&inner](auto x) { return inner(x) * 2.f; });
    const xt::xarray<float> a = {0.f, 1.f};
    xt::xarray<float> r = outer(a);
    CHECK(r(0) == Approx(4.f));
    CHECK(r(1) == Approx((std::exp(1.f) + 1.f) * 2.f));
    CHECK(inner.tracing_count() == 0); // it never traced on its own
    using G = xtrace::graph_t<decltype(outer), xt::xarray<float>>;
    static_assert(std::is_same_v<
                  G, xtrace::node<xtrace::op::mul,
                                  xtrace::node<xtrace::op::add,
                                               xtrace::node<xtrace::op::exp, xtrace::arg<0, float>>,
                                               xtrace::constant<float>>,
                                  xtrace::constant<float>>>);
    inner(a); // from plain code it runs its own graph
    CHECK(inner.tracing_count() == 1);
}

TEST_CASE("copies of a traced function share its cache") {
    auto f = xtrace::function([](auto x) { return x + 1; });
    auto g = f;
    const xt::xarray<std::int32_t> a = {1};
    f(a);
    g(a);
    CHECK(f.tracing_count() == 1);
    CHECK(g.stats().calls == 2);
    g.clear_cache();
    CHECK(f.cache_size() == 0);
    f(a);
    CHECK(f.tracing_count() == 2);
}

TEST_CASE("warns when 5 of the last 10 calls traced, at most twice") {
    std::vector<std::string> warnings;
    auto f = xtrace::function(
        [](auto x) { return x * 2; },
        xtrace::options{.max_cache_size = 0,
                        .name = "scale",
                        .on_warning = [&](std::string_view w) { warnings.emplace_back(w); }});
    for (std::size_t n = 1; n <= 4; ++n)
        f(xt::xarray<float>::from_shape({n}));
    CHECK(warnings.empty());
    f(xt::xarray<float>::from_shape({5}));
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].find("'scale'") != std::string::npos);
    CHECK(warnings[0].find("dim 0 changed") != std::string::npos);
    CHECK(warnings[0].find("reduce_retracing") != std::string::npos);
    for (std::size_t n = 6; n <= 30; ++n)
        f(xt::xarray<float>::from_shape({n}));
    CHECK(warnings.size() == 2);
}

TEST_CASE("no warning when traces are spread out") {
    int warnings = 0;
    auto f = xtrace::function(
        [](auto x) { return x * 2; },
        xtrace::options{.name = "spread", .on_warning = [&](std::string_view) { ++warnings; }});
    const xt::xarray<float> same = {1.f};
    for (std::size_t n = 1; n <= 8; ++n) {
        f(xt::xarray<float>::from_shape({n + 1}));
        for (int k = 0; k < 3; ++k)
            f(same);
    }
    CHECK(warnings == 0);
}

TEST_CASE("C-string static arguments are keyed by their characters") {
    int traced = 0;
    auto f = xtrace::function(
        [&traced](auto x, const char* mode) {
            ++traced;
            return std::string(mode) == "double" ? xtrace::erase(x * 2.f) : xtrace::erase(x);
        },
        quiet());
    const xt::xarray<float> a = {1.f};
    CHECK(f(a, "double")(0) == 2.f);
    CHECK(f(a, "same")(0) == 1.f);
    std::string built = "dou";
    built += "ble";
    CHECK(f(a, built.c_str())(0) == 2.f); // another pointer, the same characters: cached
    CHECK(traced == 2);
    CHECK(f.retrace_reasons() ==
          std::vector<std::string>{"arg 1: value changed \"double\" -> \"same\""});
}

TEST_CASE("a thread's repeated call takes its pinned binding; changes and nested calls do not") {
    auto f = xtrace::function([](auto x) { return x * 2.f + 1.f; },
                              quiet(xtrace::options{.max_cache_size = 1}));
    const xt::xarray<float> x = random_array<float>({5}), y = random_array<float>({7});
    const xt::xarray<float> fx = x * 2.f + 1.f, fy = y * 2.f + 1.f;
    for (int i = 0; i < 3; ++i)
        CHECK(close(f(x), fx));
    CHECK(f.tracing_count() == 1);
    CHECK(f.stats().calls == 3);
    CHECK(f.stats().cache_hits == 2);
    f.clear_cache(); // the pin is stale: the call traces again, as tf.function's would
    CHECK(close(f(x), fx));
    CHECK(f.tracing_count() == 2);
    CHECK(close(f(y), fy)); // evicts x's trace (a cache of one)
    CHECK(close(f(x), fx));
    CHECK(f.tracing_count() == 4);
    // A host callback calling f with the signature of the call that runs it: nested, it takes
    // the locked path and leaves the outer call's pin alone.
    int inner = 0;
    auto g = xtrace::function(
        [&](auto v) {
            return xtrace::host_function(
                [&](const xt::xarray<float>& a) {
                    ++inner;
                    return xt::xarray<float>(f(a) - 1.f);
                },
                xtrace::spec<float>({5}), v);
        },
        quiet());
    for (int i = 0; i < 3; ++i) {
        CHECK(close(f(x), fx));
        CHECK(close(g(x), xt::xarray<float>(fx - 1.f)));
    }
    CHECK(inner == 3);
    CHECK(f.tracing_count() == 4);
}

TEST_CASE("a function destroyed after its thread's pin, at thread exit, frees its bindings once") {
    // A thread_local holder constructed before the thread's first call is destroyed after the
    // pin that call made: the function's cache must not release the pin's binding a second time.
    bool ok = false;
    std::thread([&ok] {
        constexpr auto add_one = [](auto x) { return x + 1.f; };
        thread_local std::optional<decltype(xtrace::function(add_one))> keep;
        keep.emplace(xtrace::function(add_one, quiet()));
        const xt::xarray<float> x = {1.f, 2.f};
        for (int i = 0; i < 3; ++i)
            ok = close((*keep)(x), xt::xarray<float>{2.f, 3.f});
    }).join();
    CHECK(ok);
}
