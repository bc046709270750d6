// Compile-time inspection: every query is a constant expression, checked with static_assert.

#include "support/testing.hpp"

#include <boost/hana/contains.hpp>
#include <boost/hana/length.hpp>

namespace hana = boost::hana;
using namespace xtrace;

namespace {
auto f = xtrace::function([](auto x, auto y) { return xtrace::exp(x) * y + 1.0f; });
using G = graph_t<decltype(f), xt::xarray<float>, xt::xarray<float>>;

auto g = xtrace::function([](auto x, int k) {
    auto h = xtrace::tanh(x) * static_cast<float>(k);
    return xtrace::where(h > 0.f, h, xtrace::cast<float>(xtrace::cast<std::int32_t>(x)));
});
using H = graph_t<decltype(g), xt::xtensor<float, 2>, int>;
} // namespace

static_assert(inspect::node_count<G> == 6);
static_assert(inspect::depth<G> == 4);
static_assert(inspect::count_op<G, op::exp> == 1);
static_assert(inspect::count_op<G, op::mul> == 1);
static_assert(inspect::count_op<G, op::sin> == 0);
static_assert(inspect::to_string<G>() == "add(mul(exp(x0), x1), c)");
static_assert(hana::length(inspect::ops<G>) == hana::size_c<3>);
static_assert(hana::contains(inspect::ops<G>, op::exp{}));
static_assert(!hana::contains(inspect::ops<G>, op::tanh{}));

// The tree as written: h is used twice and counts twice; op::cast<> counts every cast.
static_assert(inspect::to_string<H>() ==
              "where(greater(mul(tanh(x0), c), c), mul(tanh(x0), c), cast(cast(x0)))");
static_assert(inspect::count_op<H, op::tanh> == 2);
static_assert(inspect::count_op<H, op::cast<>> == 2);
static_assert(inspect::node_count<H> == 14);
static_assert(inspect::depth<H> == 5);
static_assert(hana::length(inspect::ops<H>) == hana::size_c<6>); // cast<int32>, cast<float> differ

// A lone argument, and an erased tensor, are leaves.
static_assert(inspect::node_count<arg<0, double>> == 1);
static_assert(inspect::to_string<node<op::neg, erased<float>>>() == "neg(t)");

// cond of one tensor keeps its predicate and both branches in its type; while_loop of one
// variable its initial value.
inline auto branchy = xtrace::function([](auto x) {
    auto c = xtrace::cond(
        xtrace::sum(x) > 0.f, [&] { return xtrace::exp(x); }, [&] { return x; });
    return xtrace::while_loop([](auto v) { return xtrace::max(v) < 10.f; },
                              [](auto v) { return v * 2.f; }, c);
});
using B = graph_t<decltype(branchy), xt::xarray<float>>;
static_assert(inspect::to_string<B>() == "while_loop(cond(greater(sum(x0), c), exp(x0), x0))");
static_assert(inspect::count_op<B, op::cond> == 1);
static_assert(inspect::count_op<B, op::while_loop> == 1);
static_assert(inspect::count_op<B, op::exp> == 1);

TEST_CASE("to_dot prints the tree with one node per line") {
    constexpr std::string_view dot = inspect::to_dot<G>();
    CHECK(dot.substr(0, 16) == "digraph xtrace {");
    CHECK(dot.find("  n2 [label=\"exp\"];\n") != std::string_view::npos);
    CHECK(dot.find("  n3 -> n2;\n") != std::string_view::npos);
    CHECK(dot.find("  n5 [label=\"c\"];\n") != std::string_view::npos);
}

TEST_CASE("the inspected type is the type the traced function records") {
    const xt::xarray<float> a = {1.f, 2.f};
    CHECK(f(a, a).size() == 2);
    auto cf = f.get_concrete_function(spec<float>({2}), spec<float>({2}));
    // exp, mul, add and two args, one constant: the runtime graph has the 6 nodes of the type.
    const std::string text = cf.graph_text();
    CHECK(std::count(text.begin(), text.end(), '\n') == 7);
}
