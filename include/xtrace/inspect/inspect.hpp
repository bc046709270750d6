#ifndef XTRACE_INSPECT_INSPECT_HPP
#define XTRACE_INSPECT_INSPECT_HPP

// Compile-time inspection of a graph type G (an expression type, e.g. xtrace::graph_t<F, Args...>):
// how many nodes, how deep, which ops, and a printed form, all constant expressions.
// The tree is the expression type as written: a subexpression used twice counts twice.

#include "../core/dtype.hpp"
#include "../expr/node.hpp"
#include "fixed_string.hpp"

#include <boost/hana/tuple.hpp>

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <type_traits>
#include <utility>

namespace xtrace::inspect {

namespace detail {

// One variable template per property, so that asking for one (node_count in a static_assert)
// computes only that one, not the printed form of every subtree.

template <class G>
inline constexpr bool is_expression = false;
template <std::size_t I, class T>
inline constexpr bool is_expression<arg<I, T>> = true;
template <class T>
inline constexpr bool is_expression<constant<T>> = true;
template <class T>
inline constexpr bool is_expression<erased<T>> = true;
template <class Op, class... Cs>
inline constexpr bool is_expression<node<Op, Cs...>> = true;

template <class G>
constexpr bool check_expression() {
    static_assert(is_expression<G>, "xtrace::inspect: G must be an expression type, such as "
                                    "xtrace::graph_t<decltype(f), Args...>");
    return true;
}

template <class G>
inline constexpr std::size_t depth_of = 1;
template <class Op, class... Cs>
inline constexpr std::size_t depth_of<node<Op, Cs...>> = 1 + std::max({depth_of<Cs>...});

template <class G, class Other>
inline constexpr std::size_t count = 0;
template <class Op, class... Cs, class Other>
inline constexpr std::size_t count<node<Op, Cs...>, Other> = (Other::kind == Op::kind ? 1 : 0) +
                                                             (std::size_t(0) + ... +
                                                              count<Cs, Other>);

template <class Op>
inline constexpr std::string_view name_of = Op::name;

template <class G>
inline constexpr auto text = lit("t"); // an erased tensor
template <std::size_t I, class T>
inline constexpr auto text<arg<I, T>> = lit("x") + number<I>();
template <class T>
inline constexpr auto text<constant<T>> = lit("c");

template <class C, class... Cs>
constexpr auto joined() {
    if constexpr (sizeof...(Cs) == 0)
        return text<C>;
    else
        return text<C> + lit(", ") + joined<Cs...>();
}

template <class Op, class... Cs>
inline constexpr auto text<node<Op, Cs...>> = from_view<name_of<Op>>() +
                                              lit("(") + joined<Cs...>() + lit(")");

// Distinct op tags in depth-first preorder, as a list of types.
template <class... Ts>
struct list {};

template <class L, class T>
struct add_unique;
template <class... Ts, class T>
struct add_unique<list<Ts...>, T> {
    using type = std::conditional_t<(std::is_same_v<T, Ts> || ...), list<Ts...>, list<Ts..., T>>;
};

template <class L, class G>
struct collect {
    using type = L; // leaves add no op
};
template <class L, class Op, class... Cs>
struct collect<L, node<Op, Cs...>> {
    template <class Acc, class... Rest>
    struct fold {
        using type = Acc;
    };
    template <class Acc, class C, class... Rest>
    struct fold<Acc, C, Rest...> {
        using type = typename fold<typename collect<Acc, C>::type, Rest...>::type;
    };
    using type = typename fold<typename add_unique<L, Op>::type, Cs...>::type;
};

template <class L>
struct as_tuple;
template <class... Ts>
struct as_tuple<list<Ts...>> {
    static constexpr auto value = boost::hana::make_tuple(Ts{}...);
};

} // namespace detail

/// Nodes of G, leaves (arguments, constants) included.
template <class G>
inline constexpr std::size_t node_count = (detail::check_expression<G>(), expr::tree_size<G>);

/// Longest path from G's root to a leaf, counted in nodes (a lone leaf has depth 1).
template <class G>
inline constexpr std::size_t depth = (detail::check_expression<G>(), detail::depth_of<G>);

/// How many nodes of G apply op Op (`op::cast<>` counts every cast).
template <class G, class Op>
inline constexpr std::size_t count_op = (detail::check_expression<G>(), detail::count<G, Op>);

/// The distinct op tags of G, in depth-first order of first use, as a boost::hana tuple.
template <class G>
inline constexpr auto ops =
    detail::as_tuple<typename detail::collect<detail::list<>, G>::type>::value;

namespace detail {

template <class G>
constexpr auto label() {
    if constexpr (requires { typename G::op_type; })
        return from_view<name_of<typename G::op_type>>();
    else
        return text<G>;
}

template <class G, std::size_t Id>
struct dot;

// Node Id's line, then each child's subtree and edge; children are numbered in preorder.
template <class G, std::size_t Id>
constexpr auto dot_lines() {
    auto self = lit("  n") + number<Id>() + lit(" [label=\"") + label<G>() + lit("\"];\n");
    if constexpr (requires { typename G::op_type; })
        return self + dot<G, Id>::children();
    else
        return self;
}

template <class G, std::size_t Id>
struct dot {
    static constexpr auto children() { return lit(""); }
};
template <class Op, class... Cs, std::size_t Id>
struct dot<node<Op, Cs...>, Id> {
    template <std::size_t K>
    static constexpr std::size_t child_id = [] {
        constexpr std::size_t sizes[] = {expr::tree_size<Cs>...};
        std::size_t id = Id + 1;
        for (std::size_t i = 0; i < K; ++i)
            id += sizes[i];
        return id;
    }();
    static constexpr auto children() {
        return [&]<std::size_t... K>(std::index_sequence<K...>) {
            return (lit("") + ... +
                    (dot_lines<Cs, child_id<K>>() + lit("  n") + number<child_id<K>>() +
                     lit(" -> n") + number<Id>() + lit(";\n")));
        }
        (std::index_sequence_for<Cs...>{});
    }
};

template <class G>
inline constexpr auto dot_of = lit("digraph xtrace {\n  node [shape=box];\n") + dot_lines<G, 0>() +
                               lit("}\n");

} // namespace detail

/// G in Graphviz DOT, one box per node of the tree (a constant expression).
template <class G>
constexpr std::string_view to_dot() {
    static_assert(detail::check_expression<G>());
    return detail::dot_of<G>.view();
}

/// G printed as a call tree: "add(mul(exp(x0), x1), c)" (x<i>: argument i, c: a constant,
/// t: an erased tensor).
template <class G>
constexpr std::string_view to_string() {
    static_assert(detail::check_expression<G>());
    return detail::text<G>.view();
}

} // namespace xtrace::inspect

#endif
