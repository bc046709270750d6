#ifndef XTRACE_OPS_RESULTS_HPP
#define XTRACE_OPS_RESULTS_HPP

// What a cond branch or a while_loop body returns: one tensor, or a std::tuple / std::pair of
// tensors, seen uniformly as a tuple.

#include "../trace/subgraph.hpp"
#include "tensor_like.hpp"

#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace xtrace::detail {

/// R as a tuple of tensors: `valid` when it is one, `types` its element types.
template <class R>
struct results_of {
    static constexpr bool valid = false;
    using types = void;
};
template <tensor_like R>
struct results_of<R> {
    static constexpr bool valid = true;
    static constexpr bool symbolic = symbolic_tensor<R>;
    using types = std::tuple<typename R::value_type>;
    static std::tuple<R> as_tuple(const R& r) { return std::tuple<R>(r); }
};
template <template <class...> class Tuple, class... Rs>
requires(sizeof...(Rs) > 0 &&
         (std::is_same_v<Tuple<Rs...>, std::tuple<Rs...>> ||
          std::is_same_v<Tuple<Rs...>, std::pair<Rs...>>)&&(tensor_like<Rs> &&
                                                            ...)) struct results_of<Tuple<Rs...>> {
    static constexpr bool valid = true;
    static constexpr bool symbolic = (symbolic_tensor<Rs> && ...);
    using types = std::tuple<typename Rs::value_type...>;
    static std::tuple<Rs...> as_tuple(const Tuple<Rs...>& r) { return std::tuple<Rs...>(r); }
};

/// The nodes of symbolic results, for trace::trace_subgraph.
template <class... Rs>
std::vector<trace::traced_value> traced_values(const std::tuple<Rs...>& r) {
    return std::apply(
        [](const auto&... xs) {
            return std::vector<trace::traced_value>{{xs.builder().get(), xs.id()}...};
        },
        r);
}

/// Symbolic tensors of `Types` for the nodes `ids` of trace `b`.
template <class... Ts>
std::tuple<erased<Ts>...> erased_results(std::tuple<Ts...>*,
                                         const std::shared_ptr<trace::builder>& b,
                                         const std::vector<graph::node_id>& ids) {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
        return std::tuple<erased<Ts>...>(erased<Ts>(b, ids[I])...);
    }
    (std::index_sequence_for<Ts...>{});
}

/// A one-element tuple as its element; others as they are.
template <class Tuple>
auto unwrap_single(Tuple t) {
    if constexpr (std::tuple_size_v<Tuple> == 1)
        return std::get<0>(std::move(t));
    else
        return t;
}

} // namespace xtrace::detail

#endif
