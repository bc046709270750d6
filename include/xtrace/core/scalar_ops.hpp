#ifndef XTRACE_CORE_SCALAR_OPS_HPP
#define XTRACE_CORE_SCALAR_OPS_HPP

// The per-element meaning of the ops whose plain C++ spelling is undefined or ambiguous
// (NaN in min/max, integer division and powers, rounding, float-to-int casts). The interpreter's
// kernels and the eager path both follow these definitions.

#include "error.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace xtrace::scalar {

/// Smaller of a and b; NaN if either is NaN (as numpy.minimum).
template <class T>
constexpr T minimum(T a, T b) noexcept {
    return (a < b || a != a) ? a : b;
}

/// Larger of a and b; NaN if either is NaN (as numpy.maximum).
template <class T>
constexpr T maximum(T a, T b) noexcept {
    return (a > b || a != a) ? a : b;
}

/// max(x, 0), keeping NaN.
template <class T>
constexpr T relu(T x) noexcept {
    return x < T(0) ? T(0) : x;
}

/// Wrapping two's-complement negation for integers (no overflow trap on the minimum value).
template <class T>
constexpr T neg(T x) noexcept {
    if constexpr (std::is_integral_v<T>)
        return static_cast<T>(-static_cast<std::make_unsigned_t<T>>(x));
    else
        return -x;
}

/// |x|: +0 for -0, wrapping for the minimum integer.
template <class T>
T abs(T x) noexcept {
    if constexpr (std::is_floating_point_v<T>)
        return std::fabs(x);
    else
        return x < T(0) ? neg(x) : x;
}

/// a + b; integers wrap (two's complement) instead of overflowing.
template <class T>
constexpr T add(T a, T b) noexcept {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
        return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) +
                              static_cast<std::make_unsigned_t<T>>(b));
    else
        return static_cast<T>(a + b);
}

/// a - b; integers wrap.
template <class T>
constexpr T sub(T a, T b) noexcept {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
        return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) -
                              static_cast<std::make_unsigned_t<T>>(b));
    else
        return static_cast<T>(a - b);
}

/// a * b; integers wrap. (Unsigned int32 operands would promote to a signed int, whose product
/// can overflow: multiply as 64-bit unsigned.)
template <class T>
constexpr T mul(T a, T b) noexcept {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
        return static_cast<T>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
    else
        return static_cast<T>(a * b);
}

/// Integer division truncating toward zero, as C++; throws on division by zero.
template <class T>
T div(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
        if (b == 0)
            throw error("xtrace::div: integer division by zero");
        if (b == T(-1))
            return neg(a); // min / -1 overflows in C++
        return static_cast<T>(a / b);
    } else {
        return a / b;
    }
}

/// a to the power b; for integers exact by squaring, with the truncated value for b < 0.
template <class T>
T pow(T a, T b) noexcept {
    if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        if (b < 0)
            return a == 1 ? T(1) : a == T(-1) ? ((b & 1) ? T(-1) : T(1)) : T(0);
        U result = 1, base = static_cast<U>(a);
        for (auto e = static_cast<std::make_unsigned_t<T>>(b); e; e >>= 1) {
            if (e & 1)
                result = static_cast<U>(mul(result, base));
            base = static_cast<U>(mul(base, base));
        }
        return static_cast<T>(result);
    } else {
        return std::pow(a, b);
    }
}

/// Round half to even, as numpy.round and tf.round; integers unchanged.
template <class T>
T round(T x) noexcept {
    if constexpr (std::is_floating_point_v<T>)
        return std::nearbyint(x);
    else
        return x;
}

/// Conversion between dtypes; floating to integer saturates and maps NaN to 0.
template <class To, class From>
constexpr To convert(From x) noexcept {
    if constexpr (std::is_same_v<To, bool>) {
        return x != From(0);
    } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
        if (x != x)
            return 0;
        if (x <= static_cast<From>(std::numeric_limits<To>::min()))
            return std::numeric_limits<To>::min();
        if (x >= static_cast<From>(std::numeric_limits<To>::max()))
            return std::numeric_limits<To>::max();
        return static_cast<To>(x);
    } else {
        return static_cast<To>(x);
    }
}

} // namespace xtrace::scalar

#endif
