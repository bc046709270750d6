// host_function whose result dims are known only when its callback returns (tf.py_function has
// no static output shape): the graph runs in stages, each planned once its shapes are known.

#include "support/eager_scope.hpp"
#include "support/testing.hpp"

#include <xtrace/ext/xtensor_extras.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace xtrace::testing;

namespace {

// The distinct values of a, sorted: what xt::unique would give, written out.
xt::xarray<float> sorted_unique(const xt::xarray<float>& a) {
    const std::set<float> s(a.begin(), a.end());
    xt::xarray<float> out = xt::xarray<float>::from_shape({s.size()});
    std::copy(s.begin(), s.end(), out.begin());
    return out;
}

// The positive elements of a, in order.
xt::xarray<float> positives(const xt::xarray<float>& a) {
    std::vector<float> v;
    for (float x : a)
        if (x > 0.f)
            v.push_back(x);
    xt::xarray<float> out = xt::xarray<float>::from_shape({v.size()});
    std::copy(v.begin(), v.end(), out.begin());
    return out;
}

// Integers in [0, 5) as floats: duplicates are likely.
xt::xarray<float> small_integers(std::size_t n, unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_int_distribution<int> d(0, 4);
    xt::xarray<float> a = xt::xarray<float>::from_shape({n});
    for (float& x : a)
        x = static_cast<float>(d(gen));
    return a;
}

} // namespace

TEST_CASE("tf.py_function's unknown output shape: a sort that drops duplicates, one trace for "
          "every result length") {
    auto f = xtrace::function(
        [](auto x) {
            auto u = xtrace::host_function(sorted_unique, xtrace::spec<float>({-1}), x * 1.f);
            return u * 2.f + xtrace::sum(x);
        },
        quiet());
    for (unsigned seed = 0; seed < 12; ++seed) {
        const xt::xarray<float> x = small_integers(6 + seed % 3, seed);
        const xt::xarray<float> expected = sorted_unique(x) * 2.f + xt::sum(x)();
        auto [traced, eager] = both_paths(f, x);
        CHECK(close(traced, expected));
        CHECK(close(eager, expected));
    }
    CHECK(f.tracing_count() == 3); // one per argument length (6, 7, 8), not per result length
}

TEST_CASE("the stage after the callback is planned once per shape the callback returns") {
    auto f = xtrace::function(
        [](auto x) { return xtrace::host_function(positives, xtrace::spec<float>({-1}), x) + 1.f; },
        quiet());
    auto cf = f.get_concrete_function(xtrace::spec<float>({4}));
    const auto& stages = *cf.trace().stages;
    REQUIRE(stages.stages().size() == 2);
    CHECK(close(cf(xt::xarray<float>{1.f, -2.f, 3.f, -4.f}), xt::xarray<float>{2.f, 4.f}));
    // The second stage reads the call's argument and the callback's result.
    const std::vector<xtrace::shape_t> two{{4}, {2}};
    const auto planned = stages.plan_for(1, two);
    CHECK(stages.plan_for(1, two) == planned); // cached
    CHECK(close(cf(xt::xarray<float>{5.f, 6.f, -1.f, -1.f}), xt::xarray<float>{6.f, 7.f}));
    CHECK(stages.plan_for(1, two) == planned); // the same length reuses it
    CHECK(stages.plan_for(1, std::vector<xtrace::shape_t>{{4}, {3}}) != planned);
    CHECK(cf.plan_text().find("stage 1 of 2") != std::string::npos);
}

TEST_CASE("a filter that keeps nothing gives an empty result, and the rest runs on it") {
    auto f = xtrace::function(
        [](auto x) {
            auto p = xtrace::host_function(positives, xtrace::spec<float>({-1}), x);
            return std::make_tuple(p, xtrace::sum(p * p), xtrace::mean(x));
        },
        quiet());
    for (const xt::xarray<float>& x :
         {xt::xarray<float>{-1.f, 2.f, -3.f, 4.f}, xt::xarray<float>{-1.f, -2.f, -3.f, -4.f},
          xt::xarray<float>{5.f, 6.f, 7.f, 8.f}}) {
        const xt::xarray<float> p = positives(x);
        float squares = 0.f; // by hand: xt::sum of an empty product offsets a null pointer
        for (float v : p)
            squares += v * v;
        auto [traced, eager] = both_paths(f, x);
        for (const auto& r : {traced, eager}) {
            CHECK(std::get<0>(r).shape() == p.shape());
            CHECK(close(std::get<0>(r), p));
            CHECK(close(std::get<1>(r), xt::xarray<float>(squares)));
            CHECK(close(std::get<2>(r), xt::xarray<float>(xt::mean(x))));
        }
    }
    CHECK(f.tracing_count() == 1);
}

