#ifndef XTRACE_INTERP_EXECUTE_HPP
#define XTRACE_INTERP_EXECUTE_HPP

// Runs a plan: each fused region block by block (operands read in place when contiguous,
// gathered when strided or broadcast, splatted once when a single value), each other step as
// its node says, then the outputs that no step wrote.

#include "../config.hpp"
#include "../plan/plan.hpp"
#include "static_fusion.hpp"

#include <array>
#include <cstdint>
#include <span>

namespace xtrace::interp {

/// A tensor argument as the interpreter reads it: data and element strides (shape: the plan's).
/// Only the strides of the argument's dims are read. They start uninitialised when default
/// initialised (value-initialised, `{}`, they are zero): a call's frame fills what it uses
/// instead of clearing the rest, which would cost a cache hit more than its lookup.
struct strided_input {
    const void* data = nullptr;
    std::array<std::int64_t, XTRACE_MAX_RANK> strides;
};

/// Runs the statically fused `kernel` of `g`'s single output when `p` and the arguments' layout
/// allow it (every argument leaf contiguous); returns false, having done nothing, otherwise.
XTRACE_DECL bool execute_fused(static_fusion::kernel_fn kernel, const graph::graph& g,
                               const plan::plan& p, std::span<const strided_input> args,
                               void* output);

/// Runs `p` (a binding of `g`) on `args` (in g.args order), writing `outputs` (in g.outputs
/// order), each a contiguous row-major buffer of its output's dtype and concrete shape.
/// `variables` are the call's variable arguments, which stand-in variables of `g` name.
XTRACE_DECL void execute(const graph::graph& g, const plan::plan& p,
                         std::span<const strided_input> args, std::span<void* const> outputs,
                         std::span<graph::variable_storage* const> variables = {});

} // namespace xtrace::interp

#if XTRACE_DEFINE_RUNTIME
#include "impl/execute.ipp"
#endif

#endif
