// Values at the edges of each op's domain give one answer on every path (SIMD body, scalar
// tail, static fusion, interpreter, eager): IEEE signed zeros, pow's special cases, and
// integers that wrap instead of overflowing.

#include "support/eager_scope.hpp"
#include "support/testing.hpp"

#include <cmath>
#include <cstring>
#include <limits>

using namespace xtrace::testing;

namespace {

// Bit-for-bit equality (NaN payloads aside), so that -0 and +0 differ.
template <class A, class B>
bool same_bits(const A& a, const B& b) {
    if (a.shape() != b.shape())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const auto x = a.data()[i], y = b.data()[i];
        if constexpr (std::is_floating_point_v<std::decay_t<decltype(x)>>)
            if (std::isnan(x) && std::isnan(y))
                continue;
        if (std::memcmp(&x, &y, sizeof x) != 0)
            return false;
    }
    return true;
}

// n copies of `pattern`, so that every value lands in SIMD bodies and in scalar tails.
template <class T>
xt::xarray<T> tiled(std::initializer_list<T> pattern, std::size_t n) {
    auto a = xt::xarray<T>::from_shape({n});
    std::size_t i = 0;
    for (auto& v : a)
        v = pattern.begin()[i++ % pattern.size()];
    return a;
}

template <class T>
void signed_zeros_and_pow() {
    constexpr T inf = std::numeric_limits<T>::infinity();
    const auto x = tiled<T>({T(0), T(-0.0), T(-0.5), T(0.5), T(-2.5), -inf, T(1e-40)}, 37);
    const auto y = tiled<T>({T(-1), T(-1), T(-1), T(0.5), T(3), T(0.5), T(2), T(-3)}, 37);
    auto f = xtrace::function([](auto a, auto b) {
        return std::make_tuple(xtrace::pow(a, b), xtrace::floor(a), xtrace::ceil(a),
                               xtrace::round(a), xtrace::abs(a), -a);
    });
    auto [traced, eager] = both_paths(f, x, y);
    for (const auto& r : {traced, eager}) {
        xt::xarray<T> p = x, fl = x, ce = x, ro = x, ab = x, ng = x;
        for (std::size_t i = 0; i < x.size(); ++i) {
            p(i) = std::pow(x(i), y(i));
            fl(i) = std::floor(x(i));
            ce(i) = std::ceil(x(i));
            ro(i) = std::nearbyint(x(i));
            ab(i) = std::fabs(x(i));
            ng(i) = -x(i);
        }
        CHECK(same_bits(std::get<0>(r), p));
        CHECK(same_bits(std::get<1>(r), fl));
        CHECK(same_bits(std::get<2>(r), ce));
        CHECK(same_bits(std::get<3>(r), ro));
        CHECK(same_bits(std::get<4>(r), ab));
        CHECK(same_bits(std::get<5>(r), ng));
    }
}

template <class T>
void integers_wrap() {
    constexpr T lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    const auto a = tiled<T>({hi, lo, T(-1), T(3), hi, lo}, 21);
    const auto b = tiled<T>({T(1), T(-1), lo, hi, hi, lo, T(2)}, 21);
    auto f = xtrace::function([](auto u, auto v) {
        return std::make_tuple(u + v, u - v, u * v, xtrace::square(u), xtrace::abs(u), -u,
                               xtrace::sum(u), xtrace::prod(v));
    });
    using U = std::make_unsigned_t<T>;
    auto wrap = [](auto v) { return static_cast<T>(static_cast<U>(v)); };
    auto [traced, eager] = both_paths(f, a, b);
    for (const auto& r : {traced, eager}) {
        U sum = 0, prod = 1;
        for (std::size_t i = 0; i < a.size(); ++i) {
            const U ua = static_cast<U>(a(i)), ub = static_cast<U>(b(i));
            CHECK(std::get<0>(r)(i) == wrap(U(ua + ub)));
            CHECK(std::get<1>(r)(i) == wrap(U(ua - ub)));
            CHECK(std::get<2>(r)(i) == wrap(std::uint64_t(ua) * std::uint64_t(ub)));
            CHECK(std::get<3>(r)(i) == wrap(std::uint64_t(ua) * std::uint64_t(ua)));
            CHECK(std::get<4>(r)(i) == (a(i) < 0 ? wrap(U(0) - ua) : a(i)));
            CHECK(std::get<5>(r)(i) == wrap(U(0) - ua));
            sum = U(sum + ua);
            prod = U(std::uint64_t(prod) * std::uint64_t(ub));
        }
        CHECK(std::get<6>(r)() == wrap(sum));
        CHECK(std::get<7>(r)() == wrap(prod));
    }
}

} // namespace

TEST_CASE("signed zeros and pow's special values agree with <cmath> on every path") {
    signed_zeros_and_pow<float>();
    signed_zeros_and_pow<double>();
}

TEST_CASE("integer arithmetic wraps on every path") {
    integers_wrap<std::int32_t>();
    integers_wrap<std::int64_t>();
}
