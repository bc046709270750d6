#ifndef XTRACE_EAGER_APPLY_HPP
#define XTRACE_EAGER_APPLY_HPP

// Eager evaluation of each op on xtensor values: the reference the interpreter is tested against.
// It uses xtensor's own functions wherever their meaning is xtrace's, and xtrace::scalar's
// definitions where C++ leaves the meaning open.

#include "../config.hpp"
#include "../core/op.hpp"
#include "../core/scalar_ops.hpp"
#include "../graph/shape_inference.hpp"
#include "tensor.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <tuple>
#include <type_traits>
#include <vector>

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
        return map([](A x) -> A { return scalar::mul(x, x); })(a);
    else if constexpr (k == op_kind::relu)
        return map([](A x) -> A { return scalar::relu(x); })(a);
    else if constexpr (k == op_kind::floor || k == op_kind::ceil || k == op_kind::round) {
        // Element by element: xtensor's SIMD forms (XTENSOR_USE_XSIMD) may lose -0.
        if constexpr (std::is_integral_v<A>)
            return a;
        else if constexpr (k == op_kind::floor)
            return map([](A x) -> A { return std::floor(x); })(a);
        else if constexpr (k == op_kind::ceil)
            return map([](A x) -> A { return std::ceil(x); })(a);
        else
            return map([](A x) -> A { return scalar::round(x); })(a);
    }
    // Transcendentals through <cmath>, element by element: the reference stays independent of
    // xsimd, which xtensor uses for them under XTENSOR_USE_XSIMD (and whose log loses
    // subnormals).
    else if constexpr (k == op_kind::exp)
        return map([](A x) -> A { return std::exp(x); })(a);
    else if constexpr (k == op_kind::log)
        return map([](A x) -> A { return std::log(x); })(a);
    else if constexpr (k == op_kind::sqrt)
        return map([](A x) -> A { return std::sqrt(x); })(a);
    else if constexpr (k == op_kind::rsqrt)
        return map([](A x) -> A { return A(1) / std::sqrt(x); })(a);
    else if constexpr (k == op_kind::sin)
        return map([](A x) -> A { return std::sin(x); })(a);
    else if constexpr (k == op_kind::cos)
        return map([](A x) -> A { return std::cos(x); })(a);
    else if constexpr (k == op_kind::tanh)
        return map([](A x) -> A { return std::tanh(x); })(a);
    else if constexpr (k == op_kind::erf)
        return map([](A x) -> A { return std::erf(x); })(a);
    else if constexpr (k == op_kind::sigmoid)
        return map([](A x) -> A { return A(1) / (A(1) + std::exp(-x)); })(a);
    else if constexpr (k == op_kind::logical_not)
        return map([](A x) -> bool { return !x; })(a);
    else
        static_assert(xtrace::detail::dependent_false<Op>, "xtrace: no eager unary op");
}

