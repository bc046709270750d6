#ifndef XTRACE_PLAN_BUILD_HPP
#define XTRACE_PLAN_BUILD_HPP

// Planning, phase by phase (each in its own header):
//   bind_shapes    concrete shapes of every node                  bind_shapes.hpp
//   bind_ranks     axes written for an unknown rank, normalised   bind_ranks.hpp
//   choose_views   which shape ops read their input in place      views.hpp
//   partition      nodes grouped into fused regions and steps     partition.hpp
//   assign_homes   where each value lives                         homes.hpp
//   order_steps    the groups in dependency order, made steps     steps.hpp, registers.hpp
//   use_pieces     compiled subtrees a region runs whole          pieces.hpp
//   (again)        homes and steps without the temps no step      homes.hpp
//                  reads (pieces compute them again)
//   plan_controls  cond and while_loop bodies, planned in turn    here
//   donations      outputs that may take a donated argument's     donation.hpp
//                  buffer
//   concurrency    which steps may run at once                   concurrency.hpp
//   row tiling     whether the call runs tile by tile of rows,    row_tiles.hpp
//                  and the tiles' own plans
// Set XTRACE_LOG_PLANS=1 in the environment to have make_plan write each plan it makes to
// std::clog (plan/text.hpp's format).

#include "../config.hpp"
#include "../graph/graph.hpp"
#include "bind_ranks.hpp"
#include "bind_shapes.hpp"
#include "concurrency.hpp"
#include "donation.hpp"
#include "homes.hpp"
#include "partition.hpp"
#include "plan.hpp"
#include "registers.hpp"
#include "row_tiles.hpp"
#include "steps.hpp"
#include "views.hpp"

#include <memory>
#include <span>
#include <vector>

namespace xtrace::plan {

/// Binds `g` to its arguments' concrete shapes: fused regions, homes and block programs.
XTRACE_DECL plan build(const graph::graph& g, std::span<const shape_t> arg_shapes);

/// Plans the bodies of every cond and while_loop step of `p` (a plan of `g`) for the shapes
/// their inputs have in `p`.
XTRACE_DECL void plan_controls(const graph::graph& g, plan& p);

/// The leaves a statically fused kernel of `g` reads, or none (see plan::fused_leaves), from
/// the homes of `p`.
XTRACE_DECL fused_leaf_table static_fusion_leaves(const graph::graph& g, const plan& p);

/// build(), shared, and logged to std::clog when XTRACE_LOG_PLANS is set: what the signature
/// cache and concrete functions keep per call shape.
XTRACE_DECL std::shared_ptr<const plan> make_plan(const graph::graph& g,
                                                  std::span<const shape_t> arg_shapes);

} // namespace xtrace::plan

#if XTRACE_DEFINE_RUNTIME
#include "impl/build.ipp"
#endif

#endif
