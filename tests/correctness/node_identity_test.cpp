// Regression tests for nodes that could be confused with one another: the same operands in the
// other order, the same input under other attributes, equal bits of other dtypes, and
// intermediates of other widths sharing a block register. Each program runs traced (static
// fusion and interpreter) and eagerly, against xtensor.

#include "support/eager_scope.hpp"
#include "support/testing.hpp"

using namespace xtrace::testing;

namespace {

template <class F, class Want, class... Args>
void check_all_paths(const F& f, const Want& want, const Args&... args) {
    auto [traced, eager] = both_paths(f, args...);
    CHECK(close(traced, want));
    CHECK(close(eager, want));
}

template <class T>
void comparisons_both_ways() {
    const xt::xarray<T> a = {T(1), T(3), T(2), T(-1)};
    const xt::xarray<T> b = {T(2), T(1), T(2), T(-4)};
    const xt::xarray<float> gt = xt::cast<float>(xt::greater(a, b));
    const xt::xarray<float> lt = xt::cast<float>(xt::less(a, b));
    const xt::xarray<float> ge = xt::cast<float>(xt::greater_equal(a, b));
    const xt::xarray<float> le = xt::cast<float>(xt::less_equal(a, b));
    // The reproducer of the report: a bool intermediate widened to float in its own register.
    auto h = xtrace::function([](auto x, auto y) {
        return xtrace::cast<float>(x > y) + 10.f * xtrace::cast<float>(y > x);
    });
    check_all_paths(h, xt::xarray<float>(gt + 10.f * lt), a, b);
    auto l = xtrace::function([](auto x, auto y) {
        return xtrace::cast<float>(x < y) + 10.f * xtrace::cast<float>(y < x);
    });
    check_all_paths(l, xt::xarray<float>(lt + 10.f * gt), a, b);
    auto e = xtrace::function([](auto x, auto y) {
        return xtrace::cast<float>(x >= y) + 10.f * xtrace::cast<float>(y >= x);
    });
    check_all_paths(e, xt::xarray<float>(ge + 10.f * le), a, b);
    auto w = xtrace::function([](auto x, auto y) {
        return xtrace::where(x > y, T(1), T(0)) + xtrace::where(y > x, T(10), T(0));
    });
    check_all_paths(w, xt::xarray<T>(xt::cast<T>(gt) + T(10) * xt::cast<T>(lt)), a, b);
}

} // namespace

TEST_CASE("a graph comparing the same tensors both ways keeps both results") {
    comparisons_both_ways<float>();
    comparisons_both_ways<double>();
    comparisons_both_ways<std::int32_t>();
    comparisons_both_ways<std::int64_t>();
}

TEST_CASE("the reported programs where comparisons meet") {
    const xt::xarray<float> a0 = {1.f, -2.f, 3.f, 0.5f, -0.f};
    const xt::xarray<float> a1 = {2.f, -3.f, 3.f, 0.25f, 0.f};
    const xt::xarray<float> a2 = {0.f, 1.f, -1.f, 2.f, 5.f};
    auto f1 = xtrace::function([](auto x0, auto x1, auto x2) {
        return xtrace::where(x0 > x1, x1, xtrace::square(xtrace::where(x2 > x2, x0, x1)));
    });
    check_all_paths(f1, xt::xarray<float>(xt::where(a0 > a1, a1, a1 * a1)), a0, a1, a2);
    auto f2 = xtrace::function(
        [](auto x0, auto x1) { return xtrace::exp(xtrace::tanh(xtrace::where(x0 > x0, x1, x0))); });
    check_all_paths(f2, xt::xarray<float>(xt::exp(xt::tanh(a0))), a0, a1);
    auto f3 = xtrace::function([](auto x0, auto x1) {
        return xtrace::where(x0 > x1, xtrace::where(x1 > x0, x0, x1), x0 * 0.356f - x0);
    });
    check_all_paths(f3, xt::xarray<float>(xt::where(a0 > a1, a1, a0 * 0.356f - a0)), a0, a1);
}

TEST_CASE("operand order is kept for - / pow minimum maximum clip where") {
    const xt::xarray<double> a = {1.5, -2., 3., 0.25};
    const xt::xarray<double> b = {2., 0.5, -3., 4.};
    auto f = xtrace::function([](auto x, auto y) {
        return std::make_tuple(x - y, y - x, x / y, y / x, xtrace::pow(xtrace::abs(x), y),
                               xtrace::pow(xtrace::abs(y), x), xtrace::clip(x, y, 2.),
                               xtrace::clip(y, x, 2.), xtrace::where(x > 0., x, y),
                               xtrace::where(x > 0., y, x));
    });
    auto [traced, eager] = both_paths(f, a, b);
    for (const auto& r : {traced, eager}) {
        CHECK(close(std::get<0>(r), xt::xarray<double>(a - b)));
        CHECK(close(std::get<1>(r), xt::xarray<double>(b - a)));
        CHECK(close(std::get<2>(r), xt::xarray<double>(a / b)));
        CHECK(close(std::get<3>(r), xt::xarray<double>(b / a)));
        CHECK(close(std::get<4>(r), xt::xarray<double>(xt::pow(xt::abs(a), b))));
        CHECK(close(std::get<5>(r), xt::xarray<double>(xt::pow(xt::abs(b), a))));
        CHECK(close(std::get<6>(r), xt::xarray<double>(xt::minimum(xt::maximum(a, b), 2.))));
        CHECK(close(std::get<7>(r), xt::xarray<double>(xt::minimum(xt::maximum(b, a), 2.))));
        CHECK(close(std::get<8>(r), xt::xarray<double>(xt::where(a > 0., a, b))));
        CHECK(close(std::get<9>(r), xt::xarray<double>(xt::where(a > 0., b, a))));
    }
}

