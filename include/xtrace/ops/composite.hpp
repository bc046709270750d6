#ifndef XTRACE_OPS_COMPOSITE_HPP
#define XTRACE_OPS_COMPOSITE_HPP

// Ops built from others, written to stay finite where the naive formula overflows: the maximum
// is subtracted before exponentiating.

#include "elementwise.hpp"
#include "reduce.hpp"

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace xtrace {

namespace detail {
// max over `axis` kept as size 1, clamped to the finite range so that x - m stays defined for
// rows of -inf (their result is then -inf or 0, as TensorFlow's) and for rows holding +inf
// (softmax's infinite entries are then NaN, its finite ones 0). Two ops of the input's dtype,
// which a row sweep runs as one compiled piece (a test for infinity would take a bool and a
// select, run op by op).
// `op` names the caller in the axis error (the max inside is an implementation detail).
template <tensor_like X>
auto stable_shift(const X& x, std::int64_t axis, std::string_view op) {
    using T = value_of_t<X>;
    static_assert(std::is_floating_point_v<T>,
                  "xtrace::softmax / logsumexp need a floating-point tensor; convert with "
                  "xtrace::cast<float>(x)");
    bool rank_known = true; // else the max below checks the axis when the graph is planned
    if constexpr (symbolic_tensor<X>)
        rank_known = x.rank_known();
    const auto rank = rank_known ? static_cast<std::int64_t>(x.rank()) : 0;
    if (rank_known && (axis < -rank || axis >= rank))
        throw shape_error("xtrace::" + std::string(op) + ": axis " + std::to_string(axis) +
                          " is out of range for shape " + shape_string(x.shape()));
    auto m = max(x, {axis}, keep_dims);
    return minimum(maximum(m, std::numeric_limits<T>::lowest()), std::numeric_limits<T>::max());
}
} // namespace detail

/// exp(x) / sum(exp(x)) along `axis` (default the last), computed without overflow.
template <tensor_like X>
auto softmax(const X& x, std::int64_t axis = -1) {
    auto e = exp(x - detail::stable_shift(x, axis, "softmax"));
    return e / sum(e, {axis}, keep_dims);
}

/// log(sum(exp(x))) along `axis` (the axis is removed), computed without overflow.
template <tensor_like X>
auto logsumexp(const X& x, std::int64_t axis = -1) {
    auto m = detail::stable_shift(x, axis, "logsumexp");
    return log(sum(exp(x - m), {axis})) + sum(m, {axis});
}

} // namespace xtrace

#endif
