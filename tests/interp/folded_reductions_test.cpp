// A fused piece read only by a reduction over its innermost dims folds into it: its kernel
// reduces the elements it computes instead of storing them for the reduction to read them back.
// Every reduction must give what the interpreter gives op by op and what xtensor gives, on every
// dtype and shape, and the same bits on any number of threads.

#include "support/eager_scope.hpp"
#include "support/plans.hpp"
#include "support/testing.hpp"

#include <xtrace/ext/xtensor_extras.hpp>

#include <string>
#include <vector>

using namespace xtrace::testing;

namespace {

enum reduction { sum, mean, max, min, prod };
constexpr const char* names[] = {"sum", "mean", "max", "min", "prod"};

template <reduction R, class E>
auto reduce(const E& e, const std::vector<std::int64_t>& axes) {
    if constexpr (R == sum)
        return xtrace::sum(e, axes);
    else if constexpr (R == mean)
        return xtrace::mean(e, axes);
    else if constexpr (R == max)
        return xtrace::max(e, axes);
    else if constexpr (R == min)
        return xtrace::min(e, axes);
    else
        return xtrace::prod(e, axes);
}

// xtensor's reduction of the same elements: the independent result.
template <reduction R, class T>
xt::xarray<T> expected(const xt::xarray<T>& e, const std::vector<std::size_t>& axes) {
    if constexpr (R == sum)
        return xt::sum(e, axes);
    else if constexpr (R == mean)
        return xt::mean(e, axes);
    else if constexpr (R == max)
        return xt::amax(e, axes);
    else if constexpr (R == min)
        return xt::amin(e, axes);
    else
        return xt::prod(e, axes);
}

template <class F>
auto by_op(const F& f) {
    return xtrace::function(f.lambda(), quiet(xtrace::options{.static_fusion = false}));
}

// The innermost `reduced` dims of `shape`, as xtrace and xtensor take them.
std::vector<std::int64_t> innermost(std::size_t rank, std::size_t reduced) {
    std::vector<std::int64_t> axes;
    for (std::size_t d = rank - reduced; d < rank; ++d)
        axes.push_back(static_cast<std::int64_t>(d));
    return axes;
}

// The pieces that fold, on xtrace's tensors and on xtensor's: one of ops the compiler inlines,
// and one of library calls, which a kernel evaluates op by op across its batches.
struct inlined_piece {
    template <class X, class Y>
    auto operator()(const X& x, const Y& y) const {
        return x * y + x;
    }
};
struct calling_piece {
    template <class X, class Y>
    auto operator()(const X& x, const Y& y) const {
        return exp((x - y) * 0.5) * tanh(y) + x;
    }
};

// Reductions of the tests above that a piece folded into.
std::size_t folded = 0;

template <reduction R, class T, class Piece = inlined_piece>
void check_reduction() {
    // Values near 1 keep a product of thousands of them finite.
    const double lo = R == prod ? 0.9 : -3, hi = R == prod ? 1.1 : 3;
    for (const std::vector<std::size_t>& shape :
         std::vector<std::vector<std::size_t>>{{1},
                                               {37},
                                               {1030},
                                               {64},
                                               {4, 0},
                                               {0, 5},
                                               {17, 65},
                                               {3, 128},
                                               {3, 5, 70},
                                               {2, 4, 32},
                                               random_shape(3)}) {
        if (shape.empty())
            continue;
        for (std::size_t reduced = 1; reduced <= shape.size(); ++reduced) {
            const std::vector<std::int64_t> axes = innermost(shape.size(), reduced);
            auto f = xtrace::function(
                [axes](auto x, auto y) { return reduce<R>(Piece{}(x, y), axes); }, quiet());
            const xt::xarray<T> x = random_array<T>(shape, lo, hi),
                                y = random_array<T>(shape, lo, hi);
            std::string dims;
            for (std::size_t d : shape)
                dims += std::to_string(d) + ' ';
            INFO(names[R] << " over the " << reduced << " innermost dims of [ " << dims << "], "
                          << xtrace::dtype_name(xtrace::dtype_of_v<T>));
            const xt::xarray<T> traced = f(x, y);
            const auto u = std::vector<std::size_t>(axes.begin(), axes.end());
            // A maximum or minimum is exact where the elements are (a library call's elements
            // may differ by an ulp between xsimd and the standard library).
            const bool exact = !std::is_floating_point_v<T> ||
                               ((R == max || R == min) && std::is_same_v<Piece, inlined_piece>);
            std::size_t count = 1; // elements per result
            for (std::size_t d : u)
                count *= shape[d];
            if (x.size() > 0) {
                const xt::xarray<T> independent = expected<R>(xt::xarray<T>(Piece{}(x, y)), u);
                CHECK(close(traced, independent, exact ? 0 : 64, exact ? 0 : 1e-4));
            } else if (R == sum || R == prod) { // (xtensor does not reduce an empty array)
                CHECK(std::all_of(traced.begin(), traced.end(),
                                  [](T v) { return v == (R == sum ? T(0) : T(1)); }));
            }
            CHECK(close(traced, by_op(f)(x, y), exact ? 0 : 16, exact ? 0 : 1e-5));
            auto [again, eager] = both_paths(f, x, y);
            CHECK(same_bits(xt::xarray<T>(again), traced));
            CHECK(close(traced, eager, exact ? 0 : 64, exact ? 0 : 1e-4));
            const std::string plan =
                f.get_concrete_function(
                     xtrace::spec<T>(std::vector<std::int64_t>(shape.begin(), shape.end())),
                     xtrace::spec<T>(std::vector<std::int64_t>(shape.begin(), shape.end())))
                    .plan_text();
            INFO(plan);
            // A piece folds when its rows are whole SIMD batches. (Integer ops run one by one:
            // no piece to fold.)
            const bool whole = count % xtrace::simd::batch<T>::size == 0;
            CHECK(count_of(plan, "folded into") == (whole ? count_of(plan, "fused") : 0));
            folded += count_of(plan, "folded into");
        }
    }
}

template <reduction R>
void check_dtypes() {
    check_reduction<R, float>();
    check_reduction<R, double>();
    check_reduction<R, std::int32_t>();
    // (Not a product: over a thousand elements, the ulp by which a compiled piece's elements
    // may differ from the interpreter's, one rounding fewer, grows past what both_paths allows.)
    if constexpr (R != prod) {
        check_reduction<R, float, calling_piece>();
        check_reduction<R, double, calling_piece>();
    }
}

} // namespace

