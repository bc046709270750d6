#ifndef XTRACE_FUNCTION_RUN_GRAPH_HPP
#define XTRACE_FUNCTION_RUN_GRAPH_HPP

// A call's last step: the trace's graph run on the call's arguments (statically fused kernel
// first, else the interpreter), its outputs returned as xt::xarray.

#include "../interp/execute.hpp"
#include "../interp/run_stages.hpp"
#include "../interp/thread_cap.hpp"
#include "arguments.hpp"
#include "huge_pages.hpp"
#include "outputs.hpp"
#include "trace_entry.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <tuple>
#include <type_traits>
#include <utility>

namespace xtrace::function_detail {

/// run_graph for a trace in stages: the outputs are made once the last stage's plan knows
/// their shapes.
template <class Traced>
auto run_staged(const trace_entry& trace, const plan::plan& first,
                std::span<const interp::strided_input> inputs,
                std::span<graph::variable_storage* const> variables) {
    using outs = outputs_of<Traced>;
    using result = typename outs::result;
    constexpr std::size_t n_out = std::tuple_size_v<typename outs::types>;
    struct allocator final : interp::output_allocator {
        void* allocate(std::size_t k, const shape_t& s) override {
            void* data = nullptr;
            auto fit = [&](auto& a) {
                a.resize(typename std::remove_cvref_t<decltype(a)>::shape_type(s.begin(), s.end()));
                advise_huge_pages(a);
                data = a.data();
            };
            if constexpr (outs::single)
                fit(out);
            else
                [&]<std::size_t... K>(std::index_sequence<K...>) {
                    ((K == k ? fit(std::get<K>(out)) : void()), ...);
                }
            (std::make_index_sequence<n_out>{});
            return data;
        }
        result out;
    } outputs;
    interp::run_stages(*trace.stages, first, inputs, outputs, variables);
    return std::move(outputs.out);
}

/// Output k of a trace's graph bound by `p`, freshly allocated: an xt::xarray<T> of its shape.
template <class T>
xt::xarray<T> fresh_output(const trace_entry& trace, const plan::plan& p, std::size_t k) {
    const shape_t& s = p.shapes[trace.g.outputs[k]];
    xt::xarray<T> out(typename xt::xarray<T>::shape_type(s.begin(), s.end())); // one shape copy
    advise_huge_pages(out);
    return out;
}

/// Runs a trace's graph bound by `p` on `inputs` (and the call's variable arguments
/// `variables`), each output k an xt::xarray<T> that `make(std::type_identity<T>, k)` returns
/// (fresh, or taken over from a donated argument); returns them as Traced's result type.
template <class Traced, class Make>
auto run_graph_made(const trace_entry& trace, const plan::plan& p,
                    std::span<const interp::strided_input> inputs,
                    std::span<graph::variable_storage* const> variables, Make&& make) {
    using outs = outputs_of<Traced>;
    using result = typename outs::result;
    constexpr std::size_t n_out = std::tuple_size_v<typename outs::types>;
    result out = [&]<std::size_t... K>(std::index_sequence<K...>) {
        if constexpr (outs::single)
            return make(std::type_identity<std::tuple_element_t<0, typename outs::types>>{}, 0);
        else
            return result(
                make(std::type_identity<std::tuple_element_t<K, typename outs::types>>{}, K)...);
    }
    (std::make_index_sequence<n_out>{});
    std::array<void*, n_out> ptrs;
    if constexpr (outs::single)
        ptrs[0] = out.data();
    else
        std::apply(
            [&](auto&... xs) {
                std::size_t k = 0;
                ((ptrs[k++] = xs.data()), ...);
            },
            out);
    if (!interp::execute_fused(trace.fused, trace.g, p, inputs, ptrs[0]))
        interp::execute(trace.g, p, inputs, ptrs, variables);
    return out;
}

/// Runs a trace's graph bound by `plan` on `inputs` (and the call's variable arguments
/// `variables`); returns the outputs as Traced's result type.
template <class Traced>
auto run_graph(const trace_entry& trace, const plan::plan& p,
               std::span<const interp::strided_input> inputs,
               std::span<graph::variable_storage* const> variables = {}) {
    if (trace.stages)
        return run_staged<Traced>(trace, p, inputs, variables);
    return run_graph_made<Traced>(trace, p, inputs, variables, [&](auto tag, std::size_t k) {
        return fresh_output<typename decltype(tag)::type>(trace, p, k);
    });
}

/// True when `bytes` bytes at `out` share memory with any argument in `inputs` but the one at
/// `skip` (of the graph's arg dtypes and the plan's shapes): writing there could change what
/// the call still reads.
inline bool overlaps_inputs(const trace_entry& trace, const plan::plan& p,
                            std::span<const interp::strided_input> inputs, const void* out,
                            std::size_t bytes, std::size_t skip = std::size_t(-1)) {
    const auto* lo = static_cast<const std::byte*>(out);
    const auto* hi = lo + bytes;
    for (std::size_t k = 0; k < inputs.size() && k < trace.g.args.size(); ++k) {
        if (k == skip)
            continue;
        const graph::node_id a = trace.g.args[k];
        const shape_t& s = p.shapes[a];
        const auto size = static_cast<std::ptrdiff_t>(dtype_size(trace.g[a].type));
        std::ptrdiff_t first = 0, last = 0; // element offsets of the extreme elements
        bool empty = false;
        for (std::size_t d = 0; d < s.size(); ++d) {
            empty = empty || s[d] == 0;
            const std::ptrdiff_t reach = inputs[k].strides[d] * (s[d] - 1);
            (reach < 0 ? first : last) += reach;
        }
        if (empty)
            continue;
        const auto* base = static_cast<const std::byte*>(inputs[k].data);
        if (base + first * size < hi && lo < base + (last + 1) * size)
            return true;
    }
    return false;
}

/// Arguments of a call that may donate: the call's arguments, forwarded (see donates_v).
template <class... Args>
struct donated_arguments {
    std::tuple<Args&&...> args;
};

template <class D>
inline constexpr bool is_donated_arguments_v = false;
template <class... Args>
inline constexpr bool is_donated_arguments_v<donated_arguments<Args...>> = true;

/// True for xt::xarray<T> (the arrays a result is made of, and so can be donated into one).
template <class A>
struct is_xarray : std::false_type {};
template <class T>
struct is_xarray<xt::xarray<T>> : std::true_type {};

/// True for an argument the caller donates (A as a forwarding reference deduces it): an
/// xt::xarray passed as a non-const rvalue.
template <class A>
inline constexpr bool donated_v =
    !std::is_reference_v<A> && !std::is_const_v<A> && is_xarray<A>::value;

/// True when some argument of a call is donated.
template <class... Args>
inline constexpr bool donates_v = (donated_v<Args> || ...);

/// The array at tensor position `t` of `d` when it is donated and holds T, else nullptr.
template <class T, class... Args>
xt::xarray<T>* donor_at(std::size_t t, donated_arguments<Args...>& d) {
    xt::xarray<T>* found = nullptr;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        std::size_t position = 0; // among the tensor arguments
        auto visit = [&]<std::size_t J>(std::integral_constant<std::size_t, J>) {
            using A = std::tuple_element_t<J, std::tuple<Args...>>;
            if constexpr (tensor_argument<A>) {
                if constexpr (donated_v<A> && std::is_same_v<std::remove_cvref_t<A>, xt::xarray<T>>)
                    if (position == t)
                        found = &std::get<J>(d.args);
                ++position;
            }
        };
        (visit(std::integral_constant<std::size_t, I>{}), ...);
    }
    (std::index_sequence_for<Args...>{});
    return found;
}

