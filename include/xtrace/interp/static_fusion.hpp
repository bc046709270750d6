#ifndef XTRACE_INTERP_STATIC_FUSION_HPP
#define XTRACE_INTERP_STATIC_FUSION_HPP

// Static fusion: the expression *type* is the graph, so a purely elementwise expression can be
// compiled into one xsimd loop that keeps every intermediate in registers. A traced function
// whose graph qualifies runs this kernel instead of the block interpreter whenever the call's
// shapes allow it (every argument contiguous and of the output's shape, or a constant).
//
// The kernel reads its leaves (arguments and constants) from a table in depth-first order of
// the type; the plan fills the same table by walking the graph from the output, which mirrors
// the type node for node.

#include "../expr/node.hpp"
#include "../plan/plan.hpp"
#include "kernels.hpp"

#include <cstddef>
#include <type_traits>

namespace xtrace::interp::static_fusion {

using interp::functor_of;

/// Leaves of expression E, counted with repetition (the tree, not the DAG).
template <class E>
inline constexpr std::size_t leaf_count = 1;
template <class Op, class... Cs>
inline constexpr std::size_t leaf_count<node<Op, Cs...>> = (leaf_count<Cs> + ...);

/// True when E compiles to one SIMD loop: elementwise ops, one dtype throughout, batch forms.
template <class E>
inline constexpr bool fusable = false;
template <std::size_t I, class T>
inline constexpr bool fusable<arg<I, T>> = std::is_arithmetic_v<T> && !std::is_same_v<T, bool>;
template <class T>
inline constexpr bool fusable<constant<T>> = std::is_arithmetic_v<T> && !std::is_same_v<T, bool>;
template <class Op, class... Cs>
requires requires {
    typename functor_of<Op>::type;
}
inline constexpr bool fusable<node<Op, Cs...>> =
    ((fusable<Cs> &&
      std::is_same_v<typename Cs::value_type, typename node<Op, Cs...>::value_type>)&&...) &&
    functor_of<Op>::type::template simd<typename node<Op, Cs...>::value_type> &&
    info(Op::kind).result == op_result::same;

/// Most leaves a statically fused kernel takes (larger expressions use the interpreter).
inline constexpr std::size_t max_leaves = plan::max_fused_leaves;

/// Most nodes of a statically fused expression: a compiled kernel costs compile time per node,
/// and its gain over the block interpreter, which pays per op and block, shrinks as the
/// expression grows. Larger expressions use the interpreter (still fused, block by block).
inline constexpr std::size_t max_nodes = XTRACE_STATIC_FUSION_MAX_NODES;

namespace detail {

template <class E, std::size_t Leaf>
struct eval;

template <std::size_t I, class T, std::size_t Leaf>
struct eval<arg<I, T>, Leaf> {
    template <class B>
    static B batch(const void* const* leaves, std::size_t i) {
        return B::load_unaligned(static_cast<const T*>(leaves[Leaf]) + i);
    }
    static T one(const void* const* leaves, std::size_t i) {
        return static_cast<const T*>(leaves[Leaf])[i];
    }
};

template <class T, std::size_t Leaf>
struct eval<constant<T>, Leaf> {
    template <class B>
    static B batch(const void* const* leaves, std::size_t) {
        return B(*static_cast<const T*>(leaves[Leaf]));
    }
    static T one(const void* const* leaves, std::size_t) {
        return *static_cast<const T*>(leaves[Leaf]);
    }
};

// Leaf offset of child K of a node: the leaves of the children before it.
template <std::size_t K, class... Cs>
inline constexpr std::size_t offset_of = [] {
    constexpr std::size_t counts[] = {leaf_count<Cs>...};
    std::size_t sum = 0;
    for (std::size_t i = 0; i < K; ++i)
        sum += counts[i];
    return sum;
}();

template <class Op, class... Cs, std::size_t Leaf>
struct eval<node<Op, Cs...>, Leaf> {
    using F = typename functor_of<Op>::type;
    template <class B>
    static B batch(const void* const* leaves, std::size_t i) {
        return [&]<std::size_t... K>(std::index_sequence<K...>) {
            return F{}(eval<Cs, Leaf + offset_of<K, Cs...>>::template batch<B>(leaves, i)...);
        }
        (std::index_sequence_for<Cs...>{});
    }
    static auto one(const void* const* leaves, std::size_t i) {
        return [&]<std::size_t... K>(std::index_sequence<K...>) {
            return F{}(eval<Cs, Leaf + offset_of<K, Cs...>>::one(leaves, i)...);
        }
        (std::index_sequence_for<Cs...>{});
    }
};

} // namespace detail

/// Computes n elements of E into `out` from the leaf table (pointers in depth-first leaf order).
using kernel_fn = void (*)(const void* const* leaves, void* out, std::size_t n);

template <class E>
void kernel(const void* const* leaves, void* out, std::size_t n) {
    using T = typename E::value_type;
    using B = simd::batch<T>;
    T* o = static_cast<T*>(out);
    std::size_t i = 0;
    for (; i + B::size <= n; i += B::size)
        detail::eval<E, 0>::template batch<B>(leaves, i).store_unaligned(o + i);
    for (; i < n; ++i)
        o[i] = static_cast<T>(detail::eval<E, 0>::one(leaves, i));
}

/// True when E gets a compiled kernel: fusable, and within the node and leaf limits.
template <class E>
inline constexpr bool qualifies =
    expr::tree_size<E> <= max_nodes&& leaf_count<E> <= max_leaves&& fusable<E>;

/// The compiled kernel of E, or nullptr when E does not qualify.
template <class E>
constexpr kernel_fn kernel_for() {
    if constexpr (qualifies<E>)
        return &kernel<E>;
    else
        return nullptr;
}

} // namespace xtrace::interp::static_fusion

#endif
