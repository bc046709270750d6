#ifndef XTRACE_EAGER_APPLY_HPP
#define XTRACE_EAGER_APPLY_HPP

// Eager evaluation of each op on xtensor values: the reference the interpreter is tested against.
// It uses xtensor's own functions wherever their meaning is xtrace's, and xtrace::scalar's
// definitions where C++ leaves the meaning open.

#include "../core/scalar_ops.hpp"
#include "../graph/shape_inference.hpp"
#include "tensor.hpp"

#include <array>

namespace xtrace::eager {

namespace detail {

template <class F>
auto map(F f) {
    return xt::vectorize(f);
}

template <class Op, class R, class A>
xt::xarray<R> compute(const xt::xarray<A>& a) {
    constexpr op_kind k = Op::kind;
    if constexpr (k == op_kind::cast)
        return map([](A x) -> R { return scalar::convert<R>(x); })(a);
    else if constexpr (k == op_kind::neg)
        return map([](A x) -> A { return scalar::neg(x); })(a);
    else if constexpr (k == op_kind::abs)
        return map([](A x) -> A { return scalar::abs(x); })(a);
    else if constexpr (k == op_kind::square)
        return a * a;
    else if constexpr (k == op_kind::relu)
        return map([](A x) -> A { return scalar::relu(x); })(a);
    else if constexpr (k == op_kind::floor || k == op_kind::ceil || k == op_kind::round) {
        if constexpr (std::is_integral_v<A>)
            return a;
        else if constexpr (k == op_kind::floor)
            return xt::floor(a);
        else if constexpr (k == op_kind::ceil)
            return xt::ceil(a);
        else
            return xt::nearbyint(a);
    } else if constexpr (k == op_kind::exp)
        return xt::exp(a);
    else if constexpr (k == op_kind::log)
        return xt::log(a);
    else if constexpr (k == op_kind::sqrt)
        return xt::sqrt(a);
    else if constexpr (k == op_kind::rsqrt)
        return A(1) / xt::sqrt(a);
    else if constexpr (k == op_kind::sin)
        return xt::sin(a);
    else if constexpr (k == op_kind::cos)
        return xt::cos(a);
    else if constexpr (k == op_kind::tanh)
        return xt::tanh(a);
    else if constexpr (k == op_kind::sigmoid)
        return A(1) / (A(1) + xt::exp(-a));
    else if constexpr (k == op_kind::logical_not)
        return !a;
    else
        static_assert(xtrace::detail::dependent_false<Op>, "xtrace: no eager unary op");
}

template <class Op, class R, class A>
xt::xarray<R> compute(const xt::xarray<A>& a, const xt::xarray<A>& b) {
    constexpr op_kind k = Op::kind;
    if constexpr (k == op_kind::add)
        return a + b;
    else if constexpr (k == op_kind::sub)
        return a - b;
    else if constexpr (k == op_kind::mul)
        return a * b;
    else if constexpr (k == op_kind::div) {
        if constexpr (std::is_integral_v<A>)
            return map([](A x, A y) -> A { return scalar::div(x, y); })(a, b);
        else
            return a / b;
    } else if constexpr (k == op_kind::pow) {
        if constexpr (std::is_integral_v<A>)
            return map([](A x, A y) -> A { return scalar::pow(x, y); })(a, b);
        else
            return xt::pow(a, b);
    } else if constexpr (k == op_kind::minimum)
        return map([](A x, A y) -> A { return scalar::minimum(x, y); })(a, b);
    else if constexpr (k == op_kind::maximum)
        return map([](A x, A y) -> A { return scalar::maximum(x, y); })(a, b);
    else if constexpr (k == op_kind::less)
        return xt::less(a, b);
    else if constexpr (k == op_kind::less_equal)
        return xt::less_equal(a, b);
    else if constexpr (k == op_kind::greater)
        return xt::greater(a, b);
    else if constexpr (k == op_kind::greater_equal)
        return xt::greater_equal(a, b);
    else if constexpr (k == op_kind::equal)
        return xt::equal(a, b);
    else if constexpr (k == op_kind::not_equal || k == op_kind::logical_xor)
        return xt::not_equal(a, b);
    else if constexpr (k == op_kind::logical_and)
        return a && b;
    else if constexpr (k == op_kind::logical_or)
        return a || b;
    else
        static_assert(xtrace::detail::dependent_false<Op>, "xtrace: no eager binary op");
}

template <class Op, class R, class A, class B, class C>
xt::xarray<R> compute(const xt::xarray<A>& a, const xt::xarray<B>& b, const xt::xarray<C>& c) {
    if constexpr (Op::kind == op_kind::where)
        return xt::where(a, b, c);
    else // clip: max with the low bound, then min with the high one
        return compute<op::minimum, R>(xt::xarray<A>(compute<op::maximum, R>(a, b)), c);
}

} // namespace detail

/// Evaluates `Op(xs...)` now, with result dtype R; throws shape_error as tracing would.
template <class Op, class R, class... Ts>
eager_tensor<R> apply(const eager_tensor<Ts>&... xs) {
    const std::array<shape_t, sizeof...(Ts)> shapes{shape_t(xs.shape())...};
    std::array<const shape_t*, sizeof...(Ts)> ptrs{};
    for (std::size_t i = 0; i < shapes.size(); ++i)
        ptrs[i] = &shapes[i];
    graph::broadcast_operands(Op::kind, ptrs);
    return eager_tensor<R>(detail::compute<Op, R>(xs.value()...));
}

} // namespace xtrace::eager

#endif
