#ifndef XTRACE_PLAN_CONCURRENCY_HPP
#define XTRACE_PLAN_CONCURRENCY_HPP

// A phase of planning after donations: which steps may run at once, as TensorFlow's executor
// runs independent ops on its inter-op threads. Steps go together when none reads memory another
// writes and none writes memory another uses (temps are reused once their value is dead, so
// "independent" is a question of bytes, not only of nodes). A step may move ahead of the steps
// between it and a group when it conflicts with none of them either, so that, say, two
// matmul-plus-bias branches run their products together. Only regions, reductions and products
// join groups: control flow, prints, host functions, variables and copies keep their place.

#include "../config.hpp"
#include "../graph/graph.hpp"
#include "plan.hpp"

namespace xtrace::plan {

/// Groups the steps of `p` (a plan of `g`) that may run at once, moving steps ahead where
/// that is safe; fills p.concurrent.
XTRACE_DECL void group_concurrent_steps(const graph::graph& g, plan& p);

} // namespace xtrace::plan

#if XTRACE_DEFINE_RUNTIME
#include "impl/concurrency.ipp"
#endif

#endif
