#ifndef XTRACE_OPS_WHILE_LOOP_HPP
#define XTRACE_OPS_WHILE_LOOP_HPP

// while_loop(cond_fn, body_fn, init...): tf.while_loop. Traced, the condition and the body are
// traced once into subgraphs that run as often as the condition says; eager, it is a C++ loop.
// The body keeps every loop variable's dtype (checked at compile time) and shape.

#include "../config.hpp"
#include "../eager/tape.hpp"
#include "cond.hpp"

#include <array>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace xtrace {
namespace detail {

/// The failing check shows the loop variables' and the body's dtypes in the compiler's
/// "with LoopDtypes = ..., BodyDtypes = ..." line.
template <class LoopDtypes, class BodyDtypes>
constexpr auto body_keeps_dtypes() {
    static_assert(std::is_same_v<LoopDtypes, BodyDtypes>,
                  "xtrace::while_loop: body_fn must return one tensor per loop variable, each of "
                  "its loop variable's dtype (see 'with LoopDtypes = ..., BodyDtypes = ...' "
                  "above)");
}

/// True when cond_fn and body_fn fit the loop variables Xs.
template <class C, class B, class... Xs>
constexpr bool loop_fits() {
    if constexpr (sizeof...(Xs) == 0 || !(tensor_like<Xs> && ...))
        return false;
    else if constexpr (!std::is_invocable_v<C&, const Xs&...> ||
                       !std::is_invocable_v<B&, const Xs&...>)
        return false;
    else {
        using CR = std::invoke_result_t<C&, const Xs&...>;
        using BR = std::invoke_result_t<B&, const Xs&...>;
        if constexpr (!std::is_same_v<value_of_t<CR>, bool> || !results_of<BR>::valid)
            return false;
        else
            return std::is_same_v<std::tuple<value_of_t<Xs>...>, typename results_of<BR>::types>;
    }
}

template <class C, class B, class... Xs>
constexpr auto check_loop() {
    static_assert(sizeof...(Xs) > 0 && (tensor_like<Xs> && ...),
                  "xtrace::while_loop: pass at least one loop variable, each a tensor");
    static_assert(std::is_invocable_v<C&, const Xs&...> && std::is_invocable_v<B&, const Xs&...>,
                  "xtrace::while_loop: cond_fn and body_fn must take the loop variables, one "
                  "parameter each (declare them `auto` or `const auto&`)");
    if constexpr (std::is_invocable_v<C&, const Xs&...> && std::is_invocable_v<B&, const Xs&...>) {
        using CR = std::invoke_result_t<C&, const Xs&...>;
        static_assert(std::is_same_v<value_of_t<CR>, bool>,
                      "xtrace::while_loop: cond_fn must return a 0-d bool tensor");
        using BR = std::invoke_result_t<B&, const Xs&...>;
        static_assert(results_of<BR>::valid,
                      "xtrace::while_loop: body_fn must return the next loop variables: a tensor, "
                      "or a std::tuple of tensors");
        if constexpr (results_of<BR>::valid)
            body_keeps_dtypes<std::tuple<value_of_t<Xs>...>, typename results_of<BR>::types>();
    }
}

} // namespace detail

namespace detail {

/// How a loop variable is held between iterations when the loop runs now.
template <class X>
using loop_var_t = std::conditional_t<eager_tensor_type<X>, X, erased<value_of_t<X>>>;

// y as loop variable type V; a symbolic value (a variable read outside a trace) is computed now,
// so each iteration starts from values rather than from a growing graph.
// On the tape of a function running eagerly, the new value stays linked to what it was
// computed from, so that gradients flow through the loop (see linked).
template <class V, class Y>
V to_loop_var(const Y& y) {
    if constexpr (eager_tensor_type<V>)
        return V(to_eager(y));
    else if constexpr (eager_tensor_type<Y>)
        return y.tape() ? checkpoint(erased<value_of_t<Y>>(y.tape(), y.tape_node()))
                        : snapshot(y.value());
    else
        return checkpoint(erased<value_of_t<Y>>(y));
}

template <class C, class B, class... Xs>
constexpr bool traceable_loop() {
    if constexpr (!(symbolic_tensor<Xs> && ...))
        return false;
    else
        return symbolic_tensor<std::invoke_result_t<C&, const erased<value_of_t<Xs>>&...>> &&
               results_of<std::invoke_result_t<B&, const erased<value_of_t<Xs>>&...>>::symbolic;
}

template <class C, class B, class... Xs>
auto run_loop(std::int64_t limit, C& cond_fn, B& body_fn, const Xs&... init) {
    std::tuple<loop_var_t<Xs>...> vars(to_loop_var<loop_var_t<Xs>>(init)...);
    for (std::int64_t iteration = 0; limit < 0 || iteration < limit; ++iteration) {
        const auto p = to_eager(std::apply(cond_fn, vars));
        check_predicate(p.shape(), "while_loop: cond_fn's result");
        if (!p.value()())
            break;
        auto next = std::apply(
            [&](const auto&... vs) {
                return results_of<decltype(body_fn(vs...))>::as_tuple(body_fn(vs...));
            },
            vars);
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            (graph::check_loop_shape(std::get<I>(vars).shape(), std::get<I>(next).shape(), I), ...);
            vars = std::tuple<loop_var_t<Xs>...>(to_loop_var<loop_var_t<Xs>>(std::get<I>(next))...);
        }
        (std::index_sequence_for<Xs...>{});
    }
    return unwrap_single(fresh_on_tape(vars)); // a loop that ran no step: not its input
}

