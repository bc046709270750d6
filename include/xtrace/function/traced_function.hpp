#ifndef XTRACE_FUNCTION_TRACED_FUNCTION_HPP
#define XTRACE_FUNCTION_TRACED_FUNCTION_HPP

// xtrace::function: a lambda over tensors that is traced once per signature and then runs its
// cached graph. Called with symbolic tensors (from inside another trace) it is inlined; called
// with eager tensors, or while functions run eagerly, it just runs the lambda.

#include "../interp/execute.hpp"
#include "../trace/builder.hpp"
#include "arguments.hpp"
#include "cache.hpp"
#include "outputs.hpp"
#include "run_eagerly.hpp"

#include <array>
#include <chrono>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

namespace xtrace {

template <class F>
class traced_function;

namespace detail {

template <class F, class... Args>
struct graph_of {
    template <std::size_t... I>
    static auto make(std::index_sequence<I...>)
        -> std::invoke_result_t<const F&, symbolic_param_t<I, Args>...>;
    using type = decltype(make(std::index_sequence_for<Args...>{}));
};

template <class... Args>
inline constexpr std::size_t tensor_count_v = (std::size_t(0) + ... +
                                               (tensor_argument<Args> ? 1 : 0));

} // namespace detail

/// The graph type (expression type) a traced function builds for arguments of types Args.
template <class F, class... Args>
using graph_t = typename F::template graph_type<Args...>;

/// A lambda wrapped by xtrace::function.
template <class F>
class traced_function {
public:
    /// The expression type the lambda builds for arguments of types Args.
    template <class... Args>
    using graph_type = typename detail::graph_of<F, std::remove_cvref_t<Args>...>::type;

    traced_function(F fn, options opts)
        : fn_(std::make_shared<const F>(std::move(fn))),
          cache_(std::make_shared<detail::trace_cache>(std::move(opts))) {}

    /// Runs the function: from its cached graph, tracing first on a new signature.
    template <class... Args>
    auto operator()(const Args&... args) const {
        (detail::check_argument<Args>(), ...);
        if constexpr ((symbolic_tensor<Args> || ...) || (eager_tensor_type<Args> || ...)) {
            return (*fn_)(args...); // inside another trace, or eager: inline the lambda
        } else {
            using traced = graph_type<Args...>;
            detail::check_result<traced>();
            using result = typename detail::outputs_of<traced>::result;
            if (functions_run_eagerly())
                return result(detail::eager_result((*fn_)(detail::eager_param(args)...)));
            return call<traced>(std::index_sequence_for<Args...>{}, args...);
        }
    }

    /// Traces performed so far.
    std::size_t tracing_count() const { return cache_->tracing_count(); }
    /// Traces currently cached.
    std::size_t cache_size() const { return cache_->size(); }
    /// Drops every cached trace (the next call traces again).
    void clear_cache() { cache_->clear(); }
    /// Calls, hits, traces, evictions and time spent.
    function_stats stats() const { return cache_->stats(); }
    /// Why each trace after the first happened.
    std::vector<std::string> retrace_reasons() const { return cache_->retrace_reasons(); }
    /// One line per cached trace: "(x0: float32[?,3]) -> float32[?,3]".
    std::vector<std::string> pretty_printed_signatures() const {
        return cache_->pretty_printed_signatures();
    }
    /// The options it was made with.
    const options& opts() const { return cache_->opts(); }
    /// The wrapped lambda (tf.function's python_function).
    const F& lambda() const noexcept { return *fn_; }

private:
    template <class Traced, std::size_t... I, class... Args>
    auto call(std::index_sequence<I...>, const Args&... args) const {
        constexpr std::size_t n_tensors = detail::tensor_count_v<Args...>;
        auto held = std::make_tuple(detail::hold(args)...);
        std::array<interp::strided_input, n_tensors + 1> inputs;
        std::array<detail::static_ref, sizeof...(Args) - n_tensors + 1> statics;
        thread_local std::vector<std::int64_t> key_buffer;
        std::vector<std::int64_t> key = std::move(key_buffer);
        key.clear();
        std::size_t t = 0, s = 0;
        auto describe_one = [&](const auto& h, std::size_t position) {
            const auto& a = detail::unwrap(h);
            using A = std::remove_cvref_t<decltype(a)>;
            if constexpr (detail::tensor_argument<A>) {
                detail::describe(a, position, key, inputs[t++]);
            } else {
                key.push_back(detail::static_marker);
                statics[s++] = detail::static_ref{&a, &typeid(A), detail::static_hash(a),
                                                  [](const detail::static_value& v, const void* p) {
                                                      return v.matches(*static_cast<const A*>(p));
                                                  }};
            }
        };
        (describe_one(std::get<I>(held), I), ...);
        const std::span<const detail::static_ref> static_span(statics.data(), s);

        detail::resolved r;
        if (!cache_->find(key, static_span, r)) {
            std::vector<detail::static_value> values;
            detail::signature sig;
            std::size_t at = 0;
            auto sign_one = [&](const auto& h) {
                const auto& a = detail::unwrap(h);
                using A = std::remove_cvref_t<decltype(a)>;
                detail::arg_signature as;
                if constexpr (detail::tensor_argument<A>) {
                    tensor_spec spec{static_cast<dtype>(key[at]), {}};
                    const auto rank = static_cast<std::size_t>(key[at + 1]);
                    spec.dims.assign(key.begin() + at + 2, key.begin() + at + 2 + rank);
                    at += 2 + rank;
                    as.tensor = std::move(spec);
                } else {
                    ++at;
                    as.value = detail::static_value::make(a);
                    values.push_back(*as.value);
                }
                sig.push_back(std::move(as));
            };
            (sign_one(std::get<I>(held)), ...);
            auto trace = [&](const detail::signature& target) {
                return trace_for<Traced>(target, std::index_sequence<I...>{},
                                         detail::unwrap(std::get<I>(held))...);
            };
            r = cache_->miss(sig, key, static_span, values, trace);
        }
        key_buffer = std::move(key);
        return run<Traced>(r, std::span<const interp::strided_input>(inputs.data(), n_tensors));
    }

