// scan (lax.scan, tf.scan): against xtensor's cumsum and hand-written loops on every dtype and
// random shapes (0-d slices, zero steps, strided inputs), several carries and outputs, effects
// per step, unknown lengths, and the errors.

#include "support/eager_scope.hpp"
#include "support/testing.hpp"

#include <xtrace/ext/xtensor_extras.hpp>

using namespace xtrace::testing;

namespace {

// The running sum along axis 0, by hand (an independent cumsum).
template <class T>
xt::xarray<T> running_sum(const xt::xarray<T>& xs) {
    xt::xarray<T> out = xs;
    const std::size_t row =
        xs.dimension() ? xs.size() / std::max<std::size_t>(xs.shape()[0], 1) : 1;
    for (std::size_t i = row; i < out.size(); ++i)
        out.data()[i] = static_cast<T>(out.data()[i - row] + out.data()[i]);
    return out;
}

template <class T>
void check_cumsum() {
    // tf.scan's classic example: the carry is the running sum, and each step outputs it.
    auto f = xtrace::function(
        [](auto init, auto xs) {
            return xtrace::scan(
                [](auto c, auto x) {
                    auto next = c + x;
                    return std::tuple(next, next);
                },
                init, xs);
        },
        quiet());
    for (int round = 0; round < 12; ++round) {
        auto shape = random_shape(3);
        shape.insert(shape.begin(), round % 4 == 0 ? 0 : std::size_t(1 + round % 5));
        const xt::xarray<T> xs = random_array<T>(shape, -20, 20);
        const std::vector<std::size_t> row(shape.begin() + 1, shape.end());
        const xt::xarray<T> init = xt::zeros<T>(row);
        const xt::xarray<T> expected = running_sum(xs);
        auto [traced, eager] = both_paths(f, init, xs);
        INFO(shape_text(shape));
        CHECK(close(std::get<1>(traced), expected));
        CHECK(close(std::get<1>(eager), expected));
        // The final carry is the last row (the initial zeros with no steps).
        const xt::xarray<T> last =
            shape[0] == 0 ? init : xt::xarray<T>(xt::view(expected, shape[0] - 1));
        CHECK(close(std::get<0>(traced), last));
        CHECK(close(std::get<0>(eager), last));
        if constexpr (std::is_floating_point_v<T>) // against xtensor too
            CHECK(close(std::get<1>(traced), xt::xarray<T>(xt::cumsum(xs, 0)), 16));
    }
}

} // namespace

TEST_CASE("testScan_Simple (tf.scan): a running sum matches cumsum on every dtype, zero steps, 0-d "
          "slices") {
    check_cumsum<float>();
    check_cumsum<double>();
    check_cumsum<std::int32_t>();
    check_cumsum<std::int64_t>();
}

TEST_CASE("testScanRnn (lax.scan): an RNN over two scanned tensors, with a captured weight") {
    // h' = tanh(h * w + x * u); ys = h' * 2, carried h; w captured from the enclosing trace.
    auto f = xtrace::function(
        [](auto h0, auto xs, auto us, auto w) {
            return xtrace::scan(
                [&](auto h, auto x, auto u) {
                    auto next = xtrace::tanh(h * w + x * u);
                    return std::tuple(next, next * 2.0);
                },
                h0, std::tuple(xs, us));
        },
        quiet());
    for (int round = 0; round < 6; ++round) {
        const std::size_t steps = std::size_t(round), width = std::size_t(1 + round % 3);
        const xt::xarray<double> h0 = random_array<double>({width});
        const xt::xarray<double> xs = random_array<double>({steps, width});
        const xt::xarray<double> us = random_array<double>({steps, 1}); // broadcast in the body
        const xt::xarray<double> w = random_array<double>({width});
        xt::xarray<double> h = h0;
        xt::xarray<double> ys = xt::zeros<double>({steps, width});
        for (std::size_t i = 0; i < steps; ++i) {
            for (std::size_t j = 0; j < width; ++j) {
                h(j) = std::tanh(h(j) * w(j) + xs(i, j) * us(i, 0));
                ys(i, j) = h(j) * 2.0;
            }
        }
        auto [traced, eager] = both_paths(f, h0, xs, us, w);
        CHECK(close(std::get<0>(traced), h, 8));
        CHECK(close(std::get<1>(traced), ys, 8));
        CHECK(close(std::get<0>(eager), h, 8));
        CHECK(close(std::get<1>(eager), ys, 8));
    }
}

