// Comparisons, logic on bool tensors, where and clip, traced and eager, against xtensor.

#include "support/eager_scope.hpp"
#include "support/testing.hpp"

using namespace xtrace::testing;

namespace {

template <class T>
void comparisons() {
    auto f = xtrace::function(
        [](auto x, auto y) { return std::make_tuple(x<y, x <= y, x> y, x >= y, x == y, x != y); },
        quiet());
    for (int trial = 0; trial < 12; ++trial) {
        const auto sa = random_shape();
        const auto sb = broadcastable_to(sa);
        // Few distinct values, so that equality happens.
        const xt::xarray<T> a = random_array<T>(sa, -2, 2);
        const xt::xarray<T> b = xt::round(xt::xarray<double>(random_array<T>(sb, -2, 2)));
        auto [traced, eager] = both_paths(f, a, b);
        for (const auto& r : {traced, eager}) {
            // References element by element (xtensor 0.26's SIMD comparisons are wrong under
            // broadcasting with XTENSOR_USE_XSIMD).
            auto ref = [&](auto cmp) { return xt::xarray<bool>(xt::vectorize(cmp)(a, b)); };
            CHECK((std::get<0>(r) == ref([](T x, T y) { return x < y; })));
            CHECK((std::get<1>(r) == ref([](T x, T y) { return x <= y; })));
            CHECK((std::get<2>(r) == ref([](T x, T y) { return x > y; })));
            CHECK((std::get<3>(r) == ref([](T x, T y) { return x >= y; })));
            CHECK((std::get<4>(r) == ref([](T x, T y) { return x == y; })));
            CHECK((std::get<5>(r) == ref([](T x, T y) { return x != y; })));
        }
    }
}

} // namespace

TEST_CASE("comparisons give bool tensors, every numeric dtype") {
    comparisons<float>();
    comparisons<double>();
    comparisons<std::int32_t>();
    comparisons<std::int64_t>();
}

TEST_CASE("& | ^ ! on bool tensors, and == != on bools") {
    auto f = xtrace::function(
        [](auto p, auto q) {
            return std::make_tuple(p & q, p | q, p ^ q, !p, p == q, p != q, p & true);
        },
        quiet());
    for (std::size_t n : edge_sizes()) {
        const xt::xarray<bool> p = random_array<bool>({n});
        const xt::xarray<bool> q = random_array<bool>({n});
        auto [traced, eager] = both_paths(f, p, q);
        for (const auto& r : {traced, eager}) {
            for (std::size_t i = 0; i < n; ++i) {
                CHECK(std::get<0>(r)(i) == (p(i) && q(i)));
                CHECK(std::get<1>(r)(i) == (p(i) || q(i)));
                CHECK(std::get<2>(r)(i) == (p(i) != q(i)));
                CHECK(std::get<3>(r)(i) == !p(i));
                CHECK(std::get<4>(r)(i) == (p(i) == q(i)));
                CHECK(std::get<5>(r)(i) == (p(i) != q(i)));
                CHECK(std::get<6>(r)(i) == p(i));
            }
        }
    }
}

TEST_CASE("where chooses elementwise with broadcasting and scalar branches") {
    auto f =
        xtrace::function([](auto c, auto a, auto b) { return xtrace::where(c, a, b); }, quiet());
    auto g = xtrace::function([](auto x) { return xtrace::where(x > 0, x, 0.5f); }, quiet());
    auto h = xtrace::function([](auto x) { return xtrace::where(x > 0, 1.0f, -1.0f); }, quiet());
    for (int trial = 0; trial < 12; ++trial) {
        const auto s = random_shape();
        const xt::xarray<bool> c = random_array<bool>(broadcastable_to(s));
        const xt::xarray<double> a = random_array<double>(s);
        const xt::xarray<double> b = random_array<double>(broadcastable_to(s));
        auto [traced, eager] = both_paths(f, c, a, b);
        const xt::xarray<double> expected = xt::where(c, a, b);
        CHECK((traced == expected));
        CHECK((eager == expected));

        const xt::xarray<float> x = random_array<float>(s);
        auto [g1, g2] = both_paths(g, x);
        const xt::xarray<float> g_expected = xt::where(x > 0.f, x, 0.5f);
        CHECK((g1 == g_expected));
        CHECK((g2 == g_expected));
        auto [h1, h2] = both_paths(h, x);
        const xt::xarray<float> h_expected = xt::where(x > 0.f, 1.f, -1.f);
        CHECK((h1 == h_expected));
        CHECK((h2 == h_expected));
    }
}

TEST_CASE("clip bounds with scalars and tensors") {
    auto f = xtrace::function([](auto x) { return xtrace::clip(x, -1, 1.5); }, quiet());
    auto g =
        xtrace::function([](auto x, auto lo, auto hi) { return xtrace::clip(x, lo, hi); }, quiet());
    for (int trial = 0; trial < 12; ++trial) {
        const auto s = random_shape();
        const xt::xarray<float> x = random_array<float>(s);
        auto [a, b] = both_paths(f, x);
        const xt::xarray<float> expected = xt::minimum(xt::maximum(x, -1.f), 1.5f);
        CHECK((a == expected));
        CHECK((b == expected));

        const xt::xarray<std::int32_t> xi = random_array<std::int32_t>(s, -10, 10);
        const xt::xarray<std::int32_t> lo = random_array<std::int32_t>(broadcastable_to(s), -8, 0);
        const xt::xarray<std::int32_t> hi = random_array<std::int32_t>(broadcastable_to(s), 0, 8);
        auto [c, d] = both_paths(g, xi, lo, hi);
        const xt::xarray<std::int32_t> expected_i = xt::minimum(xt::maximum(xi, lo), hi);
        CHECK((c == expected_i));
        CHECK((d == expected_i));
    }
}

TEST_CASE("minimum and maximum propagate NaN from either side") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    auto f = xtrace::function([](auto x, auto y) {
        return std::make_tuple(xtrace::minimum(x, y), xtrace::maximum(x, y));
    });
    const xt::xarray<float> a = {nan, 1.f, nan, 2.f, 1.f, 1.f, 1.f, 1.f, 1.f};
    const xt::xarray<float> b = {1.f, nan, nan, 1.f, 1.f, 1.f, 1.f, 1.f, 1.f};
    auto [traced, eager] = both_paths(f, a, b);
    for (const auto& r : {traced, eager}) {
        for (int k = 0; k < 3; ++k) {
            CHECK(std::isnan(std::get<0>(r)(k)));
            CHECK(std::isnan(std::get<1>(r)(k)));
        }
        CHECK(std::get<0>(r)(3) == 1.f);
        CHECK(std::get<1>(r)(3) == 2.f);
    }
}
