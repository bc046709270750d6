#ifndef XTRACE_PLAN_PIECES_HPP
#define XTRACE_PLAN_PIECES_HPP

// Fused pieces in a region: a node whose trace compiled a kernel for the subtree of elementwise
// ops it roots (graph::node::piece) runs that kernel, which keeps the subtree's intermediates in
// registers, when the subtree is in the region. Ops only the pieces read are then not run. A
// cheap op of the subtree computed by an earlier step (layer norm's `x - mean`, stored for a
// reduction) is computed again inside the piece, from the piece's leaves, which the region then
// reads: one vector op per element instead of a pass that stores and loads.

#include "../config.hpp"
#include "../graph/graph.hpp"
#include "plan.hpp"

#include <span>
#include <vector>

namespace xtrace::plan {

/// Lets the nodes of region `r` whose pieces lie in it run them (setting `r.piece_leaves`), and
/// drops the nodes nothing reads any more: not live-out, not read by `tails`' reductions, nor by
/// a node that stays, and the inputs no node reads. `r`'s inputs, nodes and live-outs are set;
/// a piece's leaf computed outside the region becomes an input when it has a home in `homes`.
XTRACE_DECL void use_pieces(region& r, const graph::graph& g, const std::vector<home>& homes,
                            std::span<const graph::node_id> tails);

} // namespace xtrace::plan

#if XTRACE_DEFINE_RUNTIME
#include "impl/pieces.ipp"
#endif

#endif
