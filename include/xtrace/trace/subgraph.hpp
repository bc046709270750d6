#ifndef XTRACE_TRACE_SUBGRAPH_HPP
#define XTRACE_TRACE_SUBGRAPH_HPP

// Tracing a cond branch or a while_loop body: a child trace of the one being recorded, current
// while the branch runs, whose graph becomes part of a node of its parent. Values of enclosing
// traces that the branch uses become args of the child (captures).

#include "../config.hpp"
#include "builder.hpp"

#include <algorithm>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace xtrace::trace {

/// A node of some trace: which trace, and which node in it.
struct traced_value {
    const builder* owner;
    graph::node_id id;
};

/// A traced subgraph and the parent's nodes its capture args read, in arg order.
struct subgraph {
    std::shared_ptr<graph::graph> g;
    std::vector<graph::node_id> captures;
};

/// Ends a subgraph's trace: its graph and captures.
XTRACE_DECL subgraph finish_subgraph(builder& child);

/// Traces `record(child)` as a subgraph of `parent`; `record` returns the subgraph's outputs
/// (values of the child or of any trace enclosing it).
template <class Record>
subgraph trace_subgraph(builder& parent, Record&& record) {
    auto child = new_trace(&parent);
    try {
        const scope tracing(*child);
        for (const traced_value& v : record(child))
            child->add_output(child->import(v.owner, v.id));
    } catch (...) {
        child->abandon();
        throw;
    }
    return finish_subgraph(*child);
}

/// Gives the subgraphs' capture args their positions in a node's inputs: `inputs` (the node's
/// own operands, then captures from `first_capture` on) gets the captures not already there,
/// and every capture arg its input's position. Args below `loop_vars` are loop variables.
XTRACE_DECL void bind_captures(std::vector<graph::node_id>& inputs, std::size_t loop_vars,
                               std::size_t first_capture, std::span<subgraph> bodies);

} // namespace xtrace::trace

#if XTRACE_DEFINE_RUNTIME

namespace xtrace::trace {

XTRACE_DECL subgraph finish_subgraph(builder& child) {
    subgraph out;
    out.captures = child.captures();
    out.g = std::make_shared<graph::graph>(child.finish());
    return out;
}

XTRACE_DECL void bind_captures(std::vector<graph::node_id>& inputs, std::size_t loop_vars,
                               std::size_t first_capture, std::span<subgraph> bodies) {
    for (subgraph& body : bodies) {
        for (graph::node_id a : body.g->args) {
            graph::node& arg = body.g->nodes[a];
            if (arg.arg_position < static_cast<std::int64_t>(loop_vars))
                continue;
            const graph::node_id outer = body.captures[arg.arg_position - loop_vars];
            auto at = std::find(inputs.begin() + first_capture, inputs.end(), outer);
            if (at == inputs.end())
                at = inputs.insert(inputs.end(), outer);
            arg.arg_position = at - inputs.begin();
        }
    }
}

} // namespace xtrace::trace

#endif

#endif
