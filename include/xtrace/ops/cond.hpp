#ifndef XTRACE_OPS_COND_HPP
#define XTRACE_OPS_COND_HPP

// cond(pred, then_fn, else_fn): tf.cond. Traced, both branches are traced into subgraphs and
// only the taken one runs; eager (or with a C++ bool), only the taken branch is called.

#include "../config.hpp"
#include "../core/error.hpp"
#include "../eager/tape.hpp"
#include "erase.hpp"
#include "results.hpp"

#include <string>
#include <type_traits>
#include <utility>

namespace xtrace {
namespace detail {

/// The failing check shows the branches' dtypes in the compiler's "with ThenDtypes = ...,
/// ElseDtypes = ..." line.
template <class ThenDtypes, class ElseDtypes>
constexpr auto cond_branches_agree() {
    static_assert(std::is_same_v<ThenDtypes, ElseDtypes>,
                  "xtrace::cond: the then branch and the else branch return different dtypes (see "
                  "'with ThenDtypes = ..., ElseDtypes = ...' above); both must return the same "
                  "dtypes, so convert one with xtrace::cast<T>(x)");
}

/// True when the branches return the same dtypes (or both nothing).
template <class Then, class Else>
constexpr bool branches_agree() {
    using RT = std::invoke_result_t<Then&>;
    using RE = std::invoke_result_t<Else&>;
    if constexpr (std::is_void_v<RT> || std::is_void_v<RE>)
        return std::is_void_v<RT> == std::is_void_v<RE>;
    else if constexpr (!results_of<RT>::valid || !results_of<RE>::valid)
        return false;
    else
        return std::is_same_v<typename results_of<RT>::types, typename results_of<RE>::types>;
}

// Deduced return types (here and below) make the compiler check these as soon as cond is
// instantiated, so that their message is the first error.
template <class Then, class Else>
constexpr auto check_branches() {
    using RT = std::invoke_result_t<Then&>;
    using RE = std::invoke_result_t<Else&>;
    static_assert(std::is_void_v<RT> == std::is_void_v<RE>,
                  "xtrace::cond: one branch returns a value and the other returns nothing; the "
                  "result must exist whichever branch runs, so both branches must return a "
                  "value (or both nothing)");
    if constexpr (!std::is_void_v<RT>) {
        static_assert(results_of<RT>::valid && results_of<RE>::valid,
                      "xtrace::cond: each branch must return a tensor, or a std::tuple or "
                      "std::pair of tensors");
        if constexpr (results_of<RT>::valid && results_of<RE>::valid)
            cond_branches_agree<typename results_of<RT>::types, typename results_of<RE>::types>();
    }
}

// The taken branch's results, with their expression types erased (so both branches give one
// type).
template <class Fn>
auto run_branch(Fn& fn) {
    using R = std::invoke_result_t<Fn&>;
    if constexpr (std::is_void_v<R>)
        fn();
    else
        return std::apply([](const auto&... xs) { return unwrap_single(std::tuple(erase(xs)...)); },
                          results_of<R>::as_tuple(fn()));
}

/// True when cond(pred, then, else) can be traced: a symbolic pred, symbolic results.
template <class P, class Then, class Else>
constexpr bool traceable_cond() {
    using RT = std::invoke_result_t<Then&>;
    using RE = std::invoke_result_t<Else&>;
    if constexpr (!symbolic_tensor<P>)
        return false;
    else if constexpr (std::is_void_v<RT>)
        return true;
    else
        return results_of<RT>::symbolic && results_of<RE>::symbolic;
}

XTRACE_DECL void check_predicate(const shape_t& s, std::string_view what);

/// A traced cond of one tensor keeps its branches in its type, node<op::cond, P, Then, Else>,
/// for compile-time inspection; tuples of results are erased.
template <class P, class RT, class RE, class R>
auto typed_cond_result(const R& r) {
    if constexpr (tensor_like<RT> && symbolic_tensor<R>)
        return node<op::cond, P, RT, RE>(r.builder(), r.id());
    else
        return r;
}

template <class RT, class P, class Then, class Else>
auto traced_cond(const P& pred, Then& then_fn, Else& else_fn) {
    const auto b = expr::target_trace(pred);
    std::vector<graph::node_id> inputs{b->import(pred.builder().get(), pred.id())};
    check_predicate(b->at(inputs[0]).shape, "cond: pred");
    auto branch = [&](auto& fn) {
        return trace::trace_subgraph(*b, [&](const auto&) {
            if constexpr (std::is_void_v<RT>) {
                fn();
                return std::vector<trace::traced_value>{};
            } else {
                return traced_values(
                    results_of<std::invoke_result_t<decltype(fn)&>>::as_tuple(fn()));
            }
        });
    };
    std::array<trace::subgraph, 2> bodies{branch(then_fn), branch(else_fn)};
    std::vector<graph::node> results(bodies[0].g->outputs.size());
    for (std::size_t k = 0; k < results.size(); ++k) {
        const graph::node& t = (*bodies[0].g)[bodies[0].g->outputs[k]];
        const graph::node& e = (*bodies[1].g)[bodies[1].g->outputs[k]];
        results[k].type = t.type;
        results[k].shape = graph::merge_branch_shapes(t.shape, e.shape, k);
    }
    trace::bind_captures(inputs, 0, 1, bodies);
    const auto ids =
        b->add_control(op_kind::cond, std::move(inputs), {bodies[0].g, bodies[1].g}, results);
    if constexpr (!std::is_void_v<RT>)
        return typed_cond_result<P, RT, std::invoke_result_t<Else&>>(unwrap_single(
            erased_results(static_cast<typename results_of<RT>::types*>(nullptr), b, ids)));
}

} // namespace detail

/// then_fn() if `pred` is true, else else_fn(): both are traced (each must return the same
/// dtypes and shapes: a tensor, a tuple of tensors, or nothing), only the taken one runs. pred is
/// a 0-d bool tensor, or a C++ bool (then only the taken branch is called, as a Python `if`).
template <class P, class Then, class Else>
auto cond(const P& pred, Then then_fn, Else else_fn) {
    using RT = std::invoke_result_t<Then&>;
    if constexpr (!detail::branches_agree<Then, Else>()) {
        detail::check_branches<Then, Else>(); // says why, and nothing else fails
    } else if constexpr (std::is_same_v<P, bool>) {
        return pred ? detail::run_branch(then_fn) : detail::run_branch(else_fn);
    } else {
        static_assert(tensor_like<P> && std::is_same_v<detail::value_of_t<P>, bool>,
                      "xtrace::cond: pred must be a 0-d bool tensor (make one with a comparison, "
                      "e.g. xtrace::sum(x) > 0) or a C++ bool");
        using RE = std::invoke_result_t<Else&>;
        if constexpr (detail::traceable_cond<P, Then, Else>()) {
            if (!detail::is_deferred(pred))
                return detail::traced_cond<RT>(pred, then_fn, else_fn);
        }
        // Eager, or a variable read outside a trace: only the taken branch is called.
        const auto p = detail::to_eager(pred);
        detail::check_predicate(p.shape(), "cond: pred");
        if constexpr (std::is_void_v<RT>)
            p.value()() ? detail::run_branch(then_fn) : detail::run_branch(else_fn);
        else if constexpr (detail::traceable_cond<P, Then, Else>())
            return detail::typed_cond_result<P, RT, RE>(detail::fresh_on_tape(
                p.value()() ? detail::run_branch(then_fn) : detail::run_branch(else_fn)));
        else
            return detail::fresh_on_tape(p.value()() ? detail::run_branch(then_fn)
                                                     : detail::run_branch(else_fn));
    }
}

} // namespace xtrace

#if XTRACE_DEFINE_RUNTIME

namespace xtrace::detail {

XTRACE_DECL void check_predicate(const shape_t& s, std::string_view what) {
    if (is_unknown_rank(s)) // would pick a branch before its rank could be checked
        throw xtrace::detail::needs_known_dims(
            "xtrace::" + std::string(what) +
            " has unknown rank (computed from a spec of xtrace::any_rank); it "
            "must be known to be 0-d while tracing: reduce it (xtrace::sum, "
            "xtrace::max, ...) or give the signature a rank");
    if (!s.empty())
        throw shape_error("xtrace::" + std::string(what) +
                          " must be a 0-d bool tensor, got shape " + shape_string(s));
}

} // namespace xtrace::detail

#endif

#endif
