#ifndef XTRACE_PLAN_PIECES_HPP
#define XTRACE_PLAN_PIECES_HPP

// Fused pieces in a region: a node whose trace compiled a kernel for the subtree of elementwise
// ops it roots (graph::node::piece) runs that kernel, which keeps the subtree's intermediates in
// registers, when the whole subtree is in the region. Ops only the pieces read are then not run.

#include "../config.hpp"
#include "../graph/graph.hpp"
#include "plan.hpp"

#include <span>

namespace xtrace::plan {

/// Lets the nodes of region `r` whose pieces lie in it run them (setting `r.piece_leaves`), and
/// drops the nodes nothing reads any more: not live-out, not read by `tails`' reductions, nor by
/// a node that stays. `r`'s inputs, nodes and live-outs are set.
XTRACE_DECL void use_pieces(region& r, const graph::graph& g,
                            std::span<const graph::node_id> tails);

} // namespace xtrace::plan

#if XTRACE_DEFINE_RUNTIME
#include "impl/pieces.ipp"
#endif

#endif
