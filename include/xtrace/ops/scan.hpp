#ifndef XTRACE_OPS_SCAN_HPP
#define XTRACE_OPS_SCAN_HPP

// scan(fn, init, xs): lax.scan / tf.scan. fn(carries..., slices...) runs once per leading-dim
// slice of the scanned tensors and returns the next carries followed by per-step outputs; scan
// returns the final carries followed by the per-step outputs stacked along a new leading dim.
// Traced, fn is traced once into the body of a scan node; eager, it is a C++ loop.

#include "../config.hpp"
#include "../eager/dry_run.hpp"
#include "../eager/tape.hpp"
#include "elementwise.hpp"
#include "reduce.hpp"
#include "shape.hpp"
#include "while_loop.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace xtrace {
namespace detail {

/// A tensor or a std::tuple of tensors (std::tuple<> included) as a tuple: `valid` when it is
/// one.
template <class X>
struct tensor_pack {
    static constexpr bool valid = false;
};
template <tensor_like X>
struct tensor_pack<X> {
    static constexpr bool valid = true;
    using tuple = std::tuple<X>;
    static tuple as_tuple(const X& x) { return tuple(x); }
};
template <class... Xs>
requires(tensor_like<Xs>&&...) struct tensor_pack<std::tuple<Xs...>> {
    static constexpr bool valid = true;
    using tuple = std::tuple<Xs...>;
    static const tuple& as_tuple(const tuple& x) { return x; }
};

/// The failing check shows the carries' dtypes and the first results' in the compiler's "with
/// CarryDtypes = ..., ResultDtypes = ..." line.
template <class CarryDtypes, class ResultDtypes>
constexpr auto scan_keeps_carry_dtypes() {
    static_assert(std::is_same_v<CarryDtypes, ResultDtypes>,
                  "xtrace::scan: fn must return the next carries first, each in its carry's dtype "
                  "(see 'with CarryDtypes = ..., ResultDtypes = ...' above), then the per-step "
                  "outputs");
}

// The first N types of a tuple (declared only: for decltype).
template <class Tuple, std::size_t... I>
std::tuple<std::tuple_element_t<I, Tuple>...> tuple_head_of(std::index_sequence<I...>);
template <std::size_t N, class Tuple>
using tuple_head_t = decltype(tuple_head_of<Tuple>(std::make_index_sequence<N>{}));

/// True when every element type of tuple type T is a symbolic tensor.
template <class T>
inline constexpr bool all_symbolic_v = false;
template <class... Ts>
inline constexpr bool all_symbolic_v<std::tuple<Ts...>> = (symbolic_tensor<Ts> && ...);

/// What fn returns when called with carries Cs and slices Ss (tuples of those types).
template <class Fn, class Cs, class Ss>
struct scan_call;
template <class Fn, class... Cs, class... Ss>
struct scan_call<Fn, std::tuple<Cs...>, std::tuple<Ss...>> {
    static constexpr bool invocable = std::is_invocable_v<Fn&, const Cs&..., const Ss&...>;
    using type = std::invoke_result_t<Fn&, const Cs&..., const Ss&...>;
};

/// How a slice of scanned tensor X is seen by fn: a symbolic tensor for a symbolic X (traced,
/// or holding a value when the scan runs now on variable reads), else an eager tensor.
template <class X>
using slice_t =
    std::conditional_t<symbolic_tensor<X>, erased<value_of_t<X>>, eager_tensor<value_of_t<X>>>;

/// How fn sees carries of tuple type Cs and slices of scanned tuple Xs (the same whether the
/// scan is traced or runs now).
template <class Cs, class Xs>
struct scan_types;
template <class... Cs, class... Xs>
struct scan_types<std::tuple<Cs...>, std::tuple<Xs...>> {
    using carries = std::tuple<loop_var_t<Cs>...>;
    using slices = std::tuple<slice_t<Xs>...>;
};

/// Row `i` of `value` (scanned tensor X's value) as fn sees it.
template <class X, class T>
slice_t<X> make_slice(const xt::xarray<T>& row) {
    if constexpr (symbolic_tensor<X>)
        return snapshot(row);
    else
        return eager_tensor<T>(row);
}

/// A bool tensor of shape [length, 1, ...] (rank dims), true in row i only.
inline xt::xarray<bool> row_mask(std::int64_t length, std::size_t rank, std::int64_t i) {
    std::vector<std::size_t> shape(rank, 1);
    shape[0] = static_cast<std::size_t>(length);
    auto m = xt::xarray<bool>::from_shape(shape);
    std::fill(m.begin(), m.end(), false);
    m.data()[i] = true;
    return m;
}

// What the active tape records of a scan run now (by a function running eagerly). A row of a
// scanned tensor, and the stacked per-step outputs, are ops the graph has no node for; their
// links (see linked) are written with where: row i of x is sum(where(row i, x, 0)) over the
// leading dim, the stack the sum over the steps of where(row i, output i, 0). Both are exactly
// the values they stand for (a product with a one-hot would make 0 * inf a NaN), and their
// gradients are the slicing's and the stacking's. Integer and bool values are not recorded.
template <class T>
struct scan_tape {
    std::shared_ptr<trace::builder> tape =
        std::is_floating_point_v<T> ? active_tape() : nullptr; ///< null: nothing is recorded

