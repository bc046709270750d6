// Row by row: a rank-2 region cut at row ends whose rows fit a block, and whose chunks start at
// rows, runs one block per row, moving each pointer on by a fixed step (an argument's row, a
// row splat's value, a bias row read in place, a result's row). Its results are checked bit for
// bit against the plan without row splats, which runs block by block, across chunk floors that
// do and do not fall on rows, and thread counts; and against xtensor.

#include "support/plans.hpp"
#include "support/testing.hpp"
#include "support/threads.hpp"

#include <xtrace/ext/xtensor_extras.hpp>
#include <xtrace/interp/parallel.hpp>
#include <xtrace/plan/registers.hpp>
#include <xtrace/plan/row_tiles.hpp>

#include <limits>
#include <string>

using namespace xtrace::testing;

namespace {

// c: one value per row; s: one for all rows; k: a scalar; g: a bias row, read in place. A fused
// piece reads c as any leaf (gathered): only a value computed from reductions, as m, is a row
// splat in a piece.
auto with_column = [](auto x, auto c, auto s, auto k, auto g) { return (x - c) * s + k * x + g; };
auto with_max = [](auto x, auto s, auto k, auto g) {
    auto m = xtrace::max(x, {1}, xtrace::keep_dims); // (the same bits in any order)
    return (x - m) * s + k * x + g;
};

constexpr std::size_t never = std::numeric_limits<std::size_t>::max();

// f on `args` with row splats against f without (block by block), across chunk floors that do
// and do not fall on rows, and thread counts: the same bits; and near `expected`.
template <class T, class F, class... A>
void check_paths(const F& f, bool pieces, const xt::xarray<T>& expected, const A&... args) {
    const std::size_t cols = expected.dimension() == 2 ? expected.shape()[1] : 0;
    INFO(shape_text(expected.shape()) << (pieces ? ", fused pieces" : ", op by op"));
    const xtrace::options opts = quiet(xtrace::options{.static_fusion = pieces});
    // Step by step: a call this small would otherwise sweep its rows, reading per-row values as
    // row splats whatever the setting (row_tiles_test).
    const xtrace::plan::row_sweep_scope stepped(0);
    using splats = xtrace::plan::row_splat_scope;
    std::string filled_plan, plan;
    const xt::xarray<T> filled = traced_under<splats>(never, f, opts, filled_plan, args...);
    CHECK(filled_plan.find("row splat") == std::string::npos);
    CHECK(close(filled, expected));
    for (std::size_t floor :
         {xtrace::interp::default_min_chunk_elements, 2 * cols + 2, 3 * cols, std::size_t(64)})
        for (int threads : {1, 2, 8}) {
            INFO("chunk floor " << floor << ", " << threads << " threads");
            const xt::xarray<T> r = on_threads(threads, [&] {
                const xtrace::interp::chunk_floor_scope chunks(std::max<std::size_t>(floor, 1));
                return traced_under<splats>(1, f, opts, plan, args...);
            });
            INFO(plan);
            CHECK((plan.find("row splat") != std::string::npos) == (cols > 1));
            CHECK(same_bits(r, filled));
        }
}

template <class T>
void check_rows(std::size_t rows, std::size_t cols) {
    const xt::xarray<T> x = random_array<T>({rows, cols}), c = random_array<T>({rows, 1}),
                        s = random_array<T>({1, 1}), k = random_array<T>({}),
                        g = random_array<T>({cols});
    check_paths<T>(with_column, false, xt::xarray<T>((x - c) * s + k * x + g), x, c, s, k, g);
    if (rows == 0 || cols == 0) // (no max of an empty row)
        return;
    const xt::xarray<T> m = xt::amax(x, {1}, xt::keep_dims);
    const xt::xarray<T> expected = (x - m) * s + k * x + g;
    check_paths<T>(with_max, true, expected, x, s, k, g);
    check_paths<T>(with_max, false, expected, x, s, k, g);
}

} // namespace

TEST_CASE("a region of whole-row blocks runs row by row, with the bits of the block path") {
    for (auto [rows, cols] : {std::pair<std::size_t, std::size_t>{7, 600},
                              {40, 64},
                              {3, 5000}, // rows longer than a block: block by block
                              {1, 1},
                              {0, 9},
                              {5, 0}})
        check_rows<float>(rows, cols);
    for (int i = 0; i < 4; ++i) {
        const std::size_t rows = std::uniform_int_distribution<std::size_t>(1, 50)(rng());
        const std::size_t cols = std::uniform_int_distribution<std::size_t>(2, 1200)(rng());
        check_rows<float>(rows, cols);
        check_rows<double>(rows, cols);
        check_rows<std::int32_t>(rows, cols);
        check_rows<std::int64_t>(rows, cols);
    }
}

TEST_CASE("layer norm row by row: the same bits on any thread count, near xtensor's") {
    auto layer_norm = [](auto x, auto gamma, auto beta) {
        auto d = x - xtrace::mean(x, {1}, xtrace::keep_dims);
        auto v = xtrace::mean(d * d, {1}, xtrace::keep_dims);
        return d * xtrace::rsqrt(v + 1e-5f) * gamma + beta;
    };
    const std::size_t rows = std::uniform_int_distribution<std::size_t>(20, 90)(rng());
    const std::size_t cols = std::uniform_int_distribution<std::size_t>(100, 900)(rng());
    INFO(rows << " x " << cols);
    const xt::xarray<float> x = random_array<float>({rows, cols}), g = random_array<float>({cols}),
                            b = random_array<float>({cols});
    const xt::xarray<float> mean = xt::mean(x, {1}, xt::keep_dims);
    const xt::xarray<float> d = x - mean;
    const xt::xarray<float> var = xt::mean(d * d, {1}, xt::keep_dims);
    const xt::xarray<float> expected = d / xt::sqrt(var + 1e-5f) * g + b;
    // Tiles of rows run in parallel, each one chunk: every row reduces within one.
    std::string plan;
    xt::xarray<float> first;
    for (int threads : {1, 2, 8}) {
        INFO(threads << " threads");
        const xt::xarray<float> r = on_threads(threads, [&] {
            return traced_under<xtrace::plan::row_splat_scope>(1, layer_norm, quiet(), plan, x, g,
                                                               b);
        });
        INFO(plan);
        CHECK(plan.find("row splat") != std::string::npos);
        CHECK(close(r, expected, 64, 1e-5));
        if (threads == 1)
            first = r;
        else
            CHECK(same_bits(r, first));
    }
}
