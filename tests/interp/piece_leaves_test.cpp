// Fused pieces across steps: a piece whose cheap ops an earlier step computed (layer norm's
// `x - mean`, stored for the variance) computes them again from its leaves, which the region
// then reads, as long as it recomputes no more ops than it runs of the region's; a leaf computed
// from reductions (a row's mean, or 1/sqrt of its variance) is a piece of its own and is read
// as the value of the block's row. Checked against values computed here in long double and
// against the plans without pieces and without row splats.

#include "support/plans.hpp"
#include "support/testing.hpp"

#include <xtrace/ext/xtensor_extras.hpp>
#include <xtrace/plan/registers.hpp>
#include <xtrace/plan/row_tiles.hpp>

#include <cmath>
#include <limits>
#include <string>

using namespace xtrace::testing;

namespace {

auto layer_norm = [](auto x, auto gamma, auto beta) {
    auto d = x - xtrace::mean(x, {1}, xtrace::keep_dims);
    auto v = xtrace::mean(d * d, {1}, xtrace::keep_dims);
    return d * xtrace::rsqrt(v + 1e-3f) * gamma + beta;
};

constexpr std::size_t never = std::numeric_limits<std::size_t>::max();

template <class T>
xt::xarray<T> layer_norm_by_hand(const xt::xarray<T>& x, const xt::xarray<T>& gamma,
                                 const xt::xarray<T>& beta) {
    xt::xarray<T> out = xt::zeros<T>(x.shape());
    const std::size_t rows = x.shape()[0], cols = x.shape()[1];
    for (std::size_t r = 0; r < rows; ++r) {
        long double mean = 0, var = 0;
        for (std::size_t c = 0; c < cols; ++c)
            mean += x(r, c);
        mean /= static_cast<long double>(cols);
        for (std::size_t c = 0; c < cols; ++c)
            var += (x(r, c) - mean) * (x(r, c) - mean);
        var /= static_cast<long double>(cols);
        const long double scale = 1 / std::sqrt(var + static_cast<long double>(T(1e-3f)));
        for (std::size_t c = 0; c < cols; ++c)
            out(r, c) = static_cast<T>((x(r, c) - mean) * scale * gamma(c) + beta(c));
    }
    return out;
}

template <class T>
void check_layer_norm(std::size_t rows, std::size_t cols) {
    INFO(rows << " x " << cols);
    const xt::xarray<T> x = random_array<T>({rows, cols}), gamma = random_array<T>({cols}),
                        beta = random_array<T>({cols});
    const xt::xarray<T> expected = layer_norm_by_hand(x, gamma, beta);
    std::string splat_plan, filled_plan, by_op_plan;
    // Step by step: a call this small would otherwise sweep its rows, reading per-row values as
    // row splats whatever the setting (row_tiles_test).
    const xtrace::plan::row_sweep_scope stepped(0);
    using splats = xtrace::plan::row_splat_scope;
    const xt::xarray<T> splat =
        traced_under<splats>(1, layer_norm, quiet(), splat_plan, x, gamma, beta);
    const xt::xarray<T> filled =
        traced_under<splats>(never, layer_norm, quiet(), filled_plan, x, gamma, beta);
    const xt::xarray<T> by_op = traced_under<splats>(
        1, layer_norm, quiet(xtrace::options{.static_fusion = false}), by_op_plan, x, gamma, beta);
    INFO(splat_plan);
    // Sums of float rows in blocks of another length round differently: a few ulps, relative to
    // the row's spread (a value near 0 is a difference of two near each other).
    const double tol = 64 * std::numeric_limits<T>::epsilon() * 8;
    CHECK(close(splat, expected, 64, tol));
    CHECK(close(filled, expected, 64, tol));
    CHECK(close(by_op, expected, 64, tol));
    if (rows == 0 || cols < 2)
        return;
    // The last step: one piece (x - mean, times the scale, times gamma, plus beta), reading x
    // again, and the two per-row values as row splats. x - mean is stored nowhere: the variance's
    // step squares it in a piece of its own, which reads the mean as a row splat too.
    CHECK(count_of(splat_plan, "fused 4 ops") == 1);
    CHECK(count_of(splat_plan, "fused 3 ops") == 1);
    CHECK(count_of(splat_plan, "= sub(") == 0);
    CHECK(count_of(splat_plan, "row splat") == 3);
    CHECK(count_of(filled_plan, "fused 4 ops") == 1);
    CHECK(count_of(filled_plan, "row splat") == 0);
    CHECK(count_of(by_op_plan, "fused") == 0);
}

} // namespace

