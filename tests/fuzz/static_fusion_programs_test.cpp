// Random programs for the statically fused path. Static fusion compiles a kernel from the
// expression *type*, which programs built at run time (tests/fuzz/differential.cpp) cannot
// have, so these are drawn at compile time: a constexpr generator turns each seed into an
// elementwise expression over three float arguments, and each runs statically fused, through
// the interpreter and eagerly, through the interpreter's compiled pieces (a strided argument,
// a reduction they fold into), and in row tiles. Exact ops must agree bit for bit, and
// transcendentals within a tolerance.

#include "support/eager_scope.hpp"
#include "support/testing.hpp"
#include <xtrace/ext/xtensor_extras.hpp>
#include <xtrace/plan/registers.hpp>
#include <xtrace/plan/row_tiles.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

using namespace xtrace::testing;

namespace {

constexpr std::uint64_t next(std::uint64_t s) {
    return s * 6364136223846793005ull + 1442695040888963407ull;
}

constexpr unsigned pick(std::uint64_t s, unsigned n) {
    return static_cast<unsigned>((s >> 33) % n);
}

// The seed of a binary op's second operand: one op in three gets twin operands, the first's
// expression again (`e * e`), which a compiled kernel may compute once.
constexpr std::uint64_t second(std::uint64_t s) {
    return pick(next(next(next(next(next(s))))), 3) == 0 ? next(next(s)) : next(next(next(s)));
}

// Whether the expression of seed S and depth D uses an op whose rounding may differ by path.
template <std::uint64_t S, int D>
constexpr bool inexact() {
    if constexpr (D == 0 || pick(S, 9) == 0) {
        return false;
    } else {
        constexpr unsigned op = pick(next(S), 12);
        if constexpr (op >= 9) // exp, tanh, sigmoid
            return true;
        else if constexpr (op <= 3) // unary: neg abs square relu
            return inexact<next(next(S)), D - 1>();
        else
            return inexact<next(next(S)), D - 1>() || inexact<second(S), D - 1>();
    }
}

// The expression of seed S and depth D over x, y, z: symbolic tensors give a typed expression
// (what static fusion compiles), eager ones a value. Two leaves scale z by different constants,
// so operands of one type may read different values.
template <std::uint64_t S, int D, class X, class Y, class Z>
auto gen(const X& x, const Y& y, const Z& z) {
    if constexpr (D == 0 || pick(S, 9) == 0) {
        constexpr unsigned leaf = pick(next(S), 5);
        if constexpr (leaf == 0)
            return x;
        else if constexpr (leaf == 1)
            return y;
        else if constexpr (leaf == 2)
            return z;
        else if constexpr (leaf == 3)
            return z * 0.5f;
        else
            return z * 0.25f;
    } else {
        constexpr std::uint64_t a = next(next(S)), b = second(S);
        constexpr unsigned op = pick(next(S), 12);
        if constexpr (op == 0)
            return -gen<a, D - 1>(x, y, z);
        else if constexpr (op == 1)
            return xtrace::abs(gen<a, D - 1>(x, y, z));
        else if constexpr (op == 2)
            return xtrace::square(gen<a, D - 1>(x, y, z));
        else if constexpr (op == 3)
            return xtrace::relu(gen<a, D - 1>(x, y, z));
        else if constexpr (op == 4)
            return gen<a, D - 1>(x, y, z) + gen<b, D - 1>(x, y, z);
        else if constexpr (op == 5)
            return gen<a, D - 1>(x, y, z) - gen<b, D - 1>(x, y, z);
        else if constexpr (op == 6)
            return gen<a, D - 1>(x, y, z) * gen<b, D - 1>(x, y, z);
        else if constexpr (op == 7)
            return xtrace::minimum(gen<a, D - 1>(x, y, z), gen<b, D - 1>(x, y, z));
        else if constexpr (op == 8)
            return xtrace::maximum(gen<a, D - 1>(x, y, z), gen<b, D - 1>(x, y, z));
        else if constexpr (op == 9)
            return xtrace::exp(xtrace::minimum(gen<a, D - 1>(x, y, z), 20.f));
        else if constexpr (op == 10)
            return xtrace::tanh(gen<a, D - 1>(x, y, z));
        else
            return xtrace::sigmoid(gen<a, D - 1>(x, y, z));
    }
}

bool agree(const xt::xarray<float>& a, const xt::xarray<float>& b, bool exact) {
    if (a.shape() != b.shape())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const float x = a.data()[i], y = b.data()[i];
        if (std::isnan(x) || std::isnan(y)) {
            if (std::isnan(x) != std::isnan(y))
                return false;
        } else if (exact ? std::memcmp(&x, &y, sizeof x) != 0
                         : !(x == y || std::abs(x - y) <= 1e-4f * (1 + std::abs(x)))) {
            return false;
        }
    }
    return true;
}