    /// Row i (of `length`) of x (a tensor of the tape), whose value is `row`, as the tape's.
    template <class X>
    erased<T> row(const xt::xarray<T>& row, const X& x, std::int64_t i, std::int64_t length) const {
        const auto m = snapshot<bool>(row_mask(length, row.dimension() + 1, i), tape);
        return linked(row, erased<T>(xtrace::sum(xtrace::where(m, on_tape(tape, x), T(0)), {0})));
    }

    /// Keeps per-step output `out` for the stack.
    template <class Y>
    void add(const Y& out) {
        if constexpr (std::is_floating_point_v<T>)
            if (tape)
                steps.push_back(on_tape(tape, out));
    }

    /// The steps' outputs stacked, whose value is `stacked`, as the tape's; when no step ran, a
    /// leaf of the tape (the empty stack depends on nothing, but is a value of the call).
    std::optional<erased<T>> stack(const xt::xarray<T>& stacked) const {
        if (!tape)
            return std::nullopt;
        if (steps.empty())
            return snapshot<T>(stacked, tape);
        const auto length = static_cast<std::int64_t>(steps.size());
        std::optional<erased<T>> sum;
        for (std::int64_t i = 0; i < length; ++i) {
            const auto& step = steps[static_cast<std::size_t>(i)];
            const auto m = snapshot<bool>(row_mask(length, stacked.dimension(), i), tape);
            const erased<T> placed = xtrace::where(m, xtrace::expand_dims(step, 0), T(0));
            sum = sum ? erased<T>(*sum + placed) : placed;
        }
        return linked(stacked, *sum);
    }

    std::vector<erased<T>> steps; ///< the per-step outputs, as the tape's
};

/// The element types of a tuple of tensors.
template <class Tuple>
struct dtypes_of;
template <class... Ts>
struct dtypes_of<std::tuple<Ts...>> {
    using type = std::tuple<value_of_t<Ts>...>;
};

/// True when fn fits carries Cs and scanned tensors Xs (tuple types).
template <class Fn, class Cs, class Xs>
constexpr bool scan_fits() {
    using types = scan_types<Cs, Xs>;
    using call = scan_call<Fn, typename types::carries, typename types::slices>;
    if constexpr (!call::invocable)
        return false;
    else {
        using R = typename call::type;
        constexpr std::size_t carried = std::tuple_size_v<Cs>;
        if constexpr (!results_of<R>::valid)
            return false;
        else if constexpr (std::tuple_size_v<typename results_of<R>::types> < carried)
            return false;
        else
            return std::is_same_v<tuple_head_t<carried, typename results_of<R>::types>,
                                  typename dtypes_of<Cs>::type>;
    }
}

template <class Fn, class Init, class Xs>
constexpr auto check_scan() {
    static_assert(tensor_pack<Init>::valid,
                  "xtrace::scan: pass the initial carries as a tensor or a std::tuple of tensors "
                  "(std::tuple<>() for none)");
    static_assert(tensor_pack<Xs>::valid && !std::is_same_v<Xs, std::tuple<>>,
                  "xtrace::scan: pass the scanned tensors as a tensor or a std::tuple of tensors "
                  "(at least one)");
    if constexpr (tensor_pack<Init>::valid && tensor_pack<Xs>::valid) {
        using Cs = typename tensor_pack<Init>::tuple;
        using types = scan_types<Cs, typename tensor_pack<Xs>::tuple>;
        using call = scan_call<Fn, typename types::carries, typename types::slices>;
        static_assert(call::invocable,
                      "xtrace::scan: fn must take the carries, then one slice of each scanned "
                      "tensor, one parameter each (declare them `auto` or `const auto&`)");
        if constexpr (call::invocable) {
            using R = typename call::type;
            static_assert(results_of<R>::valid,
                          "xtrace::scan: fn must return the next carries, then the per-step "
                          "outputs: a tensor, or a std::tuple of tensors");
            if constexpr (results_of<R>::valid) {
                constexpr std::size_t carried = std::tuple_size_v<Cs>;
                using types_out = typename results_of<R>::types;
                static_assert(std::tuple_size_v<types_out> >= carried,
                              "xtrace::scan: fn must return at least one tensor per carry (the "
                              "next carries come first, then the per-step outputs)");
                if constexpr (std::tuple_size_v<types_out> >= carried)
                    scan_keeps_carry_dtypes<typename dtypes_of<Cs>::type,
                                            tuple_head_t<carried, types_out>>();
            }
        }
    }
}

/// Row `i` of a row-major array: its leading-dim slice, copied.
template <class T>
xt::xarray<T> leading_slice(const xt::xarray<T>& x, std::size_t i) {
    std::vector<std::size_t> shape(x.shape().begin() + 1, x.shape().end());
    auto out = xt::xarray<T>::from_shape(shape);
    const std::size_t row = out.size();
    std::copy(x.data() + i * row, x.data() + (i + 1) * row, out.data());
    return out;
}

/// The stacked per-step outputs of a scan that runs now, filled row by row.
template <class T>
struct stacked_rows {
    using value_type = T;
    std::vector<xt::xarray<T>> rows;
    shape_t row_shape;

