#ifndef XTRACE_PLAN_HOMES_HPP
#define XTRACE_PLAN_HOMES_HPP

// Phase 3 of planning: where each value lives. Arguments are read in place and constants from the
// plan; an output computed by a region is written in place into the caller's buffer; a value
// read by another step, or the source of a view, gets scratch; the rest never leave a region's
// block registers.

#include "../config.hpp"
#include "../graph/graph.hpp"
#include "partition.hpp"
#include "plan.hpp"
#include "views.hpp"

#include <span>
#include <vector>

namespace xtrace::plan {

/// Every node's home, the outputs copied after the last step, and the scratch they need.
struct home_assignment {
    std::vector<home> homes;
    std::vector<output_copy> copies;
    std::size_t temp_bytes = 0;
};

/// Homes for the nodes of `g` grouped as `parts`. The first output that names a node computed by
/// a step is written in place; outputs that are arguments, constants, views or repeats are
/// copied. Temps are aligned to scratch_alignment, in node order. A node marked in `unread`
/// gets no temp for the other steps: their pieces compute it again (see read_by_steps).
XTRACE_DECL home_assignment assign_homes(const graph::graph& g, std::span<const shape_t> shapes,
                                         const view_choice& views, const partitioning& parts,
                                         const std::vector<bool>& unread = {});

/// Per node of `g`: whether a step of `steps` reads its home. Steps read their inputs (a
/// region's, after its pieces), the copied outputs their nodes, a view its source.
XTRACE_DECL std::vector<bool> read_by_steps(const graph::graph& g, std::span<const step> steps,
                                            const std::vector<home>& homes,
                                            std::span<const output_copy> copies);

} // namespace xtrace::plan

#if XTRACE_DEFINE_RUNTIME
#include "impl/homes.ipp"
#endif

#endif
