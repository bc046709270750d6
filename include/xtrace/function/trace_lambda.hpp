#ifndef XTRACE_FUNCTION_TRACE_LAMBDA_HPP
#define XTRACE_FUNCTION_TRACE_LAMBDA_HPP

// Tracing: the lambda runs once on symbolic arguments shaped by a signature, and what it
// records becomes a trace_entry.

#include "../interp/static_fusion.hpp"
#include "../trace/builder.hpp"
#include "../trace/finish.hpp"
#include "arguments.hpp"
#include "outputs.hpp"
#include "trace_entry.hpp"

#include <memory>
#include <tuple>
#include <utility>

namespace xtrace::function_detail {

/// The expression type F builds for arguments of types Args (tensors become symbolic args).
template <class F, class... Args>
struct graph_of {
    template <std::size_t... I>
    static auto make(std::index_sequence<I...>)
        -> std::invoke_result_t<const F&, symbolic_param_t<I, Args>...>;
    using type = decltype(make(std::index_sequence_for<Args...>{}));
};

/// True when F can be called with the symbolic parameters for Args.
template <class F, class... Args>
inline constexpr bool traceable_v = []<std::size_t... I>(std::index_sequence<I...>) {
    return std::is_invocable_v<const F&, symbolic_param_t<I, Args>...>;
}
(std::index_sequence_for<Args...>{});

template <class F>
struct parameters {
    static constexpr bool known = false;
};
template <class F>
requires requires {
    &F::operator();
} && std::is_member_function_pointer_v<decltype(&F::operator())>
struct parameters<F> : parameters<decltype(&F::operator())> {
};
template <class C, class R, class... Ps>
struct parameters<R (C::*)(Ps...) const> {
    static constexpr bool known = true;
    using types = std::tuple<Ps...>;
};
template <class C, class R, class... Ps>
struct parameters<R (C::*)(Ps...)> : parameters<R (C::*)(Ps...) const> {};

/// The failing parameter shows in the compiler's "with I = ..." line.
template <std::size_t I, bool Takes>
constexpr void parameter_takes_symbolic_tensor() {
    static_assert(Takes, "xtrace::function: the lambda's parameter I (see 'with I = ...' above) "
                         "cannot take a symbolic tensor; declare it `auto` or `const auto&` so "
                         "that it can be traced");
}

/// Reports why F cannot be called with symbolic parameters, naming the parameter if it can.
template <class F, class... Args>
constexpr bool parameters_listed() {
    if constexpr (parameters<F>::known)
        return std::tuple_size_v<typename parameters<F>::types> == sizeof...(Args);
    else
        return false;
}

template <class F, class... Args>
constexpr void report_untraceable() {
    if constexpr (parameters_listed<F, Args...>()) {
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            (parameter_takes_symbolic_tensor<
                 I,
                 std::is_convertible_v<symbolic_param_t<I, Args>,
                                       std::tuple_element_t<I, typename parameters<F>::types>>>(),
             ...);
        }
        (std::index_sequence_for<Args...>{});
    } else {
        static_assert(detail::dependent_false<F>,
                      "xtrace::function: the lambda cannot be called with its tensor arguments "
                      "as symbolic tensors; declare every tensor parameter `auto` or `const "
                      "auto&` so that it can be traced");
    }
}

/// Runs `fn` on symbolic arguments of `target`'s specs (static arguments: `args` themselves)
/// and records its graph; Traced is the expression type it returns.
template <class Traced, class F, class... Args>
std::shared_ptr<trace_entry> trace_lambda(const F& fn, const signature& target, bool static_fusion,
                                          bool first_trace, const std::string& name,
                                          const Args&... args) {
    auto b = trace::new_trace();
    b->set_function_name(name.empty() ? "xtrace::function" : "xtrace::function '" + name + "'");
    b->allow_variables(first_trace); // as tf.function: variables on the first trace only
    auto param = [&](auto index, const auto& a) -> decltype(auto) {
        constexpr std::size_t i = decltype(index)::value;
        using A = std::remove_cvref_t<decltype(a)>;
        if constexpr (tensor_argument<A> || spec_argument<A>) {
            const tensor_spec& spec = *tensor_of(target[i]);
            return symbolic_param_t<i, A>(
                b, b->add_arg(static_cast<std::int64_t>(i), spec.type, spec.dims));
        } else if constexpr (variable_argument<A>) {
            return variable_stand_in(a, variable_position<i, Args...>());
        } else {
            return (a);
        }
    };
    const trace::scope tracing(*b);
    try {
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            // Braced initialisation: arguments become graph args in call order.
            std::tuple<symbolic_param_t<I, Args>...> params{
                param(std::integral_constant<std::size_t, I>{}, args)...};
            const Traced out = std::apply(fn, params);
            mark_outputs(out, *b);
        }
        (std::index_sequence_for<Args...>{});
    } catch (...) {
        b->abandon(); // symbolic tensors the lambda kept are now known to be dead
        throw;
    }
    interp::static_fusion::kernel_fn fused = nullptr;
    if constexpr (outputs_of<Traced>::single)
        if (static_fusion)
            fused = interp::static_fusion::kernel_for<Traced>();
    trace::finished_trace t = trace::finish_trace(*b);
    if (static_fusion) // larger elementwise graphs run compiled kernels piece by piece
        interp::static_fusion::attach_pieces<Traced>(t.g);
    return make_trace_entry(std::move(t), target, fused);
}

} // namespace xtrace::function_detail

#endif
