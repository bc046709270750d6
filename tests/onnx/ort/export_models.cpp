// Writes models for ONNX Runtime to run (tests/onnx/ort/run_models.js): every op family that
// export writes, each model beside a JSON file with its inputs and xtrace's outputs.
//   export_models <folder>

#include "support/testing.hpp"

#include <xtrace/onnx.hpp>

#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <sstream>

using namespace xtrace::testing;

namespace {

template <class T>
std::string json_array(const std::string& name, const xt::xarray<T>& a) {
    std::ostringstream os;
    os << std::setprecision(std::numeric_limits<double>::max_digits10);
    os << "{\"name\": \"" << name << "\", \"type\": \"" << xtrace::dtype_name(xtrace::dtype_of_v<T>)
       << "\", \"dims\": [";
    for (std::size_t d = 0; d < a.dimension(); ++d)
        os << (d ? ", " : "") << a.shape()[d];
    os << "], \"data\": [";
    for (std::size_t i = 0; i < a.size(); ++i) {
        os << (i ? ", " : "");
        if constexpr (std::is_same_v<T, bool>)
            os << (a.data()[i] ? "true" : "false");
        else if constexpr (std::is_integral_v<T>)
            os << "\"" << a.data()[i] << "\""; // int64 exceeds JavaScript's exact integers
        else
            os << static_cast<double>(a.data()[i]);
    }
    os << "]}";
    return os.str();
}

std::string json_value(const std::string& name, const xtrace::onnx::value& v) {
    return std::visit([&](const auto& a) { return json_array(name, a); }, v.data());
}

// Exports f for args (dims unknown when `symbolic`), runs the model as xtrace loads it, and
// writes <name>.onnx and <name>.json.
template <class F, class... A>
void write(const std::filesystem::path& dir, const std::string& name, const F& f, bool symbolic,
           const A&... args) {
    const std::string bytes =
        symbolic ? xtrace::onnx::export_model(f, xtrace::spec<typename A::value_type>(
                                                     xtrace::shape_t(args.dimension(), -1))...)
                 : xtrace::onnx::export_model(f, args...);
    std::ofstream(dir / (name + ".onnx"), std::ios::binary) << bytes;
    const auto m = xtrace::onnx::load_bytes(bytes);
    const auto out = m(args...);
    std::ofstream json(dir / (name + ".json"));
    json << "{\"inputs\": [";
    std::size_t k = 0;
    ((json << (k ? ", " : "") << json_array("x" + std::to_string(k), args), ++k), ...);
    json << "], \"outputs\": [";
    for (std::size_t o = 0; o < out.size(); ++o)
        json << (o ? ", " : "") << json_value(m.output_names()[o], out[o]);
    json << "]}\n";
}

template <class T>
void elementwise(const std::filesystem::path& dir, const std::string& name) {
    auto f = xtrace::function(
        [](auto x, auto y) {
            auto s = x + y, d = x - y, p = x * y;
            auto m = xtrace::minimum(x, y) + xtrace::maximum(x, y) * xtrace::square(x);
            auto u = -xtrace::abs(x) + xtrace::relu(y) + xtrace::floor(x) + xtrace::ceil(y);
            auto c = xtrace::clip(x, y, y + y);
            auto w = xtrace::where(x < y, x, y) + xtrace::where(x <= y, y, x) +
                     xtrace::where(x > y, s, d) + xtrace::where(x >= y, p, m);
            return std::make_tuple(s, d, p, m, u, c, w, (x == y) ^ (x != y),
                                   xtrace::cast<double>(x), xtrace::cast<bool>(y));
        },
        quiet());
    const double lo = std::is_integral_v<T> ? -20 : -3, hi = std::is_integral_v<T> ? 20 : 3;
    write(dir, name, f, false, random_array<T>({4, 3}, lo, hi), random_array<T>({3}, lo, hi));
    write(dir, name + "_symbolic", f, true, random_array<T>({2, 5}, lo, hi),
          random_array<T>({5}, lo, hi));
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: export_models <folder>\n";
        return 2;
    }
    const std::filesystem::path dir = argv[1];
    std::filesystem::create_directories(dir);
    elementwise<float>(dir, "elementwise_float32");
    elementwise<double>(dir, "elementwise_float64");
    elementwise<std::int32_t>(dir, "elementwise_int32");
    elementwise<std::int64_t>(dir, "elementwise_int64");

    auto functions = xtrace::function(
        [](auto x, auto y) {
            auto a = xtrace::abs(x) + 0.5f;
            return std::make_tuple(xtrace::exp(x), xtrace::log(a), xtrace::sqrt(a),
                                   xtrace::rsqrt(a), xtrace::sin(x), xtrace::cos(y),
                                   xtrace::tanh(x), xtrace::sigmoid(y), xtrace::erf(y), x / y,
                                   xtrace::pow(a, y), xtrace::round(x * 3.f));
        },
        quiet());
    write(dir, "float_functions", functions, true, random_array<float>({3, 4}),
          random_array<float>({4}, 0.5, 2));

    auto logic = xtrace::function(
        [](auto x, auto y) { return std::make_tuple(x & y, x | y, x ^ y, !x, x == y, x != y); },
        quiet());
    write(dir, "logical", logic, false, random_array<bool>({2, 3}), random_array<bool>({3}));

