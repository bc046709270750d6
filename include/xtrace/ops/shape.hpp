#ifndef XTRACE_OPS_SHAPE_HPP
#define XTRACE_OPS_SHAPE_HPP

// Shape ops. While tracing they are strided views of their input where one will do (transpose,
// expand_dims, squeeze, broadcast_to; reshape of a contiguous intermediate) and copies otherwise.

#include "../eager/apply.hpp"
#include "../eager/tape.hpp"
#include "tensor_like.hpp"

#include <cstdint>
#include <vector>

namespace xtrace {

namespace detail {
template <class Op, class X>
auto shape_op(const X& x, std::vector<std::int64_t> attrs) {
    if constexpr (symbolic_tensor<X>)
        return expr::make_shape_op<Op>(x, std::move(attrs));
    else
        return taped(
            eager::shape_op<Op>(x, attrs),
            [&](const auto& s) { return erased<typename X::value_type>(shape_op<Op>(s, attrs)); },
            x);
}
} // namespace detail

/// The same elements in row-major order with shape `dims`; one dim may be -1 (inferred).
template <tensor_like X>
auto reshape(const X& x, std::vector<std::int64_t> dims) {
    return detail::shape_op<op::reshape>(x, std::move(dims));
}

/// Dims in reverse order.
template <tensor_like X>
auto transpose(const X& x) {
    return detail::shape_op<op::transpose>(x, {});
}

/// Dims permuted: result dim i is x's dim perm[i] (negative counts from the end).
template <tensor_like X>
auto transpose(const X& x, std::vector<std::int64_t> perm) {
    return detail::shape_op<op::transpose>(x, std::move(perm));
}

/// A new dim of size 1 at `axis` (in [-rank-1, rank]).
template <tensor_like X>
auto expand_dims(const X& x, std::int64_t axis) {
    return detail::shape_op<op::expand_dims>(x, {axis});
}

/// Dim `axis`, which must have size 1, removed.
template <tensor_like X>
auto squeeze(const X& x, std::int64_t axis) {
    return detail::shape_op<op::squeeze>(x, {axis});
}

/// x broadcast (NumPy rules) to exactly `dims`.
template <tensor_like X>
auto broadcast_to(const X& x, std::vector<std::int64_t> dims) {
    return detail::shape_op<op::broadcast_to>(x, std::move(dims));
}

} // namespace xtrace

#endif
