#ifndef XTRACE_PLAN_TEXT_HPP
#define XTRACE_PLAN_TEXT_HPP

// A plan, printed: what a concrete function's plan_text() and XTRACE_LOG_PLANS show.

#include "../config.hpp"
#include "../graph/graph.hpp"
#include "plan.hpp"

#include <string>

namespace xtrace::plan {

/// One line per step and per region slot, in execution order:
///
///     plan: 2 steps, temps 64 bytes, registers 1536 bytes
///     step 0: %4 = sum(%0, axes=[0]) : float32[] -> temp @0
///     step 1: region [4], 3 nodes, block 4, 3 registers
///       in s0: %0 arg 0, r0
///       in s1: %1 arg 1, r1
///       in s2: %4 temp @0, r2
///       s3: %2 = exp(s0) : float32, r0
///       s4: %3 = mul(s3, s1) : float32, r1
///       s5: %5 = add(s4, s2) : float32 -> output 0
///
/// A region lists its input slots (where each is read from, and its register, or "splat" for a
/// constant its kernels take as one value), its nodes (operands as slots; a register, or the
/// home a live-out is written to) and its tail reductions. A cond or while_loop step is followed
/// by its bodies' plans, indented. Outputs no step writes end the text as copies.
XTRACE_DECL std::string to_text(const plan& p, const graph::graph& g,
                                const std::string& indent = "");

/// "arg 0", "constant 0.5", "temp @64", "output 1", "view of %3", or "registers only".
XTRACE_DECL std::string home_text(const plan& p, const graph::graph& g, graph::node_id id);

} // namespace xtrace::plan

#if XTRACE_DEFINE_RUNTIME
#include "impl/text.ipp"
#endif

#endif