    void add(const xt::xarray<T>& y, std::size_t k) {
        const shape_t s(y.shape().begin(), y.shape().end());
        if (rows.empty())
            row_shape = s;
        else if (s != row_shape)
            throw shape_error("xtrace::scan: per-step output " + std::to_string(k) + " has shape " +
                              shape_string(row_shape) + " at step 0 but " + shape_string(s) +
                              " at step " + std::to_string(rows.size()) +
                              "; fn must return the same shapes at every step");
        rows.push_back(y);
    }

    xt::xarray<T> stack() const {
        std::vector<std::size_t> shape{rows.size()};
        shape.insert(shape.end(), row_shape.begin(), row_shape.end());
        auto out = xt::xarray<T>::from_shape(shape);
        std::size_t at = 0;
        for (const auto& r : rows) {
            std::copy(r.data(), r.data() + r.size(), out.data() + at);
            at += r.size();
        }
        return out;
    }
};

// Row i (of `length`) of scanned tensor x, whose value is `row`, as fn sees it: on the tape
// of a function running eagerly, recorded as a row of x.
template <class X, class T>
slice_t<X> slice_of(const scan_tape<T>& t, const xt::xarray<T>& row, const X& x, std::int64_t i,
                    std::int64_t length) {
    if constexpr (std::is_floating_point_v<T>) {
        if (t.tape) {
            const erased<T> r = t.row(row, x, i, length);
            if constexpr (symbolic_tensor<X>) {
                return r;
            } else {
                eager_tensor<T> e(row);
                e.record_on(t.tape, r.id());
                return e;
            }
        }
    }
    return make_slice<X>(row);
}

// A stacked per-step output, as the scan returns it (symbolic, or eager), recorded on the tape
// of a function running eagerly.
template <bool Symbolic, class T>
auto stacked_result(const xt::xarray<T>& value, const scan_tape<T>& t) {
    std::optional<erased<T>> recorded;
    if constexpr (std::is_floating_point_v<T>)
        recorded = t.stack(value);
    if constexpr (Symbolic) {
        return recorded ? *recorded : snapshot(value);
    } else {
        eager_tensor<T> e(value);
        if (recorded)
            e.record_on(t.tape, recorded->id());
        return e;
    }
}

// A slice of `shape` filled with ones: what a dry run of fn reads.
template <class T>
xt::xarray<T> placeholder_slice(const shape_t& shape) {
    auto out = xt::xarray<T>::from_shape(std::vector<std::size_t>(shape.begin(), shape.end()));
    std::fill(out.begin(), out.end(), T(1));
    return out;
}

// The scan run now: a C++ loop over the rows of the scanned tensors' values. `Symbolic`: the
// stacked outputs come back as (deferred) symbolic tensors, as the carries then do.
template <bool Symbolic, class Fn, class... Cs, class... Xs>
auto run_scan(Fn& fn, const std::tuple<Cs...>& init, const std::tuple<Xs...>& xs) {
    using carries_t = std::tuple<loop_var_t<Cs>...>;
    carries_t vars = std::apply(
        [](const auto&... c) { return carries_t(to_loop_var<loop_var_t<Cs>>(c)...); }, init);
    const auto values =
        std::apply([](const auto&... x) { return std::tuple(to_eager(x).value()...); }, xs);
    std::vector<shape_t> xs_shapes;
    std::apply(
        [&](const auto&... v) {
            (xs_shapes.push_back(shape_t(v.shape().begin(), v.shape().end())), ...);
        },
        values);
    const std::int64_t length = graph::scan_length(xs_shapes);
    constexpr std::size_t carried = sizeof...(Cs);
    using R = std::invoke_result_t<Fn&, const loop_var_t<Cs>&..., const slice_t<Xs>&...>;
    using out_types = typename results_of<R>::types;
    constexpr std::size_t outputs = std::tuple_size_v<out_types>;
    auto stacks = [&]<std::size_t... K>(std::index_sequence<K...>) {
        return std::tuple<stacked_rows<std::tuple_element_t<carried + K, out_types>>...>{};
    }
    (std::make_index_sequence<outputs - carried>{});
    auto stack_tapes = [&]<std::size_t... K>(std::index_sequence<K...>) {
        return std::tuple<scan_tape<std::tuple_element_t<carried + K, out_types>>...>{};
    }
    (std::make_index_sequence<outputs - carried>{});
    const std::tuple<scan_tape<value_of_t<Xs>>...> row_tapes;
    for (std::int64_t step = 0; step < length; ++step) {
        const auto i = static_cast<std::size_t>(step);
        auto next = [&]<std::size_t... C, std::size_t... X>(std::index_sequence<C...>,
                                                            std::index_sequence<X...>) {
            return results_of<R>::as_tuple(
                fn(std::get<C>(vars)...,
                   slice_of<Xs>(std::get<X>(row_tapes), leading_slice(std::get<X>(values), i),
                                std::get<X>(xs), step, length)...));
        }
        (std::index_sequence_for<Cs...>{}, std::index_sequence_for<Xs...>{});
        [&]<std::size_t... C>(std::index_sequence<C...>) {
            (graph::check_carry_shape(std::get<C>(vars).shape(), std::get<C>(next).shape(), C),
             ...);
            vars = carries_t(to_loop_var<loop_var_t<Cs>>(std::get<C>(next))...);
        }
        (std::index_sequence_for<Cs...>{});
        [&]<std::size_t... K>(std::index_sequence<K...>) {
            (std::get<K>(stacks).add(to_eager(std::get<carried + K>(next)).value(), carried + K),
             ...);
            (std::get<K>(stack_tapes).add(std::get<carried + K>(next)), ...);
        }
        (std::make_index_sequence<outputs - carried>{});
    }
    if (length == 0 && outputs > carried) {
        // Nothing to stack, but the stacked outputs' shapes depend on fn's: a dry run on
        // placeholder slices (xtrace's effects off) tells them, as tracing does when traced.
        try {
            const dry_run_scope dry;
            const auto r = [&]<std::size_t... C, std::size_t... X>(std::index_sequence<C...>,
                                                                   std::index_sequence<X...>) {
                return results_of<R>::as_tuple(fn(
                    std::get<C>(vars)..., make_slice<Xs>(placeholder_slice<value_of_t<Xs>>(shape_t(
                                              xs_shapes[X].begin() + 1, xs_shapes[X].end())))...));
            }
            (std::index_sequence_for<Cs...>{}, std::index_sequence_for<Xs...>{});
            [&]<std::size_t... K>(std::index_sequence<K...>) {
                ((std::get<K>(stacks).row_shape = std::get<carried + K>(r).shape()), ...);
            }
            (std::make_index_sequence<outputs - carried>{});
        } catch (const error& e) {
            throw shape_error(std::string("xtrace::scan: with zero steps, running now, fn runs "
                                          "once on placeholder slices of ones to learn the "
                                          "shapes of its per-step outputs, and it threw: ") +
                              e.what());
        }
    }
    return unwrap_single(std::tuple_cat(
        fresh_on_tape(vars), [&]<std::size_t... K>(std::index_sequence<K...>) {
            return std::tuple(
                stacked_result<Symbolic>(std::get<K>(stacks).stack(), std::get<K>(stack_tapes))...);
        }(std::make_index_sequence<outputs - carried>{})));
}

template <class Fn, class... Cs, class... Xs>
auto traced_scan(Fn& fn, const std::tuple<Cs...>& init, const std::tuple<Xs...>& xs) {
    const auto b = std::apply([](const auto&... all) { return expr::target_trace(all...); },
                              std::tuple_cat(init, xs));
    std::vector<graph::node_id> inputs = std::apply(
        [&](const auto&... all) {
            return std::vector<graph::node_id>{b->import(all.builder().get(), all.id())...};
        },
        std::tuple_cat(init, xs));
    constexpr std::size_t carried = sizeof...(Cs), scanned = sizeof...(Xs);
    std::vector<shape_t> xs_shapes;
    for (std::size_t j = 0; j < scanned; ++j)
        xs_shapes.push_back(b->at(inputs[carried + j]).shape);
    const std::int64_t length = graph::scan_length(xs_shapes);
    // The carries and slices as fn sees them: args 0..carried+scanned-1 of the body.
    std::array<trace::subgraph, 1> body{trace::trace_subgraph(*b, [&](const auto& child) {
        auto r = [&]<std::size_t... I, std::size_t... J>(std::index_sequence<I...>,
                                                         std::index_sequence<J...>) {
            const std::tuple<erased<value_of_t<Cs>>..., erased<value_of_t<Xs>>...> args{
                erased<value_of_t<Cs>>(child, child->add_arg(I, dtype_of_v<value_of_t<Cs>>,
                                                             b->at(inputs[I]).shape))...,
                erased<value_of_t<Xs>>(
                    child,
                    child->add_arg(carried + J, dtype_of_v<value_of_t<Xs>>,
                                   shape_t(xs_shapes[J].begin() + 1, xs_shapes[J].end())))...};
            return std::apply(fn, args);
        }
        (std::index_sequence_for<Cs...>{}, std::index_sequence_for<Xs...>{});
        return traced_values(results_of<decltype(r)>::as_tuple(r));
    })};
    const graph::graph& g = *body[0].g;
    std::vector<shape_t> carries;
    for (std::size_t k = 0; k < carried; ++k)
        carries.push_back(b->at(inputs[k]).shape);
    std::vector<graph::node> results(g.outputs.size());
    for (std::size_t k = 0; k < results.size(); ++k) {
        const graph::node& o = g[g.outputs[k]];
        results[k].type = o.type;
        results[k].shape = graph::scan_result_shape(carries, k, o.shape, length);
    }
    trace::bind_captures(inputs, carried + scanned, carried + scanned, body);
    const auto ids =
        b->add_scan(std::move(inputs), body[0].g, results, static_cast<std::int64_t>(carried),
                    static_cast<std::int64_t>(scanned));
    using R = typename scan_call<Fn, std::tuple<erased<value_of_t<Cs>>...>,
                                 std::tuple<erased<value_of_t<Xs>>...>>::type;
    return unwrap_single(
        erased_results(static_cast<typename results_of<R>::types*>(nullptr), b, ids));
}

} // namespace detail

