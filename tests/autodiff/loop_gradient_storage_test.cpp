// A while_loop's gradient at a function's top level stores each iteration's state: the loop
// becomes a scan over a fill as long as its trip count, run in stages since that length is known
// only when the loop has run. In a body, and on an eager tape, it recomputes instead. Both
// against central finite differences and against each other.

#include "autodiff/finite_differences.hpp"
#include "support/eager_scope.hpp"

using namespace xtrace::testing;

namespace {

// v grows until its sum passes `limit`: the trip count depends on x and on limit.
auto growing = [](auto x, auto c, auto limit) {
    auto v = xtrace::while_loop([&](auto s) { return xtrace::sum(s) < xtrace::sum(limit); },
                                [&](auto s) { return s * 1.02 + xtrace::sin(c) * s * 0.1; }, x);
    return xtrace::sum(xtrace::square(v));
};

// The iterations growing runs from x, by hand.
int trips(const xt::xarray<double>& x, const xt::xarray<double>& c, double limit) {
    xt::xarray<double> s = x;
    int n = 0;
    for (; xt::sum(s)() < limit; ++n)
        s = s * 1.02 + xt::sin(c) * s * 0.1;
    return n;
}

} // namespace

TEST_CASE("a top-level while_loop gradient is a scan over a fill of its trip count") {
    auto g = xtrace::function(xtrace::grad(growing, xtrace::argnums<0, 1>), quiet());
    const auto x = uniform({3}, 0.2, 0.9), c = uniform({3}, 0.1, 0.5);
    const auto text = g.get_concrete_function(x, c, xt::xarray<double>(10.0)).graph_text();
    CHECK(text.find("scan") != std::string::npos);
    CHECK(text.find("host_function") != std::string::npos);
    // A traced loop whose gradient recomputes has a loop nested in its backward loop's body;
    // this one has only the forward loop and the counting loop, at the top level.
    std::size_t loops = 0;
    for (std::size_t at = text.find("while_loop"); at != std::string::npos;
         at = text.find("while_loop", at + 1))
        ++loops;
    CHECK(loops == 2);
}

TEST_CASE("one trace, trip counts from 0 to 70: finite differences, and the eager recomputation") {
    auto g = xtrace::function(xtrace::grad(growing, xtrace::argnums<0, 1>), quiet());
    auto value = xtrace::function(growing, quiet());
    const auto x = uniform({3}, 0.2, 0.9), c = uniform({3}, 0.1, 0.5);
    std::vector<int> seen;
    for (double limit : {0.5, 3.0, 10.0, 1.0, 60.0, 10.0}) {
        const xt::xarray<double> l(limit);
        seen.push_back(trips(x, c, limit));
        const auto [gx, gc] = g(x, c, l);
        const auto [fx, fc, fl] =
            finite_differences([&](const auto& a, const auto& b,
                                   const auto& d) { return [&] { return value(a, b, d)(); }; },
                               x, c, l);
        (void)fl;
        CHECK(near(gx, fx));
        CHECK(near(gc, fc));
        eager_scope eager;
        const auto [ex, ec] = g(x, c, l);
        CHECK(close(ex, gx, 8, 1e-12));
        CHECK(close(ec, gc, 8, 1e-12));
    }
    CHECK(std::ranges::find(seen, 0) != seen.end());
    CHECK(std::ranges::max(seen) >= 40);
    CHECK(g.tracing_count() == 1);
}

TEST_CASE("a loop gradient taken inside a cond branch recomputes, and agrees") {
    auto inside = [](auto x, auto c, auto limit) {
        return xtrace::cond(
            xtrace::sum(c) > -100.0, [&] { return xtrace::gradients(growing(x, c, limit), x); },
            [&] { return x * 0.0; });
    };
    auto top = [](auto x, auto c, auto limit) {
        return xtrace::gradients(growing(x, c, limit), x);
    };
    auto in_branch = xtrace::function(inside, quiet());
    auto at_top = xtrace::function(top, quiet());
    const auto x = uniform({4}, 0.2, 0.9), c = uniform({4}, 0.1, 0.5);
    const auto text = in_branch.get_concrete_function(x, c, xt::xarray<double>(5.0)).graph_text();
    CHECK(text.find("host_function") == std::string::npos);
    for (double limit : {0.5, 5.0, 20.0}) {
        const xt::xarray<double> l(limit);
        const xt::xarray<double> a = in_branch(x, c, l), b = at_top(x, c, l);
        CHECK(close(a, b, 8, 1e-12));
    }
}

TEST_CASE("second order through a stored loop gradient") {
    // d/dx and d/dc of sum(dL/dx * c): a Hessian-vector product of the loop's loss.
    auto hvp = [](auto x, auto c, auto limit) {
        return xtrace::sum(xtrace::gradients(growing(x, c, limit), x) * c);
    };
    const auto x = uniform({3}, 0.2, 0.9), c = uniform({3}, 0.1, 0.5);
    for (double limit : {0.5, 4.0, 12.0})
        check_gradients(hvp, x, c, xt::xarray<double>(limit));
}
