#ifndef XTRACE_OPS_REDUCE_HPP
#define XTRACE_OPS_REDUCE_HPP

// Reductions: over all axes, over a list of axes (negative counts from the end), optionally
// keeping the reduced dims with size 1.

#include "../config.hpp"
#include "../eager/apply.hpp"
#include "../eager/tape.hpp"
#include "../graph/shape_inference.hpp"
#include "../interp/kernel_choice.hpp"
#include "tensor_like.hpp"

#include <cstdint>
#include <numeric>
#include <vector>

namespace xtrace {

/// Keeps reduced dims with size 1: `xtrace::sum(x, {1}, xtrace::keep_dims)`.
struct keep_dims_t {};
/// See keep_dims_t.
inline constexpr keep_dims_t keep_dims{};

namespace detail {

template <class Op, class X>
auto reduction(const X& x, std::optional<std::vector<std::int64_t>> axes, bool keep) {
    using T = value_of_t<X>;
    static_assert(!std::is_same_v<T, bool>,
                  "xtrace: reductions are not defined on bool tensors; convert with "
                  "xtrace::cast<T>(x) first");
    std::vector<std::int64_t> all;
    if (!axes) {
        if constexpr (symbolic_tensor<X>)
            if (!x.rank_known()) // every axis, whatever the rank turns out to be
                all = {graph::every_axis};
        if (all.empty()) {
            all.resize(x.rank());
            std::iota(all.begin(), all.end(), std::int64_t(0));
        }
    }
    std::vector<std::int64_t> list = axes ? std::move(*axes) : std::move(all);
    if constexpr (symbolic_tensor<X>)
        return expr::make_reduction<Op>(x, std::move(list), keep,
                                        interp::reduction_kernels<Op, T>());
    else
        return taped(
            eager::reduce<Op>(x, list, keep),
            [&](const auto& s) { return erased<T>(reduction<Op>(s, list, keep)); }, x);
}

} // namespace detail

#define XTRACE_REDUCTION(name)                                                                     \
    template <tensor_like X>                                                                       \
    auto name(const X& x) {                                                                        \
        return detail::reduction<op::name>(x, std::nullopt, false);                                \
    }                                                                                              \
    template <tensor_like X>                                                                       \
    auto name(const X& x, std::vector<std::int64_t> axes) {                                        \
        return detail::reduction<op::name>(x, std::move(axes), false);                             \
    }                                                                                              \
    template <tensor_like X>                                                                       \
    auto name(const X& x, std::vector<std::int64_t> axes, keep_dims_t) {                           \
        return detail::reduction<op::name>(x, std::move(axes), true);                              \
    }

/// Sum over all axes, or the given axes.
XTRACE_REDUCTION(sum)
/// Mean over all axes, or the given axes (integers truncate; an empty mean is NaN, 0 for
/// integers).
XTRACE_REDUCTION(mean)
/// Largest element (NaN if any is NaN; -inf, or the lowest integer, when empty).
XTRACE_REDUCTION(max)
/// Smallest element (NaN if any is NaN; +inf, or the largest integer, when empty).
XTRACE_REDUCTION(min)
/// Product over all axes, or the given axes.
XTRACE_REDUCTION(prod)
#undef XTRACE_REDUCTION

} // namespace xtrace

#endif
