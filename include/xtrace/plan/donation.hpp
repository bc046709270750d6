#ifndef XTRACE_PLAN_DONATION_HPP
#define XTRACE_PLAN_DONATION_HPP

// The last phase of planning: which outputs may be written into an argument's own buffer when
// the caller donates it (passes an xt::xarray as an rvalue, JAX's donate_argnums). An output
// may take argument i's buffer when writing it cannot change what the call still reads: every
// node reading the argument is in the fused region that writes the output in place, the
// argument has the region's shape (so each block reads elements before writing the same ones),
// and no instruction after the output's, nor a tail reduction, reads it.

#include "../config.hpp"
#include "../graph/graph.hpp"
#include "plan.hpp"

#include <cstdint>
#include <vector>

namespace xtrace::plan {

/// Per output of `g`: the argument positions whose buffers it may be written into, in order.
XTRACE_DECL std::vector<std::vector<std::uint32_t>> donations(const graph::graph& g, const plan& p);

} // namespace xtrace::plan

#if XTRACE_DEFINE_RUNTIME

#include <algorithm>
#include <variant>

namespace xtrace::plan {

XTRACE_DECL std::vector<std::vector<std::uint32_t>> donations(const graph::graph& g,
                                                              const plan& p) {
    std::vector<std::vector<std::uint32_t>> out(g.outputs.size());
    for (std::size_t i = 0; i < g.args.size(); ++i) {
        const graph::node_id a = g.args[i];
        if (std::find(g.outputs.begin(), g.outputs.end(), a) != g.outputs.end())
            continue; // copied out after the steps: its buffer must stay as it was
        // The region reading the argument: the only step that does.
        const region* reader = nullptr;
        bool alone = true;
        for (const step& s : p.steps) {
            const auto* r = std::get_if<region>(&s);
            const auto read = step_reads(g, s);
            const bool reads = std::find(read.begin(), read.end(), a) != read.end();
            if (!reads)
                continue;
            alone = alone && !reader && r;
            reader = r;
        }
        // Views of it (shape ops read in place) and control bodies read it too.
        for (const graph::node& n : g.nodes)
            if (!info(n.op).elementwise &&
                std::find(n.inputs.begin(), n.inputs.end(), a) != n.inputs.end())
                alone = false;
        if (!reader || !alone || reader->shape != p.shapes[a])
            continue;
        const auto slot = static_cast<std::uint16_t>(
            std::find(reader->inputs.begin(), reader->inputs.end(), a) - reader->inputs.begin());
        std::size_t last_read = 0;
        for (std::size_t k = 0; k < reader->program.size(); ++k) {
            const instruction& ins = reader->program[k];
            const std::uint16_t* first =
                ins.leaves ? reader->leaf_slots.data() + ins.first_leaf : ins.in.data();
            const std::size_t count = ins.leaves ? ins.leaves : g[reader->nodes[k]].inputs.size();
            if (std::find(first, first + count, slot) != first + count)
                last_read = k;
        }
        if (std::any_of(reader->tails.begin(), reader->tails.end(),
                        [&](const tail_reduction& t) { return t.slot == slot; }))
            continue;
        for (std::size_t k = last_read; k < reader->nodes.size(); ++k) {
            const graph::node_id o = reader->nodes[k];
            const home& h = p.homes[o];
            if (h.where == location::output && g[o].type == g[a].type && p.shapes[o] == p.shapes[a])
                out[h.index].push_back(static_cast<std::uint32_t>(i));
        }
    }
    return out;
}

} // namespace xtrace::plan

#endif

#endif
