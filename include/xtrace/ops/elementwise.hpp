#ifndef XTRACE_OPS_ELEMENTWISE_HPP
#define XTRACE_OPS_ELEMENTWISE_HPP

// The elementwise operations users call. Each checks its operands once, here (dtype agreement,
// weak scalars, the op's domain), then records a node while tracing or computes now when eager.

#include "../eager/apply.hpp"
#include "../eager/tape.hpp"
#include "../interp/kernel_choice.hpp"
#include "tensor_like.hpp"

#include <limits>
#include <string>

namespace xtrace {
namespace detail {

template <class Op, class T>
constexpr void check_domain() {
    constexpr op_domain d = info(Op::kind).domain;
    if constexpr (d == op_domain::floating)
        static_assert(std::is_floating_point_v<T>,
                      "xtrace: this op needs a floating-point tensor (float or double); convert an "
                      "integer or bool tensor first with xtrace::cast<float>(x)");
    else if constexpr (d == op_domain::numeric)
        static_assert(!std::is_same_v<T, bool>,
                      "xtrace: arithmetic and ordering are not defined on bool tensors; convert "
                      "with xtrace::cast<T>(x) first, or use & | ^ ! for logic");
    else if constexpr (d == op_domain::logical)
        static_assert(std::is_same_v<T, bool>,
                      "xtrace: & | ^ ! need bool tensors; make one with a comparison (x > 0) or "
                      "xtrace::cast<bool>(x)");
}

// The tensors among Xs share dtype T and the scalars fit T. (Symbolic tensors beside eager ones
// are variable reads in eager code: they are evaluated, see eager/evaluate.hpp.)
template <class T, class... Xs>
constexpr void check_operands() {
    static_assert(((!tensor_like<Xs> || std::is_same_v<value_of_t<Xs>, T>)&&...),
                  "xtrace: tensors of different dtypes cannot be combined; convert one with "
                  "xtrace::cast<T>(x)");
    static_assert(((!weak_scalar<Xs> || scalar_fits_v<std::remove_cvref_t<Xs>, T>)&&...),
                  "xtrace: a scalar must fit the tensor's dtype: no floating-point scalar with an "
                  "integer tensor, only bool scalars with bool tensors; use xtrace::cast<T>(x)");
}

// A weak scalar converted to T; integers out of T's range are an error, not a silent wrap.
template <class T, class S>
T scalar_as(S s, std::string_view op) {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool> && std::is_integral_v<S>) {
        if (!std::in_range<T>(s))
            throw error("xtrace::" + std::string(op) + ": scalar " + std::to_string(s) +
                        " does not fit " + std::string(dtype_name(dtype_of_v<T>)));
    }
    return static_cast<T>(s);
}

// An operand in the form of the path that `Like` is on: scalars become constants.
template <class T, class Op, class Like, class X>
decltype(auto) lift(const Like& like, const X& x) {
    if constexpr (tensor_like<X>)
        return (x);
    else if constexpr (symbolic_tensor<Like>)
        return expr::make_constant<T>(like, scalar_as<T>(x, Op::name));
    else {
        auto v = xt::xarray<T>::from_shape({});
        v() = scalar_as<T>(x, Op::name);
        return eager_tensor<T>(std::move(v));
    }
}

template <class X, class... Xs>
const auto& first_tensor(const X& x, const Xs&... xs) {
    if constexpr (tensor_like<X>)
        return x;
    else
        return first_tensor(xs...);
}

// Records Op over symbolic operands with the kernels its types choose.
template <class Op, class... Children>
auto make_node(const Children&... children) {
    using R = typename xtrace::node<Op, Children...>::value_type;
    return expr::make_node<Op>(
        interp::elementwise_kernels<Op, expr::operand_t<Op, Children...>, R>(), children...);
}

// Op over already checked operands with result type R.
template <class Op, class R, class T, class... Xs>
auto apply_eager(const Xs&... xs) {
    return eager::apply<Op, R>(lift<T, Op>(first_tensor(xs...), xs)...);
}

template <class Op, class R, class T, class... Xs>
auto apply(const Xs&... xs) {
    if constexpr (records_v<Xs...>)
        return make_node<Op>(lift<T, Op>(first_tensor(xs...), xs)...);
    else
        return taped(
            apply_eager<Op, R, T>(to_eager(xs)...),
            [](const auto&... s) { return erased<R>(apply<Op, R, T>(s...)); }, xs...);
}

// An elementwise op whose operands all share one dtype T.
template <class Op, class... Xs>
auto elementwise(const Xs&... xs) {
    using T = typename first_tensor_value<Xs...>::type;
    check_operands<T, Xs...>();
    check_domain<Op, T>();
    if constexpr ((symbolic_tensor<Xs> && ...)) {
        return make_node<Op>(xs...); // the common case, in as few instantiations as may be
    } else {
        using R = std::conditional_t<info(Op::kind).result == op_result::boolean, bool, T>;
        return apply<Op, R, T>(xs...);
    }
}

template <class A, class B>
concept binary_operands = (tensor_like<A> && operand<B>) || (weak_scalar<A> && tensor_like<B>);

} // namespace detail

// ---- unary ------------------------------------------------------------------------------------