/// run_graph, writing each output the plan lets take a donated argument's buffer into that
/// buffer (the argument's array is moved into the result); the others are made fresh.
template <class Traced, class... Args>
auto run_graph_donated(const trace_entry& trace, const plan::plan& p,
                       std::span<const interp::strided_input> inputs,
                       std::span<graph::variable_storage* const> variables,
                       donated_arguments<Args...>& donated) {
    if (trace.stages) // the outputs' shapes are known only as the stages run
        return run_graph<Traced>(trace, p, inputs, variables);
    std::uint64_t taken = 0; // argument positions already given to an output
    return run_graph_made<Traced>(trace, p, inputs, variables, [&](auto tag, std::size_t k) {
        using T = typename decltype(tag)::type;
        const shape_t& s = p.shapes[trace.g.outputs[k]];
        for (const std::uint32_t at : p.donations[k]) {
            xt::xarray<T>* d = at < 64 && !(taken >> at & 1) ? donor_at<T>(at, donated) : nullptr;
            if (!d)
                continue;
            const bool fits =
                d->dimension() == s.size() &&
                std::equal(s.begin(), s.end(), d->shape().begin(),
                           [](dim_t x, std::size_t y) { return static_cast<std::size_t>(x) == y; });
            // Another argument reading the same memory would see the results early.
            if (fits && d->data() == inputs[at].data &&
                !overlaps_inputs(trace, p, inputs, d->data(), d->size() * sizeof(T), at)) {
                taken |= std::uint64_t(1) << at;
                return xt::xarray<T>(std::move(*d));
            }
        }
        return fresh_output<T>(trace, p, k);
    });
}

