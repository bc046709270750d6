// Row tiling: a graph whose result rows depend only on the same rows of its arguments runs tile
// by tile of rows. Each tile computes its rows as the whole call does, so the results agree with
// the untiled plan (bit for bit where no sum is taken) and with eager evaluation.

#include "support/eager_scope.hpp"
#include "support/plans.hpp"
#include "support/testing.hpp"
#include "support/threads.hpp"

#include <xtrace/ext/xtensor_extras.hpp>
#include <xtrace/plan/row_tiles.hpp>

#include <string>

using namespace xtrace::testing;

namespace {

// f's result with a tile budget of `bytes` (0: untiled), traced afresh under it, and its plan.
template <class L, class... A>
auto with_budget(const L& lambda, std::size_t bytes, std::string& plan, const A&... args) {
    return traced_under<xtrace::plan::row_tile_scope>(bytes, lambda, quiet(), plan, args...);
}

auto layer_norm = [](auto x, auto gamma, auto beta) {
    auto d = x - xtrace::mean(x, {1}, xtrace::keep_dims);
    auto v = xtrace::mean(d * d, {1}, xtrace::keep_dims);
    return d * xtrace::rsqrt(v + 1e-5f) * gamma + beta;
};

auto dense = [](auto x, auto w, auto b) { return xtrace::relu(xtrace::matmul(x, w) + b); };

} // namespace

TEST_CASE("softmax and layer norm run in row tiles and agree with the whole call") {
    for (std::size_t rows : {2, 3, 7, 64, 101}) {
        const std::size_t cols = rows == 64 ? 64 : 37; // a square case: columns == rows
        INFO(rows << " x " << cols);
        const xt::xarray<float> x = random_array<float>({rows, cols}),
                                g = random_array<float>({cols}), b = random_array<float>({cols});
        std::string tiled_plan, whole_plan;
        auto softmax = [](auto v) { return xtrace::softmax(v, 1); };
        const xt::xarray<float> s1 = with_budget(softmax, 1, tiled_plan, x);
        const xt::xarray<float> s0 = with_budget(softmax, 0, whole_plan, x);
        CHECK(tiled_plan.find("runs in tiles of 1 rows") != std::string::npos);
        CHECK(whole_plan.find("tiles") == std::string::npos);
        CHECK(close(s1, s0, 4, 1e-6));
        const xt::xarray<float> l1 = with_budget(layer_norm, 1, tiled_plan, x, g, b);
        const xt::xarray<float> l0 = with_budget(layer_norm, 0, whole_plan, x, g, b);
        CHECK(tiled_plan.find("runs in tiles") != std::string::npos);
        CHECK(close(l1, l0, 16, 1e-5));
        eager_scope eager;
        CHECK(close(xt::xarray<float>(xtrace::function(layer_norm)(x, g, b)), l1, 64, 1e-5));
    }
}

TEST_CASE("a dense layer in row tiles: bit for bit, on any thread count, strided and donated") {
    const xt::xarray<double> x = random_array<double>({50, 12}), w = random_array<double>({12, 9}),
                             b = random_array<double>({9});
    std::string plan;
    const xt::xarray<double> whole = with_budget(dense, 0, plan, x, w, b);
    for (int threads : {1, 2, 8}) {
        const xt::xarray<double> tiled =
            on_threads(threads, [&] { return with_budget(dense, 64, plan, x, w, b); });
        CHECK(plan.find("runs in tiles") != std::string::npos);
        CHECK(same_bits(tiled, whole));
    }
    const xtrace::plan::row_tile_scope budget(64);
    auto f = xtrace::function(dense, quiet());
    const xt::xarray<double> big = random_array<double>({50, 24});
    const auto strided = xt::view(big, xt::all(), xt::range(0, 24, 2));
    const xt::xarray<double> copy = strided;
    CHECK(same_bits(xt::xarray<double>(f(strided, w, b)), xt::xarray<double>(f(copy, w, b))));
    auto g =
        xtrace::function([](auto x, auto b) { return xtrace::tanh(x * 2.0 + b) - x; }, quiet());
    const xt::xarray<double> y = random_array<double>({40, 9});
    const xt::xarray<double> expected = g(y, b);
    xt::xarray<double> donated = y;
    const double* buffer = donated.data();
    const xt::xarray<double> r = g(std::move(donated), b);
    CHECK(same_bits(r, expected));
    CHECK(r.data() == buffer);
}

TEST_CASE("graphs that mix rows are not tiled, and still right") {
    const xtrace::plan::row_tile_scope budget(1);
    const xt::xarray<float> x = random_array<float>({20, 8});
    auto over_rows = xtrace::function([](auto v) { return v - xtrace::mean(v, {0}); }, quiet());
    auto product =
        xtrace::function([](auto v) { return xtrace::matmul(xtrace::transpose(v), v); }, quiet());
    CHECK(over_rows.get_concrete_function(xtrace::spec<float>({20, 8})).plan_text().find("tiles") ==
          std::string::npos);
    CHECK(product.get_concrete_function(xtrace::spec<float>({20, 8})).plan_text().find("tiles") ==
          std::string::npos);
    auto [a, ea] = both_paths(over_rows, x);
    CHECK(close(a, ea, 8, 1e-6));
    auto [m, em] = both_paths(product, x);
    CHECK(close(m, em, 64, 1e-5));
}

TEST_CASE("an argument that several steps read counts toward the tile budget") {
    // Layer norm keeps x - mean in no temp (its pieces compute it again), so its temps are a few
    // values per row; x itself is read by three steps, and tiles keep its rows in cache.
    const xt::xarray<float> x = random_array<float>({256, 64}), g = random_array<float>({64}),
                            b = random_array<float>({64});
    std::string tiled_plan, whole_plan;
    const xt::xarray<float> tiled = with_budget(layer_norm, 4096, tiled_plan, x, g, b);
    const xt::xarray<float> whole = with_budget(layer_norm, 0, whole_plan, x, g, b);
    INFO(tiled_plan);
    CHECK(tiled_plan.find("temps 3072 bytes,") != std::string::npos); // 3 values per row
    // 4096 bytes hold 15 rows of x and temps, but a tile takes 4096 elements at least.
    CHECK(tiled_plan.find("runs in tiles of 64 rows (of 256)") != std::string::npos);
    CHECK(close(tiled, whole, 16, 1e-5));
    // One step reading x once: nothing to keep between steps, whatever the size.
    auto scaled = [](auto x, auto g) { return x * g + 1.f; };
    const xt::xarray<float> plain = with_budget(scaled, 4096, tiled_plan, x, g);
    CHECK(tiled_plan.find("tiles") == std::string::npos);
    CHECK(same_bits(plain, xt::xarray<float>(x * g + 1.f)));
}