/// A traced loop of one variable shows in its type as node<op::while_loop, X>, for
/// compile-time inspection; several variables come back erased.
template <class... Xs, class R>
auto typed_loop_result(const R& r) {
    if constexpr (sizeof...(Xs) == 1 && symbolic_tensor<R>)
        return node<op::while_loop, Xs...>(r.builder(), r.id());
    else
        return r;
}

template <class C, class B, class... Xs>
auto traced_loop(std::int64_t limit, C& cond_fn, B& body_fn, const Xs&... init) {
    const auto b = expr::target_trace(init...);
    std::vector<graph::node_id> inputs{b->import(init.builder().get(), init.id())...};
    constexpr std::size_t n = sizeof...(Xs);
    // The loop variables as the condition and the body see them: args 0..n-1.
    auto run = [&](auto& fn, const std::shared_ptr<trace::builder>& child) {
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
            const std::tuple<erased<value_of_t<Xs>>...> vars{erased<value_of_t<Xs>>(
                child, child->add_arg(I, dtype_of_v<value_of_t<Xs>>, b->at(inputs[I]).shape))...};
            return std::apply(fn, vars);
        }
        (std::index_sequence_for<Xs...>{});
    };
    std::array<trace::subgraph, 2> bodies{
        trace::trace_subgraph(
            *b,
            [&](const auto& child) {
                const auto p = run(cond_fn, child);
                return std::vector<trace::traced_value>{{p.builder().get(), p.id()}};
            }),
        trace::trace_subgraph(*b, [&](const auto& child) {
            using BR = decltype(run(body_fn, child));
            return traced_values(results_of<BR>::as_tuple(run(body_fn, child)));
        })};
    const graph::graph& c = *bodies[0].g;
    check_predicate(c[c.outputs[0]].shape, "while_loop: cond_fn's result");
    const graph::graph& body = *bodies[1].g;
    std::vector<graph::node> results(n);
    for (std::size_t k = 0; k < n; ++k) {
        results[k].type = b->at(inputs[k]).type;
        results[k].shape = b->at(inputs[k]).shape;
        graph::check_loop_shape(results[k].shape, body[body.outputs[k]].shape, k);
    }
    trace::bind_captures(inputs, n, n, bodies);
    const auto ids = b->add_control(op_kind::while_loop, std::move(inputs),
                                    {bodies[0].g, bodies[1].g}, results, limit);
    return typed_loop_result<Xs...>(unwrap_single(
        erased_results(static_cast<std::tuple<value_of_t<Xs>...>*>(nullptr), b, ids)));
}

template <class C, class B, class... Xs>
auto while_loop_limited(std::int64_t limit, C cond_fn, B body_fn, const Xs&... init) {
    if constexpr (!loop_fits<C, B, Xs...>()) {
        check_loop<C, B, Xs...>(); // says why, and nothing else fails
    } else {
        if constexpr (traceable_loop<C, B, Xs...>()) {
            if (!(is_deferred(init) || ...) || recording_control_flow())
                return traced_loop(limit, cond_fn, body_fn, init...);
            return typed_loop_result<Xs...>(run_loop(limit, cond_fn, body_fn, init...));
        } else {
            return run_loop(limit, cond_fn, body_fn, init...);
        }
    }
}

} // namespace detail

/// The most iterations a while_loop may run (tf.while_loop's maximum_iterations): passed last,
/// `xtrace::while_loop(cond_fn, body_fn, x, xtrace::maximum_iterations(100))`.
struct maximum_iterations {
    /// At most n iterations (n >= 0).
    explicit maximum_iterations(std::int64_t n) : count(n) {
        if (n < 0)
            throw error("xtrace::maximum_iterations: the count must be >= 0, got " +
                        std::to_string(n));
    }
    std::int64_t count; ///< the bound
};

/// Runs `vars = body_fn(vars...)` while `cond_fn(vars...)` is true, starting from `init...`, and
/// returns the final loop variables (one tensor, or a tuple for several). body_fn must keep each
/// variable's dtype and shape; cond_fn returns a 0-d bool tensor. Traced, both are traced once
/// and the loop runs in the graph; eager, it is a C++ loop. A last argument
/// xtrace::maximum_iterations(n) stops it after n iterations whatever cond_fn says.
template <class C, class B, class... Args>
auto while_loop(C cond_fn, B body_fn, const Args&... args) {
    constexpr std::size_t n = sizeof...(Args);
    if constexpr (n > 0 && std::is_same_v<std::tuple_element_t<n - 1, std::tuple<Args...>>,
                                          maximum_iterations>) {
        const auto all = std::tie(args...);
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
            return detail::while_loop_limited(std::get<n - 1>(all).count, cond_fn, body_fn,
                                              std::get<I>(all)...);
        }
        (std::make_index_sequence<n - 1>{});
    } else {
        return detail::while_loop_limited(-1, cond_fn, body_fn, args...);
    }
}

} // namespace xtrace

#endif
