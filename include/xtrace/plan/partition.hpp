#ifndef XTRACE_PLAN_PARTITION_HPP
#define XTRACE_PLAN_PARTITION_HPP

// Phase 2 of planning: the nodes grouped into the steps that will run them. Elementwise nodes of
// one shape fuse into regions run block by block; a reduction of a region's value over its
// innermost or outermost dims runs inside that region; everything else is a step of its own.

#include "../config.hpp"
#include "../core/shape.hpp"
#include "../graph/graph.hpp"
#include "plan.hpp"
#include "views.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace xtrace::plan {

/// Index of a group in partitioning::groups.
using group_id = std::uint32_t;

/// The nodes of one future step.
struct group {
    bool fused = false;                ///< a region of elementwise nodes; else one node alone
    shape_t shape;                     ///< fused: every node's shape
    std::vector<graph::node_id> nodes; ///< fused: in graph order; else the one node
    std::vector<graph::node_id> tails; ///< fused: reductions of its nodes computed inside it
    std::vector<group_id> after;       ///< groups whose results it reads (or, for side
                                       ///< effects, the previous effect's group)
};

/// The graph's nodes grouped into steps, not yet ordered.
struct partitioning {
    std::vector<group> groups; ///< in creation order
    /// Per node: the group computing it; none for args, constants and views. A tail reduction
    /// counts as computed by its input's region, a cond or while_loop result by its node's step.
    std::vector<std::optional<group_id>> computed_by;
    /// Per node: the group after which its value can be read (a view's is its source's).
    std::vector<std::optional<group_id>> ready_after;
    /// Per node: a reduction computed inside the region that computes its input.
    std::vector<bool> in_tail;
};

/// How the partition treats a node, by op kind.
enum class node_class : std::uint8_t {
    leaf,        ///< arg, constant: read where it lives, computed by no step
    elementwise, ///< fuses into a region of its shape
    reduction,   ///< inside its input's region when it can (a tail), else a step of its own
    shape_op,    ///< a view of its input, or a step of its own that copies it
    result,      ///< written by its cond or while_loop step
    alone        ///< a step of its own: matmul, print, host_function, cond, while_loop, variables
};

/// The class of op kind `k` (a switch with no default: a new op kind must be placed here).
XTRACE_DECL node_class classify(op_kind k) noexcept;

/// The join rule: elementwise node `n` of concrete shape `shape` may join fused group `r` when
/// the group has that shape and room for one more node, and no operand would need `r` to have
/// finished first: none is a view or tail reduction of `r`'s own values (they need the group
/// whole), and none is computed by a group that depends on `r` (a cycle).
XTRACE_DECL bool may_join(const partitioning& parts, const graph::node& n, const shape_t& shape,
                          group_id r);

/// Groups every node of `g` (concrete shapes `shapes`, views `views`). An elementwise node
/// joins the region of its first operand that may take it, else the latest region that may,
/// else starts one; side effects keep program order.
XTRACE_DECL partitioning partition(const graph::graph& g, std::span<const shape_t> shapes,
                                   const view_choice& views);

} // namespace xtrace::plan

#if XTRACE_DEFINE_RUNTIME
#include "impl/partition.ipp"
#endif

#endif
