#ifndef XTRACE_PLAN_VIEWS_HPP
#define XTRACE_PLAN_VIEWS_HPP

// Phase 1 of planning: which shape ops read their input's memory through other strides (views)
// and which must copy it.

#include "../config.hpp"
#include "../graph/graph.hpp"

#include <vector>

namespace xtrace::plan {

/// Per node: true for a shape op that is a view of its input.
struct view_choice {
    std::vector<bool> is_view;

    /// True when node `id` is a view.
    bool operator()(graph::node_id id) const { return is_view[id]; }
};

/// A shape op is a view when its input's strides are known to allow it: always for transpose,
/// expand_dims, squeeze and broadcast_to; for a reshape only of a value the plan lays out
/// row-major itself (an argument's, or another view's, strides are not known until the call).
XTRACE_DECL view_choice choose_views(const graph::graph& g);

} // namespace xtrace::plan

#if XTRACE_DEFINE_RUNTIME
#include "impl/views.ipp"
#endif

#endif
