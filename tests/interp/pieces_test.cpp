// Fused pieces: an elementwise graph too large for one compiled kernel runs through the block
// interpreter as compiled kernels of its largest subtrees. They compute the same ops in the same
// order, so they must give what the interpreter gives op by op, bit for bit, on every shape.

#include "support/eager_scope.hpp"
#include "support/plans.hpp"
#include "support/testing.hpp"

#include <xtrace/ext/xtensor_extras.hpp>

#include <string>

using namespace xtrace::testing;

namespace {

// Steps of five ops, each value read once: a tree of 5 * Steps ops (with a tanh every fourth step
// when Tanh), more than one compiled kernel takes.
template <int Steps, bool Tanh, class V, class X, class Y>
auto chain(const V& v, const X& x, const Y& y) {
    if constexpr (Steps == 0) {
        return v;
    } else {
        auto next = (chain<Steps - 1, Tanh>(v, x, y) * 0.75f + x) * (y * 0.5f - 0.25f);
        if constexpr (Tanh && Steps % 4 == 0)
            return xtrace::tanh(next);
        else
            return next;
    }
}

template <class F>
auto by_op(const F& f) {
    return xtrace::function(f.lambda(), quiet(xtrace::options{.static_fusion = false}));
}

} // namespace

TEST_CASE("a 100-op elementwise graph runs as compiled pieces, bit for bit the interpreter's") {
    auto exact =
        xtrace::function([](auto x, auto y) { return chain<20, false>(x, x, y); }, quiet());
    auto with_tanh =
        xtrace::function([](auto x, auto y) { return chain<20, true>(x, y, x); }, quiet());
    for (const std::vector<std::size_t>& shape : std::vector<std::vector<std::size_t>>{
             {}, {0}, {1}, {37}, {1030}, {3, 0, 2}, {17, 65}, random_shape(3)}) {
        std::string dims;
        for (std::size_t d : shape)
            dims += std::to_string(d) + ' ';
        INFO("shape [ " << dims << "]");
        const xt::xarray<float> x = random_array<float>(shape), y = random_array<float>(shape);
        CHECK(same_bits(exact(x, y), by_op(exact)(x, y)));
        CHECK(same_bits(with_tanh(x, y), by_op(with_tanh)(x, y)));
        auto [traced, eager] = both_paths(with_tanh, x, y);
        CHECK(close(traced, eager, 64, 1e-5));
    }
    const std::string plan =
        exact.get_concrete_function(xtrace::spec<float>({1030}), xtrace::spec<float>({1030}))
            .plan_text();
    INFO(plan);
    CHECK(count_of(plan, "fused") >= 3); // at most 32 ops each
    CHECK(count_of(plan, " = mul(") + count_of(plan, " = add(") < 20);
}

TEST_CASE("pieces in double, on strided and broadcast operands, under a reduction") {
    auto f = xtrace::function(
        [](auto x, auto y) { return xtrace::sum(chain<9, true>(x, y, x), {1}); }, quiet());
    const xt::xarray<double> big = random_array<double>({12, 40});
    const xt::xarray<double> x = xt::transpose(xt::view(big, xt::all(), xt::range(0, 40, 2)));
    const auto strided = xt::transpose(xt::view(big, xt::all(), xt::range(0, 40, 2)));
    const xt::xarray<double> row = random_array<double>({12});
    CHECK(close(f(strided, row), by_op(f)(x, row), 4, 1e-12));
    CHECK(same_bits(xt::xarray<double>(f(strided, row)), xt::xarray<double>(f(x, row))));
    auto [traced, eager] = both_paths(f, x, row);
    CHECK(close(traced, eager, 64, 1e-12));
    const std::string plan =
        f.get_concrete_function(xtrace::spec<double>({20, 12}), xtrace::spec<double>({12}))
            .plan_text();
    INFO(plan);
    CHECK(plan.find("fused") != std::string::npos);
    CHECK(plan.find("tail") != std::string::npos);
}

TEST_CASE("a costly value read twice is computed once: a piece that would repeat it is given up") {
    auto f = xtrace::function(
        [](auto x, auto y) {
            auto t = xtrace::tanh(x * y); // in both terms of the one expression type
            return (t * 2.f + x) * (t * 3.f - y);
        },
        quiet());
    auto g = xtrace::function(
        [](auto x, auto y) {
            auto t = chain<7, true>(x, y, x); // read by both terms: a piece's leaf
            return chain<7, false>(t, x, y) + xtrace::exp(xtrace::minimum(t, 5.f));
        },
        quiet());
    const xt::xarray<float> x = random_array<float>({513}), y = random_array<float>({513});
    CHECK(same_bits(f(x, y), by_op(f)(x, y)));
    CHECK(same_bits(g(x, y), by_op(g)(x, y)));
    const std::string plan =
        f.get_concrete_function(xtrace::spec<float>({513}), xtrace::spec<float>({513})).plan_text();
    INFO(plan);
    CHECK(count_of(plan, "tanh(") == 1);
    CHECK(plan.find("fused") == std::string::npos);
}

TEST_CASE("several outputs, a donated argument, and errors leave pieces working") {
    auto two = xtrace::function(
        [](auto x, auto y) {
            return std::tuple(chain<8, true>(x, y, x), chain<9, false>(y, x, x));
        },
        quiet());
    const xt::xarray<float> x = random_array<float>({300}), y = random_array<float>({300});
    auto [a, b] = two(x, y);
    auto [c, d] = by_op(two)(x, y);
    CHECK(same_bits(a, c));
    CHECK(same_bits(b, d));

    auto one = xtrace::function([](auto x, auto y) { return chain<12, true>(x, y, y); }, quiet());
    const xt::xarray<float> expected = by_op(one)(x, y);
    xt::xarray<float> donated = x;
    const float* buffer = donated.data();
    xt::xarray<float> r = one(std::move(donated), y);
    CHECK(same_bits(r, expected));
    CHECK(r.data() == buffer); // written into the donated buffer after its last read

    CHECK_THROWS_AS(one(x, xt::xarray<float>(random_array<float>({7}))), xtrace::shape_error);
    CHECK(same_bits(one(x, y), expected));
}