TEST_CASE("testScan_MultiInputMultiOutput: several carries and outputs, a map, a fold") {
    // Carries (count, total); outputs (x * count, x > 0).
    auto several = xtrace::function(
        [](auto xs) {
            auto count0 = xtrace::sum(xs * 0, {0}); // int64 zeros of a row's shape
            auto total0 = xtrace::cast<double>(count0);
            return xtrace::scan(
                [](auto count, auto total, auto x) {
                    return std::tuple(count + 1, total + xtrace::cast<double>(x), x * count, x > 0);
                },
                std::tuple(count0, total0), xs);
        },
        quiet());
    const xt::xarray<std::int64_t> xs = {{1, -2}, {3, 4}, {-5, 6}};
    auto [traced, eager] = both_paths(several, xs);
    for (const auto& r : {traced, eager}) {
        CHECK(close(std::get<0>(r), xt::xarray<std::int64_t>{3, 3}));
        CHECK(close(std::get<1>(r), xt::xarray<double>{-1., 8.}));
        CHECK(close(std::get<2>(r), xt::xarray<std::int64_t>{{0, 0}, {3, 4}, {-10, 12}}));
        CHECK(close(std::get<3>(r), xt::xarray<bool>{{true, false}, {true, true}, {false, true}}));
    }

    auto map = xtrace::function(
        [](auto xs) {
            return xtrace::scan([](auto x) { return xtrace::sum(x * x); }, std::tuple<>(), xs);
        },
        quiet());
    const xt::xarray<float> m = {{1.f, 2.f}, {3.f, 4.f}, {0.f, -1.f}};
    auto [mapped, mapped_eagerly] = both_paths(map, m);
    CHECK(close(mapped, xt::xarray<float>{5.f, 25.f, 1.f}));
    CHECK(close(mapped_eagerly, xt::xarray<float>{5.f, 25.f, 1.f}));

    auto fold = xtrace::function(
        [](auto init, auto xs) {
            return xtrace::scan([](auto c, auto x) { return xtrace::maximum(c, x); }, init, xs);
        },
        quiet());
    auto [folded, folded_eagerly] =
        both_paths(fold, xt::xarray<int>(-100), xt::xarray<int>{3, 9, 2});
    CHECK(folded() == 9);
    CHECK(folded_eagerly() == 9);
}

TEST_CASE("scan reads strided and transposed inputs in place") {
    auto f = xtrace::function(
        [](auto init, auto xs) {
            return xtrace::scan(
                [](auto c, auto x) {
                    auto next = c * 2 + x;
                    return std::tuple(next, next - c);
                },
                init, xs);
        },
        quiet());
    const xt::xarray<float> base = random_array<float>({5, 6}, -2, 2);
    const auto transposed = xt::transpose(base);                        // [6, 5]
    const auto strided = xt::view(base, xt::range(0, 5, 2), xt::all()); // [3, 6]
    for (int k = 0; k < 2; ++k) {
        const xt::xarray<float> dense =
            k == 0 ? xt::xarray<float>(transposed) : xt::xarray<float>(strided);
        const xt::xarray<float> init = xt::zeros<float>({dense.shape()[1]});
        const auto expected = f(init, dense);
        const auto got = k == 0 ? f(init, transposed) : f(init, strided);
        CHECK(close(std::get<0>(got), std::get<0>(expected)));
        CHECK(close(std::get<1>(got), std::get<1>(expected)));
    }
}

