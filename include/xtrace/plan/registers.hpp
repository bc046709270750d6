#ifndef XTRACE_PLAN_REGISTERS_HPP
#define XTRACE_PLAN_REGISTERS_HPP

// A region's block program: one kernel call per node over slot numbers, block registers shared
// by values whose readers have all run, and a block size that keeps every register in L1.

#include "../config.hpp"
#include "../graph/graph.hpp"
#include "plan.hpp"

#include <cstddef>

namespace xtrace::plan {

/// L1 data cache size in bytes (32 KiB where the system does not say).
XTRACE_DECL std::size_t l1_data_bytes();

/// Fills the program, registers and block size of region `r`, whose inputs, nodes, live-outs and
/// tails are set. Throws xtrace::error for a node without kernels (a graph not made by tracing
/// must pick them with interp::kernel_for first).
XTRACE_DECL void allocate_registers(region& r, const graph::graph& g);

} // namespace xtrace::plan

#if XTRACE_DEFINE_RUNTIME
#include "impl/registers.ipp"
#endif

#endif
