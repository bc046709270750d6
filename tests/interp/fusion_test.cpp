// How graphs are planned: one fused region per elementwise chain, no intermediate materialised,
// smaller broadcast subexpressions computed once in their own region.

#include "support/testing.hpp"

using namespace xtrace;

namespace {
struct traced {
    std::shared_ptr<trace::builder> b = std::make_shared<trace::builder>();
    template <std::size_t I>
    arg<I, float> input(shape_t shape) {
        return arg<I, float>(b, b->add_arg(I, dtype::float32, std::move(shape)));
    }
};
} // namespace

TEST_CASE("an elementwise chain is one region with no intermediate buffer") {
    traced t;
    auto x = t.input<0>({4096});
    auto y = 0.5f * x * (1.f + xtrace::tanh(0.7978845608f * (x + 0.044715f * x * x * x)));
    t.b->add_output(y.id());
    const auto g = t.b->finish();
    const auto p = plan::build(g, std::vector<shape_t>{{4096}});
    REQUIRE(p.regions.size() == 1);
    CHECK(p.temp_bytes == 0);
    CHECK(p.regions[0].block * p.regions[0].register_count * 8 <=
          plan::detail::l1_data_bytes() / 2 + 64 * 8);
    CHECK(p.regions[0].block % 64 == 0);
    CHECK(p.regions[0].register_count < p.regions[0].nodes.size()); // registers are reused
}

TEST_CASE("a subexpression of a smaller shape is computed once, in its own region") {
    traced t;
    auto x = t.input<0>({100, 8});
    auto bias = t.input<1>({8});
    auto y = x * xtrace::exp(bias) + 1.f;
    t.b->add_output(y.id());
    const auto g = t.b->finish();
    const auto p = plan::build(g, std::vector<shape_t>{{100, 8}, {8}});
    REQUIRE(p.regions.size() == 2);
    CHECK(p.regions[0].shape == shape_t{8});
    CHECK(p.regions[1].shape == shape_t{100, 8});
    CHECK(p.temp_bytes == 64); // exp(bias): 8 floats, rounded to a cache line
}

TEST_CASE("common subexpressions are recorded once") {
    traced t;
    auto x = t.input<0>({3});
    auto y = xtrace::exp(x) * xtrace::exp(x) + xtrace::exp(x);
    t.b->add_output(y.id());
    const auto g = t.b->finish();
    std::size_t exps = 0;
    for (const auto& n : g.nodes)
        exps += n.op == op_kind::exp;
    CHECK(exps == 1);
    CHECK(g.nodes.size() == 4); // x, exp, mul, add
}

TEST_CASE("outputs that are arguments, constants or repeated nodes are copied") {
    auto f = xtrace::function([](auto x) {
        auto y = x * 2.f;
        return std::make_tuple(x, y, y);
    });
    const xt::xarray<float> a = {1.f, 2.f};
    auto [p, q, r] = f(a);
    CHECK((p == a));
    CHECK((q == xt::xarray<float>{2.f, 4.f}));
    CHECK((r == q));
    CHECK(q.data() != r.data());
}

TEST_CASE("a reduction over innermost dims runs inside the region that feeds it") {
    traced t;
    auto x = t.input<0>({300, 70});
    auto y = t.input<1>({300, 70});
    auto rows = xtrace::sum(x * y, {1});       // reads x and y once, materialises nothing
    auto total = xtrace::mean(xtrace::exp(x)); // over every dim
    auto cols = xtrace::sum(x * 2.f, {0});     // over the outermost dim: also inside
    t.b->add_output(rows.id());
    t.b->add_output(total.id());
    t.b->add_output(cols.id());
    const auto g = t.b->finish();
    const auto p = plan::build(g, std::vector<shape_t>{{300, 70}, {300, 70}});
    std::size_t tails = 0;
    for (const auto& r : p.regions)
        tails += r.tails.size();
    CHECK(tails == 3);
    CHECK(p.singles.empty());
    CHECK(p.temp_bytes == 0);

    // Results against xtensor, on blocks that split rows, for every reduction.
    auto f = xtrace::function([](auto a, auto b) {
        auto e = a * b + 1.0;
        return std::tuple(xtrace::sum(e, {1}), xtrace::mean(e), xtrace::max(e, {-1}),
                          xtrace::min(e, {1, 2}, xtrace::keep_dims), xtrace::prod(a * 0.0 + 1.0),
                          xtrace::sum(e, {0}), xtrace::max(e, {0, 1}));
    });
    for (auto shape : {std::vector<std::size_t>{3, 1000, 7}, {2, 0, 5}, {1, 1, 1}, {4, 3, 2}}) {
        const xt::xarray<double> a = xtrace::testing::random_array<double>(shape);
        const xt::xarray<double> b = xtrace::testing::random_array<double>(shape);
        const xt::xarray<double> e = a * b + 1.0;
        auto [s, m, mx, mn, pr, s0, mx01] = f(a, b);
        if (e.size() == 0) { // xtensor's reducers cannot take empty input: by hand
            CHECK(xtrace::testing::close(s, xt::xarray<double>(xt::zeros<double>({2, 5}))));
            CHECK(std::isnan(m()));
            CHECK(s0.shape() == std::vector<std::size_t>{0, 5});
            CHECK(xt::all(xt::equal(mx01, -std::numeric_limits<double>::infinity())));
        } else {
            CHECK(xtrace::testing::close(s, xt::xarray<double>(xt::sum(e, {1})), 64, 1e-9));
            CHECK(xtrace::testing::close(m, xt::xarray<double>(xt::mean(e)), 64, 1e-9));
            CHECK(xtrace::testing::close(mx, xt::xarray<double>(xt::amax(e, {2}))));
            xt::xarray<double> low = xt::amin(e, {1, 2});
            low.reshape({shape[0], 1, 1});
            CHECK(xtrace::testing::close(mn, low));
            CHECK(xtrace::testing::close(s0, xt::xarray<double>(xt::sum(e, {0})), 64, 1e-9));
            CHECK(xtrace::testing::close(mx01, xt::xarray<double>(xt::amax(e, {0, 1}))));
        }
        CHECK(pr() == 1.0);
    }
}
