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
#include "reduce.hpp"

#include <array>
#include <cstddef>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace xtrace::interp::static_fusion {

using interp::functor_of;

/// True when node type E is computed inside a fused kernel: an elementwise op with a batch form
/// whose operands share its result's dtype. A fused kernel reads its other operands as leaves.
template <class E>
inline constexpr bool interior = false;
template <class Op, class... Cs>
requires requires {
    typename functor_of<Op>::type;
}
inline constexpr bool interior<node<Op, Cs...>> =
    (std::is_same_v<typename Cs::value_type, typename node<Op, Cs...>::value_type> && ...) &&
    functor_of<Op>::type::template simd<typename node<Op, Cs...>::value_type> &&
    info(Op::kind).result == op_result::same;

/// Leaves of expression E, counted with repetition (the tree, not the DAG): what a fused kernel
/// of E reads.
template <class E>
inline constexpr std::size_t leaf_count = 1;
template <class Op, class... Cs>
requires interior<node<Op, Cs...>>
inline constexpr std::size_t leaf_count<node<Op, Cs...>> = (leaf_count<Cs> + ...);

/// Ops a fused kernel of E computes, counted with repetition.
template <class E>
inline constexpr std::size_t op_count = 0;
template <class Op, class... Cs>
requires interior<node<Op, Cs...>>
inline constexpr std::size_t op_count<node<Op, Cs...>> = (std::size_t(1) + ... + op_count<Cs>);

/// True when E compiles to one SIMD loop over its arguments and constants: elementwise ops, one
/// dtype throughout, batch forms.
template <class E>
inline constexpr bool fusable = false;
template <std::size_t I, class T>
inline constexpr bool fusable<arg<I, T>> = std::is_arithmetic_v<T> && !std::is_same_v<T, bool>;
template <class T>
inline constexpr bool fusable<constant<T>> = std::is_arithmetic_v<T> && !std::is_same_v<T, bool>;
template <class Op, class... Cs>
requires interior<node<Op, Cs...>>
inline constexpr bool fusable<node<Op, Cs...>> = (fusable<Cs> && ...);

/// Most leaves a statically fused kernel takes (larger expressions use the interpreter).
inline constexpr std::size_t max_leaves = plan::max_fused_leaves;

/// Most nodes of a statically fused expression: a compiled kernel costs compile time per node,
/// and its gain over the block interpreter, which pays per op and block, shrinks as the
/// expression grows. Larger expressions use the interpreter (still fused, block by block).
inline constexpr std::size_t max_nodes = XTRACE_STATIC_FUSION_MAX_NODES;

/// In a partitioned expression type, a subtree computed by a fused piece of its own: the piece
/// above reads its result as a leaf.
template <class C>
struct cut {
    using value_type = typename C::value_type; ///< element type
};

/// True when E is computed from reductions and constants by elementwise ops only: usually a value
/// of a smaller shape (one per row, say) that the expression broadcasts. A piece that computed it
/// would do so for every element it broadcasts to, so partitioning makes it a piece of its own.
template <class E>
inline constexpr bool from_reductions = false;
template <class T>
inline constexpr bool from_reductions<constant<T>> = true;
template <class Op, class... Cs>
inline constexpr bool from_reductions<node<Op, Cs...>> = [] {
    if constexpr (info(Op::kind).reduction)
        return true;
    else if constexpr (info(Op::kind).elementwise)
        return (from_reductions<Cs> && ...);
    else
        return false;
}();

template <class C>
inline constexpr bool from_reductions<cut<C>> = from_reductions<C>;

/// True when E computes an op that a math library function does (exp, tanh, ...): the compiler
/// calls it rather than inlining it, and each call is a wall its scheduling cannot cross.
template <class E>
inline constexpr bool calls_out = false;
template <class Op, class... Cs>
inline constexpr bool
    calls_out<node<Op, Cs...>> = transcendental(Op::kind) || Op::kind == op_kind::pow ||
                                 (calls_out<Cs> || ...);

