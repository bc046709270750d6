// Binary arithmetic with NumPy broadcasting and weak scalars, traced and eager, against xtensor.

#include "support/eager_scope.hpp"
#include "support/testing.hpp"

using namespace xtrace::testing;

namespace {

template <class T, class Op, class Ref>
void check_broadcast(Op op, Ref ref, double lo, double hi) {
    auto f = xtrace::function([op](auto x, auto y) { return op(x, y); }, quiet());
    for (int trial = 0; trial < 20; ++trial) {
        auto sa = random_shape();
        auto sb = broadcastable_to(sa);
        if (trial % 2)
            std::swap(sa, sb);
        const xt::xarray<T> a = random_array<T>(sa, lo, hi);
        const xt::xarray<T> b = random_array<T>(sb, lo, hi);
        const xt::xarray<T> expected = ref(a, b);
        auto [traced, eager] = both_paths(f, a, b);
        INFO("shapes " << shape_text(sa) << " and " << shape_text(sb));
        CHECK(close(traced, expected));
        CHECK(close(eager, expected));
    }
}

template <class T>
void arithmetic() {
    const double lo = std::is_integral_v<T> ? -50 : -3, hi = std::is_integral_v<T> ? 50 : 3;
    check_broadcast<T>([](auto x, auto y) { return x + y; }, [](auto& a, auto& b) { return a + b; },
                       lo, hi);
    check_broadcast<T>([](auto x, auto y) { return x - y; }, [](auto& a, auto& b) { return a - b; },
                       lo, hi);
    check_broadcast<T>([](auto x, auto y) { return x * y; }, [](auto& a, auto& b) { return a * b; },
                       lo, hi);
    check_broadcast<T>([](auto x, auto y) { return xtrace::minimum(x, y); },
                       [](auto& a, auto& b) { return xt::minimum(a, b); }, lo, hi);
    check_broadcast<T>([](auto x, auto y) { return xtrace::maximum(x, y); },
                       [](auto& a, auto& b) { return xt::maximum(a, b); }, lo, hi);
    if constexpr (std::is_floating_point_v<T>) {
        check_broadcast<T>([](auto x, auto y) { return x / y; },
                           [](auto& a, auto& b) { return a / b; }, 0.5, 3);
        check_broadcast<T>([](auto x, auto y) { return xtrace::pow(x, y); },
                           [](auto& a, auto& b) { return xt::pow(a, b); }, 0.1, 3);
    }
}

} // namespace

TEST_CASE("binary arithmetic broadcasts as NumPy, every numeric dtype") {
    arithmetic<float>();
    arithmetic<double>();
    arithmetic<std::int32_t>();
    arithmetic<std::int64_t>();
}

TEST_CASE("a chain of broadcasts fuses and matches xtensor") {
    auto f = xtrace::function(
        [](auto x, auto col, auto row) { return xtrace::exp(col) * x + row * 2.0f - x / 3; },
        quiet());
    for (std::size_t n : {1u, 3u, 17u, 100u}) {
        const xt::xarray<float> x = random_array<float>({n, 7});
        const xt::xarray<float> col = random_array<float>({n, 1});
        const xt::xarray<float> row = random_array<float>({7});
        const xt::xarray<float> expected = xt::exp(col) * x + row * 2.0f - x / 3.0f;
        auto [traced, eager] = both_paths(f, x, col, row);
        CHECK(close(traced, expected, 4, 1e-5)); // cancellation: absolute tolerance
        CHECK(close(eager, expected, 4, 1e-5));
    }
}

TEST_CASE("weak scalars keep the tensor's dtype, on either side") {
    auto f = xtrace::function([](auto x) { return 2.5 * x - 1 + x / 2.0; });
    const xt::xarray<float> a = {1.f, 2.f, -4.f};
    xt::xarray<float> r = f(a); // float in, float out: the double scalars did not promote
    const xt::xarray<float> expected = 2.5f * a - 1.f + a / 2.f;
    CHECK(close(r, expected));

    auto g = xtrace::function([](auto x) { return x * 3 + 7; });
    const xt::xarray<std::int64_t> i = {1, -2, 5};
    xt::xarray<std::int64_t> ri = g(i);
    CHECK(ri(0) == 10);
    CHECK(ri(1) == 1);
    CHECK(ri(2) == 22);
}

TEST_CASE("an integer scalar that does not fit the dtype is an error, not a wrap") {
    auto f = xtrace::function([](auto x) { return x + 5000000000LL; });
    const xt::xarray<std::int32_t> a = {1, 2};
    CHECK_THROWS_AS(f(a), xtrace::error);
    const xt::xarray<std::int64_t> b = {1, 2};
    xt::xarray<std::int64_t> r = f(b);
    CHECK(r(0) == 5000000001LL);
}