    const std::vector<std::int64_t> axes{0, 2};
    auto reductions = xtrace::function(
        [axes](auto x) {
            return std::make_tuple(xtrace::sum(x, axes), xtrace::mean(x, axes),
                                   xtrace::max(x, axes, xtrace::keep_dims), xtrace::min(x, {1}),
                                   xtrace::prod(x, axes), xtrace::sum(x));
        },
        quiet());
    write(dir, "reductions", reductions, true, random_array<float>({2, 3, 4}, 0.5, 1.5));
    write(dir, "reductions_int32", reductions, false, random_array<std::int32_t>({2, 3, 2}, -3, 3));

    auto shapes = xtrace::function(
        [](auto x, auto y) {
            auto b = xtrace::broadcast_to(y, {2, 3, 4});
            return std::make_tuple(
                xtrace::transpose(x),
                xtrace::squeeze(xtrace::expand_dims(xtrace::reshape(x, {-1}), 0), 0), b,
                xtrace::matmul(x, xtrace::transpose(x)),
                xtrace::matmul(b, xtrace::transpose(b, {0, 2, 1})), xtrace::softmax(x),
                xtrace::logsumexp(x, 0));
        },
        quiet());
    write(dir, "shapes_matmul_softmax", shapes, false, random_array<float>({3, 4}),
          random_array<float>({4}));

    auto branches = xtrace::function(
        [](auto x, auto y) {
            return xtrace::cond(
                xtrace::sum(x) > 0.f, [&] { return std::make_tuple(x * y, xtrace::exp(y)); },
                [&] { return std::make_tuple(x - y, y + 1.f); });
        },
        quiet());
    write(dir, "cond_then", branches, true, random_array<float>({3, 2}, 0.1, 1),
          random_array<float>({2}));
    write(dir, "cond_else", branches, true, random_array<float>({3, 2}, -1, -0.1),
          random_array<float>({2}));

    auto loop = xtrace::function(
        [](auto x, auto y, auto limit) {
            return xtrace::while_loop([&](auto v) { return xtrace::sum(v) < limit; },
                                      [&](auto v) { return v * 2.f + y; }, x);
        },
        quiet());
    write(dir, "while_loop", loop, true, random_array<float>({2, 2}, 1, 3),
          random_array<float>({2}, 0, 2), xt::xarray<float>(200.f));
    auto bounded = xtrace::function(
        [](auto x, auto n, auto start) {
            return xtrace::while_loop(
                [&](auto i, auto) { return i < n; },
                [&](auto i, auto v) { return std::make_tuple(i + 1, v * 0.5f - 1.f); }, start, x,
                xtrace::maximum_iterations(4));
        },
        quiet());
    write(dir, "while_loop_bounded", bounded, false, random_array<float>({3}),
          xt::xarray<std::int32_t>(10), xt::xarray<std::int32_t>(0));
    auto rnn = xtrace::function(
        [](auto h0, auto xs, auto w) {
            return xtrace::scan(
                [&](auto h, auto x) {
                    auto next = xtrace::tanh(h * w + x);
                    return std::make_tuple(next, next * 2.f, xtrace::sum(x) > 0.f);
                },
                h0, xs);
        },
        quiet());
    write(dir, "scan", rnn, true, random_array<float>({3}), random_array<float>({6, 3}),
          random_array<float>({3}));
    // Not a scan of zero steps: ONNX Runtime 1.20's Scan cannot slice an empty input
    // ("Invalid dim0_offset of 0"); xtrace's own loader runs one (control_flow_test).

    xtrace::variable<float> w(random_array<float>({4, 2}), "w");
    auto layer = xtrace::function([&](auto x) { return xtrace::relu(xtrace::matmul(x, w.read())); },
                                  quiet());
    write(dir, "variables", layer, true, random_array<float>({5, 4}));

    auto gradient = xtrace::function(
        xtrace::value_and_grad([](auto v, auto x) { return xtrace::sum(xtrace::tanh(x * v) * x); },
                               xtrace::argnums<0>),
        quiet());
    write(dir, "gradient", gradient, false, random_array<double>({3}),
          random_array<double>({5, 3}));
    auto scan_gradient = xtrace::function( // a reverse Scan in the backward pass
        xtrace::value_and_grad(
            [](auto h0, auto xs) {
                auto [h, hs] = xtrace::scan(
                    [](auto s, auto x) {
                        auto next = xtrace::tanh(s * x + 0.5);
                        return std::make_tuple(next, next * next);
                    },
                    h0, xs);
                return xtrace::sum(h) + xtrace::sum(hs);
            },
            xtrace::argnums<0, 1>),
        quiet());
    write(dir, "scan_gradient", scan_gradient, false, random_array<double>({3}),
          random_array<double>({4, 3}));
    auto loop_gradient = xtrace::function( // a Scan over a ConstantOfShape of the trip count; float
                                           // (ONNX Runtime has no double Cos)
        xtrace::value_and_grad(
            [](auto x, auto c) {
                auto v = xtrace::while_loop([](auto s) { return xtrace::sum(s) < 10.f; },
                                            [&](auto s) { return s * 1.1f + xtrace::sin(c); }, x);
                return xtrace::sum(v * v);
            },
            xtrace::argnums<0, 1>),
        quiet());
    write(dir, "while_loop_gradient", loop_gradient, false, random_array<float>({3}, 0, 1),
          random_array<float>({3}, 0.2f, 1));
    std::cout << "models written to " << dir << "\n";
    return 0;
}
