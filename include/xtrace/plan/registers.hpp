#ifndef XTRACE_PLAN_REGISTERS_HPP
#define XTRACE_PLAN_REGISTERS_HPP

// A region's block program: one kernel call per node over slot numbers, block registers shared
// by values whose readers have all run, and a block size that keeps every register in L1. An
// input that is one value per row (a [rows, 1] mean, a scalar argument) read by binary ops is a
// row splat: their kernels read it as one value per block, as they read a constant, and blocks
// end at row ends.

#include "../config.hpp"
#include "../core/setting_scope.hpp"
#include "../graph/graph.hpp"
#include "plan.hpp"

#include <cstddef>
#include <span>

namespace xtrace::plan {

/// L1 data cache size in bytes (32 KiB where the system does not say).
XTRACE_DECL std::size_t l1_data_bytes();

/// Shortest rows whose per-row inputs are row splats by default. Ending blocks at row ends costs
/// up to one more block per row, and on short rows smaller blocks: more than filling a register
/// with the row's value saves.
inline constexpr std::size_t default_row_splat_elements = 512;

/// The calling thread's shortest row for row splats (tests lower it, to splat on short rows).
inline std::size_t& row_splat_elements() noexcept {
    thread_local std::size_t elements = default_row_splat_elements;
    return elements;
}

/// Sets the calling thread's shortest row for row splats for the scope's lifetime.
using row_splat_scope = setting_scope<&row_splat_elements>;

/// Fills the program, registers and block size of region `r`, whose inputs, nodes, live-outs and
/// tails are set; `shapes` are the plan's node shapes. Throws xtrace::error for a node without
/// kernels (a graph not made by tracing must pick them with interp::kernel_for first).
XTRACE_DECL void allocate_registers(region& r, const graph::graph& g,
                                    std::span<const shape_t> shapes);

} // namespace xtrace::plan

#if XTRACE_DEFINE_RUNTIME
#include "impl/registers.ipp"
#endif

#endif
