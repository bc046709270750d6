// cond: both branches traced once, only the taken one runs; results, captures, nesting, tuples,
// effects-only branches, and the shape errors.

#include "support/eager_scope.hpp"
#include "support/testing.hpp"

#include <optional>

using namespace xtrace::testing;

namespace {

// sum(x) > 0 ? x * 2 + y : x - y, by hand.
template <class T>
xt::xarray<T> reference(const xt::xarray<T>& x, const xt::xarray<T>& y) {
    T total = 0;
    for (T v : x)
        total += v;
    return total > T(0) ? xt::xarray<T>(x * T(2) + y) : xt::xarray<T>(x - y);
}

template <class T>
void check_random_shapes() {
    int traced_then = 0, traced_else = 0;
    auto f = xtrace::function(
        [&](auto x, auto y) {
            return xtrace::cond(
                xtrace::sum(x) > 0,
                [&] {
                    ++traced_then;
                    return x * 2 + y;
                },
                [&] {
                    ++traced_else;
                    return x - y;
                });
        },
        quiet());
    for (int round = 0; round < 12; ++round) {
        const auto shape = random_shape();
        const xt::xarray<T> x = random_array<T>(shape);
        const xt::xarray<T> y = random_array<T>(broadcastable_to(shape));
        const auto expected = reference(x, y);
        auto [traced, eager] = both_paths(f, x, y);
        CHECK(close(traced, expected));
        CHECK(close(eager, expected));
    }
    CHECK(traced_then >= 1);
}

} // namespace

TEST_CASE("cond picks the branch from a value known only when the function runs") {
    check_random_shapes<float>();
    check_random_shapes<double>();
    check_random_shapes<std::int32_t>();
    check_random_shapes<std::int64_t>();
}

TEST_CASE("both branches are traced once; afterwards only the taken one runs") {
    int then_traced = 0, else_traced = 0;
    auto f = xtrace::function(
        [&](auto x) {
            return xtrace::cond(
                xtrace::max(x) > 0.f,
                [&] {
                    ++then_traced;
                    xtrace::print("then");
                    return x;
                },
                [&] {
                    ++else_traced;
                    xtrace::print("else");
                    return -x;
                });
        },
        quiet());
    const xt::xarray<float> pos = {1.f, -2.f}, neg = {-1.f, -2.f};
    cout_capture out;
    CHECK(close(f(pos), xt::xarray<float>{1.f, -2.f}));
    CHECK(close(f(neg), xt::xarray<float>{1.f, 2.f}));
    CHECK(close(f(pos), xt::xarray<float>{1.f, -2.f}));
    CHECK(out.text() == "then\nelse\nthen\n");
    CHECK(then_traced == 1);
    CHECK(else_traced == 1);
    CHECK(f.tracing_count() == 1);
}

TEST_CASE("branches capture outer values, nest, and may return tuples or arguments as they are") {
    auto f = xtrace::function(
        [](auto x, auto y) {
            auto scale = xtrace::sum(y);
            return xtrace::cond(
                scale > 0,
                [&] {
                    auto inner = xtrace::cond(
                        xtrace::min(x) > 0, [&] { return std::tuple(x * scale, y); },
                        [&] { return std::tuple(x, y + scale); });
                    return inner;
                },
                [&] { return std::tuple(x - 1, y * 2); });
        },
        quiet());
    for (int round = 0; round < 20; ++round) {
        const auto shape = random_shape(3);
        const xt::xarray<double> x = random_array<double>(shape, -1, 2);
        const xt::xarray<double> y = random_array<double>({3}, -1, 2);
        double scale = 0, low = 1e300;
        for (double v : y)
            scale += v;
        for (double v : x)
            low = std::min(low, v);
        xt::xarray<double> ex = x, ey = y;
        if (scale > 0 && low > 0)
            ex = x * scale;
        else if (scale > 0)
            ey = y + scale;
        else
            ex = x - 1.0, ey = y * 2.0;
        auto [traced, eager] = both_paths(f, x, y);
        CHECK(close(std::get<0>(traced), ex));
        CHECK(close(std::get<1>(traced), ey));
        CHECK(close(std::get<0>(eager), ex));
        CHECK(close(std::get<1>(eager), ey));
    }
}

TEST_CASE("a pred given as an argument, bool results, and zero-size tensors") {
    auto f = xtrace::function(
        [](auto p, auto x) {
            return xtrace::cond(
                p, [&] { return x > 0; }, [&] { return x < 0; });
        },
        quiet());
    const xt::xarray<bool> yes = true, no = false;
    const xt::xarray<std::int64_t> x = {-1, 0, 2};
    const xt::xarray<bool> positive = {false, false, true}, negative = {true, false, false};
    CHECK(xt::all(xt::equal(f(yes, x), positive)));
    CHECK(xt::all(xt::equal(f(no, x), negative)));
    const xt::xarray<std::int64_t> empty = xt::xarray<std::int64_t>::from_shape({0, 3});
    CHECK(f(yes, empty).shape() == std::vector<std::size_t>{0, 3});
    xtrace::testing::eager_scope eager;
    CHECK(xt::all(xt::equal(f(no, x), negative)));
}