TEST_CASE("a row median of any length, as a 2-D result with one unknown dim") {
    // Each row's median, repeated `reps` times along a second dim of run-time length.
    auto f = xtrace::function(
        [](auto x, auto reps) {
            auto medians = xtrace::host_function(
                [](const xt::xarray<double>& a, const xt::xarray<std::int32_t>& r) {
                    const std::size_t rows = a.shape()[0], cols = a.shape()[1];
                    xt::xarray<double> out =
                        xt::xarray<double>::from_shape({rows, static_cast<std::size_t>(r())});
                    for (std::size_t i = 0; i < rows; ++i) {
                        std::vector<double> row(a.begin() + i * cols, a.begin() + (i + 1) * cols);
                        std::sort(row.begin(), row.end());
                        const double m = row.size() % 2
                                             ? row[row.size() / 2]
                                             : (row[row.size() / 2 - 1] + row[row.size() / 2]) / 2;
                        for (std::size_t j = 0; j < out.shape()[1]; ++j)
                            out(i, j) = m;
                    }
                    return out;
                },
                xtrace::spec<double>({static_cast<xtrace::dim_t>(x.shape()[0]), -1}), x, reps);
            return xtrace::transpose(medians) - 1.0;
        },
        quiet());
    const xt::xarray<double> x = {{3., 1., 2.}, {9., 7., 8.}};
    for (std::int32_t r : {0, 1, 3}) {
        const xt::xarray<std::int32_t> reps = r;
        xt::xarray<double> expected = xt::xarray<double>::from_shape({std::size_t(r), 2});
        for (std::int32_t j = 0; j < r; ++j) {
            expected(j, 0) = 1.;
            expected(j, 1) = 7.;
        }
        auto [traced, eager] = both_paths(f, x, reps);
        CHECK(traced.shape() == expected.shape());
        CHECK(close(traced, expected));
        CHECK(close(eager, expected));
    }
}

TEST_CASE("two host functions in a chain; values from before both reach the end") {
    std::vector<std::string> log;
    xtrace::variable<float> v(0.f);
    auto f = xtrace::function(
        [&](auto x) {
            auto early = xtrace::exp(x * 0.5f); // computed in stage 1
            v.assign(xtrace::sum(x));           // an effect before both
            auto p = xtrace::host_function(
                [&](const xt::xarray<float>& a) {
                    log.push_back("filter");
                    return positives(a);
                },
                xtrace::spec<float>({-1}), x);
            auto u = xtrace::host_function(
                [&](const xt::xarray<float>& a) {
                    log.push_back("unique");
                    return sorted_unique(a);
                },
                xtrace::spec<float>({-1}), xtrace::round(p));
            v.assign_add(xtrace::sum(u)); // an effect after both
            return std::make_tuple(u + v.read(), early, p);
        },
        quiet());
    const xt::xarray<float> x = {-1.f, 2.2f, 2.4f, -3.f, 4.f, 1.9f};
    const auto [u, early, p] = f(x);
    const xt::xarray<float> uq = sorted_unique(xt::round(positives(x)));
    const float vv = xt::sum(x)() + xt::sum(uq)();
    CHECK(close(u, xt::xarray<float>(uq + vv)));
    CHECK(close(early, xt::xarray<float>(xt::exp(x * 0.5f))));
    CHECK(close(p, positives(x)));
    CHECK(std::abs(v.value()() - vv) < 1e-4f);
    CHECK(log == std::vector<std::string>{"filter", "unique"});
    // Caller-owned results, and a concrete function: the same numbers.
    xt::xarray<float> a, b, c;
    auto outs = std::tie(a, b, c);
    f.call_into(outs, x);
    CHECK(close(a, xt::xarray<float>(uq + vv))); // v is set again by each call
    CHECK(close(c, positives(x)));
    auto cf = f.get_concrete_function(xtrace::spec<float>({6}));
    CHECK(close(std::get<2>(cf(x)), positives(x)));
}

TEST_CASE("a run-time shape error after the callback names the op; the function still works") {
    auto f = xtrace::function(
        [](auto x) {
            auto p = xtrace::host_function(positives, xtrace::spec<float>({-1}), x);
            return p + x; // broadcasts only when every element is positive (or one is)
        },
        quiet());
    const xt::xarray<float> all = {1.f, 2.f, 3.f};
    CHECK(close(f(all), xt::xarray<float>(all + all)));
    const xt::xarray<float> some = {1.f, -2.f, 3.f};
    try {
        f(some);
        FAIL("expected a shape_error");
    } catch (const xtrace::shape_error& e) {
        CHECK(std::string(e.what()).find("[2]") != std::string::npos);
        CHECK(std::string(e.what()).find("[3]") != std::string::npos);
    }
    CHECK(close(f(all), xt::xarray<float>(all + all)));
}

TEST_CASE("a callback result of the wrong rank is a signature_error; the function still works") {
    bool flat = true;
    auto f = xtrace::function(
        [&](auto x) {
            return xtrace::host_function(
                       [&](const xt::xarray<float>& a) {
                           return flat ? xt::xarray<float>(xt::flatten(a)) : xt::xarray<float>(a);
                       },
                       xtrace::spec<float>({-1}), x) *
                   2.f;
        },
        quiet());
    const xt::xarray<float> x = {{1.f, 2.f}, {3.f, 4.f}};
    CHECK(close(f(x), xt::xarray<float>{2.f, 4.f, 6.f, 8.f}));
    flat = false;
    CHECK_THROWS_AS(f(x), xtrace::signature_error);
    flat = true;
    CHECK(close(f(x), xt::xarray<float>{2.f, 4.f, 6.f, 8.f}));
}

TEST_CASE("inside a control-flow body a spec's dims must be known") {
    auto f = xtrace::function(
        [](auto x) {
            return xtrace::cond(
                xtrace::sum(x) > 0.f,
                [&] { return xtrace::host_function(positives, xtrace::spec<float>({-1}), x); },
                [&] { return x; });
        },
        quiet());
    try {
        f(xt::xarray<float>{1.f, -1.f});
        FAIL("expected a tracing_error");
    } catch (const xtrace::tracing_error& e) {
        CHECK(std::string(e.what()).find("body") != std::string::npos);
    }
}
