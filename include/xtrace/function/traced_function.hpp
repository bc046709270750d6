#ifndef XTRACE_FUNCTION_TRACED_FUNCTION_HPP
#define XTRACE_FUNCTION_TRACED_FUNCTION_HPP

// xtrace::function: a lambda over tensors that is traced once per signature and then runs its
// cached graph. Called with symbolic tensors (from inside another trace) it is inlined; called
// with eager tensors, or while functions run eagerly, it just runs the lambda.

#include "../eager/tape.hpp"
#include "cache.hpp"
#include "call_frame.hpp"
#include "call_result.hpp"
#include "concrete_function.hpp"
#include "inline_call.hpp"
#include "run_eagerly.hpp"
#include "run_graph.hpp"
#include "trace_lambda.hpp"

#include <chrono>
#include <memory>
#include <utility>
#include <vector>

namespace xtrace {

/// The graph type (expression type) a traced function builds for arguments of types Args.
template <class F, class... Args>
using graph_t = typename F::template graph_type<Args...>;

/// A lambda wrapped by xtrace::function.
template <class F>
class traced_function {
public:
    /// The expression type the lambda builds for arguments of types Args.
    template <class... Args>
    using graph_type = typename function_detail::graph_of<F, std::remove_cvref_t<Args>...>::type;

    traced_function(F fn, options opts)
        : fn_(std::make_shared<const F>(std::move(fn))),
          cache_(function_detail::make_trace_cache(std::move(opts))) {}

    /// Runs the function: from its cached graph, tracing first on a new signature.
    template <class... Args>
    auto operator()(const Args&... args) const {
        if constexpr (!(function_detail::valid_argument_v<Args> && ...)) {
            (function_detail::check_argument<Args>(), ...); // names the unsupported element type
        } else if constexpr ((symbolic_tensor<Args> || ...) || (eager_tensor_type<Args> || ...)) {
            // Inside another trace, or eager: inline the lambda (its input_signature checked).
            if (opts().input_signature)
                return function_detail::inline_call(
                    *fn_, *opts().input_signature,
                    opts().name.empty() ? std::string("xtrace::function") : opts().name, args...);
            return (*fn_)(args...);
        } else if constexpr (!function_detail::traceable_v<F, Args...>) {
            function_detail::report_untraceable<F, Args...>();
        } else if constexpr (!function_detail::outputs_of<graph_type<Args...>>::valid) {
            function_detail::check_result<graph_type<Args...>>();
        } else if constexpr (sizeof...(Args) == 0) {
            return call_without_arguments<graph_type<>>();
        } else {
            using traced = graph_type<Args...>;
            using result = typename function_detail::outputs_of<traced>::result;
            if (functions_run_eagerly()) {
                const detail::tape_scope tape; // what gradients of eager values differentiate
                return result(
                    function_detail::eager_result((*fn_)(function_detail::eager_param(args)...)));
            }
            return call<traced>(args...);
        }
    }

    /// The same call, donating each argument passed as a non-const rvalue xt::xarray (JAX's
    /// donate_argnums): a result of its dtype and shape that the graph computes elementwise
    /// after its last read is written into its buffer, which the result then owns, so
    /// `x = f(std::move(x))` in a loop allocates nothing. An argument that cannot be donated
    /// (its buffer still read later, another shape, shared with another argument) is read as
    /// usual and left as it was.
    template <class... Args>
    requires(function_detail::donates_v<Args...>) auto operator()(Args&&... args) const {
        if constexpr (!(function_detail::valid_argument_v<std::remove_cvref_t<Args>> && ...) ||
                      (symbolic_tensor<std::remove_cvref_t<Args>> || ...) ||
                      (eager_tensor_type<std::remove_cvref_t<Args>> || ...) ||
                      !function_detail::traceable_v<F, std::remove_cvref_t<Args>...>) {
            return (*this)(std::as_const(args)...); // reports, or runs, as without donation
        } else if constexpr (!function_detail::outputs_of<graph_type<Args...>>::valid) {
            return (*this)(std::as_const(args)...);
        } else {
            if (functions_run_eagerly())
                return (*this)(std::as_const(args)...);
            function_detail::donated_arguments<Args...> donated{
                std::forward_as_tuple(std::forward<Args>(args)...)};
            return run_traced<graph_type<Args...>>(donated, std::as_const(args)...);
        }
    }

    /// Runs the function as a call does, writing its result into memory the caller owns: `out`
    /// is an xt::xarray of the result's element type, or for several results a tuple of
    /// references to them (`std::tie(a, b)`). Each is resized only when its shape differs, so a
    /// warm call into outputs of the right shape makes no heap allocation. An output that is
    /// also an argument (`f.call_into(x, x)`) is given a fresh buffer, filled once the
    /// arguments are read.
    template <class Out, class... Args>
    void call_into(Out&& out, const Args&... args) const {
        static_assert(!((symbolic_tensor<Args> || eager_tensor_type<Args>) || ...),
                      "xtrace::function::call_into runs the cached graph on concrete arrays; "
                      "inside another trace, call the function: f(x)");
        using traced = graph_type<Args...>;
        using result = typename function_detail::outputs_of<traced>::result;
        static_assert(function_detail::writable_into_v<std::remove_cvref_t<Out>, result>,
                      "xtrace::function::call_into: pass an xt::xarray of the result's element "
                      "type, or std::tie of one per result");
        if (functions_run_eagerly()) {
            function_detail::assign_results(out, (*this)(args...));
            return;
        }
        run_traced<traced>(out, args...);
    }