TEST_CASE("a piece folds into the reduction reading it: every reduction, dtype and shape") {
    check_dtypes<sum>();
    check_dtypes<mean>();
    check_dtypes<max>();
    check_dtypes<min>();
    check_dtypes<prod>();
    // The float and double cases of whole batches among the fixed shapes, for both pieces.
    CHECK(folded >= 5 * 2 * 5 + 4 * 2 * 5);
}

TEST_CASE("a folded reduction gives the same bits on 1, 2 and 8 threads, and strided") {
    auto f = xtrace::function([](auto x, auto y) { return xtrace::sum(x * y + x, {1}); }, quiet());
    const xt::xarray<float> x = random_array<float>({3, 300032}),
                            y = random_array<float>({3, 300032});
    std::vector<xt::xarray<float>> results;
    for (int threads : {1, 2, 8}) {
        auto fn = xtrace::function(f.lambda(), quiet(xtrace::options{.max_threads = threads}));
        results.push_back(fn(x, y));
    }
    CHECK(same_bits(results[0], results[1]));
    CHECK(same_bits(results[0], results[2]));
    CHECK(close(results[0], xt::xarray<float>(xt::sum(x * y + x, {1})), 64, 0.5));
    // A transposed operand is gathered block by block; the sums are the same.
    const xt::xarray<float> xt_ = xt::transpose(x);
    auto g = xtrace::function(
        [](auto x, auto y) { return xtrace::sum(xtrace::transpose(x) * y + y, {1}); }, quiet());
    CHECK(close(g(xt_, y), xt::xarray<float>(xt::sum(x * y + y, {1})), 64, 0.5));
}