TEST_CASE("layer norm's last piece recomputes x - mean and reads per-row values as row splats") {
    for (auto [rows, cols] : {std::pair<std::size_t, std::size_t>{3, 600},
                              {5, 37},
                              {1, 1},
                              {0, 7},
                              {4, 0},
                              {2, 2},
                              {9, 129}}) {
        check_layer_norm<float>(rows, cols);
        check_layer_norm<double>(rows, cols);
    }
    const auto shape = random_shape(2);
    if (shape.size() == 2)
        check_layer_norm<float>(shape[0], shape[1]);
}

TEST_CASE("a piece recomputes ops of an earlier step only when it saves as many passes") {
    // t is stored for the next step (its row sums are taken first; whole numbers in double, so
    // every result is exact). Multiplying it by its sum is
    // one op: computing t's two ops again would cost more than reading it.
    auto one_op = [](auto x) {
        auto t = x * 2 + 1;
        return t * xtrace::sum(t, {1}, xtrace::keep_dims);
    };
    // With three more ops of the last step's own, the piece takes t's ops along.
    auto four_ops = [](auto x) {
        auto t = x * 2 + 1;
        auto u = t * xtrace::sum(t, {1}, xtrace::keep_dims);
        return (u + 1) * (u + 2);
    };
    const xt::xarray<double> x = xt::round(random_array<double>({6, 40}, -5, 5));
    const xt::xarray<double> t = x * 2 + 1;
    const xt::xarray<double> sums = xt::sum(t, {1}, xt::keep_dims); // (evaluated first:
    const xt::xarray<double> u = t * sums; // a lazy reducer broadcast overruns in xtensor)
    const xt::xarray<double> second = (u + 1) * (u + 2);
    std::string plan;
    using splats = xtrace::plan::row_splat_scope;
    CHECK(same_bits(traced_under<splats>(1, one_op, quiet(), plan, x), u));
    INFO(plan);
    CHECK(count_of(plan, "fused 3 ops") == 0); // (t alone is a piece of 2 ops, for the sum)
    CHECK(count_of(plan, "fused 2 ops") == 1);
    CHECK(same_bits(traced_under<splats>(1, four_ops, quiet(), plan, x), second));
    INFO(plan);
    CHECK(count_of(plan, "fused 9 ops") == 1); // t's 2 ops (twice: a tree) in the last step
    CHECK(count_of(plan, "row splat") == 1);
}

TEST_CASE("a per-row leaf that another op reads in full is read from its register") {
    // `where` reads m whole (a branch is no binary op's operand): m gets a register, and the
    // piece beside it reads it from there, not as the row's value.
    auto f = [](auto x) {
        auto m = xtrace::mean(x, {1}, xtrace::keep_dims);
        return (x - m) * 2.f + xtrace::where(x > 0.f, m, x);
    };
    const xt::xarray<float> x = random_array<float>({4, 33});
    const xt::xarray<float> m = xt::mean(x, {1}, xt::keep_dims);
    const xt::xarray<float> expected = (x - m) * 2.f + xt::where(x > 0.f, m, x);
    std::string plan;
    std::string by_op_plan;
    using splats = xtrace::plan::row_splat_scope;
    const xt::xarray<float> r = traced_under<splats>(1, f, quiet(), plan, x);
    const xt::xarray<float> by_op =
        traced_under<splats>(1, f, quiet(xtrace::options{.static_fusion = false}), by_op_plan, x);
    INFO(plan);
    CHECK(same_bits(r, by_op));
    CHECK(close(r, expected, 8, 1e-5)); // (means added up in another order)
    CHECK(count_of(plan, "fused") == 1);
    CHECK(count_of(plan, "row splat") == 0);
}
