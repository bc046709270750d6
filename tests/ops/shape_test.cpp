// Shape ops: reshape, transpose, expand_dims, squeeze, broadcast_to, as views and as copies,
// traced and eager, against xtensor.

#include "support/eager_scope.hpp"
#include "support/testing.hpp"

#include <xtrace/ext/xtensor_extras.hpp>

using namespace xtrace::testing;

TEST_CASE("transpose, expand_dims, squeeze and broadcast_to match xtensor, as views") {
    auto f = xtrace::function(
        [](auto x) {
            return std::make_tuple(xtrace::transpose(x), xtrace::transpose(x, {1, -1, 0}),
                                   xtrace::expand_dims(x, 1), xtrace::expand_dims(x, -1),
                                   xtrace::squeeze(xtrace::expand_dims(x, 0), 0),
                                   xtrace::broadcast_to(x, {2, 4, 3, 5}));
        },
        quiet());
    for (int trial = 0; trial < 5; ++trial) {
        const xt::xarray<double> a = random_array<double>({4, 1, 5});
        auto [traced, eager] = both_paths(f, a);
        for (const auto& r : {traced, eager}) {
            CHECK((std::get<0>(r) == xt::xarray<double>(xt::transpose(a))));
            CHECK((std::get<1>(r) == xt::xarray<double>(xt::transpose(a, {1, 2, 0}))));
            CHECK((std::get<2>(r) == xt::xarray<double>(xt::expand_dims(a, 1))));
            CHECK((std::get<3>(r) == xt::xarray<double>(xt::expand_dims(a, 3))));
            CHECK((std::get<4>(r) == a));
            CHECK((std::get<5>(r) == xt::xarray<double>(xt::broadcast(a, {2, 4, 3, 5}))));
        }
    }
}

TEST_CASE("reshape of arguments, strided arguments, intermediates and views") {
    auto f = xtrace::function(
        [](auto x) {
            auto y = xtrace::exp(x) * 2.0;
            return std::make_tuple(xtrace::reshape(x, {-1}), xtrace::reshape(y, {3, -1}) + 1.0,
                                   xtrace::reshape(xtrace::transpose(y), {-1}),
                                   xtrace::sum(xtrace::reshape(x, {2, 3, 2}), {1}));
        },
        quiet());
    const xt::xarray<double> a = random_array<double>({4, 3});
    const xt::xarray<double> y = xt::exp(a) * 2.0;
    for (bool strided : {false, true}) {
        const xt::xarray<double> base = random_array<double>({3, 4});
        const xt::xarray<double> at = xt::transpose(base);
        auto check = [&](const auto& arg, const xt::xarray<double>& value) {
            const xt::xarray<double> yv = xt::exp(value) * 2.0;
            auto [traced, eager] = both_paths(f, arg);
            for (const auto& r : {traced, eager}) {
                CHECK((std::get<0>(r) == xt::xarray<double>(xt::reshape_view(value, {12}))));
                CHECK(
                    close(std::get<1>(r), xt::xarray<double>(xt::reshape_view(yv, {3, 4}) + 1.0)));
                CHECK(close(std::get<2>(r), xt::xarray<double>(xt::reshape_view(
                                                xt::xarray<double>(xt::transpose(yv)), {12}))));
                CHECK(close(std::get<3>(r),
                            xt::xarray<double>(xt::sum(xt::reshape_view(value, {2, 3, 2}), {1}))));
            }
        };
        if (strided)
            check(xt::transpose(base), at);
        else
            check(a, a);
    }
    (void)y;
}

TEST_CASE("reshape with an inferred dim binds to each concrete shape of a relaxed trace") {
    auto f = xtrace::function(
        [](auto x) {
            return xtrace::reshape(x, {-1, 2}) * 3;
        },
        quiet({.reduce_retracing = true}));
    for (std::size_t n : {2u, 4u, 6u, 10u}) {
        const xt::xarray<std::int32_t> a = random_array<std::int32_t>({n}, -9, 9);
        xt::xarray<std::int32_t> r = f(a);
        CHECK(r.shape()[0] == n / 2);
        CHECK((r == xt::xarray<std::int32_t>(xt::reshape_view(a, {n / 2, std::size_t(2)}) * 3)));
    }
    CHECK(f.tracing_count() == 2);
    CHECK_THROWS_AS(f(xt::xarray<std::int32_t>::from_shape({5})), xtrace::shape_error);
}

TEST_CASE("bad shapes are shape_errors naming the op and the shapes") {
    const xt::xarray<float> a = xt::zeros<float>({2, 3});
    CHECK(shape_error_message([&] {
              xtrace::function([](auto x) { return xtrace::reshape(x, {4, -1}); })(a);
          }) == "xtrace::reshape: cannot reshape [2,3] (6 elements) into [4,?]");
    CHECK(shape_error_message([&] {
              xtrace::function([](auto x) { return xtrace::squeeze(x, 0); })(a);
          }) == "xtrace::squeeze: dim 0 of shape [2,3] is 2, not 1");
    CHECK(shape_error_message([&] {
              xtrace::function([](auto x) { return xtrace::transpose(x, {0, 0}); })(a);
          }) == "xtrace::transpose: permutation [0,0] repeats a dim");
    CHECK(shape_error_message([&] {
              xtrace::function([](auto x) { return xtrace::broadcast_to(x, {3, 3}); })(a);
          }) == "xtrace::broadcast_to: cannot broadcast shape [2,3] to [3,3]");
    CHECK(shape_error_message([&] {
              xtrace::function([](auto x) { return xtrace::expand_dims(x, 4); })(a);
          }) == "xtrace::expand_dims: axis 4 is out of range for shape [2,3]");
    xtrace::testing::eager_scope eager;
    CHECK(shape_error_message([&] {
              xtrace::function([](auto x) { return xtrace::reshape(x, {4, -1}); })(a);
          }) == "xtrace::reshape: cannot reshape [2,3] (6 elements) into [4,?]");
}
