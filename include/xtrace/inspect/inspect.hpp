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

template <class G>
struct tree {
    static_assert(xtrace::detail::dependent_false<G>,
                  "xtrace::inspect: G must be an expression type, such as "
                  "xtrace::graph_t<decltype(f), Args...>");
};
template <std::size_t I, class T>
struct tree<arg<I, T>> {
    static constexpr std::size_t nodes = 1, depth = 1;
    template <class Op>
    static constexpr std::size_t count = 0;
    static constexpr auto text = lit("x") + number<I>();
};
template <class T>
struct tree<constant<T>> {
    static constexpr std::size_t nodes = 1, depth = 1;
    template <class Op>
    static constexpr std::size_t count = 0;
    static constexpr auto text = lit("c");
};
template <class T>
struct tree<erased<T>> {
    static constexpr std::size_t nodes = 1, depth = 1;
    template <class Op>
    static constexpr std::size_t count = 0;
    static constexpr auto text = lit("t");
};

template <class Op>
inline constexpr std::string_view name_of = Op::name;

template <class C, class... Cs>
constexpr auto joined() {
    if constexpr (sizeof...(Cs) == 0)
        return tree<C>::text;
    else
        return tree<C>::text + lit(", ") + joined<Cs...>();
}

template <class Op, class... Cs>
struct tree<node<Op, Cs...>> {
    static constexpr std::size_t nodes = (std::size_t(1) + ... + tree<Cs>::nodes);
    static constexpr std::size_t depth = 1 + std::max({tree<Cs>::depth...});
    template <class Other>
    static constexpr std::size_t count = (Other::kind == Op::kind ? 1 : 0) +
                                         (std::size_t(0) + ... + tree<Cs>::template count<Other>);
    static constexpr auto text = from_view<name_of<Op>>() + lit("(") + joined<Cs...>() + lit(")");
};

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
inline constexpr std::size_t node_count = detail::tree<G>::nodes;

/// Longest path from G's root to a leaf, counted in nodes (a lone leaf has depth 1).
template <class G>
inline constexpr std::size_t depth = detail::tree<G>::depth;

/// How many nodes of G apply op Op (`op::cast<>` counts every cast).
template <class G, class Op>
inline constexpr std::size_t count_op = detail::tree<G>::template count<Op>;

/// The distinct op tags of G, in depth-first order of first use, as a boost::hana tuple.
template <class G>
inline constexpr auto ops =
    detail::as_tuple<typename detail::collect<detail::list<>, G>::type>::value;

namespace detail {
template <class G>
inline constexpr auto text_of = tree<G>::text;
} // namespace detail

namespace detail {

template <class G>
constexpr auto label() {
    if constexpr (requires { typename G::op_type; })
        return from_view<name_of<typename G::op_type>>();
    else
        return tree<G>::text;
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
        constexpr std::size_t sizes[] = {tree<Cs>::nodes...};
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
    return detail::dot_of<G>.view();
}

/// G printed as a call tree: "add(mul(exp(x0), x1), c)" (x<i>: argument i, c: a constant,
/// t: an erased tensor).
template <class G>
constexpr std::string_view to_string() {
    return detail::text_of<G>.view();
}

} // namespace xtrace::inspect

#endif
