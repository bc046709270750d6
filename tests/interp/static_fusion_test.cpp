// Which expression types compile into one SIMD loop, and that the loop agrees with the block
// interpreter.

#include "support/testing.hpp"

#include <xtrace/ext/xtensor_extras.hpp>

using namespace xtrace;
using namespace xtrace::testing;

namespace {
auto gelu = [](auto x) {
    return 0.5f * x * (1.f + xtrace::tanh(0.7978845608f * (x + 0.044715f * x * x * x)));
};
using gelu_graph = graph_t<decltype(xtrace::function(gelu)), xt::xarray<float>>;
} // namespace

static_assert(interp::static_fusion::fusable<gelu_graph>);
static_assert(interp::static_fusion::leaf_count<gelu_graph> == 9);
static_assert(interp::static_fusion::fusable<node<op::div, arg<0, double>, arg<1, double>>>);
// Integer division checks its divisor per element; comparisons change dtype: interpreter only.
static_assert(!interp::static_fusion::fusable<node<op::div, arg<0, int>, arg<1, int>>>);
static_assert(!interp::static_fusion::fusable<node<op::less, arg<0, float>, arg<1, float>>>);
static_assert(!interp::static_fusion::fusable<erased<float>>);

// Expressions beyond max_nodes run on the interpreter: their kernels would cost compile time per
// node for little gain.
namespace {
template <std::size_t N>
struct chain {
    using type = node<op::exp, typename chain<N - 1>::type>;
};
template <>
struct chain<1> {
    using type = arg<0, float>;
};
} // namespace
// (qualifies, not kernel_for() != nullptr: a function's address is no constant expression
// under the sanitizers.)
static_assert(interp::static_fusion::qualifies<gelu_graph>);
static_assert(expr::tree_size<chain<interp::static_fusion::max_nodes>::type> ==
              interp::static_fusion::max_nodes);
static_assert(interp::static_fusion::qualifies<chain<interp::static_fusion::max_nodes>::type>);
static_assert(!interp::static_fusion::qualifies<chain<interp::static_fusion::max_nodes + 1>::type>);

TEST_CASE("the fused kernel and the interpreter agree, contiguous or not") {
    auto fused = xtrace::function(gelu, quiet());
    auto interpreted = xtrace::function(gelu, quiet({.static_fusion = false}));
    for (std::size_t n : {0u, 1u, 7u, 16u, 17u, 1025u, 100000u}) {
        const xt::xarray<float> x = random_array<float>({n});
        CHECK(close(fused(x), interpreted(x), 4, 1e-6));
        const xt::xarray<float> m = random_array<float>({n, 3});
        const auto column = xt::view(m, xt::all(), 1); // strided: falls back to the interpreter
        CHECK(close(fused(column), interpreted(column), 4, 1e-6));
    }
}

TEST_CASE("a shared subexpression and repeated arguments map to the right leaves") {
    auto f = [](auto x, auto y) {
        auto s = xtrace::exp(y) - x;
        return s * s + 3.0 * y - x / 2.0;
    };
    auto fused = xtrace::function(f, quiet());
    const xt::xarray<double> x = random_array<double>({33});
    const xt::xarray<double> y = random_array<double>({33});
    const xt::xarray<double> expected = (xt::exp(y) - x) * (xt::exp(y) - x) + 3.0 * y - x / 2.0;
    CHECK(close(fused(x, y), expected, 8, 1e-12));
}

TEST_CASE("each argument of a fused kernel is checked for its layout and moved with its chunk") {
    auto f = [](auto x, auto y) { return x * y + 2.0 * x - y; };
    auto fused = xtrace::function(f, quiet());
    for (std::size_t rows : {0u, 1u, 5u, 300u}) { // 300 rows of 257: several chunks
        const xt::xarray<double> x = random_array<double>({rows, 257});
        const xt::xarray<double> y = random_array<double>({rows, 257});
        const xt::xarray<double> expected = x * y + 2.0 * x - y;
        CHECK(close(fused(x, y), expected, 4, 1e-12));
        const xt::xarray<double> yt = random_array<double>({257, rows});
        const auto strided = xt::transpose(yt); // only the second argument is not row-major
        const xt::xarray<double> expected_t = x * strided + 2.0 * x - strided;
        CHECK(close(fused(x, strided), expected_t, 4, 1e-12));
        CHECK(close(fused(yt, yt), xt::xarray<double>(yt * yt + 2.0 * yt - yt), 4, 1e-12));
    }
}