namespace detail {

// What a kernel reads, copied out of the caller's table before its loop: the compiler then
// knows that the stores into the output change neither the pointers nor the constants, so it
// keeps them in registers instead of reloading both for every batch. `Ones` says what the
// kernel's loop knows of the leaves that may be one value: all are (1), none is (0), or only the
// mask `one` tells (-1). A row splat (every such leaf one value) is the usual case, and a loop
// that knows it broadcasts once instead of testing the mask batch by batch. `Twins` says that
// every op whose two operands have one type reads the same leaves through both (see twins).
template <class T, std::size_t L, int Ones = -1, bool Twins = false>
struct leaf_table {
    const T* at[L];        // each leaf's elements
    T value[L];            // a leaf's value when it is one value (a constant, a row splat)
    std::uint64_t one = 0; // leaves computed from reductions that are one value (bit per leaf)
    static constexpr bool twins = Twins;

    /// True when leaf `Leaf`, which may be one value, is.
    template <std::size_t Leaf>
    XTRACE_INLINE bool is_one() const {
        if constexpr (Ones >= 0)
            return Ones == 1;
        else
            return one >> Leaf & 1;
    }
};

// A leaf read element by element: an argument, or any value the kernel does not compute. A
// leaf computed from reductions may be one value for the whole call instead (a row splat).
template <class E, std::size_t Leaf>
struct eval {
    using T = typename E::value_type;
    static constexpr bool may_be_one = from_reductions<E>;
    template <class B, class Table>
    static B batch(const Table& t, std::size_t i) {
        if constexpr (may_be_one)
            if (t.template is_one<Leaf>())
                return B(t.value[Leaf]);
        return B::load_unaligned(t.at[Leaf] + i);
    }
    template <class B, std::size_t U, class Table>
    XTRACE_TREE_INLINE static void lanes(const Table& t, std::size_t i, std::array<B, U>& r) {
        if constexpr (may_be_one)
            if (t.template is_one<Leaf>()) {
                r.fill(B(t.value[Leaf]));
                return;
            }
        for (std::size_t u = 0; u < U; ++u)
            r[u] = B::load_unaligned(t.at[Leaf] + i + u * B::size);
    }
    template <class Table>
    static T one(const Table& t, std::size_t i) {
        if constexpr (may_be_one)
            if (t.template is_one<Leaf>())
                return t.value[Leaf];
        return t.at[Leaf][i];
    }
    template <class Table>
    static void load(Table& t, const void* const*) {
        if constexpr (may_be_one)
            if (t.template is_one<Leaf>())
                t.value[Leaf] = *t.at[Leaf];
    }
    static bool twins(const void* const*, std::uint64_t) { return true; }
    static constexpr bool has_twins = false;
    static constexpr std::uint64_t one_value_leaves = may_be_one ? std::uint64_t(1) << Leaf : 0;
};

// A constant: one value.
template <class T, std::size_t Leaf>
struct eval<constant<T>, Leaf> {
    template <class B, class Table>
    static B batch(const Table& t, std::size_t) {
        return B(t.value[Leaf]);
    }
    template <class B, std::size_t U, class Table>
    XTRACE_TREE_INLINE static void lanes(const Table& t, std::size_t, std::array<B, U>& r) {
        r.fill(B(t.value[Leaf]));
    }
    template <class Table>
    static T one(const Table& t, std::size_t) {
        return t.value[Leaf];
    }
    template <class Table>
    static void load(Table& t, const void* const* leaves) {
        t.value[Leaf] = *static_cast<const T*>(leaves[Leaf]);
    }
    static bool twins(const void* const*, std::uint64_t) { return true; }
    static constexpr bool has_twins = false;
    static constexpr std::uint64_t one_value_leaves = 0; // always one value
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
requires interior<node<Op, Cs...>>
struct eval<node<Op, Cs...>, Leaf> {
    using F = typename functor_of<Op>::type;
    // Two operands of one type (`d * d`, `x * x`): when the table says they read the same leaves,
    // the first is computed once and taken for both, which the compiler cannot do on its own, as
    // it does not know that the two operands' leaf pointers are equal.
    static constexpr bool twin = [] {
        if constexpr (sizeof...(Cs) == 2)
            return std::is_same_v<std::tuple_element_t<0, std::tuple<Cs...>>,
                                  std::tuple_element_t<1, std::tuple<Cs...>>>;
        else
            return false;
    }();
    using first = eval<std::tuple_element_t<0, std::tuple<Cs...>>, Leaf>;
    template <class B, class Table>
    XTRACE_TREE_INLINE static B batch(const Table& t, std::size_t i) {
        if constexpr (twin && Table::twins) {
            const B a = first::template batch<B>(t, i);
            return F{}(a, a);
        }
        return [&]<std::size_t... K>(std::index_sequence<K...>) XTRACE_LAMBDA_INLINE {
            return F{}(eval<Cs, Leaf + offset_of<K, Cs...>>::template batch<B>(t, i)...);
        }
        (std::index_sequence_for<Cs...>{});
    }
    // U batches side by side. A tree without library calls is evaluated whole for each batch in
    // turn, in one basic block that the core overlaps, with few values live. A tree with them is
    // evaluated op by op across the U batches, as the U calls of each op then run back to back
    // with their operands ready, instead of each call waiting on the chain before it.
    // The batches go into `r` rather than out as a returned array: GCC copies an aggregate of
    // batches in 256-bit pieces on many x86 targets, and a 512-bit batch read back from two
    // 256-bit stores misses store forwarding and stalls (a third of a 42-op chain's time on an
    // AVX-512 Xeon).
    template <class B, std::size_t U, class Table>
    XTRACE_TREE_INLINE static void lanes(const Table& t, std::size_t i, std::array<B, U>& r) {
        if constexpr (!calls_out<node<Op, Cs...>>) {
            for (std::size_t u = 0; u < U; ++u)
                r[u] = batch<B>(t, i + u * B::size);
        } else {
            [&]<std::size_t... K>(std::index_sequence<K...>) XTRACE_LAMBDA_INLINE {
                std::array<B, U> in[sizeof...(Cs)];
                (eval<Cs, Leaf + offset_of<K, Cs...>>::template lanes<B, U>(t, i, in[K]), ...);
                for (std::size_t u = 0; u < U; ++u)
                    r[u] = F{}(in[K][u]...);
            }
            (std::index_sequence_for<Cs...>{});
        }
    }
    template <class Table>
    static auto one(const Table& t, std::size_t i) {
        if constexpr (twin && Table::twins) {
            const auto a = first::one(t, i);
            return F{}(a, a);
        } else {
            return [&]<std::size_t... K>(std::index_sequence<K...>) {
                return F{}(eval<Cs, Leaf + offset_of<K, Cs...>>::one(t, i)...);
            }
            (std::index_sequence_for<Cs...>{});
        }
    }
    template <class Table>
    static void load(Table& t, const void* const* leaves) {
        [&]<std::size_t... K>(std::index_sequence<K...>) {
            (eval<Cs, Leaf + offset_of<K, Cs...>>::load(t, leaves), ...);
        }
        (std::index_sequence_for<Cs...>{});
    }
    // True when every twin op in this tree reads the same leaves, and the same one-value mask
    // bits, through both operands.
    static bool twins(const void* const* leaves, std::uint64_t one) {
        if constexpr (twin) {
            constexpr std::size_t n = leaf_count<std::tuple_element_t<0, std::tuple<Cs...>>>;
            for (std::size_t k = 0; k < n; ++k)
                if (leaves[Leaf + k] != leaves[Leaf + n + k] ||
                    (one >> (Leaf + k) & 1) != (one >> (Leaf + n + k) & 1))
                    return false;
        }
        return [&]<std::size_t... K>(std::index_sequence<K...>) {
            return (eval<Cs, Leaf + offset_of<K, Cs...>>::twins(leaves, one) && ...);
        }
        (std::index_sequence_for<Cs...>{});
    }
    static constexpr bool has_twins = twin || (eval<Cs, Leaf>::has_twins || ...);
    static constexpr std::uint64_t one_value_leaves = [] {
        return [&]<std::size_t... K>(std::index_sequence<K...>) {
            return (std::uint64_t(0) | ... |
                    eval<Cs, Leaf + offset_of<K, Cs...>>::one_value_leaves);
        }
        (std::index_sequence_for<Cs...>{});
    }();
};

} // namespace detail

/// Batches a compiled kernel computes side by side: one batch at a time, a kernel of many ops waits
/// on each op's latency. A tree of inlined ops is evaluated whole for each batch, in one basic
/// block the core overlaps (building each op's operands for all batches at once as arrays keeps
/// more values live than there are registers); a tree with library calls op by op across the
/// batches (eval::lanes).
inline constexpr std::size_t unroll = XTRACE_STATIC_FUSION_UNROLL;

/// Leaves of E (bit k: leaf k) that its kernel can read as one value: those computed from
/// reductions (a row's mean, say), which the interpreter may pass as the value of a block's row.
template <class E>
inline constexpr std::uint64_t one_value_leaves = detail::eval<E, 0>::one_value_leaves;

/// Computes n elements of E into `out` from the leaf table: pointers in depth-first leaf order
/// and, when one_value_leaves<E> is not 0, a pointer to the mask of those that are one value.
using kernel_fn = void (*)(const void* const* leaves, void* out, std::size_t n);

namespace detail {

// v, as the compiler must take it: a value whose last op it cannot fuse with the add or multiply
// that folds it into a reduction, so a folded piece's elements round as stored ones do.
template <class V>
XTRACE_INLINE V rounded(V v) {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    return interp::detail::in_register(v);
#else
#if defined(__GNUC__)
    asm("" : "+m"(v));
#endif
    return v;
#endif
}

// The table a kernel of E reads: its leaf pointers, the mask of leaves that are one value, and
// those values.
template <class E, int Ones = -1, bool Twins = false>
leaf_table<typename E::value_type, leaf_count<E>, Ones, Twins> table_of(const void* const* leaves) {
    using T = typename E::value_type;
    leaf_table<T, leaf_count<E>, Ones, Twins> t;
    for (std::size_t k = 0; k < leaf_count<E>; ++k) {
        // One pointer per load. The caller has just stored them one by one, and a vector load
        // spanning two of those stores cannot take their values from the store buffer: it
        // waits for both to reach the cache, which on a small call costs more than the ops.
        const void* p = leaves[k];
#if defined(__GNUC__)
        asm("" : "+r"(p));
#endif
        t.at[k] = static_cast<const T*>(p);
    }
    if constexpr (one_value_leaves<E> != 0)
        t.one = *static_cast<const std::uint64_t*>(leaves[leaf_count<E>]);
    eval<E, 0>::load(t, leaves);
    return t;
}

// Calls `run` with E's leaf table, its leaves that may be one value known to the compiler when
// all or none of them are: the loop in `run` is then compiled without the mask's tests. And when
// E's twin ops read the same leaves through both operands, a table that says so (the loop then
// computes each twin once). Not for an E that calls out (a transcendental): more copies of its
// loop would no longer inline the call, which costs more than the tests.
// `next`: the leaves of a second row when the kernel runs several (twins must be twins in both,
// and so in every row, as the leaves move on by fixed steps), else null.
template <class E, class Run>
XTRACE_INLINE void with_table(const void* const* leaves, const void* const* next, Run&& run) {
    if constexpr (!calls_out<E>) {
        constexpr std::uint64_t may = one_value_leaves<E>;
        const std::uint64_t one =
            may != 0 ? *static_cast<const std::uint64_t*>(leaves[leaf_count<E>]) : 0;
        if constexpr (eval<E, 0>::has_twins) {
            if (eval<E, 0>::twins(leaves, one) && (!next || eval<E, 0>::twins(next, one))) {
                if constexpr (may == 0)
                    return run(table_of<E, -1, true>(leaves));
                if (one == may)
                    return run(table_of<E, 1, true>(leaves));
                if (one == 0)
                    return run(table_of<E, 0, true>(leaves));
            }
        }
        if constexpr (may != 0) {
            if (one == may)
                return run(table_of<E, 1>(leaves));
            if (one == 0)
                return run(table_of<E, 0>(leaves));
        }
    }
    run(table_of<E>(leaves));
}

// Runs `row(t, r)` for rows r = 0 .. rows-1 of E, with t the leaf table of row r: row 0's is
// `leaves`, and each next row's leaves are the last's moved on by `steps` (bytes; null when
// there is one row), its one values read again.
template <class E, class Row>
XTRACE_INLINE void each_row(const void* const* leaves, const std::ptrdiff_t* steps,
                            std::size_t rows, Row&& row) {
    constexpr std::size_t L = leaf_count<E>;
    const void* next[L + 1];
    if (rows > 1) {
        for (std::size_t k = 0; k < L; ++k)
            next[k] = static_cast<const std::byte*>(leaves[k]) + steps[k];
        next[L] = leaves[L];
    }
    with_table<E>(leaves, rows > 1 ? next : nullptr, [&](const auto& first) {
        auto t = first;
        for (std::size_t r = 0;;) {
            row(t, r);
            if (++r == rows)
                return;
            for (std::size_t k = 0; k < L; ++k)
                t.at[k] = reinterpret_cast<const typename E::value_type*>(
                    reinterpret_cast<const std::byte*>(t.at[k]) + steps[k]);
            eval<E, 0>::load(t, leaves);
        }
    });
}

} // namespace detail

/// A kernel over several rows (see graph::rows_fn).
using rows_fn = graph::rows_fn;

/// Computes `rows` rows of n elements of E: row r from the leaf table moved on by r times
/// `steps` (bytes per leaf), into out + r * out_step (bytes). One call for a few rows that each
/// read their own row splat, in place of a call per row. Not inlined: kernel, its one-row form,
/// calls it, so each piece's loop is compiled once.
template <class E>
XTRACE_NOINLINE void rows_kernel(const void* const* leaves, const std::ptrdiff_t* steps, void* out,
                                 std::ptrdiff_t out_step, std::size_t n, std::size_t rows) {
    using T = typename E::value_type;
    using B = simd::batch<T>;
    detail::each_row<E>(leaves, steps, rows, [&](const auto& t, std::size_t r) {
        T* o = reinterpret_cast<T*>(static_cast<std::byte*>(out) +
                                    static_cast<std::ptrdiff_t>(r) * out_step);
        std::size_t i = 0;
        for (; i + unroll * B::size <= n; i += unroll * B::size) {
            std::array<B, unroll> v;
            detail::eval<E, 0>::template lanes<B, unroll>(t, i, v);
            for (std::size_t u = 0; u < unroll; ++u)
                v[u].store_unaligned(o + i + u * B::size);
        }
        for (; i + B::size <= n; i += B::size)
            detail::eval<E, 0>::template batch<B>(t, i).store_unaligned(o + i);
        for (; i < n; ++i)
            o[i] = static_cast<T>(detail::eval<E, 0>::one(t, i));
    });
}

/// Computes n elements of E from the leaf table (kernel_fn): rows_kernel's one row.
template <class E>
void kernel(const void* const* leaves, void* out, std::size_t n) {
    rows_kernel<E>(leaves, nullptr, out, 0, n, 1);
}

/// Computes `rows` rows of n elements of E, as rows_kernel moves them on, stores them unless
/// `out` is null, and folds them into the results of reduction Red over its innermost dims
/// (graph::fold_rows_fn; row r's elements are start + r * n on): each stretch within one result
/// reduces in the order interp::detail::reduce_run reduces a stored one.
template <class E, class Red>
XTRACE_NOINLINE void fold_rows_kernel(const void* const* leaves, const std::ptrdiff_t* steps,
                                      void* out, std::ptrdiff_t out_step, std::size_t start,
                                      std::size_t n, std::size_t inner, std::byte* acc,
                                      std::size_t rows) {
    using T = typename E::value_type;
    using R = interp::detail::reducer<Red, T>;
    using B = simd::batch<T>;
    using V = detail::eval<E, 0>;
    T* results = reinterpret_cast<T*>(acc);
    // Each row one result (a row sweep's rows, reduced whole): no division per row to find it.
    const bool whole = inner != 0 && n == inner && start % inner == 0;
    const std::size_t row0 = whole ? start / inner : 0;
    // Row r: elements start + r * n on, stored at out + r * out_step.
    auto fold = [&](const auto& t, std::size_t r, auto stores) {
        T* o = out ? reinterpret_cast<T*>(static_cast<std::byte*>(out) +
                                          static_cast<std::ptrdiff_t>(r) * out_step)
                   : nullptr;
        const std::size_t first = start + r * n;
        for (std::size_t i = 0; i < n;) {
            const std::size_t row = whole ? row0 + r : (first + i) / inner;
            const std::size_t end = whole ? n : std::min(n, (row + 1) * inner - first);
            const T run = interp::detail::reduce_elements<R, T>(
                end - i,
                [&](std::size_t j) {
                    std::array<B, 4> v;
                    V::template lanes<B, 4>(t, i + j, v);
                    for (std::size_t u = 0; u < 4; ++u) {
                        v[u] = detail::rounded(v[u]);
                        if constexpr (decltype(stores)::value)
                            v[u].store_unaligned(o + i + j + u * B::size);
                    }
                    return v;
                },
                [&](std::size_t j) {
                    const B v = detail::rounded(V::template batch<B>(t, i + j));
                    if constexpr (decltype(stores)::value)
                        v.store_unaligned(o + i + j);
                    return v;
                },
                [&](std::size_t j) {
                    const T v = detail::rounded(static_cast<T>(V::one(t, i + j)));
                    if constexpr (decltype(stores)::value)
                        o[i + j] = v;
                    return v;
                },
                [&](std::size_t j) { // what the first pass stored, or the same again
                    if constexpr (decltype(stores)::value)
                        return interp::detail::load_batches<B, 4>(o + i + j);
                    else {
                        std::array<B, 4> v;
                        V::template lanes<B, 4>(t, i + j, v);
                        return v;
                    }
                });
            results[row] = R::combine(results[row], run);
            i = end;
        }
    };
    detail::each_row<E>(leaves, steps, rows, [&](const auto& t, std::size_t r) {
        if (out)
            fold(t, r, std::true_type{});
        else
            fold(t, r, std::false_type{});
    });
}

/// Computes n elements of E, stores them at `out` unless it is null, and folds them into the
/// results of reduction Red (graph::fold_fn): fold_rows_kernel's one row.
template <class E, class Red>
void fold_kernel(const void* const* leaves, void* out, std::size_t start, std::size_t n,
                 std::size_t inner, std::byte* acc) {
    fold_rows_kernel<E, Red>(leaves, nullptr, out, 0, start, n, inner, acc, 1);
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

/// Most nodes (leaves included) of an expression type whose fused pieces are attached to its
/// graph: attaching walks the type as a tree, which repetition can make exponential in the DAG.
inline constexpr std::size_t max_piece_walk = 4096;

namespace detail {

template <std::size_t N>
constexpr std::size_t largest_of(const std::array<std::size_t, N>& v) {
    std::size_t k = 0;
    for (std::size_t i = 1; i < N; ++i)
        if (v[i] > v[k])
            k = i;
    return k;
}

} // namespace detail

/// Expression E partitioned into fused pieces of at most max_nodes ops and max_leaves leaves,
/// bottom up: where a node's piece would grow past them, its largest child (or every child)
/// becomes a cut, the root of a piece of its own; so does a child computed from reductions only
/// under a node that is not. `ops` and `leaves` are the top piece's.
template <class E>
struct partition {
    using type = E; // a leaf: nothing to fuse
    static constexpr std::size_t ops = 0, leaves = 1;
};
template <class Op, class... Cs>
requires interior<node<Op, Cs...>>
struct partition<node<Op, Cs...>> {
    static constexpr std::array<std::size_t, sizeof...(Cs)> child_ops{partition<Cs>::ops...},
        child_leaves{partition<Cs>::leaves...};
    static constexpr std::size_t all_ops = (std::size_t(1) + ... + partition<Cs>::ops),
                                 all_leaves = (partition<Cs>::leaves + ...);
    static constexpr bool over = all_ops > max_nodes || all_leaves > max_leaves;
    static constexpr std::size_t largest = detail::largest_of(child_ops);
    static constexpr bool over_without_largest =
        all_ops - child_ops[largest] > max_nodes ||
        all_leaves - child_leaves[largest] + 1 > max_leaves;
    static constexpr std::array<bool, sizeof...(Cs)> reduced{from_reductions<Cs>...};
    template <std::size_t K>
    static constexpr bool cut_child = child_ops[K] > 0 &&
                                      ((over && (over_without_largest || K == largest)) ||
                                       (reduced[K] && !from_reductions<node<Op, Cs...>>));
    template <std::size_t K, class C>
    using child = std::conditional_t<cut_child<K>, cut<typename partition<C>::type>,
                                     typename partition<C>::type>;
    static constexpr auto sums = [] {
        std::size_t ops = 1, leaves = 0;
        [&]<std::size_t... K>(std::index_sequence<K...>) {
            ((ops += cut_child<K> ? 0 : child_ops[K], leaves += cut_child<K> ? 1 : child_leaves[K]),
             ...);
        }
        (std::index_sequence_for<Cs...>{});
        return std::array<std::size_t, 2>{ops, leaves};
    }();
    template <class Seq>
    struct rebuilt;
    template <std::size_t... K>
    struct rebuilt<std::index_sequence<K...>> {
        using type = node<Op, child<K, Cs>...>;
    };
    using type = typename rebuilt<std::index_sequence_for<Cs...>>::type;
    static constexpr std::size_t ops = sums[0], leaves = sums[1];
};

namespace detail {

// Matching a partitioned expression type against the graph below a node. mirror checks that the
// nodes have the type's ops and collects a piece's leaves in its kernel's order; root attaches
// the piece rooted at a node and goes on below it; below finds the pieces under a piece's leaves.
template <class E>
struct walk { // an argument or an erased value: a leaf, with nothing below to fuse
    static bool mirror(const graph::graph& g, graph::node_id id,
                       std::vector<graph::node_id>& leaves) {
        if (g[id].op == op_kind::constant) // read element by element: must be a whole tensor
            return false;
        leaves.push_back(id);
        return true;
    }
    template <class Red = void>
    static void root(graph::graph&, graph::node_id) {}
    static void below(graph::graph&, graph::node_id) {}
};

template <class T>
struct walk<constant<T>> : walk<void*> {
    static bool mirror(const graph::graph& g, graph::node_id id,
                       std::vector<graph::node_id>& leaves) {
        if (g[id].op != op_kind::constant || g[id].type != dtype_of_v<T>)
            return false;
        leaves.push_back(id);
        return true;
    }
};

template <class C>
struct walk<cut<C>> : walk<void*> {
    static void below(graph::graph& g, graph::node_id id) { walk<C>::template root<>(g, id); }
};

template <class Op, class... Cs>
struct walk<node<Op, Cs...>> {
    using E = node<Op, Cs...>;
    static bool mirror(const graph::graph& g, graph::node_id id,
                       std::vector<graph::node_id>& leaves) {
        const graph::node& n = g[id];
        if constexpr (interior<E>) {
            if (n.op != Op::kind || n.type != dtype_of_v<typename E::value_type> ||
                n.inputs.size() != sizeof...(Cs))
                return false;
            return [&]<std::size_t... K>(std::index_sequence<K...>) {
                return (walk<Cs>::mirror(g, n.inputs[K], leaves) && ...);
            }
            (std::index_sequence_for<Cs...>{});
        } else {
            return walk<void*>::mirror(g, id, leaves);
        }
    }
    // Red: the reduction reading the piece's root, whose kernel then comes fused with it too.
    template <class Red = void>
    static void root(graph::graph& g, graph::node_id id) {
        if constexpr (interior<E> && op_count<E> >= 2) {
            std::vector<graph::node_id> leaves;
            if (mirror(g, id, leaves) && leaves.size() == leaf_count<E>) {
                graph::fused_piece piece{&kernel<E>, op_count<E>, std::move(leaves),
                                         one_value_leaves<E>};
                piece.rows = &rows_kernel<E>;
                if constexpr (!std::is_void_v<Red>) {
                    piece.fold = &fold_kernel<E, Red>;
                    piece.fold_rows = &fold_rows_kernel<E, Red>;
                    piece.fold_op = Red::kind;
                    piece.fold_width = simd::batch<typename E::value_type>::size;
                }
                g.nodes[id].piece = std::make_shared<const graph::fused_piece>(std::move(piece));
            }
        }
        below(g, id);
    }
    static void below(graph::graph& g, graph::node_id id) {
        if constexpr (interior<E> || info(Op::kind).elementwise || info(Op::kind).reduction) {
            if (g[id].op != Op::kind || g[id].inputs.size() != sizeof...(Cs))
                return;
            const std::vector<graph::node_id> in = g[id].inputs;
            [&]<std::size_t... K>(std::index_sequence<K...>) {
                // In a piece its operands go on it; under another op each roots its own.
                if constexpr (interior<E>)
                    (walk<Cs>::below(g, in[K]), ...);
                else if constexpr (info(Op::kind).reduction)
                    (walk<typename partition<Cs>::type>::template root<Op>(g, in[K]), ...);
                else
                    (walk<typename partition<Cs>::type>::template root<>(g, in[K]), ...);
            }
            (std::index_sequence_for<Cs...>{});
        }
    }
};

template <class R>
void attach_to_output(graph::graph& g, std::size_t k) {
    if constexpr (expr::tree_size<R> <= max_piece_walk)
        walk<typename partition<R>::type>::template root<>(g, g.outputs[k]);
}

} // namespace detail

/// Marks the roots of the fused pieces of `g`, a graph traced from a lambda that returned R (a
/// symbolic tensor, or a tuple or pair of them): each gets its subtree's compiled kernel.
template <class R>
void attach_pieces(graph::graph& g) {
    if constexpr (requires { typename R::value_type; }) {
        if (g.outputs.size() == 1)
            detail::attach_to_output<R>(g, 0);
    } else {
        [&]<std::size_t... K>(std::index_sequence<K...>) {
            if (g.outputs.size() == sizeof...(K))
                (detail::attach_to_output<std::tuple_element_t<K, R>>(g, K), ...);
        }
        (std::make_index_sequence<std::tuple_size_v<R>>{});
    }
}

} // namespace xtrace::interp::static_fusion

#endif