TEST_CASE("scan is traced once; print, variables and host_function run every step") {
    int traced = 0;
    xtrace::variable<float> total(0.f, "total");
    auto f = xtrace::function(
        [&](auto xs) {
            return xtrace::scan(
                [&](auto i, auto x) {
                    ++traced; // C++ runs while tracing only
                    xtrace::print("step", i, x);
                    total.assign_add(xtrace::sum(x));
                    auto doubled = xtrace::host_function(
                        [](const xt::xarray<float>& v) { return xt::xarray<float>(v * 2.f); },
                        xtrace::spec<float>({2}), x);
                    return std::tuple(i + 1, doubled);
                },
                xtrace::cast<std::int32_t>(xtrace::sum(xs * 0.f)), xs);
        },
        quiet());
    const xt::xarray<float> xs = {{1.f, 2.f}, {3.f, 4.f}};
    cout_capture out;
    auto [steps, doubled] = f(xs);
    auto [steps2, doubled2] = f(xs);
    CHECK(traced == 1);
    CHECK(f.tracing_count() == 1);
    CHECK(steps() == 2);
    CHECK(close(doubled, xt::xarray<float>{{2.f, 4.f}, {6.f, 8.f}}));
    CHECK(close(doubled2, doubled));
    CHECK(out.text() ==
          "step 0 { 1.,  2.}\nstep 1 { 3.,  4.}\nstep 0 { 1.,  2.}\nstep 1 { 3.,  4.}\n");
    CHECK(total.value()() == 20.f);

    // Eagerly the same; with zero steps, a dry run of fn learns the stacked shape and leaves
    // no effect behind (nothing printed, nothing assigned, no callback).
    xtrace::testing::eager_scope eager;
    auto [steps3, doubled3] = f(xs);
    CHECK(steps3() == 2);
    CHECK(close(doubled3, doubled));
    CHECK(total.value()() == 30.f);
    const std::string before = out.text();
    const xt::xarray<float> none = xt::xarray<float>::from_shape({0, 2});
    auto [zero_steps, nothing] = f(none);
    CHECK(zero_steps() == 0);
    CHECK(shape_text(nothing.shape()) == "[0,2]");
    CHECK(out.text() == before);
    CHECK(total.value()() == 30.f);
    CHECK(traced == 4); // the traced call, two eager steps and the dry run
    const std::string graph = xtrace::function(f.lambda()).get_concrete_function(xs).graph_text();
    CHECK(graph.find("scan(%") != std::string::npos);
    CHECK(graph.find("carried=1, scanned=1") != std::string::npos);
    CHECK(graph.find("  body:") != std::string::npos);
}

TEST_CASE("a relaxed trace scans any length; lengths known only at run time are checked") {
    auto f = xtrace::function(
        [](auto init, auto xs, auto ys) {
            return xtrace::scan(
                [](auto c, auto x, auto y) {
                    auto next = c + x * y;
                    return std::tuple(next, next);
                },
                init, std::tuple(xs, ys));
        },
        quiet({.input_signature = {{xtrace::spec<float>({}), xtrace::spec<float>({-1}),
                                    xtrace::spec<float>({-1})}}}));
    for (std::size_t n : {0, 1, 4, 9}) {
        const xt::xarray<float> xs = random_array<float>({n}), ys = random_array<float>({n});
        xt::xarray<float> expected = xt::zeros<float>({n});
        float c = 1.f;
        for (std::size_t i = 0; i < n; ++i)
            expected(i) = c = c + xs(i) * ys(i);
        CHECK(close(std::get<1>(f(xt::xarray<float>(1.f), xs, ys)), expected));
    }
    CHECK(f.tracing_count() == 1);
    CHECK(shape_error_message([&] {
              f(xt::xarray<float>(0.f), xt::xarray<float>{1.f, 2.f}, xt::xarray<float>{1.f});
          }) == "xtrace::scan: scanned tensor 0 has shape [2] but scanned tensor 1 has shape [1]; "
                "all scanned tensors must have the same leading dim (the number of steps)");
    CHECK(close(
        std::get<0>(f(xt::xarray<float>(0.f), xt::xarray<float>{2.f}, xt::xarray<float>{3.f})),
        xt::xarray<float>(6.f))); // still works
}

