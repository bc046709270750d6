// Reductions over all axes, axis lists (negative too) and keep_dims, every numeric dtype,
// traced and eager, against xtensor's reducers on random shapes.

#include "support/eager_scope.hpp"
#include "support/testing.hpp"

#include <xtrace/ext/xtensor_extras.hpp>

using namespace xtrace::testing;

namespace {

// A random subset of the axes of a rank-r shape, some written negative.
std::vector<std::int64_t> random_axes(std::size_t rank) {
    std::vector<std::int64_t> axes;
    for (std::size_t d = 0; d < rank; ++d)
        if (std::uniform_int_distribution<int>(0, 1)(rng()))
            axes.push_back(std::uniform_int_distribution<int>(0, 1)(rng())
                               ? static_cast<std::int64_t>(d)
                               : static_cast<std::int64_t>(d) - static_cast<std::int64_t>(rank));
    return axes;
}

std::vector<std::size_t> as_size(const std::vector<std::int64_t>& axes, std::size_t rank) {
    std::vector<std::size_t> out;
    for (auto a : axes)
        out.push_back(static_cast<std::size_t>(a < 0 ? a + static_cast<std::int64_t>(rank) : a));
    return out;
}

template <class T>
xt::xarray<T> keep(xt::xarray<T> r, const std::vector<std::size_t>& shape,
                   const std::vector<std::size_t>& axes) {
    std::vector<std::size_t> kept = shape;
    for (auto a : axes)
        kept[a] = 1;
    r.reshape(kept);
    return r;
}

template <class T>
void check_all() {
    auto sum = xtrace::function(
        [](auto x, std::vector<std::int64_t> axes, bool k) {
            return k ? xtrace::erase(xtrace::sum(x, axes, xtrace::keep_dims))
                     : xtrace::erase(xtrace::sum(x, axes));
        },
        quiet());
    auto prod = xtrace::function(
        [](auto x, std::vector<std::int64_t> axes) { return xtrace::prod(x, axes); }, quiet());
    auto max = xtrace::function(
        [](auto x, std::vector<std::int64_t> axes) { return xtrace::max(x, axes); }, quiet());
    auto min = xtrace::function(
        [](auto x, std::vector<std::int64_t> axes) { return xtrace::min(x, axes); }, quiet());
    auto mean = xtrace::function(
        [](auto x, std::vector<std::int64_t> axes) { return xtrace::mean(x, axes); }, quiet());
    const double tol = std::is_floating_point_v<T> ? 1e-4 : 0;
    for (int trial = 0; trial < 25; ++trial) {
        const auto shape = random_shape();
        const auto axes = random_axes(shape.size());
        const auto ax = as_size(axes, shape.size());
        const xt::xarray<T> a = random_array<T>(shape, -3, 3);
        INFO("shape " << shape_text(shape) << " axes " << shape_text(axes));
        if (ax.empty())
            continue; // xtensor's reducers want at least one axis; covered below
        const xt::xarray<T> s = xt::sum(a, ax);
        auto [s1, s2] = both_paths(sum, a, axes, false);
        CHECK(close(s1, s, 8, tol * 10));
        CHECK(close(s2, s, 8, tol * 10));
        auto [k1, k2] = both_paths(sum, a, axes, true);
        CHECK(close(k1, keep(s, shape, ax), 8, tol * 10));
        CHECK(close(k2, keep(s, shape, ax), 8, tol * 10));
        const xt::xarray<T> p = xt::prod(a, ax);
        auto [p1, p2] = both_paths(prod, a, axes);
        CHECK(close(p1, p, 16, tol));
        CHECK(close(p2, p, 16, tol));
        bool empty = false;
        for (auto d : shape)
            empty = empty || d == 0;
        if (!empty) {
            const xt::xarray<T> mx = xt::amax(a, ax), mn = xt::amin(a, ax);
            CHECK((both_paths(max, a, axes).first == mx));
            CHECK((both_paths(max, a, axes).second == mx));
            CHECK((both_paths(min, a, axes).first == mn));
            CHECK((both_paths(min, a, axes).second == mn));
        }
        if constexpr (std::is_floating_point_v<T>) {
            const xt::xarray<T> m = xt::mean(a, ax);
            auto [m1, m2] = both_paths(mean, a, axes);
            CHECK(close(m1, m, 8, tol));
            CHECK(close(m2, m, 8, tol));
        }
    }
}

} // namespace

TEST_CASE("reductions match xtensor, every numeric dtype") {
    check_all<float>();
    check_all<double>();
    check_all<std::int32_t>();
    check_all<std::int64_t>();
}

TEST_CASE("reducing over all axes, none, and long contiguous runs") {
    auto f = xtrace::function(
        [](auto x) {
            return std::make_tuple(xtrace::sum(x), xtrace::max(x), xtrace::sum(x, {}),
                                   xtrace::mean(x, {-1}));
        },
        quiet());
    for (std::size_t n : {1u, 3u, 17u, 1023u, 1025u, 100000u}) {
        const xt::xarray<double> a = random_array<double>({2, n});
        auto [traced, eager] = both_paths(f, a);
        for (const auto& r : {traced, eager}) {
            CHECK(std::get<0>(r).dimension() == 0);
            CHECK(std::get<0>(r)() == Approx(xt::sum(a)()).epsilon(1e-9));
            CHECK(std::get<1>(r)() == xt::amax(a)());
            CHECK((std::get<2>(r) == a));
            CHECK(close(std::get<3>(r), xt::xarray<double>(xt::mean(a, {1})), 8, 1e-9));
        }
    }
}