/// lax.scan: runs `fn(carries..., slices...)` once per leading-dim slice of the scanned tensors
/// `xs` (a tensor, or a std::tuple of tensors sharing their leading dim), starting from the
/// carries `init` (a tensor, or a std::tuple of tensors, std::tuple<>() for none). fn returns
/// the next carries (each keeping its carry's dtype and shape) followed by per-step outputs
/// (the same shapes at every step). Returns the final carries followed by the per-step
/// outputs stacked along a new leading dim: one tensor, or a std::tuple. Traced, fn is traced
/// once and the loop runs in the graph (print, variables and host_function inside run every
/// step); eager, it is a C++ loop.
template <class Fn, class Init, class Xs>
auto scan(Fn fn, const Init& init, const Xs& xs) {
    if constexpr (!detail::tensor_pack<Init>::valid || !detail::tensor_pack<Xs>::valid ||
                  std::is_same_v<Xs, std::tuple<>>) {
        detail::check_scan<Fn, Init, Xs>(); // says why, and nothing else fails
    } else {
        using Cs = typename detail::tensor_pack<Init>::tuple;
        using Ts = typename detail::tensor_pack<Xs>::tuple;
        constexpr bool symbolic = detail::all_symbolic_v<decltype(std::tuple_cat(
            std::declval<Cs>(), std::declval<Ts>()))>;
        if constexpr (!detail::scan_fits<Fn, Cs, Ts>()) {
            detail::check_scan<Fn, Init, Xs>(); // says why, and nothing else fails
        } else {
            const Cs& carries = detail::tensor_pack<Init>::as_tuple(init);
            const Ts& scanned = detail::tensor_pack<Xs>::as_tuple(xs);
            if constexpr (symbolic) {
                const bool deferred =
                    std::apply([](const auto&... all) { return (detail::is_deferred(all) || ...); },
                               std::tuple_cat(carries, scanned));
                if (!deferred || detail::recording_control_flow())
                    return detail::traced_scan(fn, carries, scanned);
            }
            // Eager, or variable reads outside a trace: computed now (symbolic tensors come
            // back as symbolic tensors holding the values, as the traced path returns).
            return detail::run_scan<symbolic>(fn, carries, scanned);
        }
    }
}

} // namespace xtrace

#endif