TEST_CASE("scan's shape errors, traced and eager") {
    auto grows = xtrace::function(
        [](auto init, auto xs) {
            return xtrace::scan(
                [](auto c, auto x) { return std::tuple(xtrace::expand_dims(c, 0), x); }, init, xs);
        },
        quiet());
    const std::string carry = "xtrace::scan: carry 0 has shape [2] initially, but shape [1,2] "
                              "after one step; fn must keep each carry's shape";
    const xt::xarray<float> init = {1.f, 2.f};
    const xt::xarray<float> xs = random_array<float>({2, 1});
    CHECK(shape_error_message([&] { grows(init, xs); }) == carry);
    auto zero_d = xtrace::function(
        [](auto init, auto xs) {
            return xtrace::scan([](auto c, auto x) { return c + x; }, init, xs);
        },
        quiet());
    const std::string scalar = "xtrace::scan: scanned tensor 0 is 0-d; each scanned tensor is "
                               "sliced along its leading dim, so it needs rank >= 1";
    CHECK(shape_error_message([&] { zero_d(xt::xarray<float>(0.f), xt::xarray<float>(1.f)); }) ==
          scalar);
    CHECK(zero_d(xt::xarray<float>(1.f), xt::xarray<float>{2.f, 3.f})() == 6.f);
    eager_scope eager;
    CHECK(shape_error_message([&] { grows(init, xs); }) == carry);
    CHECK(shape_error_message([&] { zero_d(xt::xarray<float>(0.f), xt::xarray<float>(1.f)); }) ==
          scalar);
}

TEST_CASE("scan in plain code, on variable reads, computes now") {
    xtrace::variable<float> acc(xt::xarray<float>{0.f, 0.f}, "acc");
    xtrace::variable<float> rows(xt::xarray<float>{{1.f, 2.f}, {3.f, 4.f}}, "rows");
    auto [c, ys] = xtrace::scan(
        [](auto a, auto x) {
            auto next = a + x;
            return std::tuple(next, next * 2.f);
        },
        acc.read(), rows.read());
    acc.assign(c);
    rows.assign(ys);
    CHECK(close(acc.value(), xt::xarray<float>{4.f, 6.f}));
    CHECK(close(rows.value(), xt::xarray<float>{{2.f, 4.f}, {8.f, 12.f}}));
}

TEST_CASE("scan nests: in a cond branch, around a while_loop, around a scan; unused slices") {
    auto f = xtrace::function(
        [](auto xs, auto flag) {
            return xtrace::cond(
                flag,
                [&] {
                    // Each row: count up to 3 with a while_loop, then a row-wise running sum
                    // by an inner scan over the row's elements.
                    auto [c, rows] = xtrace::scan(
                        [](auto total, auto row) {
                            auto [k, doubled] = xtrace::while_loop(
                                [](auto i, auto) { return i < 3; },
                                [](auto i, auto v) { return std::make_tuple(i + 1, v * 2.f); },
                                xtrace::cast<std::int32_t>(total * 0.f), row);
                            auto [s, sums] = xtrace::scan(
                                [](auto acc, auto e) { return std::make_tuple(acc + e, acc + e); },
                                total, doubled);
                            return std::make_tuple(s, sums);
                        },
                        xtrace::sum(xs) * 0.f, xs);
                    return std::make_tuple(c, rows);
                },
                [&] { // a scan whose fn ignores its slices: only the count of rows matters
                    auto [c, rows] = xtrace::scan(
                        [](auto total, auto) { return std::make_tuple(total + 1.f, total); },
                        xtrace::sum(xs) * 0.f, xs);
                    return std::make_tuple(
                        c, xtrace::broadcast_to(xtrace::expand_dims(rows, 1), {3, 2}) * 1.f);
                });
        },
        quiet());
    const xt::xarray<float> xs = {{1.f, 2.f}, {3.f, 4.f}, {0.5f, -1.f}};
    auto [traced, eager] = both_paths(f, xs, xt::xarray<bool>(true));
    // Rows doubled 3 times (x8): {8, 16}, {24, 32}, {4, -8}; sums continue across rows.
    const xt::xarray<float> sums = {{8.f, 24.f}, {48.f, 80.f}, {84.f, 76.f}};
    CHECK(close(std::get<1>(traced), sums));
    CHECK(close(std::get<1>(eager), sums));
    CHECK(std::get<0>(traced)() == 76.f);
    auto [counted, counted_eagerly] = both_paths(f, xs, xt::xarray<bool>(false));
    CHECK(std::get<0>(counted)() == 3.f);
    CHECK(close(std::get<1>(counted), xt::xarray<float>{{0.f, 0.f}, {1.f, 1.f}, {2.f, 2.f}}));
    CHECK(close(std::get<1>(counted_eagerly), std::get<1>(counted)));
}
