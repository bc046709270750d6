#ifndef XTRACE_FUNCTION_RUN_GRAPH_HPP
#define XTRACE_FUNCTION_RUN_GRAPH_HPP

// A call's last step: the trace's graph run on the call's arguments (statically fused kernel
// first, else the interpreter), its outputs returned as xt::xarray.

#include "../interp/execute.hpp"
#include "outputs.hpp"
#include "trace_entry.hpp"

#include <array>
#include <span>
#include <tuple>
#include <utility>

namespace xtrace::function_detail {

/// Runs a trace's graph bound by `plan` on `inputs`; returns the outputs as Traced's result type.
template <class Traced>
auto run_graph(const trace_entry& trace, const plan::plan& p,
               std::span<const interp::strided_input> inputs) {
    using outs = outputs_of<Traced>;
    using result = typename outs::result;
    constexpr std::size_t n_out = std::tuple_size_v<typename outs::types>;
    const graph::graph& g = trace.g;
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
    if (!interp::execute_fused(trace.fused, g, p, inputs, ptrs[0]))
        interp::execute(g, p, inputs, ptrs);
    return out;
}

} // namespace xtrace::function_detail

#endif
