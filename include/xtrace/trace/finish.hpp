#ifndef XTRACE_TRACE_FINISH_HPP
#define XTRACE_TRACE_FINISH_HPP

// The end of a trace: the recorded graph, pruned, and what its outputs look like.

#include "../config.hpp"
#include "../core/spec.hpp"
#include "../graph/graph.hpp"
#include "builder.hpp"

#include <vector>

namespace xtrace::trace {

/// A trace that ended: its graph, and each output's dtype and trace-time shape.
struct finished_trace {
    graph::graph g;                   ///< without the nodes no output or effect needs
    std::vector<tensor_spec> outputs; ///< per output of g
};

/// Ends trace `b` (its symbolic tensors can no longer be used) and hands over what it recorded.
XTRACE_DECL finished_trace finish_trace(builder& b);

} // namespace xtrace::trace

#if XTRACE_DEFINE_RUNTIME

namespace xtrace::trace {

XTRACE_DECL finished_trace finish_trace(builder& b) {
    finished_trace out{b.finish(), {}};
    for (auto id : out.g.outputs)
        out.outputs.push_back(tensor_spec{out.g[id].type, out.g[id].shape});
    return out;
}

} // namespace xtrace::trace

#endif

#endif
