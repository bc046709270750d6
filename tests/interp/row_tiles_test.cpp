// Row tiling: a graph whose result rows depend only on the same rows of its arguments runs tile
// by tile of rows. Each tile computes its rows as the whole call does, so the results agree with
// the untiled plan (bit for bit where no sum is taken) and with eager evaluation.

#include "support/eager_scope.hpp"
#include "support/plans.hpp"
#include "support/testing.hpp"
#include "support/threads.hpp"

#include <xtrace/ext/xtensor_extras.hpp>
#include <xtrace/plan/row_tiles.hpp>

#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

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

auto softmax = [](auto v) { return xtrace::softmax(v, 1); };

auto dense = [](auto x, auto w, auto b) { return xtrace::relu(xtrace::matmul(x, w) + b); };

} // namespace

TEST_CASE("softmax and layer norm run in row tiles and agree with the whole call") {
    for (std::size_t rows : {2, 3, 7, 64, 101}) {
        const std::size_t cols = rows == 64 ? 64 : 37; // a square case: columns == rows
        INFO(rows << " x " << cols);
        const xt::xarray<float> x = random_array<float>({rows, cols}),
                                g = random_array<float>({cols}), b = random_array<float>({cols});
        std::string tiled_plan, whole_plan;
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

namespace {

// A tile budget that makes tiles of 3 rows of `cols` elements (a tile takes at least as many
// rows as hold that many elements).
std::size_t three_rows(std::size_t cols) {
    return 3 * cols;
}

// f's result in tiles of 3 rows of `cols` and with a sweep budget of `sweep` bytes (0: each step
// runs the whole tile), traced afresh, and its plan. Row splats on rows of any length, as a
// sweeping tile's plan takes them, so that both run the same steps.
template <class L, class... A>
auto swept(const L& lambda, std::size_t cols, std::size_t sweep, std::string& plan,
           const A&... args) {
    const xtrace::plan::row_tile_scope tiles(three_rows(cols));
    const xtrace::plan::row_splat_scope splats(1);
    return traced_under<xtrace::plan::row_sweep_scope>(sweep, lambda, quiet(), plan, args...);
}

// Exact ops only (a maximum, a minimum, products and sums of a few values): any order of
// evaluation gives the same bits.
auto exact_rows = [](auto x, auto b) {
    return (x - xtrace::max(x, {1}, xtrace::keep_dims)) * xtrace::min(x, {1}, xtrace::keep_dims) +
           b;
};

const std::string sweeping = "rows swept through the steps";

// Random operands of layer norm, softmax (x, g, b) and exact_rows (xd, bd) on rows of `cols`.
struct row_inputs {
    row_inputs(std::size_t rows, std::size_t cols)
        : x(random_array<float>({rows, cols})), g(random_array<float>({cols})),
          b(random_array<float>({cols})), xd(random_array<double>({rows, cols})),
          bd(random_array<double>({cols})) {}
    xt::xarray<float> x, g, b;
    xt::xarray<double> xd, bd;
};

// Layer norm, softmax and exact_rows of `in` against eager evaluation.
void check_eager(const row_inputs& in, const xt::xarray<float>& ln, const xt::xarray<float>& sm,
                 const xt::xarray<double>& ex) {
    eager_scope eager;
    CHECK(close(xt::xarray<float>(xtrace::function(layer_norm)(in.x, in.g, in.b)), ln, 64, 1e-5));
    CHECK(close(xt::xarray<float>(xtrace::function(softmax)(in.x)), sm, 16, 1e-6));
    CHECK(same_bits(xt::xarray<double>(xtrace::function(exact_rows)(in.xd, in.bd)), ex));
}

} // namespace

TEST_CASE("a tile sweeps its rows through its steps a few at a time, bit for bit as step by step") {
    for (auto [rows, cols] : {std::pair{9, 5}, {40, 37}, {64, 300}, {130, 8}}) {
        INFO(rows << " x " << cols);
        const auto c = static_cast<std::size_t>(cols);
        const row_inputs in(static_cast<std::size_t>(rows), c);
        const auto& [x, g, b, xd, bd] = in;
        std::string plan, stepped_plan;
        const xt::xarray<float> ln = swept(layer_norm, c, 0, stepped_plan, x, g, b);
        const xt::xarray<float> sm = swept(softmax, c, 0, stepped_plan, x);
        const xt::xarray<double> ex = swept(exact_rows, c, 0, stepped_plan, xd, bd);
        CHECK(stepped_plan.find("runs in tiles of 3 rows") != std::string::npos);
        CHECK(stepped_plan.find(sweeping) == std::string::npos);
        // One row per group, two, and the whole tile.
        for (std::size_t budget : {std::size_t(1), 8 * c, std::size_t(1) << 20}) {
            INFO("sweep budget " << budget);
            const xt::xarray<float> ln_swept = swept(layer_norm, c, budget, plan, x, g, b);
            INFO(plan);
            CHECK(plan.find(sweeping) != std::string::npos);
            CHECK(same_bits(ln_swept, ln));
            const xt::xarray<float> sm_swept = swept(softmax, c, budget, plan, x);
            CHECK(plan.find(sweeping) != std::string::npos);
            CHECK(same_bits(sm_swept, sm));
            const xt::xarray<double> ex_swept = swept(exact_rows, c, budget, plan, xd, bd);
            CHECK(plan.find(sweeping) != std::string::npos);
            CHECK(same_bits(ex_swept, ex));
        }
        check_eager(in, ln, sm, ex);
    }
}

TEST_CASE("a swept tile reads strided rows in place, runs on any thread count, and falls back") {
    const xtrace::plan::row_tile_scope tiles(three_rows(40));
    const xtrace::plan::row_splat_scope splats(1);
    const xt::xarray<float> big = random_array<float>({96, 80}), g = random_array<float>({40}),
                            b = random_array<float>({40});
    const auto rows_apart = xt::view(big, xt::all(), xt::range(0, 40)); // rows 80 apart
    const auto columns_apart = xt::view(big, xt::all(), xt::range(0, 80, 2));
    const xt::xarray<float> x1 = rows_apart, x2 = columns_apart;
    auto f = xtrace::function(layer_norm, quiet());
    const xt::xarray<float> r1 = f(x1, g, b), r2 = f(x2, g, b);
    CHECK(f.get_concrete_function(xtrace::spec<float>({96, 40}), xtrace::spec<float>({40}),
                                  xtrace::spec<float>({40}))
              .plan_text()
              .find("rows swept through the steps") != std::string::npos);
    // A row read in place at its own stride; an input with a column stride is gathered block by
    // block, which a sweep does not do: its tiles run step by step (and its mean, a strided
    // reduction, adds one element at a time: other bits).
    CHECK(same_bits(xt::xarray<float>(f(rows_apart, g, b)), r1));
    const xt::xarray<float> stepped = f(columns_apart, g, b);
    CHECK(close(stepped, r2, 16, 1e-5));
    for (int threads : {1, 2, 8}) {
        const xt::xarray<float> on = on_threads(threads, [&] { return f(x1, g, b); });
        CHECK(same_bits(on, r1));
    }
}

TEST_CASE("a call too small for row tiles sweeps its rows as one tile, below what threads split") {
    using sweep_scope = xtrace::plan::row_sweep_scope;
    const std::size_t on = xtrace::plan::default_row_sweep_bytes;
    for (auto [rows, cols] : {std::pair{2, 1}, {5, 3}, {31, 40}, {100, 300}}) {
        INFO(rows << " x " << cols);
        const auto r = static_cast<std::size_t>(rows), c = static_cast<std::size_t>(cols);
        const row_inputs in(r, c);
        const auto& [x, g, b, xd, bd] = in;
        std::string plan, stepped_plan;
        const xt::xarray<float> ln =
            traced_under<sweep_scope>(on, layer_norm, quiet(), plan, x, g, b);
        INFO(plan);
        CHECK(plan.find("tiles") == std::string::npos);
        CHECK(plan.find(sweeping) != std::string::npos);
        const xt::xarray<float> ln_stepped =
            traced_under<sweep_scope>(0, layer_norm, quiet(), stepped_plan, x, g, b);
        CHECK(stepped_plan.find(sweeping) == std::string::npos);
        CHECK(close(ln, ln_stepped, 16, 1e-5));
        // Donated (the result may take x's buffer) and into a buffer of the caller's.
        {
            const sweep_scope sweeps(on);
            auto f = xtrace::function(layer_norm, quiet());
            xt::xarray<float> donated = x, into = xt::zeros<float>({r, c});
            CHECK(same_bits(xt::xarray<float>(f(std::move(donated), g, b)), ln));
            f.call_into(into, x, g, b);
            CHECK(same_bits(into, ln));
        }
        const xt::xarray<float> sm = traced_under<sweep_scope>(on, softmax, quiet(), plan, x);
        CHECK(plan.find(sweeping) != std::string::npos);
        const xt::xarray<double> ex =
            traced_under<sweep_scope>(on, exact_rows, quiet(), plan, xd, bd);
        CHECK(plan.find(sweeping) != std::string::npos);
        CHECK(same_bits(ex, traced_under<sweep_scope>(0, exact_rows, quiet(), plan, xd, bd)));
        check_eager(in, ln, sm, ex);
    }
    // Rows read once, and a small per-row value: no tiles (nothing carried between steps), and
    // more elements than a sweep takes, so the region is split between threads instead.
    auto centred = [](auto x, auto y) { return x - xtrace::mean(y, {1}, xtrace::keep_dims); };
    const xt::xarray<double> x = random_array<double>({200, 200}),
                             y = random_array<double>({200, 3});
    std::string plan;
    const xt::xarray<double> whole = traced_under<sweep_scope>(on, centred, quiet(), plan, x, y);
    CHECK(plan.find("tiles") == std::string::npos);
    CHECK(plan.find(sweeping) == std::string::npos);
    const xt::xarray<double> mean_y = xt::mean(y, {1}, xt::keep_dims); // (evaluated first: a
    // lazy keep_dims reducer broadcast in an expression reads past its end in xtensor 0.24)
    CHECK(close(whole, xt::xarray<double>(x - mean_y), 4, 1e-12));
    for (int threads : {1, 2, 8})
        CHECK(same_bits(
            on_threads(threads,
                       [&] { return traced_under<sweep_scope>(on, centred, quiet(), plan, x, y); }),
            whole));
}

namespace {

// `lambda` on `args` through its traced graph with every fused piece's kernels over several rows
// removed (static fusion always makes them; a graph built otherwise may lack them), planned
// with the default settings; `plan` gets the plan's text.
template <class L, class... A>
auto without_rows_kernels(const L& lambda, std::string& plan, const A&... args) {
    using T = std::common_type_t<typename A::value_type...>;
    auto f = xtrace::function(lambda, quiet());
    const auto& trace =
        f.get_concrete_function(xtrace::spec<typename A::value_type>(std::vector<std::int64_t>(
                                    args.shape().begin(), args.shape().end()))...)
            .trace();
    xtrace::graph::graph g = trace.planned_graph();
    std::size_t stripped = 0;
    for (xtrace::graph::node& n : g.nodes)
        if (n.piece) {
            xtrace::graph::fused_piece piece = *n.piece;
            piece.rows = nullptr;
            piece.fold_rows = nullptr;
            n.piece = std::make_shared<const xtrace::graph::fused_piece>(std::move(piece));
            ++stripped;
        }
    CHECK(stripped > 0);
    const std::vector<xtrace::shape_t> shapes{
        xtrace::shape_t(args.shape().begin(), args.shape().end())...};
    const xtrace::plan::plan p = xtrace::plan::build(g, shapes);
    plan = xtrace::plan::to_text(p, g);
    const auto& first = std::get<0>(std::tie(args...));
    xt::xarray<T> out = xt::zeros<T>(first.shape());
    std::vector<xtrace::interp::strided_input> inputs;
    auto input = [&](const auto& a) {
        xtrace::interp::strided_input in{a.data(), {}};
        for (std::size_t d = 0; d < a.dimension(); ++d)
            in.strides[d] = static_cast<std::int64_t>(a.strides()[d]);
        inputs.push_back(in);
    };
    (input(args), ...);
    void* const outputs[] = {out.data()};
    xtrace::interp::execute(g, p, inputs, outputs);
    return out;
}

} // namespace

TEST_CASE("a swept piece without kernels over rows runs a block per row") {
    for (auto [rows, cols] : {std::pair{5, 3}, {31, 40}}) {
        INFO(rows << " x " << cols);
        const row_inputs in(static_cast<std::size_t>(rows), static_cast<std::size_t>(cols));
        std::string plan;
        const xt::xarray<float> ln = without_rows_kernels(layer_norm, plan, in.x, in.g, in.b);
        INFO(plan);
        CHECK(plan.find(sweeping) != std::string::npos);
        CHECK(
            close(ln, xt::xarray<float>(xtrace::function(layer_norm)(in.x, in.g, in.b)), 16, 1e-5));
        const xt::xarray<double> ex = without_rows_kernels(exact_rows, plan, in.xd, in.bd);
        CHECK(plan.find(sweeping) != std::string::npos);
        CHECK(same_bits(ex, xt::xarray<double>(xtrace::function(exact_rows)(in.xd, in.bd))));
    }
}

TEST_CASE("a tile that sweeps its rows is as long as its temps allow, in 16 tiles at least") {
    // Rows of 256 floats: x is 1 KiB a row, which the budget counts for tiles run step by step
    // (126 rows); a sweep keeps each group's rows in L1 itself, so only its temps count.
    const std::size_t rows = 4096, cols = 256;
    const row_inputs in(rows, cols);
    const auto& [x, g, b, xd, bd] = in;
    std::string ln_stepped, sm_stepped;
    const xt::xarray<float> ln =
        traced_under<xtrace::plan::row_sweep_scope>(0, layer_norm, quiet(), ln_stepped, x, g, b);
    const xt::xarray<float> sm =
        traced_under<xtrace::plan::row_sweep_scope>(0, softmax, quiet(), sm_stepped, x);
    CHECK(ln_stepped.find("runs in tiles of 126 rows (of 4096)") != std::string::npos);
    CHECK(sm_stepped.find("runs in tiles of 63 rows (of 4096)") != std::string::npos);
    // Layer norm's temps are 3 values a row: as long as 16 tiles allow.
    auto f = xtrace::function(layer_norm, quiet());
    auto s = xtrace::function(softmax, quiet());
    const std::string ln_plan =
        f.get_concrete_function(xtrace::spec<float>({4096, 256}), xtrace::spec<float>({256}),
                                xtrace::spec<float>({256}))
            .plan_text();
    INFO(ln_plan);
    CHECK(ln_plan.find("runs in tiles of 256 rows (of 4096)") != std::string::npos);
    CHECK(ln_plan.find(sweeping) != std::string::npos);
    // Softmax keeps each row's exponentials, 1 KiB a row: twice the rows of a tile run step by
    // step, which also keeps x.
    const std::string sm_plan =
        s.get_concrete_function(xtrace::spec<float>({4096, 256})).plan_text();
    INFO(sm_plan);
    CHECK(sm_plan.find("runs in tiles of 126 rows (of 4096)") != std::string::npos);
    // Rows a whole number of batches long: the sweep gives the bits of the steps run one by one.
    for (int threads : {1, 2, 8}) {
        INFO(threads << " threads");
        CHECK(same_bits(on_threads(threads, [&] { return xt::xarray<float>(f(x, g, b)); }), ln));
        CHECK(same_bits(on_threads(threads, [&] { return xt::xarray<float>(s(x)); }), sm));
    }
}