TEST_CASE("a piece also read elsewhere is stored as it folds; two reductions do not fold") {
    auto kept = xtrace::function(
        [](auto x, auto y) {
            auto e = x * y + x;
            return std::tuple(e, xtrace::sum(e, {1}));
        },
        quiet());
    auto reread = xtrace::function(
        [](auto x, auto y) {
            auto e = x * y + x;
            return xtrace::sum(e, {1}, xtrace::keep_dims) * xtrace::relu(e);
        },
        quiet());
    auto twice = xtrace::function(
        [](auto x, auto y) {
            auto e = x * y + x;
            return std::tuple(xtrace::sum(e, {1}), xtrace::max(e, {1}));
        },
        quiet());
    auto outer =
        xtrace::function([](auto x, auto y) { return xtrace::sum(x * y + x, {0}); }, quiet());
    const xt::xarray<float> x = random_array<float>({9, 128}), y = random_array<float>({9, 128});
    const xt::xarray<float> e = x * y + x;
    const xt::xarray<float> sums = xt::sum(e, {1});
    auto [v, t] = kept(x, y);
    CHECK(close(v, e, 0, 0));
    CHECK(close(t, sums, 64, 1e-4));
    const xt::xarray<float> sums_kept = xt::view(sums, xt::all(), xt::newaxis());
    CHECK(close(reread(x, y), xt::xarray<float>(sums_kept * xt::maximum(e, 0.f)), 64, 1e-3));
    auto [s, m] = twice(x, y);
    CHECK(close(s, sums, 64, 1e-4));
    CHECK(close(m, xt::xarray<float>(xt::amax(e, {1})), 0, 0));
    CHECK(close(outer(x, y), xt::xarray<float>(xt::sum(e, {0})), 64, 1e-4));
    const auto spec = xtrace::spec<float>({9, 128});
    for (const auto& [plan, folds] : std::vector<std::pair<std::string, std::size_t>>{
             {kept.get_concrete_function(spec, spec).plan_text(), 1},
             {reread.get_concrete_function(spec, spec).plan_text(), 1},
             {twice.get_concrete_function(spec, spec).plan_text(), 0},
             {outer.get_concrete_function(spec, spec).plan_text(), 0}}) {
        INFO(plan);
        CHECK(count_of(plan, "fused") >= 1);
        CHECK(count_of(plan, "folded into") == folds);
    }
}

TEST_CASE("a maximum or minimum finds NaN anywhere, and infinities and huge values of both signs") {
    auto by_max =
        xtrace::function([](auto x, auto y) { return xtrace::max((x + y) - y, {1}); }, quiet());
    auto by_min =
        xtrace::function([](auto x, auto y) { return xtrace::min((x + y) - y, {1}); }, quiet());
    auto stored_max = xtrace::function([](auto x) { return xtrace::max(x, {1}); }, quiet());
    const float nan = std::numeric_limits<float>::quiet_NaN(),
                inf = std::numeric_limits<float>::infinity();
    const std::size_t cols = 336; // runs of four batches, then a batch's tail
    for (std::size_t at : {std::size_t(0), std::size_t(5), std::size_t(70), std::size_t(330)}) {
        for (float odd : {nan, inf, -inf, 3e38f}) {
            xt::xarray<float> x = random_array<float>({4, cols});
            const xt::xarray<float> y =
                xt::zeros<float>({std::size_t(4), cols}); // (x + y) - y is x
            x(1, at) = odd;
            if (odd == 3e38f) // sums of both signs overflow to a NaN: the exact pass decides
                x(2, (at + 7) % cols) = 3e38f, x(2, (at + 11) % cols) = -3e38f,
                                x(2, (at + 13) % cols) = -3e38f;
            INFO("an odd value " << odd << " at column " << at);
            const xt::xarray<float> most = xt::amax(x, {1}), least = xt::amin(x, {1});
            const xt::xarray<float> got_max = by_max(x, y), got_min = by_min(x, y),
                                    got_stored = stored_max(x);
            for (std::size_t r = 0; r < 4; ++r) {
                if (std::isnan(odd) && r == 1) {
                    CHECK(std::isnan(got_max(r)));
                    CHECK(std::isnan(got_min(r)));
                    CHECK(std::isnan(got_stored(r)));
                } else {
                    CHECK(got_max(r) == most(r));
                    CHECK(got_min(r) == least(r));
                    CHECK(got_stored(r) == most(r));
                }
            }
        }
    }
}

TEST_CASE("a piece that stores over its operand and folds into a maximum rereads what it stored") {
    // p is an output written into x's donated buffer as the maximum folds it. In row 0, sums of
    // both signs overflow to NaN, so the maximum takes its exact second pass, which must read p
    // as stored: x is gone by then.
    auto f = xtrace::function(
        [](auto x) {
            auto p = x * 0.5f + 1.f;
            return std::tuple(p, xtrace::max(p, {1}));
        },
        quiet());
    // Element c of a run goes to accumulator (c / w) % 4, lane c % w: three huge values of each
    // sign in lane 0 of accumulators 0 and 1 make +inf and -inf there.
    constexpr std::size_t w = xtrace::simd::batch<float>::size;
    xt::xarray<float> x = random_array<float>({2, 13 * w}); // whole batches: it folds
    for (std::size_t k = 0; k < 3; ++k) {
        x(0, k * 4 * w) = 3e38f;
        x(0, k * 4 * w + w) = -3e38f;
    }
    const xt::xarray<float> p = x * 0.5f + 1.f;
    const xt::xarray<float> most = xt::amax(p, {1});
    const float* buffer = x.data();
    auto [stored, got] = f(std::move(x));
    CHECK(stored.data() == buffer); // the case under test: p over x
    CHECK(close(stored, p, 0, 0));
    CHECK(close(got, most, 0, 0));
}