template <class Op, class R, class A>
xt::xarray<R> compute(const xt::xarray<A>& a, const xt::xarray<A>& b) {
    constexpr op_kind k = Op::kind;
    if constexpr (std::is_integral_v<A> &&
                  (k == op_kind::add || k == op_kind::sub || k == op_kind::mul)) { // integers wrap
        if constexpr (k == op_kind::add)
            return map([](A x, A y) -> A { return scalar::add(x, y); })(a, b);
        else if constexpr (k == op_kind::sub)
            return map([](A x, A y) -> A { return scalar::sub(x, y); })(a, b);
        else
            return map([](A x, A y) -> A { return scalar::mul(x, y); })(a, b);
    } else if constexpr (k == op_kind::add)
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
        return map([](A x, A y) -> A { return scalar::pow(x, y); })(a, b);
    } else if constexpr (k == op_kind::minimum)
        return map([](A x, A y) -> A { return scalar::minimum(x, y); })(a, b);
    else if constexpr (k == op_kind::maximum)
        return map([](A x, A y) -> A { return scalar::maximum(x, y); })(a, b);
    // Bool results element by element: xtensor 0.26's SIMD comparisons (XTENSOR_USE_XSIMD)
    // give wrong bools under broadcasting.
    else if constexpr (k == op_kind::less)
        return map([](A x, A y) -> bool { return x < y; })(a, b);
    else if constexpr (k == op_kind::less_equal)
        return map([](A x, A y) -> bool { return x <= y; })(a, b);
    else if constexpr (k == op_kind::greater)
        return map([](A x, A y) -> bool { return x > y; })(a, b);
    else if constexpr (k == op_kind::greater_equal)
        return map([](A x, A y) -> bool { return x >= y; })(a, b);
    else if constexpr (k == op_kind::equal)
        return map([](A x, A y) -> bool { return x == y; })(a, b);
    else if constexpr (k == op_kind::not_equal || k == op_kind::logical_xor)
        return map([](A x, A y) -> bool { return x != y; })(a, b);
    else if constexpr (k == op_kind::logical_and)
        return map([](A x, A y) -> bool { return x && y; })(a, b);
    else if constexpr (k == op_kind::logical_or)
        return map([](A x, A y) -> bool { return x || y; })(a, b);
    else
        static_assert(xtrace::detail::dependent_false<Op>, "xtrace: no eager binary op");
}

template <class Op, class R, class A, class B, class C>
xt::xarray<R> compute(const xt::xarray<A>& a, const xt::xarray<B>& b, const xt::xarray<C>& c) {
    if constexpr (Op::kind == op_kind::where) // (xt::where's SIMD form fails on bools in 0.26)
        return map([](A p, B x, C y) -> R { return p ? x : y; })(a, b, c);
    else // clip: max with the low bound, then min with the high one
        return compute<op::minimum, R>(xt::xarray<A>(compute<op::maximum, R>(a, b)), c);
}

/// compute<Op, R> for the op and dtypes named at run time: `in` points at the operands
/// (xt::xarray of `operand`; for where, a bool one and two of `operand`), `out` at an
/// xt::xarray of `result`. What eager ops call when the runtime is compiled separately, so
/// that programs compile xtensor's evaluation of each op once.
XTRACE_DECL void compute_erased(op_kind op, dtype operand, dtype result, const void* const* in,
                                void* out);

} // namespace detail

/// Evaluates `Op(xs...)` now, with result dtype R; throws shape_error as tracing would.
template <class Op, class R, class... Ts>
XTRACE_NOINLINE eager_tensor<R> apply(const eager_tensor<Ts>&... xs) {
    const std::array<shape_t, sizeof...(Ts)> shapes{shape_t(xs.shape())...};
    std::array<const shape_t*, sizeof...(Ts)> ptrs{};
    for (std::size_t i = 0; i < shapes.size(); ++i)
        ptrs[i] = &shapes[i];
    graph::broadcast_operands(Op::kind, ptrs);
#if defined(XTRACE_SEPARATE_COMPILATION)
    using operand = std::tuple_element_t<Op::kind == op_kind::where ? 1 : 0, std::tuple<Ts...>>;
    const void* in[] = {&xs.value()...};
    xt::xarray<R> out;
    detail::compute_erased(Op::kind, dtype_of_v<operand>, dtype_of_v<R>, in, &out);
    return eager_tensor<R>(std::move(out));
#else
    return eager_tensor<R>(detail::compute<Op, R>(xs.value()...));
#endif
}