TEST_CASE("branches that return nothing run their effects only when taken") {
    auto f = xtrace::function(
        [](auto x) {
            xtrace::cond(
                xtrace::sum(x) > 0, [&] { xtrace::print("positive", x); },
                [&] { xtrace::print("not positive"); });
            return x + 1;
        },
        quiet());
    cout_capture out;
    f(xt::xarray<int>{1, 2});
    f(xt::xarray<int>{-1, -2});
    CHECK(out.text() == "positive {1, 2}\nnot positive\n");
}

TEST_CASE("a C++ bool pred picks the branch while tracing, as a Python if would") {
    int traced = 0;
    auto f = xtrace::function(
        [&](auto x, bool twice) {
            return xtrace::cond(
                twice,
                [&] {
                    ++traced;
                    return x * 2.f;
                },
                [&] {
                    ++traced;
                    return x;
                });
        },
        quiet());
    const xt::xarray<float> x = {1.f, 2.f};
    CHECK(close(f(x, true), xt::xarray<float>{2.f, 4.f}));
    CHECK(close(f(x, false), x));
    CHECK(traced == 2); // one branch per trace
}

TEST_CASE("branches of different shapes are a shape_error; the function works afterwards") {
    auto f = xtrace::function(
        [](auto x) {
            return xtrace::cond(
                xtrace::sum(x) > 0.f, [&] { return x; }, [&] { return xtrace::transpose(x); });
        },
        quiet());
    CHECK(shape_error_message([&] {
              f(xt::xarray<float>{{1.f, 2.f}});
          }) ==
          "xtrace::cond: result 0 has shape [1,2] in the then branch but [2,1] in the else branch; "
          "both branches must return the same shapes");
    CHECK(close(f(xt::xarray<float>{1.f, 2.f}), xt::xarray<float>{1.f, 2.f}));

    // With unknown dims the shapes are compared per call.
    auto g = xtrace::function(
        [](auto x, auto y) {
            return xtrace::cond(
                xtrace::sum(x) > 0.f, [&] { return x; }, [&] { return y; });
        },
        quiet({.input_signature = {{xtrace::spec<float>({-1}), xtrace::spec<float>({-1})}}}));
    const xt::xarray<float> a = {1.f, 2.f}, b = {3.f, 4.f, 5.f};
    CHECK(close(g(a, a), a));
    CHECK(shape_error_message([&] { g(a, b); }) ==
          "xtrace::cond: result 0 has shape [2] in the then branch but [3] in the else branch; "
          "both branches must return the same shapes");
    CHECK(close(g(b, b), b));
}

TEST_CASE("pred must be 0-d") {
    auto f = xtrace::function(
        [](auto x) {
            return xtrace::cond(
                x > 0.f, [&] { return x; }, [&] { return -x; });
        },
        quiet());
    CHECK(shape_error_message([&] {
              f(xt::xarray<float>{1.f, 2.f});
          }) == "xtrace::cond: pred must be a 0-d bool tensor, got shape [2]");
    CHECK(close(f(xt::xarray<float>(-3.f)), xt::xarray<float>(3.f)));
    xtrace::testing::eager_scope eager;
    CHECK(shape_error_message([&] {
              f(xt::xarray<float>{1.f, 2.f});
          }) == "xtrace::cond: pred must be a 0-d bool tensor, got shape [2]");
}

TEST_CASE("the graph shows both branches") {
    auto f = xtrace::function(
        [](auto x) {
            return xtrace::cond(
                xtrace::sum(x) > 0.f, [&] { return x * 2.f; }, [&] { return x; });
        },
        quiet());
    auto cf = f.get_concrete_function(xtrace::spec<float>({3}));
    const std::string text = cf.graph_text();
    CHECK(text.find("cond(%") != std::string::npos);
    CHECK(text.find("  then:\n") != std::string::npos);
    CHECK(text.find("  else:\n") != std::string::npos);
    CHECK(text.find("mul(") != std::string::npos);
}

TEST_CASE("a tensor stored outside its branch is a tracing_error when used; nothing is cached") {
    bool leak = true;
    auto f = xtrace::function(
        [&](auto x) {
            std::optional<decltype(xtrace::erase(x * 2.f))> kept;
            auto r = xtrace::cond(
                xtrace::sum(x) > 0.f,
                [&] {
                    if (leak)
                        kept = x * 2.f;
                    return x;
                },
                [&] { return -x; });
            return kept ? xtrace::erase(r + *kept) : xtrace::erase(r);
        },
        quiet());
    try {
        f(xt::xarray<float>{1.f});
        FAIL("no tracing_error");
    } catch (const xtrace::tracing_error& e) {
        INFO(e.what());
        CHECK(std::string(e.what()).find("used after its trace ended") != std::string::npos);
    }
    CHECK(f.tracing_count() == 0);
    leak = false;
    CHECK(close(f(xt::xarray<float>{-1.f}), xt::xarray<float>{1.f}));
}
