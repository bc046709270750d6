#ifndef XTRACE_FUNCTION_INLINE_CALL_HPP
#define XTRACE_FUNCTION_INLINE_CALL_HPP

// A traced function called from inside another trace runs its lambda inline. When it was
// declared with an input_signature, each tensor argument is first checked against its spec, as
// TensorFlow does when a tf.function calls another: a dtype, rank or known dim that differs is a
// signature_error at trace time, and a dim the calling trace leaves unknown takes the spec's
// value, checked again when the graph is planned for real shapes (an ensure_shape node).

#include "../core/error.hpp"
#include "../core/spec.hpp"
#include "../expr/node.hpp"
#include "../interp/kernel_choice.hpp"
#include "../ops/tensor_like.hpp"
#include "arguments.hpp"

#include <string>
#include <utility>
#include <vector>

namespace xtrace::function_detail {

/// The position among the tensor arguments of argument I (its input_signature entry).
template <std::size_t I, class... Args>
constexpr std::size_t tensor_position() {
    std::size_t t = 0, k = 0;
    ((t += (k++ < I && (tensor_like<Args> || tensor_argument<Args>)) ? 1 : 0), ...);
    return t;
}

/// Argument `a`, tensor argument number `t` of an inlined call of `who`, fitted to `spec`;
/// of a's own type.
template <class A>
decltype(auto) fit_to_spec(const A& a, const tensor_spec& spec, std::size_t t,
                           const std::string& who) {
    if constexpr (tensor_like<A>) {
        using T = xtrace::detail::value_of_t<A>;
        const std::string what = who + ": arg " + std::to_string(t) + " of an inlined call";
        if (dtype_of_v<T> != spec.type)
            throw signature_error(what + " is " + std::string(dtype_name(dtype_of_v<T>)) +
                                  ", the input_signature says " + spec.to_string());
        if constexpr (symbolic_tensor<A>) {
            const auto b = expr::target_trace(a);
            b->check_open(who, a.id());
            const graph::node_id in = b->import(a.builder().get(), a.id());
            // The same expression type over the checked node: the check is an identity, so the
            // type still describes what is computed (static fusion, inspection).
            return A(b, b->add_ensure_shape(in, spec.dims, what,
                                            interp::elementwise_kernels<op::cast<T>, T, T>()));
        } else {
            const auto s = a.shape();
            graph::check_ensured_shape(shape_t(s.begin(), s.end()), spec.dims, what);
            return a;
        }
    } else {
        return a;
    }
}

/// Calls `fn` with `args`, each tensor fitted to its entry of `specs`.
template <class F, class... Args>
decltype(auto) inline_call(const F& fn, const std::vector<tensor_spec>& specs,
                           const std::string& who, const Args&... args) {
    constexpr std::size_t tensors =
        (std::size_t(0) + ... + ((tensor_like<Args> || tensor_argument<Args>) ? 1 : 0));
    if (tensors != specs.size())
        throw signature_error(who + ": an inlined call has " + std::to_string(tensors) +
                              " tensor arguments, the input_signature " +
                              std::to_string(specs.size()));
    return [&]<std::size_t... I>(std::index_sequence<I...>)->decltype(auto) {
        return fn(fit_to_spec(
            args,
            specs[tensor_position<I, Args...>() < specs.size() ? tensor_position<I, Args...>() : 0],
            tensor_position<I, Args...>(), who)...);
    }
    (std::index_sequence_for<Args...>{});
}

} // namespace xtrace::function_detail

#endif
