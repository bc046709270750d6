// Row splats: an input of one value per row ([rows, 1], [1, 1] or a scalar) that only binary ops
// read is read as the value of the block's row, which their kernels take as one value, and blocks
// end at row ends. The arithmetic is the same as on a register filled with that value, so the
// results agree bit for bit with the plan that fills one, and with xtensor.

#include "support/plans.hpp"
#include "support/testing.hpp"
#include "support/threads.hpp"

#include <xtrace/ext/xtensor_extras.hpp>
#include <xtrace/interp/parallel.hpp>
#include <xtrace/plan/registers.hpp>

#include <limits>
#include <string>

using namespace xtrace::testing;

namespace {

// Each per-row operand read by a binary op; `where` reads `c` as a branch, which needs a
// register: the same input is a row splat for some ops only if none reads it otherwise.
auto per_row = [](auto x, auto c, auto s, auto k) { return (x - c) * s + k * x; };
auto with_where = [](auto x, auto c) { return xtrace::where(x > c, x, c) - c; };

xtrace::options interpreted() {
    xtrace::options o = quiet();
    o.static_fusion = false; // a fused piece loads its leaves: no row splat
    return o;
}

// f's result and plan with row splats from rows of `shortest` elements on, traced afresh.
template <class L, class... A>
auto planned(const L& lambda, std::size_t shortest, std::string& plan, const A&... args) {
    return traced_under<xtrace::plan::row_splat_scope>(shortest, lambda, interpreted(), plan,
                                                       args...);
}

constexpr std::size_t never = std::numeric_limits<std::size_t>::max();

template <class T>
void check_per_row(std::size_t rows, std::size_t cols, std::size_t shortest) {
    INFO(rows << " x " << cols << ", row splats from " << shortest);
    const xt::xarray<T> x = random_array<T>({rows, cols}), c = random_array<T>({rows, 1}),
                        s = random_array<T>({1, 1}), k = random_array<T>({});
    std::string splat_plan, filled_plan;
    const xt::xarray<T> splat = planned(per_row, shortest, splat_plan, x, c, s, k);
    const xt::xarray<T> filled = planned(per_row, never, filled_plan, x, c, s, k);
    INFO(splat_plan);
    const bool long_rows = cols > 1 && cols >= shortest;
    CHECK((splat_plan.find("row splat") != std::string::npos) == long_rows);
    CHECK(filled_plan.find("row splat") == std::string::npos);
    CHECK(same_bits(splat, filled));
    const xt::xarray<T> expected = (x - c) * s + k * x; // xtensor's broadcasting
    CHECK(close(splat, expected));
}

} // namespace

TEST_CASE("per-row values are row splats on long rows, with the bits of a filled register") {
    check_per_row<float>(3, 600, xtrace::plan::default_row_splat_elements);
    check_per_row<float>(3, 100, xtrace::plan::default_row_splat_elements); // short rows: filled
    for (int i = 0; i < 12; ++i) {
        const std::size_t rows = std::uniform_int_distribution<std::size_t>(0, 9)(rng());
        const std::size_t cols = std::uniform_int_distribution<std::size_t>(0, 1500)(rng());
        const std::size_t shortest = std::uniform_int_distribution<std::size_t>(1, 600)(rng());
        check_per_row<float>(rows, cols, shortest);
        check_per_row<double>(rows, cols, shortest);
        check_per_row<std::int32_t>(rows, cols, shortest);
        check_per_row<std::int64_t>(rows, cols, shortest);
    }
}

TEST_CASE("an input another op reads whole keeps its register; rank 3, strided, 8 threads") {
    const xt::xarray<double> x = random_array<double>({4, 3, 700}),
                             c = random_array<double>({3, 1});
    std::string plan, filled_plan;
    const xt::xarray<double> r = planned(with_where, 1, plan, x, c);
    INFO(plan);
    CHECK(plan.find("row splat") == std::string::npos); // `where` reads c as a branch
    CHECK(same_bits(r, planned(with_where, never, filled_plan, x, c)));
    CHECK(close(r, xt::xarray<double>(xt::where(x > c, x, c) - c)));

    // A column of a larger array: rows 9 elements apart. Cut into chunks of 100 elements (not
    // whole rows) and run on 1, 2 and 8 threads: the same bits each time.
    const xt::xarray<double> wide = random_array<double>({4, 3, 9});
    const auto column = xt::view(wide, xt::all(), xt::all(), xt::range(4, 5));
    const xt::xarray<double> s = random_array<double>({1, 1, 1}), k = random_array<double>({});
    const xt::xarray<double> expected = (x - column) * s + k * x;
    const xt::xarray<double> whole = planned(per_row, 1, plan, x, column, s, k);
    CHECK(plan.find("row splat") != std::string::npos);
    CHECK(close(whole, expected));
    for (int threads : {1, 2, 8}) {
        const xt::xarray<double> chunked = on_threads(threads, [&] {
            const xtrace::interp::chunk_floor_scope floor(100);
            return planned(per_row, 1, plan, x, column, s, k);
        });
        CHECK(same_bits(chunked, whole));
    }
}

TEST_CASE("layer norm's per-row scale is a row splat, and the default path agrees") {
    auto layer_norm = [](auto x, auto gamma, auto beta) {
        auto d = x - xtrace::mean(x, {1}, xtrace::keep_dims);
        auto v = xtrace::mean(d * d, {1}, xtrace::keep_dims);
        return d * xtrace::rsqrt(v + 1e-5f) * gamma + beta;
    };
    const xt::xarray<float> x = random_array<float>({6, 640}), g = random_array<float>({640}),
                            b = random_array<float>({640});
    auto f = xtrace::function(layer_norm, quiet());
    const std::string plan =
        f.get_concrete_function(xtrace::spec<float>({6, 640}), xtrace::spec<float>({640}),
                                xtrace::spec<float>({640}))
            .plan_text();
    INFO(plan);
    CHECK(plan.find("row splat") != std::string::npos);
    const xt::xarray<float> mean = xt::mean(x, {1}, xt::keep_dims);
    const xt::xarray<float> d = x - mean;
    const xt::xarray<float> var = xt::mean(d * d, {1}, xt::keep_dims);
    const xt::xarray<float> expected = d / xt::sqrt(var + 1e-5f) * g + b;
    CHECK(close(xt::xarray<float>(f(x, g, b)), expected, 64, 1e-5));
}
