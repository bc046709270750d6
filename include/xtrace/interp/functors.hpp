#ifndef XTRACE_INTERP_FUNCTORS_HPP
#define XTRACE_INTERP_FUNCTORS_HPP

// One functor per elementwise op: a scalar form for every dtype the op accepts and, where xsimd
// has the operation, a batch form. `simd<T>` says which dtypes take the batch form.

#include "../core/scalar_ops.hpp"
#include "../ext/xsimd.hpp"

#include <cmath>
#include <limits>
#include <type_traits>

namespace xtrace::interp::fn {

template <class T>
inline constexpr bool is_float_v = std::is_floating_point_v<T>;
template <class T>
inline constexpr bool is_number_v = std::is_arithmetic_v<T> && !std::is_same_v<T, bool>;

#define XTRACE_B xsimd::batch<T, A>

/// log of a batch. xsimd's log reads a subnormal input's exponent as the smallest one (log of
/// 1e-323 comes out -746.5, not -743.7), so those lanes are scaled into the normal range first.
template <class T, class A>
XTRACE_B log_batch(const XTRACE_B& x) {
    constexpr int shift = std::numeric_limits<T>::digits;
    const auto tiny = x < XTRACE_B(std::numeric_limits<T>::min());
    if (!xsimd::any(tiny))
        return xsimd::log(x);
    const XTRACE_B scaled = xsimd::select(tiny, x * XTRACE_B(std::ldexp(T(1), shift)), x);
    const T ln2 = T(0.693147180559945309417232121458176568L);
    return xsimd::log(scaled) - xsimd::select(tiny, XTRACE_B(T(shift) * ln2), XTRACE_B(T(0)));
}

// Floating-point only: batch form through xsimd, scalar through <cmath>.
#define XTRACE_FLOAT_UNARY(name, scalar_expr, batch_expr)                                          \
    struct name {                                                                                  \
        template <class T>                                                                         \
        static constexpr bool simd = is_float_v<T>;                                                \
        template <class T>                                                                         \
        T operator()(T x) const {                                                                  \
            return scalar_expr;                                                                    \
        }                                                                                          \
        template <class T, class A>                                                                \
        xsimd::batch<T, A> operator()(const xsimd::batch<T, A>& x) const {                         \
            return batch_expr;                                                                     \
        }                                                                                          \
    };

XTRACE_FLOAT_UNARY(exp, std::exp(x), xsimd::exp(x))
XTRACE_FLOAT_UNARY(log, std::log(x), log_batch(x))
XTRACE_FLOAT_UNARY(sqrt, std::sqrt(x), xsimd::sqrt(x))
XTRACE_FLOAT_UNARY(rsqrt, T(1) / std::sqrt(x), XTRACE_B(T(1)) / xsimd::sqrt(x))
XTRACE_FLOAT_UNARY(sin, std::sin(x), xsimd::sin(x))
XTRACE_FLOAT_UNARY(cos, std::cos(x), xsimd::cos(x))
XTRACE_FLOAT_UNARY(tanh, std::tanh(x), xsimd::tanh(x))
/// erf: xsimd's for float (within 2 ulps of <cmath>'s), <cmath>'s for double, where xsimd's is
/// off by up to 34 ulps.
struct erf {
    template <class T>
    static constexpr bool simd = std::is_same_v<T, float>;
    template <class T>
    T operator()(T x) const {
        return std::erf(x);
    }
    template <class T, class A>
    xsimd::batch<T, A> operator()(const xsimd::batch<T, A>& x) const {
        return xsimd::erf(x);
    }
};
XTRACE_FLOAT_UNARY(sigmoid, T(1) / (T(1) + std::exp(-x)),
                   XTRACE_B(T(1)) / (XTRACE_B(T(1)) + xsimd::exp(-x)))
#undef XTRACE_FLOAT_UNARY

// Floor, ceil and round leave integers unchanged. The batch forms put x's sign on the result:
// a rounded value has x's sign, but some instruction sets' emulations lose it on a zero
// (floor(-0), ceil(-0.5) must be -0).
#define XTRACE_ROUNDING(name, scalar_fn, batch_fn)                                                 \
    struct name {                                                                                  \
        template <class T>                                                                         \
        static constexpr bool simd = is_float_v<T>;                                                \
        template <class T>                                                                         \
        T operator()(T x) const {                                                                  \
            if constexpr (is_float_v<T>)                                                           \
                return scalar_fn(x);                                                               \
            else                                                                                   \
                return x;                                                                          \
        }                                                                                          \
        template <class T, class A>                                                                \
        xsimd::batch<T, A> operator()(const xsimd::batch<T, A>& x) const {                         \
            return batch_fn(x) | (x & xsimd::batch<T, A>(T(-0.0)));                                \
        }                                                                                          \
    };
XTRACE_ROUNDING(floor, std::floor, xsimd::floor)
XTRACE_ROUNDING(ceil, std::ceil, xsimd::ceil)
XTRACE_ROUNDING(round, std::nearbyint, xsimd::nearbyint)
#undef XTRACE_ROUNDING

// Numeric ops with a scalar form for every numeric dtype and a batch form for the dtypes
// `batched` accepts. Products batch floats only: integer lanes multiply element by element,
// wrapping (instruction sets without a 32- or 64-bit lane multiply emulate it with signed C++
// products, which overflow).
#define XTRACE_NUMERIC(name, batched, arity_params, scalar_expr, batch_params, batch_expr)         \
    struct name {                                                                                  \
        template <class T>                                                                         \
        static constexpr bool simd = batched<T>;                                                   \
        template <class T>                                                                         \
        T operator() arity_params const {                                                          \
            return scalar_expr;                                                                    \
        }                                                                                          \
        template <class T, class A>                                                                \
        xsimd::batch<T, A> operator() batch_params const {                                         \
            return batch_expr;                                                                     \
        }                                                                                          \
    };
XTRACE_NUMERIC(neg, is_number_v, (T x), scalar::neg(x), (const XTRACE_B& x), -x)

XTRACE_NUMERIC(relu, is_number_v, (T x), scalar::relu(x), (const XTRACE_B& x),
               xsimd::select(x < XTRACE_B(T(0)), XTRACE_B(T(0)), x))
// Integer scalars wrap as the batch forms do (scalar::add/sub/mul).
XTRACE_NUMERIC(square, is_float_v, (T x), scalar::mul(x, x), (const XTRACE_B& x), x* x)
XTRACE_NUMERIC(mul, is_float_v, (T a, T b), scalar::mul(a, b),
               (const XTRACE_B& a, const XTRACE_B& b), a* b)
XTRACE_NUMERIC(add, is_number_v, (T a, T b), scalar::add(a, b),
               (const XTRACE_B& a, const XTRACE_B& b), a + b)
XTRACE_NUMERIC(sub, is_number_v, (T a, T b), scalar::sub(a, b),
               (const XTRACE_B& a, const XTRACE_B& b), a - b)

XTRACE_NUMERIC(minimum, is_number_v, (T a, T b), scalar::minimum(a, b),
               (const XTRACE_B& a, const XTRACE_B& b), xsimd::select((a < b) | (a != a), a, b))
XTRACE_NUMERIC(maximum, is_number_v, (T a, T b), scalar::maximum(a, b),
               (const XTRACE_B& a, const XTRACE_B& b), xsimd::select((a > b) | (a != a), a, b))
XTRACE_NUMERIC(clip, is_number_v, (T x, T lo, T hi), scalar::minimum(scalar::maximum(x, lo), hi),
               (const XTRACE_B& x, const XTRACE_B& lo, const XTRACE_B& hi),
               minimum{}(maximum{}(x, lo), hi))
#undef XTRACE_NUMERIC

/// |x|: batch form for floats (integers wrap on the minimum value, done per element).
struct abs {
    template <class T>
    static constexpr bool simd = is_float_v<T>;
    template <class T>
    T operator()(T x) const {
        return scalar::abs(x);
    }
    template <class T, class A>
    XTRACE_B operator()(const XTRACE_B& x) const {
        return xsimd::abs(x);
    }
};

/// a / b: batch form for floats; integers go through scalar::div (checked).
struct div {
    template <class T>
    static constexpr bool simd = is_float_v<T>;
    template <class T>
    T operator()(T a, T b) const {
        return scalar::div(a, b);
    }
    template <class T, class A>
    XTRACE_B operator()(const XTRACE_B& a, const XTRACE_B& b) const {
        return a / b;
    }
};

/// a ** b, element by element through std::pow: xsimd's batch pow departs from it at the edges
/// (pow(0, -1) is 0, pow(-inf, 0.5) NaN), and every path must give the same answer.
struct pow {
    template <class T>
    static constexpr bool simd = false;
    template <class T>
    T operator()(T a, T b) const {
        return scalar::pow(a, b);
    }
};
#undef XTRACE_B

// Scalar-only ops (bool results or bool operands); plain loops the compiler vectorises.
#define XTRACE_SCALAR(name, params, expr)                                                          \
    struct name {                                                                                  \
        template <class T>                                                                         \
        static constexpr bool simd = false;                                                        \
        template <class T>                                                                         \
        auto operator() params const {                                                             \
            return expr;                                                                           \
        }                                                                                          \
    };
XTRACE_SCALAR(less, (T a, T b), a < b)
XTRACE_SCALAR(less_equal, (T a, T b), a <= b)
XTRACE_SCALAR(greater, (T a, T b), a > b)
XTRACE_SCALAR(greater_equal, (T a, T b), a >= b)
XTRACE_SCALAR(equal, (T a, T b), a == b)
XTRACE_SCALAR(not_equal, (T a, T b), a != b)
XTRACE_SCALAR(logical_and, (T a, T b), a&& b)
XTRACE_SCALAR(logical_or, (T a, T b), a || b)
XTRACE_SCALAR(logical_xor, (T a, T b), a != b)
XTRACE_SCALAR(logical_not, (T a), !a)
#undef XTRACE_SCALAR

/// c ? a : b; its first operand is bool whatever the branches' dtype.
struct where {
    template <class T>
    static constexpr bool simd = false;
    template <class T>
    using first_operand = bool;
    template <class T>
    T operator()(bool c, T a, T b) const {
        return c ? a : b;
    }
};

} // namespace xtrace::interp::fn

#endif
