#ifndef XTRACE_FUNCTION_TRACE_ENTRY_HPP
#define XTRACE_FUNCTION_TRACE_ENTRY_HPP

// One cached trace of a function: the graph and the signature it serves.

#include "../config.hpp"
#include "../core/spec.hpp"
#include "../graph/graph.hpp"
#include "../interp/static_fusion.hpp"
#include "../plan/stages.hpp"
#include "../trace/finish.hpp"
#include "signature.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace xtrace::function_detail {

/// One trace: the graph and the signature it serves (dims may be unknown).
struct trace_entry {
    signature sig;                                    ///< what calls it serves
    graph::graph g;                                   ///< the traced graph
    std::vector<tensor_spec> outputs;                 ///< output dtypes and trace-time shapes
    interp::static_fusion::kernel_fn fused = nullptr; ///< compiled kernel, if the type has one
    std::atomic<std::uint64_t> last_used{0};          ///< the call that last ran it
    std::size_t bindings = 0; ///< bindings that point here (under the cache lock)
    /// g in stages when a host_function's result dims are known only at run time, else null.
    std::shared_ptr<const plan::staged_graph> stages;

    /// The graph a call's plan binds: g, or its first stage.
    const graph::graph& planned_graph() const noexcept {
        return stages ? stages->stages().front().g : g;
    }

    /// "(x0: float32[?,3], x1: float32[3]) -> float32[?,3]".
    XTRACE_DECL std::string pretty() const;
};

/// The trace entry for `sig` made of trace `t`, with compiled kernel `fused` if any.
XTRACE_DECL std::shared_ptr<trace_entry> make_trace_entry(trace::finished_trace t,
                                                          const signature& sig,
                                                          interp::static_fusion::kernel_fn fused);

} // namespace xtrace::function_detail

#if XTRACE_DEFINE_RUNTIME

namespace xtrace::function_detail {

XTRACE_DECL std::string trace_entry::pretty() const {
    std::string out = signature_text(sig) + " -> ";
    if (outputs.size() != 1)
        out += '(';
    for (std::size_t i = 0; i < outputs.size(); ++i)
        out += (i ? ", " : "") + outputs[i].to_string();
    return outputs.size() != 1 ? out + ')' : out;
}

XTRACE_DECL std::shared_ptr<trace_entry> make_trace_entry(trace::finished_trace t,
                                                          const signature& sig,
                                                          interp::static_fusion::kernel_fn fused) {
    auto entry = std::make_shared<trace_entry>();
    entry->sig = sig;
    entry->g = std::move(t.g);
    entry->outputs = std::move(t.outputs);
    entry->fused = fused;
    entry->stages = plan::staged_graph::split(entry->g);
    return entry;
}

} // namespace xtrace::function_detail

#endif

#endif
