#ifndef XTRACE_TESTS_AUTODIFF_FINITE_DIFFERENCES_HPP
#define XTRACE_TESTS_AUTODIFF_FINITE_DIFFERENCES_HPP

// Gradients against central finite differences in double: the independent reference.

#include "support/testing.hpp"

#include <cmath>
#include <tuple>

namespace xtrace::testing {

/// d value / d args[k][i] by central differences, for every element of every argument.
template <class Value, class... A>
std::tuple<A...> finite_differences(const Value& value, const A&... args) {
    constexpr double eps = 1e-6;
    std::tuple<A...> in(args...), out(args...);
    auto one = [&](auto k) {
        auto& x = std::get<decltype(k)::value>(in);
        auto& g = std::get<decltype(k)::value>(out);
        for (std::size_t i = 0; i < x.size(); ++i) {
            const double keep = x.data()[i];
            x.data()[i] = keep + eps;
            const double up = std::apply(value, in)();
            x.data()[i] = keep - eps;
            const double down = std::apply(value, in)();
            x.data()[i] = keep;
            g.data()[i] = (up - down) / (2 * eps);
        }
    };
    [&]<std::size_t... K>(std::index_sequence<K...>) {
        (one(std::integral_constant<std::size_t, K>{}), ...);
    }
    (std::index_sequence_for<A...>{});
    return out;
}

/// True when every element of `got` is within `tol` (relative to max(1, |want|)) of `want`.
inline bool near(const xt::xarray<double>& got, const xt::xarray<double>& want, double tol = 1e-5) {
    if (got.shape() != want.shape()) {
        std::cerr << "shape " << shape_text(got.shape()) << " vs " << shape_text(want.shape())
                  << '\n';
        return false;
    }
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double a = got.data()[i], b = want.data()[i];
        if (!(std::abs(a - b) <= tol * std::max(1.0, std::abs(b)))) {
            std::cerr << "element " << i << ": " << a << " vs " << b << '\n';
            return false;
        }
    }
    return true;
}

/// Checks xtrace's gradients of fn (0-d result) against finite differences at args.
template <class F, class... A>
void check_gradients(F fn, const A&... args) {
    auto value = xtrace::function(fn, quiet());
    auto grads = xtrace::function(
        xtrace::grad(
            fn, [&]<std::size_t... K>(std::index_sequence<K...>) { return xtrace::argnums<K...>; }(
                    std::index_sequence_for<A...>{})),
        quiet());
    const auto want = finite_differences(value, args...);
    const auto got = grads(args...);
    if constexpr (sizeof...(A) == 1) {
        CHECK(near(got, std::get<0>(want)));
    } else {
        bool all = true;
        [&]<std::size_t... K>(std::index_sequence<K...>) {
            ((all = near(std::get<K>(got), std::get<K>(want)) && all), ...);
        }
        (std::index_sequence_for<A...>{});
        CHECK(all);
    }
}

/// Random doubles in [lo, hi).
inline xt::xarray<double> uniform(std::vector<std::size_t> shape, double lo, double hi) {
    auto a = xt::xarray<double>::from_shape(shape);
    std::uniform_real_distribution<double> d(lo, hi);
    for (auto& v : a)
        v = d(rng());
    return a;
}

} // namespace xtrace::testing

#endif
