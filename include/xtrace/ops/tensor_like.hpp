#ifndef XTRACE_OPS_TENSOR_LIKE_HPP
#define XTRACE_OPS_TENSOR_LIKE_HPP

// What the operations accept: symbolic tensors while tracing, eager tensors when running
// eagerly, and weakly typed C++ scalars beside either.

#include "../eager/evaluate.hpp"
#include "../eager/tensor.hpp"
#include "../expr/node.hpp"

#include <type_traits>

namespace xtrace {

/// A tensor an xtrace operation accepts: symbolic (traced) or eager.
template <class X>
concept tensor_like = symbolic_tensor<X> || eager_tensor_type<X>;

/// A plain C++ number beside a tensor; it takes the tensor's dtype ("weakly typed").
template <class S>
concept weak_scalar = std::is_arithmetic_v<std::remove_cvref_t<S>>;

/// A tensor or a weak scalar.
template <class X>
concept operand = tensor_like<X> || weak_scalar<X>;

namespace detail {

/// True when an op over Xs records a node (no eager tensor among them), else it computes now
/// (symbolic tensors beside eager ones are variable reads in eager code, evaluated first).
template <class... Xs>
inline constexpr bool records_v = (symbolic_tensor<Xs> || ...) && !(eager_tensor_type<Xs> || ...);

/// True when a scalar of type S may stand beside a tensor of T without changing T.
template <class S, class T>
inline constexpr bool scalar_fits_v = std::is_same_v<T, bool>
                                          ? std::is_same_v<S, bool>
                                          : (!std::is_same_v<S, bool> &&
                                             (std::is_floating_point_v<T> ? std::is_arithmetic_v<S>
                                                                          : std::is_integral_v<S>));

/// The element type of X if X is a tensor, else void.
template <class X>
struct value_of {
    using type = void;
};
template <tensor_like X>
struct value_of<X> {
    using type = typename std::remove_cvref_t<X>::value_type;
};
template <class X>
using value_of_t = typename value_of<X>::type;

/// The element type of the first tensor among Xs.
template <class... Xs>
struct first_tensor_value {
    using type = void;
};
template <class X, class... Xs>
struct first_tensor_value<X, Xs...> {
    using type =
        std::conditional_t<tensor_like<X>, value_of_t<X>, typename first_tensor_value<Xs...>::type>;
};

} // namespace detail
} // namespace xtrace

#endif
