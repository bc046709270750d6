#ifndef XTRACE_PLAN_BIND_RANKS_HPP
#define XTRACE_PLAN_BIND_RANKS_HPP

// Phase 0 of planning a trace of unknown rank (a spec of xtrace::any_rank): its reductions,
// transposes, expand_dims and squeezes recorded the axes the lambda wrote (negative, or every
// axis), since no rank was known to normalise them against. Once the arguments' shapes are, a
// copy of the graph gets normalised axes, and that copy is what the plan binds and runs.

#include "../config.hpp"
#include "../graph/graph.hpp"

#include <memory>
#include <vector>

namespace xtrace::plan {

/// A copy of `g` whose rank-pending nodes have their axes normalised against `shapes` (the
/// concrete shape of every node, plan/bind_shapes.hpp); null when `g` has none.
XTRACE_DECL std::shared_ptr<const graph::graph> bind_ranks(const graph::graph& g,
                                                           const std::vector<shape_t>& shapes);

} // namespace xtrace::plan

#if XTRACE_DEFINE_RUNTIME

#include "../graph/shape_inference.hpp"

#include <algorithm>

namespace xtrace::plan {

XTRACE_DECL std::shared_ptr<const graph::graph> bind_ranks(const graph::graph& g,
                                                           const std::vector<shape_t>& shapes) {
    if (std::none_of(g.nodes.begin(), g.nodes.end(),
                     [](const graph::node& n) { return n.rank_pending; }))
        return nullptr;
    auto bound = std::make_shared<graph::graph>(g);
    for (graph::node& n : bound->nodes) {
        if (!n.rank_pending)
            continue;
        const shape_t& in = shapes[n.inputs[0]];
        n.axes = info(n.op).reduction ? graph::normalize_axes(n.op, in, std::move(n.axes))
                                      : graph::normalize_shape_op(n.op, in, std::move(n.axes));
        n.rank_pending = false;
    }
    return bound;
}

} // namespace xtrace::plan

#endif

#endif
