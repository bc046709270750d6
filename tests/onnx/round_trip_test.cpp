// Every op family exported to ONNX and loaded back: ONNX's checker and shape inference accept
// the models, and the loaded model computes the same bits as the traced function, on random
// shapes (rank 0 and size 0 included), with exact and with unknown dims.

#include "onnx/support.hpp"

using namespace xtrace::testing;

namespace {

template <class T>
void elementwise_numeric() {
    const double lo = std::is_integral_v<T> ? -20 : -3, hi = std::is_integral_v<T> ? 20 : 3;
    auto f = xtrace::function(
        [](auto x, auto y) {
            auto s = x + y, d = x - y, p = x * y;
            auto m = xtrace::minimum(x, y) + xtrace::maximum(x, y) * xtrace::square(x);
            auto u = -xtrace::abs(x) + xtrace::relu(y) + xtrace::floor(x) + xtrace::ceil(y) +
                     xtrace::round(x);
            auto c = xtrace::clip(x, y, y + y);
            auto w = xtrace::where(x < y, x, y) + xtrace::where(x <= y, y, x) +
                     xtrace::where(x > y, s, d) + xtrace::where(x >= y, p, m);
            auto b = (x == y) ^ (x != y);
            return std::make_tuple(s, d, p, m, u, c, w, b, xtrace::cast<double>(x),
                                   xtrace::cast<std::int32_t>(y), xtrace::cast<bool>(x));
        },
        quiet());
    for (int trial = 0; trial < 6; ++trial) {
        auto sa = random_shape();
        auto sb = broadcastable_to(sa);
        if (trial % 2)
            std::swap(sa, sb);
        INFO("shapes " << shape_text(sa) << " and " << shape_text(sb));
        round_trip(f, random_array<T>(sa, lo, hi), random_array<T>(sb, lo, hi));
    }
}

} // namespace

TEST_CASE("arithmetic, comparisons, clip, where and casts round-trip on every numeric dtype") {
    elementwise_numeric<float>();
    elementwise_numeric<double>();
    elementwise_numeric<std::int32_t>();
    elementwise_numeric<std::int64_t>();
}

TEST_CASE("float functions round-trip") {
    auto f = xtrace::function(
        [](auto x, auto y) {
            auto a = xtrace::abs(x) + 0.5f;
            return std::make_tuple(xtrace::exp(x), xtrace::log(a), xtrace::sqrt(a),
                                   xtrace::rsqrt(a), xtrace::sin(x), xtrace::cos(y),
                                   xtrace::tanh(x), xtrace::sigmoid(y), xtrace::erf(x), x / y,
                                   xtrace::pow(a, y));
        },
        quiet());
    for (int trial = 0; trial < 6; ++trial) {
        const auto s = random_shape();
        round_trip(f, random_array<float>(s), random_array<float>(broadcastable_to(s)));
    }
}

TEST_CASE("integer division and powers round-trip") {
    auto f = xtrace::function(
        [](auto x, auto y) { return std::make_tuple(x / y, xtrace::pow(x, y)); }, quiet());
    const auto s = random_shape();
    xt::xarray<std::int64_t> y = random_array<std::int64_t>(s, 1, 5);
    round_trip(f, random_array<std::int64_t>(s, -30, 30), y);
}

TEST_CASE("logical ops round-trip") {
    auto f = xtrace::function(
        [](auto x, auto y) {
            return std::make_tuple(x & y, x | y, x ^ y, !x, x == y, x != y,
                                   xtrace::where(x, y, !y));
        },
        quiet());
    for (int trial = 0; trial < 4; ++trial) {
        const auto s = random_shape();
        round_trip(f, random_array<bool>(s), random_array<bool>(broadcastable_to(s)));
    }
}

TEST_CASE("reductions round-trip over any axes, kept or dropped") {
    for (int trial = 0; trial < 10; ++trial) {
        auto s = random_shape(3);
        if (s.empty())
            s = {3};
        std::vector<std::int64_t> axes;
        for (std::size_t d = 0; d < s.size(); ++d)
            if (trial % 3 == 0 || std::uniform_int_distribution<int>(0, 1)(rng()))
                axes.push_back(static_cast<std::int64_t>(d));
        INFO("shape " << shape_text(s) << ", " << axes.size() << " axes");
        auto f = xtrace::function(
            [axes](auto x) {
                return std::make_tuple(xtrace::sum(x, axes), xtrace::mean(x, axes),
                                       xtrace::max(x, axes, xtrace::keep_dims),
                                       xtrace::min(x, axes), xtrace::prod(x, axes), xtrace::sum(x));
            },
            quiet());
        round_trip(f, random_array<float>(s));
        round_trip(f, random_array<std::int32_t>(s, -4, 4));
    }
}