namespace detail {
// A reduction over normalised axes, element by element: every input element is combined into
// the output element its kept indices name, starting from `identity`. What max and min use
// (NaN propagates) and integer sums and products (they wrap, in any order).
template <class T, class Combine>
xt::xarray<T> fold(const xt::xarray<T>& in, const shape_t& shape,
                   const std::vector<std::int64_t>& axes, T identity, Combine combine) {
    const shape_t out_shape = graph::reduce_shape(shape, axes, false);
    auto out =
        xt::xarray<T>::from_shape(std::vector<std::size_t>(out_shape.begin(), out_shape.end()));
    out.fill(identity);
    std::vector<std::size_t> index(shape.size(), 0);
    for (auto it = in.begin(); it != in.end(); ++it) {
        std::size_t flat = 0;
        for (std::size_t d = 0, o = 0; d < shape.size(); ++d)
            if (!std::binary_search(axes.begin(), axes.end(), std::int64_t(d)))
                flat = flat * static_cast<std::size_t>(out_shape[o++]) + index[d];
        T& slot = out.data()[flat];
        slot = combine(slot, *it);
        for (std::size_t d = shape.size(); d-- > 0;) {
            if (++index[d] < static_cast<std::size_t>(shape[d]))
                break;
            index[d] = 0;
        }
    }
    return out;
}
} // namespace detail

/// matmul(a, b), by the definition: one dot product per result element.
template <class T>
XTRACE_NOINLINE eager_tensor<T> matmul(const eager_tensor<T>& a, const eager_tensor<T>& b) {
    const shape_t as(a.shape()), bs(b.shape());
    const shape_t out = graph::matmul_shape(as, bs);
    auto r = xt::xarray<T>::from_shape(std::vector<std::size_t>(out.begin(), out.end()));
    const std::size_t batch_rank = out.size() - 2;
    const auto m = static_cast<std::size_t>(out[batch_rank]),
               n = static_cast<std::size_t>(out[batch_rank + 1]);
    const auto k = static_cast<std::size_t>(as.back());
    // Broadcast both operands' batch dims to the result's, keeping their matrix dims.
    auto expand = [&](const xt::xarray<T>& v, const shape_t& s) {
        std::vector<std::size_t> target(out.begin(), out.end() - 2);
        target.push_back(static_cast<std::size_t>(s[s.size() - 2]));
        target.push_back(static_cast<std::size_t>(s[s.size() - 1]));
        return xt::xarray<T>(xt::broadcast(v, target));
    };
    const xt::xarray<T> ea = expand(a.value(), as), eb = expand(b.value(), bs);
    const std::size_t batches = r.size() / std::max<std::size_t>(m * n, 1);
    for (std::size_t t = 0; t < batches; ++t)
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < n; ++j) {
                T sum = 0;
                for (std::size_t p = 0; p < k; ++p)
                    sum = scalar::add(sum, scalar::mul(ea.data()[(t * m + i) * k + p],
                                                       eb.data()[(t * k + p) * n + j]));
                r.data()[(t * m + i) * n + j] = sum;
            }
    return eager_tensor<T>(std::move(r));
}

/// Shape op Op of x with attributes `attrs`, as tracing would compute it.
template <class Op, class T>
XTRACE_NOINLINE eager_tensor<T> shape_op(const eager_tensor<T>& x,
                                         std::vector<std::int64_t> attrs) {
    const shape_t in(x.shape());
    const auto a = graph::normalize_shape_op(Op::kind, in, std::move(attrs));
    const shape_t out = graph::shape_op_result(Op::kind, in, a);
    const std::vector<std::size_t> dims(out.begin(), out.end());
    if constexpr (Op::kind == op_kind::transpose) {
        return eager_tensor<T>(
            xt::xarray<T>(xt::transpose(x.value(), std::vector<std::size_t>(a.begin(), a.end()))));
    } else if constexpr (Op::kind == op_kind::broadcast_to) {
        return eager_tensor<T>(xt::xarray<T>(xt::broadcast(x.value(), dims)));
    } else { // reshape, expand_dims, squeeze: the same elements in row-major order
        xt::xarray<T> r = x.value();
        r.reshape(dims);
        return eager_tensor<T>(std::move(r));
    }
}