/// Runs a trace's graph bound by `plan` on `inputs` into `out`, Traced's result type (or a tuple
/// of references to its arrays): each array is resized only when its shape differs. An array
/// that shares memory with an argument gets a fresh buffer, filled after the arguments are read.
template <class Traced, class Out>
void run_graph_into(const trace_entry& trace, const plan::plan& p,
                    std::span<const interp::strided_input> inputs, Out& out,
                    std::span<graph::variable_storage* const> variables = {}) {
    using outs = outputs_of<Traced>;
    constexpr std::size_t n_out = std::tuple_size_v<typename outs::types>;
    const graph::graph& g = trace.g;
    // Fresh outputs, handed over to `out`'s arrays.
    auto adopt = [&](auto fresh) {
        if constexpr (outs::single)
            out = std::move(fresh);
        else
            [&]<std::size_t... K>(std::index_sequence<K...>) {
                ((std::get<K>(out) = std::move(std::get<K>(fresh))), ...);
            }
        (std::make_index_sequence<n_out>{});
    };
    if (trace.stages) // the outputs' shapes are known only as the stages run
        return adopt(run_graph<Traced>(trace, p, inputs, variables));
    bool aliased = false;
    auto fit = [&](auto& a, std::size_t k) -> void* {
        using A = std::remove_cvref_t<decltype(a)>;
        const shape_t& s = p.shapes[g.outputs[k]];
        if (a.dimension() != s.size() ||
            !std::equal(s.begin(), s.end(), a.shape().begin(),
                        [](dim_t x, std::size_t y) { return static_cast<std::size_t>(x) == y; })) {
            a.resize(typename A::shape_type(s.begin(), s.end()));
            advise_huge_pages(a);
        }
        aliased = aliased || overlaps_inputs(trace, p, inputs, a.data(),
                                             a.size() * sizeof(typename A::value_type));
        return a.data();
    };
    std::array<void*, n_out> ptrs;
    if constexpr (outs::single)
        ptrs[0] = fit(out, 0);
    else
        [&]<std::size_t... K>(std::index_sequence<K...>) {
            ((ptrs[K] = fit(std::get<K>(out), K)), ...);
        }
    (std::make_index_sequence<n_out>{});
    if (aliased) // x = f(x) and the like: compute aside, then hand the buffers over
        return adopt(run_graph<Traced>(trace, p, inputs, variables));
    if (!interp::execute_fused(trace.fused, g, p, inputs, ptrs[0]))
        interp::execute(g, p, inputs, ptrs, variables);
}

} // namespace xtrace::function_detail

#endif
