// Twin operands: a compiled kernel computes an op whose two operands have one type (`d * d`)
// from the first operand alone, but only when the call's leaves say that both read the same
// values. Operands of one type that read different constants must still be computed apart:
// `(x + 3) - (x + 1)` is 2, not 0. Checked against xtensor on every dtype and on random and edge
// shapes, through a whole compiled kernel and through fused pieces reading row splats.

#include "support/plans.hpp"
#include "support/testing.hpp"

#include <xtrace/ext/xtensor_extras.hpp>

#include <algorithm>
#include <limits>
#include <string>

using namespace xtrace::testing;

namespace {

std::vector<std::vector<std::size_t>> shapes() {
    std::vector<std::vector<std::size_t>> out{{}, {0}, {1}, {2, 0}};
    for (std::size_t n : edge_sizes())
        out.push_back({n});
    for (int i = 0; i < 6; ++i)
        out.push_back(random_shape());
    return out;
}

// The row maximum of a [rows, cols] array, kept as [rows, 1].
template <class T>
xt::xarray<T> row_max(const xt::xarray<T>& x) {
    const std::size_t rows = x.shape()[0], cols = x.shape()[1];
    xt::xarray<T> m = xt::xarray<T>::from_shape({rows, 1});
    for (std::size_t r = 0; r < rows; ++r) {
        T v = std::numeric_limits<T>::lowest();
        for (std::size_t c = 0; c < cols; ++c)
            v = std::max(v, x(r, c));
        m(r, 0) = v;
    }
    return m;
}

} // namespace

TEMPLATE_TEST_CASE("an op with twin operands computes them once only when they read the same "
                   "values",
                   "", float, double, std::int32_t, std::int64_t) {
    using T = TestType;
    auto apart = xtrace::function([](auto x) { return (x + T(3)) - (x + T(1)); }, quiet());
    auto twins = xtrace::function([](auto x, auto y) { return (x - y) + (x - y); }, quiet());
    auto squares = xtrace::function([](auto x, auto y) { return (x - y) * (x - y); }, quiet());
    auto nested = xtrace::function(
        [](auto x, auto y) {
            auto d = (x - y) + (x - y); // twins inside operands that are not
            return (d + x * T(2)) - (d + x * T(5));
        },
        quiet());
    for (const auto& shape : shapes()) {
        INFO(shape_text(shape));
        const xt::xarray<T> x = random_array<T>(shape, -20, 20),
                            y = random_array<T>(shape, -20, 20);
        const xt::xarray<T> a = apart(x), t = twins(x, y), s = squares(x, y), n = nested(x, y);
        const xt::xarray<T> d = (x - y) + (x - y);
        CHECK(close(a, xt::xarray<T>((x + T(3)) - (x + T(1)))));
        CHECK(close(t, d));
        CHECK(close(s, xt::xarray<T>((x - y) * (x - y))));
        CHECK(close(n, xt::xarray<T>((d + x * T(2)) - (d + x * T(5)))));
    }
}

TEMPLATE_TEST_CASE("fused pieces with twin operands that read row splats", "", float, double,
                   std::int32_t, std::int64_t) {
    using T = TestType;
    auto twins = xtrace::function(
        [](auto x) {
            auto m = xtrace::max(x, {1}, xtrace::keep_dims);
            return (x - m) * (x - m);
        },
        quiet());
    auto apart = xtrace::function(
        [](auto x) {
            auto m = xtrace::max(x, {1}, xtrace::keep_dims);
            return (x * T(2) - m) - (x * T(3) - m);
        },
        quiet());
    for (std::size_t rows : {std::size_t(1), std::size_t(2), std::size_t(5)})
        for (std::size_t cols : {std::size_t(1), std::size_t(17), std::size_t(512),
                                 std::size_t(1024), std::size_t(1031)}) {
            INFO(rows << " x " << cols);
            const xt::xarray<T> x = random_array<T>({rows, cols}, -20, 20);
            const xt::xarray<T> m = row_max(x);
            const xt::xarray<T> t = twins(x), a = apart(x);
            CHECK(close(t, xt::xarray<T>((x - m) * (x - m))));
            CHECK(close(a, xt::xarray<T>((x * T(2) - m) - (x * T(3) - m))));
            const std::string plan = twins.get_concrete_function(xtrace::spec<T>({-1, -1}))
                                         .plan_text({{std::int64_t(rows), std::int64_t(cols)}});
            INFO(plan);
            if constexpr (std::is_floating_point_v<T>)
                CHECK(plan.find("fused") != std::string::npos);
        }
}
