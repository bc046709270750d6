// cond as If, while_loop as Loop, scan as Scan (trip counts known only at run time,
// maximum_iterations, zero iterations, captures, nesting), gradient graphs, and the graphs ONNX
// cannot hold: each refused with a model_error that names the node.

#include "onnx/support.hpp"

using namespace xtrace::testing;

TEST_CASE("cond becomes If and takes the same branch") {
    auto f = xtrace::function(
        [](auto x, auto y) {
            return xtrace::cond(
                xtrace::sum(x) > 0.f, [&] { return std::make_tuple(x * y, xtrace::exp(y)); },
                [&] { return std::make_tuple(x - y, y + 1.f); });
        },
        quiet());
    for (int trial = 0; trial < 6; ++trial) {
        const auto s = random_shape(3);
        round_trip(f, random_array<float>(s), random_array<float>(broadcastable_to(s)));
    }
}

TEST_CASE("while_loop becomes Loop: a trip count known only at run time") {
    auto f = xtrace::function(
        [](auto x, auto y, auto limit) {
            return xtrace::while_loop([&](auto v) { return xtrace::sum(v) < limit; },
                                      [&](auto v) { return v * 2.f + y; }, x);
        },
        quiet());
    for (int trial = 0; trial < 8; ++trial) {
        const auto s = random_shape(3);
        const xt::xarray<float> limit =
            float(std::uniform_int_distribution<int>(-5, 300)(rng())); // 0 iterations too
        round_trip(f, random_array<float>(s, 1, 3), random_array<float>(broadcastable_to(s), 0, 2),
                   limit);
    }
}

TEST_CASE("several loop variables, maximum_iterations and a cond in the body") {
    auto f = xtrace::function(
        [](auto x, auto n, auto start) {
            return xtrace::while_loop([&](auto i, auto) { return i < n; },
                                      [&](auto i, auto v) {
                                          auto next = xtrace::cond(
                                              xtrace::sum(v) > 0.f, [&] { return v * 0.5f - 1.f; },
                                              [&] { return v + xtrace::cast<float>(i); });
                                          return std::make_tuple(i + 1, next);
                                      },
                                      start, x, xtrace::maximum_iterations(7));
        },
        quiet());
    for (std::int32_t n : {0, 3, 20})
        round_trip(f, random_array<float>({4, 2}), xt::xarray<std::int32_t>(n),
                   xt::xarray<std::int32_t>(0));
}

TEST_CASE("scan becomes Scan: several carries and scanned tensors, a capture, zero steps") {
    auto f = xtrace::function(
        [](auto h0, auto xs, auto us, auto w) {
            return xtrace::scan(
                [&](auto h, auto count, auto x, auto u) {
                    auto next = xtrace::tanh(h * w + x * u);
                    return std::make_tuple(next, count + 1, next * 2.f, xtrace::sum(x) > 0.f);
                },
                std::make_tuple(h0, xtrace::cast<std::int64_t>(xtrace::sum(h0) * 0.f)),
                std::make_tuple(xs, us));
        },
        quiet());
    for (std::size_t steps : {0, 1, 5}) {
        const std::size_t width = 1 + steps % 3;
        round_trip(f, random_array<float>({width}), random_array<float>({steps, width}),
                   random_array<float>({steps, 1}), random_array<float>({width}));
    }
}

TEST_CASE("switch_case (a chain of conds) round-trips") {
    auto f = xtrace::function(
        [](auto i, auto x) {
            return xtrace::switch_case(
                i, [&] { return x + 1.f; }, [&] { return x * x; }, [&] { return -x; });
        },
        quiet());
    for (std::int32_t i : {-1, 0, 1, 2, 5})
        round_trip(f, xt::xarray<std::int32_t>(i), random_array<float>({3}));
}

TEST_CASE("a gradient graph round-trips, its sums back through broadcasting included") {
    auto loss = [](auto w, auto x) { return xtrace::sum(xtrace::tanh(x * w) * x); };
    auto f = xtrace::function(xtrace::value_and_grad(loss, xtrace::argnums<0>), quiet());
    const xt::xarray<double> w = random_array<double>({3});
    const xt::xarray<double> x = random_array<double>({5, 3});
    const auto expected = f(w, x);
    const std::string bytes = xtrace::onnx::export_model(f, w, x);
    validate_with_onnx(bytes);
    check_identical(expected, xtrace::onnx::load_bytes(bytes)(w, x));
}

TEST_CASE("a while_loop's gradient round-trips: a Scan over a ConstantOfShape of the trip count") {
    auto loss = [](auto x, auto c) {
        auto v = xtrace::while_loop([](auto s) { return xtrace::sum(s) < 10.0; },
                                    [&](auto s) { return s * 1.1 + xtrace::sin(c); }, x);
        return xtrace::sum(v * v);
    };
    auto f = xtrace::function(xtrace::value_and_grad(loss, xtrace::argnums<0, 1>), quiet());
    const xt::xarray<double> c = random_array<double>({3}, 0.2, 1.0);
    const std::string bytes = xtrace::onnx::export_model(f, c, c);
    CHECK(bytes.find("ConstantOfShape") != std::string::npos);
    validate_with_onnx(bytes);
    const auto m = xtrace::onnx::load_bytes(bytes);
    for (double shift : {20.0, 3.0, 0.0}) { // 0, 1 and several iterations
        const xt::xarray<double> x = random_array<double>({3}, 0.0, 1.0) + shift;
        check_identical(f(x, c), m(x, c));
    }
}

TEST_CASE("print, host_function, variable assignments and variable arguments are refused") {
    const xt::xarray<float> x = random_array<float>({3});
    auto printing = xtrace::function(
        [](auto v) {
            xtrace::print("v is", v);
            return v + 1.f;
        },
        quiet());
    CHECK_THROWS_WITH(xtrace::onnx::export_model(printing, x),
                      Catch::Matchers::Contains("(print)") &&
                          Catch::Matchers::Contains("side effect"));
    auto host = xtrace::function(
        [](auto v) {
            return xtrace::host_function([](const xt::xarray<float>& a) { return a; },
                                         xtrace::spec<float>({3}), v);
        },
        quiet());
    CHECK_THROWS_AS(xtrace::onnx::export_model(host, x), xtrace::model_error);
    CHECK_THROWS_WITH(xtrace::onnx::export_model(host, x),
                      Catch::Matchers::Contains("(host_function)"));
    xtrace::variable<float> counter(xt::xarray<float>::from_shape({3}), "counter");
    auto assigning = xtrace::function(
        [&](auto v) {
            counter.assign(v);
            return v * 2.f;
        },
        quiet());
    CHECK_THROWS_WITH(xtrace::onnx::export_model(assigning, x),
                      Catch::Matchers::Contains("(assign_variable)") &&
                          Catch::Matchers::Contains("'counter'"));
    auto reading = xtrace::function([](auto v, auto w) { return v * w.read(); }, quiet());
    CHECK_THROWS_WITH(xtrace::onnx::export_model(reading, x, counter),
                      Catch::Matchers::Contains("(read_variable)") &&
                          Catch::Matchers::Contains("passed as an argument"));
    // The functions still work after the refusals.
    CHECK(identical(xt::xarray<float>(assigning(x)), xt::xarray<float>(x * 2.f)));
    CHECK(identical(xt::xarray<float>(reading(x, counter)), xt::xarray<float>(x * x)));
}