    // Runs the lambda on symbolic arguments of `target`'s specs and records its graph.
    template <class Traced, std::size_t... I, class... Args>
    std::shared_ptr<detail::trace_entry> trace_for(const detail::signature& target,
                                                   std::index_sequence<I...>,
                                                   const Args&... args) const {
        auto b = std::make_shared<trace::builder>();
        auto param = [&](auto index, const auto& a) -> decltype(auto) {
            constexpr std::size_t i = decltype(index)::value;
            using A = std::remove_cvref_t<decltype(a)>;
            if constexpr (detail::tensor_argument<A>) {
                const tensor_spec& spec = *target[i].tensor;
                return detail::symbolic_param_t<i, A>(
                    b, b->add_arg(static_cast<std::int64_t>(i), spec.type, spec.dims));
            } else {
                return (a);
            }
        };
        auto entry = std::make_shared<detail::trace_entry>();
        entry->sig = target;
        {
            // Braced initialisation: arguments become graph args in call order.
            std::tuple<detail::symbolic_param_t<I, Args>...> params{
                param(std::integral_constant<std::size_t, I>{}, args)...};
            const Traced out = std::apply(*fn_, params);
            detail::mark_outputs(out, *b);
        }
        entry->g = b->finish();
        if constexpr (detail::outputs_of<Traced>::single)
            if (cache_->opts().static_fusion)
                entry->fused = interp::static_fusion::kernel_for<Traced>();
        for (auto id : entry->g.outputs)
            entry->outputs.push_back(tensor_spec{entry->g[id].type, entry->g[id].shape});
        return entry;
    }

    template <class Traced>
    auto run(const detail::resolved& r, std::span<const interp::strided_input> inputs) const {
        using outs = detail::outputs_of<Traced>;
        using result = typename outs::result;
        const auto start = std::chrono::steady_clock::now();
        const graph::graph& g = r.trace->g;
        const plan::plan& p = *r.plan;
        auto make = [&](auto tag, std::size_t k) {
            using T = typename decltype(tag)::type;
            const shape_t& s = p.shapes[g.outputs[k]];
            typename xt::xarray<T>::shape_type shape(s.begin(), s.end());
            return xt::xarray<T>::from_shape(shape);
        };
        result out = [&]<std::size_t... K>(std::index_sequence<K...>) {
            if constexpr (outs::single)
                return make(std::type_identity<std::tuple_element_t<0, typename outs::types>>{}, 0);
            else
                return result(make(
                    std::type_identity<std::tuple_element_t<K, typename outs::types>>{}, K)...);
        }
        (std::make_index_sequence<std::tuple_size_v<typename outs::types>>{});
        std::array<void*, std::tuple_size_v<typename outs::types>> ptrs;
        if constexpr (outs::single)
            ptrs[0] = out.data();
        else
            std::apply(
                [&](auto&... xs) {
                    std::size_t k = 0;
                    ((ptrs[k++] = xs.data()), ...);
                },
                out);
        if (!interp::execute_fused(r.trace->fused, g, p, inputs, ptrs[0]))
            interp::execute(g, p, inputs, ptrs);
        cache_->add_running_time(std::chrono::steady_clock::now() - start);
        return out;
    }

    std::shared_ptr<const F> fn_;
    std::shared_ptr<detail::trace_cache> cache_;
};

/// Wraps `fn`, a generic lambda over tensors, as a traced function.
template <class F>
traced_function<std::decay_t<F>> function(F&& fn, options opts = {}) {
    return traced_function<std::decay_t<F>>(std::forward<F>(fn), std::move(opts));
}

} // namespace xtrace

#endif
