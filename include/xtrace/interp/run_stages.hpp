#ifndef XTRACE_INTERP_RUN_STAGES_HPP
#define XTRACE_INTERP_RUN_STAGES_HPP

// Runs a graph in stages (plan/stages.hpp): each stage planned for the shapes its arguments have
// in this call, each host function of unknown result dims called between two stages, and the
// values one stage hands to a later one held contiguous until the call ends.

#include "../config.hpp"
#include "../plan/stages.hpp"
#include "execute.hpp"

#include <cstddef>
#include <span>

namespace xtrace::interp {

/// Memory for the function's outputs, asked for once the last stage's plan knows their shapes.
struct output_allocator {
    /// Contiguous row-major memory for output `k` (of its dtype) of `shape`.
    virtual void* allocate(std::size_t k, const shape_t& shape) = 0;

protected:
    ~output_allocator() = default;
};

/// Runs `g` on `args`, its first stage bound by `first` (the plan of g.stages()[0].g for these
/// arguments), writing the outputs where `outputs` says.
XTRACE_DECL void run_stages(const plan::staged_graph& g, const plan::plan& first,
                            std::span<const strided_input> args, output_allocator& outputs,
                            std::span<graph::variable_storage* const> variables = {});

} // namespace xtrace::interp

#if XTRACE_DEFINE_RUNTIME
#include "impl/run_stages.ipp"
#endif

#endif
