// How graphs are planned, read from the printed plan (plan::to_text): one fused region per
// elementwise chain, no intermediate materialised, smaller broadcast subexpressions computed once
// in their own region, reductions run inside the region that feeds them.

#include "support/plans.hpp"
#include "support/testing.hpp"

#include <xtrace/plan/build.hpp>
#include <xtrace/plan/text.hpp>

#include <regex>

using namespace xtrace;

namespace {
using traced = testing::traced_graph;

// How often `pattern` matches in `text`.
std::size_t count(const std::string& text, const std::string& pattern) {
    const std::regex re(pattern);
    return static_cast<std::size_t>(
        std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

// The numbers of the first "region ..., N nodes, block B, R registers" line.
struct region_line {
    std::size_t nodes = 0, block = 0, registers = 0;
};
region_line first_region(const std::string& text) {
    std::smatch m;
    const std::regex re(
        R"(region \[[0-9,]*\], ([0-9]+) nodes?, block ([0-9]+), ([0-9]+) registers?)");
    REQUIRE(std::regex_search(text, m, re));
    return {std::stoul(m[1]), std::stoul(m[2]), std::stoul(m[3])};
}
} // namespace

TEST_CASE("the plan of exp(x) * y + sum(x), printed") {
    traced t;
    auto x = t.input<0>({4});
    auto y = t.input<1>({4});
    // One statement each, so that node ids do not depend on the order operands are evaluated.
    auto e = xtrace::exp(x);           // %2
    auto p = e * y;                    // %3
    auto total = xtrace::sum(x);       // %4
    t.b->add_output((p + total).id()); // %5
    const auto g = t.b->finish();
    const std::vector<shape_t> shapes{{4}, {4}};
    const std::string text = plan::to_text(plan::build(g, shapes), g);
    // sum(x) reads an argument, so it cannot run inside a region: a step of its own, first,
    // into a temp; the region then computes exp, mul and add block by block, reading x and y in
    // place and the sum as one value, and writes only the output. Blocks of 4 elements (the
    // whole tensor) in 4 registers of 8 bytes per element: 128 bytes of registers.
    CHECK(text == R"(plan: 2 steps, temps 64 bytes, registers 128 bytes
step 0: %4 = sum(%0, axes=[0]) : float32[] -> temp @0
step 1: region [4], 3 nodes, block 4, 4 registers
  in s0: %0 arg 0, r0
  in s1: %1 arg 1, r1
  in s2: %4 temp @0, r2
  s3: %2 = exp(s0) : float32, r3
  s4: %3 = mul(s3, s1) : float32, r3
  s5: %5 = add(s4, s2) : float32 -> output 0
)");
}

TEST_CASE("an elementwise chain is one region with no intermediate buffer") {
    traced t;
    auto x = t.input<0>({4096});
    auto y = 0.5f * x * (1.f + xtrace::tanh(0.7978845608f * (x + 0.044715f * x * x * x)));
    t.b->add_output(y.id());
    const auto g = t.b->finish();
    const std::string text = plan::to_text(plan::build(g, std::vector<shape_t>{{4096}}), g);
    CHECK(count(text, "step [0-9]+: region") == 1);
    CHECK(count(text, "step [0-9]+: %") == 0);
    CHECK(count(text, "temps 0 bytes") == 1);
    CHECK(count(text, "temp @") == 0);
    const region_line r = first_region(text);
    CHECK(r.block * r.registers * 8 <= plan::l1_data_bytes() / 2 + 64 * 8);
    CHECK(r.block % 64 == 0);
    CHECK(r.registers < r.nodes); // registers are reused
}

TEST_CASE("a subexpression of a smaller shape is computed once, in its own region") {
    traced t;
    auto x = t.input<0>({100, 8});
    auto bias = t.input<1>({8});
    auto y = x * xtrace::exp(bias) + 1.f;
    t.b->add_output(y.id());
    const auto g = t.b->finish();
    const std::string text = plan::to_text(plan::build(g, std::vector<shape_t>{{100, 8}, {8}}), g);
    CHECK(count(text, "step 0: region \\[8\\], 1 node") == 1);
    CHECK(count(text, "step 1: region \\[100,8\\], 2 nodes") == 1);
    CHECK(count(text, "step [0-9]+:") == 2);
    // exp(bias): 8 floats in a temp, rounded to a cache line; the constant is splatted.
    CHECK(count(text, "temps 64 bytes") == 1);
    CHECK(count(text, "exp\\(s0\\) : float32 -> temp @0") == 1);
    CHECK(count(text, "constant 1, splat") == 1);
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
    const std::string text =
        plan::to_text(plan::build(g, std::vector<shape_t>{{300, 70}, {300, 70}}), g);
    CHECK(count(text, "tail: ") == 3);
    CHECK(count(text, "innermost dims, 70 elements per result -> output 0") == 1);
    CHECK(count(text, "innermost dims, 21000 elements per result -> output 1") == 1);
    CHECK(count(text, "outermost dims, 300 elements per result -> output 2") == 1);
    CHECK(count(text, "step [0-9]+: %") == 0); // no step of its own
    CHECK(count(text, "temps 0 bytes") == 1);

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