/// Reduction Op of x over `axes` (negative allowed), as tracing would compute it.
template <class Op, class T>
XTRACE_NOINLINE eager_tensor<T> reduce(const eager_tensor<T>& x, std::vector<std::int64_t> axes,
                                       bool keep_dims) {
    const shape_t shape(x.shape());
    const auto norm = graph::normalize_axes(Op::kind, shape, std::move(axes));
    const std::vector<std::size_t> ax(norm.begin(), norm.end());
    std::size_t count = 1;
    for (auto a : norm)
        count *= static_cast<std::size_t>(shape[static_cast<std::size_t>(a)]);
    constexpr op_kind k = Op::kind;
    xt::xarray<T> r;
    if (norm.empty()) {
        r = x.value();
    } else if (x.value().size() == 0 && k != op_kind::max && k != op_kind::min) {
        // xtensor's reducers step through a null buffer here; the result is the identity.
        const shape_t s = graph::reduce_shape(shape, norm, false);
        r = xt::xarray<T>::from_shape(std::vector<std::size_t>(s.begin(), s.end()));
        r.fill(k == op_kind::prod ? T(1) : T(0));
    } else if constexpr (std::is_integral_v<T> && k != op_kind::max && k != op_kind::min) {
        if constexpr (k == op_kind::prod)
            r = detail::fold(x.value(), shape, norm, T(1), scalar::mul<T>);
        else
            r = detail::fold(x.value(), shape, norm, T(0), scalar::add<T>);
    } else if constexpr (k == op_kind::sum || k == op_kind::mean)
        r = xt::sum(x.value(), ax);
    else if constexpr (k == op_kind::prod)
        r = xt::prod(x.value(), ax);
    else if constexpr (k == op_kind::max)
        r = detail::fold(x.value(), shape, norm,
                         std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                              : std::numeric_limits<T>::lowest(),
                         scalar::maximum<T>);
    else
        r = detail::fold(x.value(), shape, norm,
                         std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                                              : std::numeric_limits<T>::max(),
                         scalar::minimum<T>);
    if constexpr (k == op_kind::mean) {
        if (!norm.empty()) {
            if constexpr (std::is_integral_v<T>)
                r = count == 0 ? xt::xarray<T>(xt::zeros_like(r))
                               : xt::xarray<T>(r / static_cast<T>(count));
            else
                r = r / static_cast<T>(count);
        }
    }
    const shape_t out = graph::reduce_shape(shape, norm, keep_dims);
    r.reshape(std::vector<std::size_t>(out.begin(), out.end()));
    return eager_tensor<T>(std::move(r));
}

} // namespace xtrace::eager

#if XTRACE_DEFINE_RUNTIME && defined(XTRACE_SEPARATE_COMPILATION)

namespace xtrace::eager::detail {

XTRACE_DECL void compute_erased(op_kind op, dtype operand, dtype result, const void* const* in,
                                void* out) {
    auto arg = [&](std::size_t k, auto tag) -> decltype(auto) {
        return *static_cast<const xt::xarray<typename decltype(tag)::type>*>(in[k]);
    };
    visit_elementwise<int>(op, operand, result, 0, [&](auto tag, auto t, auto r) {
        using Op = decltype(tag);
        using R = typename decltype(r)::type;
        auto& o = *static_cast<xt::xarray<R>*>(out);
        constexpr int arity = info(Op::kind).arity;
        if constexpr (arity == 1)
            o = compute<Op, R>(arg(0, t));
        else if constexpr (arity == 2)
            o = compute<Op, R>(arg(0, t), arg(1, t));
        else if constexpr (Op::kind == op_kind::where)
            o = compute<Op, R>(arg(0, std::type_identity<bool>{}), arg(1, t), arg(2, t));
        else
            o = compute<Op, R>(arg(0, t), arg(1, t), arg(2, t));
        return 0;
    });
}

} // namespace xtrace::eager::detail

#endif

#endif