// Programs of the set that static fusion compiles (the rest, e.g. a bare argument, do not
// qualify and run through the interpreter on both traced paths).
int fused_programs = 0;
// Programs whose reduction reads a compiled piece.
int pieces_run = 0;
// Of those, programs whose piece folded into the reduction.
int folded_runs = 0;
// Plans that ran in row tiles.
int tiled_runs = 0;
// Normalised programs whose last step's piece computes x - mean again.
int recomputing_pieces = 0;
// Programs with an op of twin operands.
int twin_programs = 0;

template <std::uint64_t S>
void run_program() {
    constexpr int depth = 4;
    auto f =
        xtrace::function([](auto x, auto y, auto z) { return gen<S, depth>(x, y, z); }, quiet());
    using G = xtrace::graph_t<decltype(f), xt::xarray<float>, xt::xarray<float>, xt::xarray<float>>;
    fused_programs += xtrace::interp::static_fusion::qualifies<G>;
    twin_programs += xtrace::interp::static_fusion::detail::eval<G, 0>::has_twins;
    for (std::size_t n : {std::size_t(1), std::size_t(37), std::size_t(1030)}) {
        xt::xarray<float> x = random_array<float>({n}), y = random_array<float>({n}),
                          z = random_array<float>({n});
        x(0) = -0.f; // signed zeros and NaN ride along
        if (n > 1)
            y(1) = std::numeric_limits<float>::quiet_NaN();
        auto [traced, eager] = both_paths(f, x, y, z); // fused vs interpreter checked inside
        INFO("program seed " << S << " (" << xtrace::inspect::to_string<G>() << "), n = " << n);
        CHECK(agree(traced, eager, !inexact<S, depth>()));
    }
    // A strided z stops the whole-program kernel: the interpreter runs the program's compiled
    // pieces instead (z is then a leaf it gathers), here and under a sum that reduces inside the
    // same region. Each must give what the interpreter gives op by op.
    // The reduction (a sum, maximum or mean by seed) folds the piece it reads into its kernel.
    auto summed = xtrace::function(
        [](auto x, auto y, auto z) {
            constexpr unsigned which = pick(next(next(next(next(S)))), 3);
            if constexpr (which == 0)
                return xtrace::sum(gen<S, depth>(x, y, z), {0});
            else if constexpr (which == 1)
                return xtrace::max(gen<S, depth>(x, y, z), {0});
            else
                return xtrace::mean(gen<S, depth>(x, y, z), {0});
        },
        quiet());
    auto by_op = [](const auto& fn) {
        return xtrace::function(fn.lambda(), quiet(xtrace::options{.static_fusion = false}));
    };
    const xt::xarray<float> x = random_array<float>({1030}), y = random_array<float>({1030}),
                            every_other = random_array<float>({2060});
    const auto z = xt::view(every_other, xt::range(0, 2060, 2));
    INFO("program seed " << S << " (" << xtrace::inspect::to_string<G>() << "), z strided");
    CHECK(agree(f(x, y, z), by_op(f)(x, y, z), !inexact<S, depth>()));
    // Float sums are compared within a tolerance: the blocks they add up by may differ.
    CHECK(agree(summed(x, y, z), by_op(summed)(x, y, z), false));
    // Row by row (e less its row's maximum, which stores e between two steps): in tiles of one
    // row it must give what the whole call gives (bit for bit for exact ops: a maximum does not
    // round; transcendentals may take a batch or a scalar form as blocks end elsewhere).
    auto centred = [](auto x, auto y, auto z) {
        auto e = gen<S, depth>(x, y, z);
        return e - xtrace::max(e, {1}, xtrace::keep_dims);
    };
    const xt::xarray<float> a = random_array<float>({13, 37}), b = random_array<float>({13, 37}),
                            c = random_array<float>({13, 37});
    auto in_tiles = [&](std::size_t budget) {
        const xtrace::plan::row_tile_scope tiles(budget);
        auto fn = xtrace::function(centred, quiet());
        tiled_runs +=
            fn.get_concrete_function(xtrace::spec<float>({13, 37}), xtrace::spec<float>({13, 37}),
                                     xtrace::spec<float>({13, 37}))
                .plan_text()
                .find("runs in tiles of 1 rows") != std::string::npos;
        return xt::xarray<float>(fn(a, b, c));
    };
    CHECK(agree(in_tiles(1), in_tiles(0), !inexact<S, depth>()));
    // Rows less their mean, scaled by their mean square, into the program: its pieces in the
    // last step compute x - mean again (an earlier step stored it for the mean square) and read
    // the per-row values as row splats. Means add up by blocks: compared within a tolerance.
    auto normalised = [](auto x, auto y, auto z) {
        auto d = x - xtrace::mean(x, {1}, xtrace::keep_dims);
        return gen<S, depth>(d * (xtrace::mean(d * d, {1}, xtrace::keep_dims) + 1.f), y, z);
    };
    {
        const xtrace::plan::row_splat_scope splats(1);
        auto fn = xtrace::function(normalised, quiet());
        CHECK(agree(fn(a, b, c), by_op(fn)(a, b, c), false));
        const std::string plan =
            fn.get_concrete_function(xtrace::spec<float>({13, 37}), xtrace::spec<float>({13, 37}),
                                     xtrace::spec<float>({13, 37}))
                .plan_text();
        recomputing_pieces +=
            plan.find("fused") != std::string::npos && plan.find("= sub(") == plan.rfind("= sub(");
    }
    const std::string summed_plan =
        summed
            .get_concrete_function(xtrace::spec<float>({1030}), xtrace::spec<float>({1030}),
                                   xtrace::spec<float>({1030}))
            .plan_text();
    pieces_run += summed_plan.find("fused") != std::string::npos;
    // On whole SIMD batches the piece folds into the reduction.
    const xt::xarray<float> x2 = random_array<float>({1024}), y2 = random_array<float>({1024}),
                            z2 = random_array<float>({1024});
    CHECK(agree(summed(x2, y2, z2), by_op(summed)(x2, y2, z2), false));
    folded_runs +=
        summed
            .get_concrete_function(xtrace::spec<float>({1024}), xtrace::spec<float>({1024}),
                                   xtrace::spec<float>({1024}))
            .plan_text()
            .find("folded into") != std::string::npos;
}

template <std::uint64_t... Seeds>
void run_all(std::integer_sequence<std::uint64_t, Seeds...>) {
    (run_program<next(Seeds * 7919 + 17)>(), ...);
}

} // namespace

TEST_CASE("random elementwise programs agree: static fusion, interpreter and eager") {
    run_all(std::make_integer_sequence<std::uint64_t, 24>{});
    CHECK(fused_programs >= 16);
    INFO(pieces_run << " of 24 programs ran a piece");
    CHECK(pieces_run >= 12);
    CHECK(folded_runs >= 12);
    CHECK(tiled_runs >= 12); // of 24 (the others run untiled: a budget of 0)
    INFO(recomputing_pieces << " of 24 normalised programs computed x - mean again");
    CHECK(recomputing_pieces >= 16);
    INFO(twin_programs << " of 24 programs had twin operands");
    CHECK(twin_programs >= 6);
}
