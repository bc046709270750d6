#ifndef XTRACE_FUNCTION_OUTPUTS_HPP
#define XTRACE_FUNCTION_OUTPUTS_HPP

// What a lambda returns: one tensor, or a std::tuple / std::pair of tensors. Traced, its nodes
// become the graph's outputs; run, each becomes an xt::xarray of its dtype.

#include "../eager/evaluate.hpp"
#include "../eager/tensor.hpp"
#include "../expr/node.hpp"
#include "../ext/xtensor.hpp"

#include <tuple>
#include <type_traits>
#include <utility>

namespace xtrace::function_detail {

template <class R>
struct outputs_of {
    static constexpr bool valid = false;
};
template <class R>
requires symbolic_tensor<R> || eager_tensor_type<R>
struct outputs_of<R> {
    static constexpr bool valid = true;
    static constexpr bool single = true;
    using result = xt::xarray<typename R::value_type>;
    using types = std::tuple<typename R::value_type>;
};
template <template <class...> class Tuple, class... Rs>
requires(sizeof...(Rs) > 0 &&
         (std::is_same_v<Tuple<Rs...>, std::tuple<Rs...>> ||
          std::is_same_v<
              Tuple<Rs...>,
              std::pair<Rs...>>)&&((symbolic_tensor<Rs> ||
                                    eager_tensor_type<Rs>)&&...)) struct outputs_of<Tuple<Rs...>> {
    static constexpr bool valid = true;
    static constexpr bool single = false;
    using result = std::tuple<xt::xarray<typename Rs::value_type>...>;
    using types = std::tuple<typename Rs::value_type...>;
};

template <class R>
constexpr void check_result() {
    static_assert(outputs_of<std::remove_cvref_t<R>>::valid,
                  "xtrace::function: the lambda must return a tensor, or a std::tuple or "
                  "std::pair of tensors, computed from its arguments");
}

/// Records the nodes of a traced result as the graph's outputs.
template <class R>
void mark_outputs(const R& r, trace::builder& b) {
    if constexpr (outputs_of<R>::single)
        b.add_output(r.id());
    else
        std::apply([&](const auto&... xs) { (b.add_output(xs.id()), ...); }, r);
}

/// An eager result as the caller receives it.
template <class R>
auto eager_result(const R& r) {
    // Symbolic results here are variable reads outside a trace: evaluated.
    if constexpr (outputs_of<R>::single)
        return xt::xarray<typename R::value_type>(to_eager(r).value());
    else
        return std::apply(
            [](const auto&... xs) {
                return std::tuple<
                    xt::xarray<typename std::remove_cvref_t<decltype(xs)>::value_type>...>(
                    to_eager(xs).value()...);
            },
            r);
}

/// True when call_into can write results of type `Result` into `Out`: the result type itself,
/// or a tuple of references to its arrays.
template <class Out, class Result>
inline constexpr bool writable_into_v = std::is_same_v<Out, Result>;
template <class... Ts>
inline constexpr bool
    writable_into_v<std::tuple<xt::xarray<Ts>&...>, std::tuple<xt::xarray<Ts>...>> = true;

/// Moves `results` into `out` (what call_into does when functions run eagerly).
template <class Out, class Result>
void assign_results(Out& out, Result&& results) {
    out = std::forward<Result>(results);
}

} // namespace xtrace::function_detail

#endif
