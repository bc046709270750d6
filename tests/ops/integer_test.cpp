// Integer semantics: truncating division with a checked zero divisor, exact powers, wrapping
// negation, and rounding ops that leave integers alone.

#include "support/eager_scope.hpp"
#include "support/testing.hpp"

using namespace xtrace::testing;

namespace {

template <class T>
void division_and_power() {
    auto div = xtrace::function([](auto x, auto y) { return x / y; }, quiet());
    auto pow = xtrace::function([](auto x, auto y) { return xtrace::pow(x, y); }, quiet());
    for (std::size_t n : edge_sizes()) {
        xt::xarray<T> a = random_array<T>({n}, -1000, 1000);
        xt::xarray<T> b = random_array<T>({n}, 1, 9);
        for (std::size_t i = 0; i < n; i += 2)
            b(i) = static_cast<T>(-b(i));
        xt::xarray<T> q_expected = xt::xarray<T>::from_shape({n});
        for (std::size_t i = 0; i < n; ++i)
            q_expected(i) = static_cast<T>(a(i) / b(i)); // C++ truncation toward zero
        auto [q, q_eager] = both_paths(div, a, b);
        CHECK((q == q_expected));
        CHECK((q_eager == q_expected));

        xt::xarray<T> base = random_array<T>({n}, -4, 4);
        xt::xarray<T> e = random_array<T>({n}, 0, 9);
        xt::xarray<T> p_expected = xt::xarray<T>::from_shape({n});
        for (std::size_t i = 0; i < n; ++i) {
            T r = 1;
            for (T k = 0; k < e(i); ++k)
                r = static_cast<T>(r * base(i));
            p_expected(i) = r;
        }
        auto [p, p_eager] = both_paths(pow, base, e);
        CHECK((p == p_expected));
        CHECK((p_eager == p_expected));
    }
}

} // namespace

TEST_CASE("integer division truncates and powers are exact") {
    division_and_power<std::int32_t>();
    division_and_power<std::int64_t>();
}

TEST_CASE("integer division by zero throws and the function keeps working") {
    auto div = xtrace::function([](auto x, auto y) { return x / y; });
    const xt::xarray<std::int32_t> a = {1, 2, 3};
    const xt::xarray<std::int32_t> zero = {1, 0, 1};
    const xt::xarray<std::int32_t> ok = {1, 2, 3};
    CHECK_THROWS_AS(div(a, zero), xtrace::error);
    {
        eager_scope eager;
        CHECK_THROWS_AS(div(a, zero), xtrace::error);
    }
    xt::xarray<std::int32_t> r = div(a, ok);
    CHECK((r == xt::xarray<std::int32_t>{1, 1, 1}));
}

TEST_CASE("the minimum integer divided by -1 and negated wraps instead of trapping") {
    auto f =
        xtrace::function([](auto x, auto y) { return std::make_tuple(x / y, -x, xtrace::abs(x)); });
    const auto lowest = std::numeric_limits<std::int32_t>::min();
    const xt::xarray<std::int32_t> a = {lowest};
    const xt::xarray<std::int32_t> m1 = {-1};
    auto [traced, eager] = both_paths(f, a, m1);
    CHECK(std::get<0>(traced)(0) == lowest);
    CHECK(std::get<1>(traced)(0) == lowest);
    CHECK(std::get<2>(traced)(0) == lowest);
    CHECK(std::get<0>(eager)(0) == lowest);
}

TEST_CASE("negative integer powers truncate like the real result") {
    auto f = xtrace::function([](auto x) { return xtrace::pow(x, -1); });
    const xt::xarray<std::int64_t> a = {1, -1, 2, -3, 0};
    auto [traced, eager] = both_paths(f, a);
    const xt::xarray<std::int64_t> want = {1, -1, 0, 0, 0};
    CHECK((traced == want));
    CHECK((eager == want));
}

TEST_CASE("unary numeric ops on integers") {
    auto f = xtrace::function(
        [](auto x) {
            return std::make_tuple(-x, xtrace::abs(x), xtrace::square(x), xtrace::relu(x),
                                   xtrace::floor(x), xtrace::ceil(x), xtrace::round(x));
        },
        quiet());
    for (std::size_t n : edge_sizes()) {
        const xt::xarray<std::int32_t> a = random_array<std::int32_t>({n}, -1000, 1000);
        auto [traced, eager] = both_paths(f, a);
        for (const auto& r : {traced, eager}) {
            CHECK((std::get<0>(r) == xt::xarray<std::int32_t>(-a)));
            CHECK((std::get<1>(r) == xt::xarray<std::int32_t>(xt::abs(a))));
            CHECK((std::get<2>(r) == xt::xarray<std::int32_t>(a * a)));
            CHECK((std::get<3>(r) == xt::xarray<std::int32_t>(xt::maximum(a, xt::zeros_like(a)))));
            CHECK((std::get<4>(r) == a));
            CHECK((std::get<5>(r) == a));
            CHECK((std::get<6>(r) == a));
        }
    }
}