TEST_CASE("shape ops and matmul round-trip") {
    auto f = xtrace::function(
        [](auto x, auto y) {
            auto t = xtrace::transpose(x);                                // [4, 3]
            auto r = xtrace::reshape(x, {-1});                            // [12]
            auto e = xtrace::expand_dims(r, 0);                           // [1, 12]
            auto q = xtrace::squeeze(e, 0);                               // [12]
            auto b = xtrace::broadcast_to(y, {2, 3, 4});                  // [2, 3, 4]
            auto m = xtrace::matmul(x, t);                                // [3, 3]
            auto bm = xtrace::matmul(b, xtrace::transpose(b, {0, 2, 1})); // [2, 3, 3]
            return std::make_tuple(t, q, b, m, bm, xtrace::reshape(x, {2, 6}));
        },
        quiet());
    round_trip(f, random_array<float>({3, 4}), random_array<float>({4}));
    round_trip(f, random_array<std::int64_t>({3, 4}, -5, 5),
               random_array<std::int64_t>({4}, -5, 5));
}

TEST_CASE("size-0 and rank-0 tensors round-trip") {
    auto f = xtrace::function(
        [](auto x, auto y) { return std::make_tuple(x * y + 1.f, xtrace::sum(x), xtrace::exp(y)); },
        quiet());
    round_trip(f, xt::xarray<float>::from_shape({0, 3}), random_array<float>({3}));
    round_trip(f, random_array<float>({}), random_array<float>({}));
    round_trip(f, xt::xarray<float>::from_shape({2, 0}), random_array<float>({}));
}

TEST_CASE("softmax and logsumexp round-trip") {
    auto f = xtrace::function(
        [](auto x) { return std::make_tuple(xtrace::softmax(x), xtrace::logsumexp(x, 0)); },
        quiet());
    round_trip(f, random_array<float>({5, 7}, -30, 30));
    round_trip(f, random_array<double>({2, 3}));
}

TEST_CASE("variables become initializers holding their current values") {
    xtrace::variable<float> w(random_array<float>({3, 2}), "w");
    xtrace::variable<float> b(random_array<float>({2}), "bias");
    auto f =
        xtrace::function([&](auto x) { return xtrace::matmul(x, w.read()) + b.read(); }, quiet());
    const xt::xarray<float> x = random_array<float>({4, 3});
    round_trip(f, x);
    const std::string before = xtrace::onnx::export_model(f, x);
    w.assign(xt::xarray<float>(random_array<float>({3, 2})));
    const auto m = xtrace::onnx::load_bytes(before);
    const auto saved = m(x)[0].as<float>();
    CHECK(!identical(saved, f(x))); // the file holds the value when it was written
    round_trip(f, x);
}

TEST_CASE("a concrete function saved to a file loads back with its names and signature") {
    auto f = xtrace::function([](auto x, auto y) { return std::make_tuple(x * y, x - y); },
                              quiet(xtrace::options{.name = "scale"}));
    const auto cf =
        f.get_concrete_function(xtrace::spec<double>({-1, 2}), xtrace::spec<double>({2}));
    const auto path = std::filesystem::temp_directory_path() / "xtrace_round_trip_test.onnx";
    xtrace::onnx::save(cf, path);
    const auto m = xtrace::onnx::load(path);
    std::filesystem::remove(path);
    CHECK(m.input_names() == std::vector<std::string>{"x0", "x1"});
    CHECK(m.output_names() == std::vector<std::string>{"y0", "y1"});
    CHECK(m.signature() ==
          "(x0: float64[?,2], x1: float64[2]) -> (y0: float64[?,2], y1: float64[?,2])");
    CHECK(m.name() == "model 'scale'");
    CHECK(m.opset() == xtrace::onnx::export_opset);
    const xt::xarray<double> x = random_array<double>({5, 2}), y = random_array<double>({2});
    check_identical(cf(x, y), m(x, y));
    check_identical(f(x, y), m.run({xtrace::onnx::value(x), xtrace::onnx::value(y)}));
    CHECK(m.stats().calls == 2);
    CHECK(m.stats().cache_hits == 1);
    CHECK_THROWS_AS(xtrace::onnx::load(path), std::system_error); // removed
}