    /// Traces for `specs` (xtrace::spec<T>(dims) for tensors, values for static arguments)
    /// without running, caches the trace, and returns it as a callable concrete function.
    template <class... Specs>
    auto get_concrete_function(const Specs&... specs) const {
        using traced = graph_type<Specs...>;
        function_detail::check_result<traced>();
        function_detail::signature sig;
        (sig.push_back(spec_signature(specs)), ...);
        auto entry = cache_->trace_exact(sig, [&](const function_detail::signature& target) {
            return function_detail::trace_lambda<traced>(
                *fn_, target, opts().static_fusion, cache_->first_trace(), opts().name, specs...);
        });
        return concrete_function<traced, sizeof...(Specs)>(
            std::move(entry), opts().name.empty() ? "xtrace::concrete_function" : opts().name,
            opts().max_threads);
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
    // A call without tensor arguments: inside another trace, the lambda inlined there (it may
    // read variables, so the caller's graph must read them on every call); outside, the
    // cached graph's results (eager: the lambda's). Either way call_results, one per output.
    template <class Traced>
    auto call_without_arguments() const {
        using outputs = function_detail::outputs_of<Traced>;
        auto wrap = [](const auto& r) {
            return std::apply(
                [](const auto&... xs) {
                    return std::tuple(
                        call_result<typename std::decay_t<decltype(xs)>::value_type>(xs)...);
                },
                r);
        };
        auto unwrap = [](auto t) {
            if constexpr (outputs::single)
                return std::get<0>(std::move(t));
            else
                return t;
        };
        if (trace::current()) {
            const auto r = (*fn_)();
            if constexpr (outputs::single)
                return unwrap(wrap(std::tuple(erase(r))));
            else
                return unwrap(wrap(
                    std::apply([](const auto&... xs) { return std::tuple(erase(xs)...); }, r)));
        }
        using result = typename outputs::result;
        const auto eager = [&] {
            const detail::tape_scope tape;
            return result(function_detail::eager_result((*fn_)()));
        };
        result values = functions_run_eagerly() ? eager() : call<Traced>();
        if constexpr (outputs::single)
            return unwrap(wrap(std::tuple(std::move(values))));
        else
            return unwrap(wrap(std::move(values)));
    }

    // The traced path of a call: the cached trace for the arguments (tracing on a miss) run into
    // fresh results, or with `into` (a result type, or a tuple of references) into the caller's.
    template <class Traced, class... Args>
    auto call(const Args&... args) const {
        return run_traced<Traced>(nullptr, args...);
    }

    template <class Traced, class Into, class... Args>
    auto run_traced(Into&& into, const Args&... args) const {
        function_detail::call_frame<Args...> frame(args...);
        function_detail::bound_trace r;
        const bool hit = cache_->find(frame.key(), frame.statics(), r);
        const std::uint64_t call = r.call;
        if (!hit) {
            std::vector<function_detail::static_value> values;
            const function_detail::signature sig = frame.make_signature(values);
            auto trace = [&](const function_detail::signature& target) {
                return [&]<std::size_t... I>(std::index_sequence<I...>) {
                    return function_detail::trace_lambda<Traced>(*fn_, target, opts().static_fusion,
                                                                 cache_->first_trace(), opts().name,
                                                                 frame.template arg<I>()...);
                }
                (std::index_sequence_for<Args...>{});
            };
            r = cache_->miss(sig, frame.key(), frame.statics(), values, trace);
        }
        const interp::thread_cap_scope cap(opts().max_threads);
        // Running time is sampled (see function_stats::running_time), from the function's first
        // call, and added as the call returns: the results are returned as made, never moved (a
        // move swaps each of an xt::xarray's small vectors element by element).
        const bool timed = (call - 1) % function_stats::timing_period == 0;
        const function_detail::running_timer timer(timed ? cache_.get() : nullptr);
        if constexpr (std::is_same_v<std::remove_cvref_t<Into>, std::nullptr_t>)
            return function_detail::run_graph<Traced>(*r.trace, *r.plan, frame.inputs(),
                                                      frame.variable_storages());
        else if constexpr (function_detail::is_donated_arguments_v<std::remove_cvref_t<Into>>)
            return function_detail::run_graph_donated<Traced>(*r.trace, *r.plan, frame.inputs(),
                                                              frame.variable_storages(), into);
        else
            function_detail::run_graph_into<Traced>(*r.trace, *r.plan, frame.inputs(), into,
                                                    frame.variable_storages());
    }

    template <class S>
    static function_detail::arg_signature spec_signature(const S& s) {
        if constexpr (function_detail::spec_argument<S>)
            return static_cast<const tensor_spec&>(s);
        else if constexpr (function_detail::variable_argument<S>)
            return function_detail::variable_signature{
                tensor_spec{s.storage()->type, s.storage()->shape}};
        else if constexpr (function_detail::tensor_argument<S>) // a tensor stands for its spec, as
                                                                // in TF
            return tensor_spec{dtype_of_v<function_detail::tensor_element_t<S>>,
                               shape_t(s.shape().begin(), s.shape().end())};
        else if constexpr (std::is_same_v<S, tensor_spec>) {
            static_assert(detail::dependent_false<S>,
                          "xtrace::get_concrete_function: pass xtrace::spec<T>(dims), whose "
                          "element type is known at compile time, not a plain tensor_spec");
            return tensor_spec{};
        } else {
            return function_detail::make_static(s);
        }
    }

    std::shared_ptr<const F> fn_;
    std::shared_ptr<function_detail::trace_cache> cache_;
};

/// Wraps `fn`, a generic lambda over tensors, as a traced function.
template <class F>
traced_function<std::decay_t<F>> function(F&& fn, options opts = {}) {
    return traced_function<std::decay_t<F>>(std::forward<F>(fn), std::move(opts));
}

} // namespace xtrace

#endif
