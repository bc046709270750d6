#ifndef XTRACE_FUNCTION_TRACE_LAMBDA_HPP
#define XTRACE_FUNCTION_TRACE_LAMBDA_HPP

// Tracing: the lambda runs once on symbolic arguments shaped by a signature, and what it
// records becomes a trace_entry.

#include "../interp/static_fusion.hpp"
#include "../trace/builder.hpp"
#include "arguments.hpp"
#include "cache.hpp"
#include "outputs.hpp"

#include <memory>
#include <tuple>
#include <utility>

namespace xtrace::detail {

/// The expression type F builds for arguments of types Args (tensors become symbolic args).
template <class F, class... Args>
struct graph_of {
    template <std::size_t... I>
    static auto make(std::index_sequence<I...>)
        -> std::invoke_result_t<const F&, symbolic_param_t<I, Args>...>;
    using type = decltype(make(std::index_sequence_for<Args...>{}));
};

/// Runs `fn` on symbolic arguments of `target`'s specs (static arguments: `args` themselves)
/// and records its graph; Traced is the expression type it returns.
template <class Traced, class F, class... Args>
std::shared_ptr<trace_entry> trace_lambda(const F& fn, const signature& target, bool static_fusion,
                                          const Args&... args) {
    auto b = std::make_shared<trace::builder>();
    auto param = [&](auto index, const auto& a) -> decltype(auto) {
        constexpr std::size_t i = decltype(index)::value;
        using A = std::remove_cvref_t<decltype(a)>;
        if constexpr (tensor_argument<A> || spec_argument<A>) {
            const tensor_spec& spec = *target[i].tensor;
            return symbolic_param_t<i, A>(
                b, b->add_arg(static_cast<std::int64_t>(i), spec.type, spec.dims));
        } else {
            return (a);
        }
    };
    auto entry = std::make_shared<trace_entry>();
    entry->sig = target;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        // Braced initialisation: arguments become graph args in call order.
        std::tuple<symbolic_param_t<I, Args>...> params{
            param(std::integral_constant<std::size_t, I>{}, args)...};
        const Traced out = std::apply(fn, params);
        mark_outputs(out, *b);
    }
    (std::index_sequence_for<Args...>{});
    entry->g = b->finish();
    if constexpr (outputs_of<Traced>::single)
        if (static_fusion)
            entry->fused = interp::static_fusion::kernel_for<Traced>();
    for (auto id : entry->g.outputs)
        entry->outputs.push_back(tensor_spec{entry->g[id].type, entry->g[id].shape});
    return entry;
}

} // namespace xtrace::detail

#endif