TEST_CASE("empty reductions give the identity; NaN propagates through max and min") {
    auto f = xtrace::function(
        [](auto x) {
            return std::make_tuple(xtrace::sum(x, {0}), xtrace::prod(x, {0}), xtrace::max(x, {0}),
                                   xtrace::min(x, {0}), xtrace::mean(x, {0}));
        },
        quiet());
    const xt::xarray<float> empty = xt::xarray<float>::from_shape({0, 2});
    auto [traced, eager] = both_paths(f, empty);
    for (const auto& r : {traced, eager}) {
        CHECK(std::get<0>(r)(1) == 0.f);
        CHECK(std::get<1>(r)(1) == 1.f);
        CHECK(std::get<2>(r)(1) == -std::numeric_limits<float>::infinity());
        CHECK(std::get<3>(r)(1) == std::numeric_limits<float>::infinity());
        CHECK(std::isnan(std::get<4>(r)(1)));
    }
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const xt::xarray<float> with_nan = {{1.f, nan}, {2.f, 3.f}};
    auto [t2, e2] = both_paths(f, with_nan);
    for (const auto& r : {t2, e2}) {
        CHECK(std::get<2>(r)(0) == 2.f);
        CHECK(std::isnan(std::get<2>(r)(1)));
        CHECK(std::isnan(std::get<3>(r)(1)));
    }
}

// Rows long enough for the SIMD accumulators (four batches of up to 16 floats), whose lanes fold
// without the NaN test once the row is known to hold none.
TEMPLATE_TEST_CASE("max and min of long rows: exact without NaN, NaN in the row that has one", "",
                   float, double) {
    auto f = xtrace::function(
        [](auto x) { return std::make_tuple(xtrace::max(x, {1}), xtrace::min(x, {1})); }, quiet());
    for (int round = 0; round < 6; ++round) {
        const auto n = std::uniform_int_distribution<std::size_t>(63, 700)(rng());
        xt::xarray<TestType> a = random_array<TestType>({3, n}, -1000, 1000);
        if (round % 2)
            a(1, std::uniform_int_distribution<std::size_t>(0, n - 1)(rng())) =
                std::numeric_limits<TestType>::quiet_NaN();
        auto [traced, eager] = both_paths(f, a);
        for (const auto& r : {traced, eager})
            for (std::size_t row = 0; row < 3; ++row) {
                TestType hi = a(row, 0), lo = a(row, 0);
                bool nan = false;
                for (std::size_t i = 0; i < n; ++i) {
                    nan = nan || std::isnan(a(row, i));
                    hi = std::max(hi, a(row, i));
                    lo = std::min(lo, a(row, i));
                }
                INFO("n " << n << ", row " << row);
                if (nan) {
                    CHECK(std::isnan(std::get<0>(r)(row)));
                    CHECK(std::isnan(std::get<1>(r)(row)));
                } else {
                    CHECK(std::get<0>(r)(row) == hi);
                    CHECK(std::get<1>(r)(row) == lo);
                }
            }
    }
}

TEST_CASE("strided inputs and reductions feeding elementwise code (softmax)") {
    auto softmax = xtrace::function(
        [](auto x) {
            auto m = xtrace::max(x, {-1}, xtrace::keep_dims);
            auto e = xtrace::exp(x - m);
            return e / xtrace::sum(e, {-1}, xtrace::keep_dims);
        },
        quiet());
    const xt::xarray<float> a = random_array<float>({7, 5}, -1000, 1000);
    const auto t = xt::transpose(a);
    const xt::xarray<float> tc = t;
    xt::xarray<float> expected =
        xt::exp(tc - xt::xarray<float>(keep(xt::xarray<float>(xt::amax(tc, {1})), {5, 7}, {1})));
    expected =
        expected / xt::xarray<float>(keep(xt::xarray<float>(xt::sum(expected, {1})), {5, 7}, {1}));
    auto [traced, eager] = both_paths(softmax, t);
    CHECK(close(traced, expected, 8, 1e-6));
    CHECK(close(eager, expected, 8, 1e-6));
}

TEST_CASE("a bad axis is a shape_error naming the op, the axis and the shape") {
    auto f = xtrace::function([](auto x) { return xtrace::sum(x, {2}); }, quiet());
    auto g = xtrace::function([](auto x) { return xtrace::max(x, {0, -2}); }, quiet());
    const xt::xarray<float> a = xt::zeros<float>({2, 3});
    try {
        f(a);
        FAIL("no shape_error");
    } catch (const xtrace::shape_error& e) {
        CHECK(std::string(e.what()) == "xtrace::sum: axis 2 is out of range for shape [2,3]");
    }
    CHECK_THROWS_AS(g(a), xtrace::shape_error);
    eager_scope eager;
    CHECK_THROWS_AS(f(a), xtrace::shape_error);
}