#define XTRACE_UNARY(name)                                                                         \
    template <tensor_like X>                                                                       \
    auto name(const X& x) {                                                                        \
        return detail::elementwise<op::name>(x);                                                   \
    }

/// |x|.
XTRACE_UNARY(abs)
/// e^x.
XTRACE_UNARY(exp)
/// Natural logarithm.
XTRACE_UNARY(log)
/// Square root.
XTRACE_UNARY(sqrt)
/// 1 / sqrt(x).
XTRACE_UNARY(rsqrt)
/// Sine.
XTRACE_UNARY(sin)
/// Cosine.
XTRACE_UNARY(cos)
/// Hyperbolic tangent.
XTRACE_UNARY(tanh)
/// 1 / (1 + e^-x).
XTRACE_UNARY(sigmoid)
/// The error function, 2/sqrt(pi) times the integral of e^-t^2 from 0 to x (exact GELU's).
XTRACE_UNARY(erf)
/// max(x, 0); NaN stays NaN.
XTRACE_UNARY(relu)
/// x * x.
XTRACE_UNARY(square)
/// Largest integer not greater than x (integers unchanged).
XTRACE_UNARY(floor)
/// Smallest integer not less than x (integers unchanged).
XTRACE_UNARY(ceil)
/// Nearest integer, halves to even as numpy.round and tf.round (integers unchanged).
XTRACE_UNARY(round)
#undef XTRACE_UNARY

/// -x (integers wrap).
template <tensor_like X>
auto operator-(const X& x) {
    return detail::elementwise<op::neg>(x);
}

/// Logical not of a bool tensor.
template <tensor_like X>
auto operator!(const X& x) {
    return detail::elementwise<op::logical_not>(x);
}

/// x converted to element type T; floating to integer saturates, NaN gives 0.
template <class T, tensor_like X>
auto cast(const X& x) {
    static_assert(is_supported_dtype_v<T>, "xtrace::cast<T>: T must be float, double, "
                                           "std::int32_t, std::int64_t or bool");
    if constexpr (std::is_same_v<T, detail::value_of_t<X>>)
        return x;
    else
        return detail::apply<op::cast<T>, T, detail::value_of_t<X>>(x);
}

// ---- binary -----------------------------------------------------------------------------------

#define XTRACE_BINARY(fn, tag)                                                                     \
    template <class A, class B>                                                                    \
    requires detail::binary_operands<A, B>                                                         \
    auto fn(const A& a, const B& b) {                                                              \
        return detail::elementwise<op::tag>(a, b);                                                 \
    }

/// a + b.
XTRACE_BINARY(operator+, add)
/// a - b.
XTRACE_BINARY(operator-, sub)
/// a * b.
XTRACE_BINARY(operator*, mul)
/// a / b; integers truncate toward zero and throw xtrace::error on division by zero.
XTRACE_BINARY(operator/, div)
/// Elementwise a < b, a bool tensor.
XTRACE_BINARY(operator<, less)
/// Elementwise a <= b.
XTRACE_BINARY(operator<=, less_equal)
/// Elementwise a > b.
XTRACE_BINARY(operator>, greater)
/// Elementwise a >= b.
XTRACE_BINARY(operator>=, greater_equal)
/// Elementwise a == b.
XTRACE_BINARY(operator==, equal)
/// Elementwise a != b.
XTRACE_BINARY(operator!=, not_equal)
/// Logical and of bool tensors.
XTRACE_BINARY(operator&, logical_and)
/// Logical or of bool tensors.
XTRACE_BINARY(operator|, logical_or)
/// Logical exclusive or of bool tensors.
XTRACE_BINARY(operator^, logical_xor)
/// a to the power b (integers exactly; a negative integer power truncates).
XTRACE_BINARY(pow, pow)
/// Elementwise smaller value; NaN if either is NaN.
XTRACE_BINARY(minimum, minimum)
/// Elementwise larger value; NaN if either is NaN.
XTRACE_BINARY(maximum, maximum)
#undef XTRACE_BINARY

// ---- ternary ----------------------------------------------------------------------------------

/// min(max(x, lo), hi), elementwise; lo and hi are tensors or scalars.
template <tensor_like X, operand L, operand H>
auto clip(const X& x, const L& lo, const H& hi) {
    return detail::elementwise<op::clip>(x, lo, hi);
}

/// Elementwise choice: a where c is true, else b. Both branches are computed.
template <tensor_like C, operand A, operand B>
auto where(const C& c, const A& a, const B& b) {
    static_assert(std::is_same_v<detail::value_of_t<C>, bool>,
                  "xtrace::where(c, a, b): c must be a bool tensor; make one with a comparison "
                  "(x > 0) or xtrace::cast<bool>(x)");
    using T = std::conditional_t<tensor_like<A>, detail::value_of_t<A>, detail::value_of_t<B>>;
    static_assert(tensor_like<A> || tensor_like<B> || std::is_same_v<A, B>,
                  "xtrace::where(c, a, b): give the two scalar branches the same type");
    using U = std::conditional_t<std::is_void_v<T>, A, T>;
    static_assert(is_supported_dtype_v<U>,
                  "xtrace::where(c, a, b): scalar branches must be float, double, std::int32_t, "
                  "std::int64_t or bool");
    detail::check_operands<U, A, B>();
    return detail::apply<op::where, U, U>(c, a, b);
}

} // namespace xtrace

#endif