TEST_CASE("one input reduced over different axes, and reshaped or transposed differently") {
    const xt::xarray<float> x = random_array<float>({2, 3, 4});
    auto f = xtrace::function([](auto v) {
        return std::make_tuple(xtrace::sum(v, {0}), xtrace::sum(v, {1}),
                               xtrace::sum(v, {0}, xtrace::keep_dims), xtrace::max(v, {2}),
                               xtrace::transpose(v, {1, 0, 2}), xtrace::transpose(v, {0, 2, 1}),
                               xtrace::reshape(v, {6, 4}), xtrace::reshape(v, {4, 6}),
                               xtrace::expand_dims(v, 0), xtrace::expand_dims(v, 3));
    });
    auto [traced, eager] = both_paths(f, x);
    for (const auto& r : {traced, eager}) {
        CHECK(close(std::get<0>(r), xt::xarray<float>(xt::sum(x, {0}))));
        CHECK(close(std::get<1>(r), xt::xarray<float>(xt::sum(x, {1}))));
        CHECK(close(std::get<2>(r), xt::xarray<float>(xt::sum(x, {0}, xt::keep_dims))));
        CHECK(close(std::get<3>(r), xt::xarray<float>(xt::amax(x, {2}))));
        CHECK(std::get<4>(r) == xt::xarray<float>(xt::transpose(x, {1, 0, 2})));
        CHECK(std::get<5>(r) == xt::xarray<float>(xt::transpose(x, {0, 2, 1})));
        CHECK(std::get<6>(r) == xt::xarray<float>(xt::reshape_view(x, {6, 4})));
        CHECK(std::get<7>(r) == xt::xarray<float>(xt::reshape_view(x, {4, 6})));
        CHECK(std::get<8>(r).shape() == std::vector<std::size_t>{1, 2, 3, 4});
        CHECK(std::get<9>(r).shape() == std::vector<std::size_t>{2, 3, 4, 1});
    }
}

TEST_CASE("casts to different dtypes and constants of equal bits stay apart") {
    const xt::xarray<float> x = {1.75f, -2.5f, 3.f, 1e10f};
    auto f = xtrace::function([](auto v) {
        auto i = xtrace::cast<std::int32_t>(v);
        auto l = xtrace::cast<std::int64_t>(v);
        // 1 as int32 and 1.4e-45f as float have the same bits; casts saturate (1e10 -> INT32_MAX).
        return std::make_tuple(xtrace::cast<double>(i - 1), xtrace::cast<double>(l - 1),
                               v + 1.4e-45f, xtrace::cast<double>(v) + 0.5, xtrace::cast<bool>(v));
    });
    auto [traced, eager] = both_paths(f, x);
    for (const auto& r : {traced, eager}) {
        CHECK(std::get<0>(r) == xt::xarray<double>{0., -3., 2., 2147483646.});
        CHECK(std::get<1>(r) == xt::xarray<double>{0., -3., 2., 9999999999.});
        CHECK(close(std::get<2>(r), xt::xarray<float>(x + 1.4e-45f)));
        CHECK(std::get<3>(r) == xt::xarray<double>{2.25, -2., 3.5, 1e10 + 0.5});
        CHECK(std::get<4>(r) == xt::xarray<bool>{true, true, true, true});
    }
}

TEST_CASE("statically fused kernels of the same shape but other operand order") {
    const xt::xarray<float> a = random_array<float>({33});
    const xt::xarray<float> b = random_array<float>({33});
    auto f = xtrace::function([](auto x, auto y) { return xtrace::exp(x) - y; });
    auto g = xtrace::function([](auto x, auto y) { return xtrace::exp(y) - x; });
    check_all_paths(f, xt::xarray<float>(xt::exp(a) - b), a, b);
    check_all_paths(g, xt::xarray<float>(xt::exp(b) - a), a, b);
}

TEST_CASE("a wide result never overwrites a narrow operand's unread elements") {
    // bool -> double and float -> double widen in place only when the register is free.
    for (std::size_t n : edge_sizes()) {
        const xt::xarray<float> a = random_array<float>({n});
        const xt::xarray<float> b = random_array<float>({n});
        auto f = xtrace::function([](auto x, auto y) {
            auto wide = xtrace::cast<double>(x * y);
            return wide + xtrace::where(x > y, 1., 2.) + xtrace::cast<double>(y > x);
        });
        const xt::xarray<double> want = xt::cast<double>(a * b) + xt::where(a > b, 1., 2.) +
                                        xt::cast<double>(xt::greater(b, a));
        check_all_paths(f, want, a, b);
    }
}
