#ifndef XTRACE_PLAN_STEPS_HPP
#define XTRACE_PLAN_STEPS_HPP

// Phase 4 of planning: the groups in an order that respects their dependencies, each made into
// the step that runs it (a region with its block program, a node run alone, or a cond/while_loop
// step whose bodies phase 5 plans).

#include "../config.hpp"
#include "../graph/graph.hpp"
#include "homes.hpp"
#include "partition.hpp"
#include "plan.hpp"

#include <span>
#include <vector>

namespace xtrace::plan {

/// The groups of `parts` in dependency order; among the groups ready at once, creation order.
XTRACE_DECL std::vector<group_id> order_steps(const partitioning& parts);

/// The step that runs group `r` of `parts`: for a region, its inputs (operands computed outside
/// it, in first-use order), live-outs (nodes with a home), tails and block program.
XTRACE_DECL step make_step(const graph::graph& g, std::span<const shape_t> shapes,
                           const partitioning& parts, const std::vector<home>& homes, group_id r);

} // namespace xtrace::plan

#if XTRACE_DEFINE_RUNTIME
#include "impl/steps.ipp"
#endif

#endif
