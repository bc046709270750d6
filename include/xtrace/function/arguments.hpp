#ifndef XTRACE_FUNCTION_ARGUMENTS_HPP
#define XTRACE_FUNCTION_ARGUMENTS_HPP

// A call's arguments: tensors (any xtensor expression) become symbolic or eager tensors for the
// lambda and strided inputs for the interpreter; everything else is static and passed through.

#include "../core/error.hpp"
#include "../core/spec.hpp"
#include "../eager/tape.hpp"
#include "../expr/node.hpp"
#include "../interp/execute.hpp"
#include "../ops/variable.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

namespace xtrace::function_detail {

/// An argument that is a tensor: any xtensor expression.
template <class A>
concept tensor_argument = xt::is_xexpression<std::remove_cvref_t<A>>::value;

/// True for xtrace::variable<T>.
template <class A>
inline constexpr bool is_variable_v = false;
template <class T>
inline constexpr bool is_variable_v<variable<T>> = true;

/// An argument that is a variable: traced as that variable (reads and assigns go to the call's
/// variable), keyed on its dtype and shape, as TensorFlow's VariableSpec.
template <class A>
concept variable_argument = is_variable_v<std::remove_cvref_t<A>>;

/// Element type of a tensor argument.
template <class A>
using tensor_element_t = std::remove_cv_t<typename std::remove_cvref_t<A>::value_type>;

/// A tensor argument whose memory the interpreter can read in place.
template <class A>
concept in_place_tensor = tensor_argument<A> && requires(const std::remove_cvref_t<A>& a) {
    a.strides();
    a.data_offset();
    { a.data() } -> std::convertible_to<const tensor_element_t<A>*>;
};

/// True for arguments xtrace accepts (tensors of a supported dtype, or static values).
template <class A>
inline constexpr bool valid_argument_v = [] {
    if constexpr (tensor_argument<A>)
        return is_supported_dtype_v<tensor_element_t<A>>;
    else
        return true;
}();

template <class A>
constexpr void check_argument() {
    if constexpr (tensor_argument<A>)
        static_assert(is_supported_dtype_v<tensor_element_t<A>>,
                      "xtrace: unsupported tensor element type; tensors must hold float, double, "
                      "std::int32_t, std::int64_t or bool");
}

/// What a call keeps of an argument while it runs: containers by reference, other xtensor
/// expressions evaluated once, static values by reference.
template <class A>
auto hold(const A& a) {
    if constexpr (!tensor_argument<A> || in_place_tensor<A>)
        return std::cref(a);
    else
        return xt::xarray<tensor_element_t<A>>(a);
}

template <class H>
const auto& held_value(const H& h) {
    if constexpr (requires { h.get(); })
        return h.get();
    else
        return h;
}

/// Most key entries a tensor argument takes: its dtype, its rank and a dim per axis.
inline constexpr std::size_t tensor_key_size = 2 + XTRACE_MAX_RANK;

/// Throws the signature_error of argument `position`, of rank `rank` above XTRACE_MAX_RANK.
[[noreturn]] inline void throw_rank_error(std::size_t position, std::size_t rank) {
    throw signature_error("xtrace: arg " + std::to_string(position) + " has rank " +
                          std::to_string(rank) + "; the most xtrace supports is " +
                          std::to_string(XTRACE_MAX_RANK));
}

/// Writes a tensor's signature (dtype, rank, dims) at `key`, at most tensor_key_size entries,
/// fills its strided view, and returns the end of what it wrote.
template <class X>
std::int64_t* describe(const X& x, std::size_t position, std::int64_t* key,
                       interp::strided_input& in) {
    const std::size_t rank = x.dimension();
    if (rank > XTRACE_MAX_RANK) [[unlikely]]
        throw_rank_error(position, rank);
    *key++ = static_cast<std::int64_t>(dtype_of_v<tensor_element_t<X>>);
    *key++ = static_cast<std::int64_t>(rank);
    for (std::size_t d = 0; d < rank; ++d) {
        *key++ = static_cast<std::int64_t>(x.shape()[d]);
        in.strides[d] = static_cast<std::int64_t>(x.strides()[d]);
    }
    in.data = x.data() + x.data_offset();
    return key;
}

/// Key entry that marks a static argument (its value is compared separately).
inline constexpr std::int64_t static_marker = -2;

/// A typed tensor spec standing for a tensor argument (get_concrete_function).
template <class A>
concept spec_argument = requires {
    typename std::remove_cvref_t<A>::value_type;
}
&&std::is_same_v<std::remove_cvref_t<A>, typed_spec<typename std::remove_cvref_t<A>::value_type>>;

template <std::size_t I, class A, bool Tensor = tensor_argument<A> || spec_argument<A>>
struct params {
    using symbolic = const std::remove_cvref_t<A>&;
};
template <std::size_t I, class A>
struct params<I, A, true> {
    using symbolic = arg<I, tensor_element_t<A>>;
};
template <std::size_t I, class A>
requires variable_argument<A>
struct params<I, A, false> {
    using symbolic = std::remove_cvref_t<A>; // a stand-in for the call's variable
};

/// Key entry that marks a variable argument (its dtype, rank and dims follow).
inline constexpr std::int64_t variable_marker = -3;

/// The position among the variable arguments of argument I.
template <std::size_t I, class... Args>
constexpr std::size_t variable_position() {
    std::size_t v = 0, k = 0;
    ((v += (k++ < I && variable_argument<Args>) ? 1 : 0), ...);
    return v;
}

/// The stand-in a trace gives the lambda for variable argument number `position`, a variable
/// like `like` (its name, dtype and shape): graphs read and assign each call's variable there.
template <class T>
variable<T> variable_stand_in(const variable<T>& like, std::size_t position) {
    const graph::variable_storage& real = *like.storage();
    auto s = std::make_shared<graph::variable_storage>();
    s->name = real.name.empty() ? "arg variable " + std::to_string(position) : real.name;
    s->type = real.type;
    s->shape = real.shape;
    s->bytes.assign(real.bytes.size(), std::byte{0});
    s->argument = static_cast<std::int64_t>(position);
    return variable<T>::bound_to(std::move(s));
}

/// The parameter the lambda sees for argument I of type A while tracing.
template <std::size_t I, class A>
using symbolic_param_t = typename params<I, A>::symbolic;

/// Argument I for the eager lambda: a copy of its value, a leaf of the active tape.
template <class A>
decltype(auto) eager_param(const A& a) {
    if constexpr (tensor_argument<A>)
        return detail::tape_leaf(
            eager_tensor<tensor_element_t<A>>(xt::xarray<tensor_element_t<A>>(a)));
    else
        return (a);
}

} // namespace xtrace::function_detail

#endif
