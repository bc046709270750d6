// The runtime section of plan/text.hpp.

#include "../../graph/text.hpp"
#include "../row_tiles.hpp"

#include <sstream>
#include <vector>

namespace xtrace::plan {

XTRACE_DECL std::string home_text(const plan& p, const graph::graph& g, graph::node_id id) {
    const home& h = p.homes[id];
    switch (h.where) {
    case location::none:
        return "registers only";
    case location::arg:
        return "arg " + std::to_string(h.index);
    case location::constant:
        return graph::node_text(g[id], {});
    case location::temp:
        return "temp @" + std::to_string(h.offset);
    case location::output:
        return "output " + std::to_string(h.index);
    case location::view:
        return "view of %" + std::to_string(g[id].inputs[0]);
    }
    return {};
}

namespace detail {

inline std::string typed(const plan& p, const graph::graph& g, graph::node_id id) {
    return std::string(dtype_name(g[id].type)) + shape_string(p.shapes[id]);
}

inline void region_text(std::ostream& os, const plan& p, const graph::graph& g, const region& r,
                        const std::string& indent) {
    os << "region " << shape_string(r.shape) << ", " << r.nodes.size()
       << (r.nodes.size() == 1 ? " node" : " nodes") << ", block " << r.block << ", "
       << r.register_count << (r.register_count == 1 ? " register\n" : " registers\n");
    const std::size_t n_in = r.inputs.size();
    auto reg = [&](std::size_t slot) {
        if (r.registers[slot] != no_register)
            return 'r' + std::to_string(r.registers[slot]);
        return std::string(slot < n_in && g[r.inputs[slot]].op != op_kind::constant ? "row splat"
                                                                                    : "splat");
    };
    for (std::size_t i = 0; i < n_in; ++i)
        os << indent << "  in s" << i << ": %" << r.inputs[i] << ' ' << home_text(p, g, r.inputs[i])
           << ", " << reg(i) << '\n';
    std::vector<std::string> operands;
    for (std::size_t k = 0; k < r.nodes.size(); ++k) {
        const graph::node& n = g[r.nodes[k]];
        operands.clear();
        const instruction& ins = r.program[k];
        for (std::size_t j = 0; j < (ins.leaves ? ins.leaves : n.inputs.size()); ++j)
            operands.push_back(
                's' + std::to_string(ins.leaves ? r.leaf_slots[ins.first_leaf + j] : ins.in[j]));
        os << indent << "  s" << n_in + k << ": %" << r.nodes[k] << " = ";
        if (ins.leaves) { // a fused piece
            os << "fused " << n.piece->ops << " ops (";
            for (std::size_t j = 0; j < operands.size(); ++j)
                os << (j ? ", " : "") << operands[j];
            os << ')';
        } else {
            os << graph::node_text(n, operands);
        }
        os << " : " << dtype_name(n.type);
        if (r.live_out[k])
            os << " -> " << home_text(p, g, r.nodes[k]);
        else if (r.registers[n_in + k] != no_register)
            os << ", " << reg(n_in + k);
        if (ins.fold)
            os << ", folded into %" << r.tails[ins.tail].node;
        os << '\n';
    }
    for (const tail_reduction& t : r.tails) {
        const std::vector<std::string> in{'s' + std::to_string(t.slot)};
        os << indent << "  tail: %" << t.node << " = " << graph::node_text(g[t.node], in) << " : "
           << typed(p, g, t.node) << ", " << (t.outer ? "outermost" : "innermost") << " dims, "
           << t.count << " elements per result -> " << home_text(p, g, t.node) << '\n';
    }
}

} // namespace detail

XTRACE_DECL std::string to_text(const plan& p, const graph::graph& given,
                                const std::string& indent) {
    const graph::graph& g = p.graph_for(given); // its axes as bound for this rank
    std::ostringstream os;
    os << indent << "plan: " << p.steps.size() << (p.steps.size() == 1 ? " step" : " steps")
       << ", temps " << p.temp_bytes << " bytes, registers " << p.register_bytes << " bytes\n";
    if (p.tiling)
        os << indent << "runs in tiles of " << p.tiling->rows << " rows (of " << p.tiling->total
           << "), temps " << p.tiling->tile->temp_bytes << " bytes per tile"
           << (p.tiling->tile->row_sweep ? ", rows swept through the steps" : "") << "\n";
    else if (p.row_sweep)
        os << indent << "rows swept through the steps\n";
    std::vector<std::string> operands;
    auto node_line = [&](graph::node_id id) {
        const graph::node& n = g[id];
        operands.clear();
        for (graph::node_id in : n.inputs)
            operands.push_back('%' + std::to_string(in));
        os << '%' << id << " = " << graph::node_text(n, operands);
    };
    for (std::size_t k = 0; k < p.steps.size(); ++k) {
        for (const concurrent_steps& c : p.concurrent)
            if (c.first == k)
                os << indent << "steps " << k << " to " << k + c.count - 1
                   << " may run at once (work " << c.work << ")\n";
        os << indent << "step " << k << ": ";
        std::visit(
            [&](const auto& s) {
                using S = std::decay_t<decltype(s)>;
                if constexpr (std::is_same_v<S, region>) {
                    detail::region_text(os, p, g, s, indent);
                } else if constexpr (std::is_same_v<S, node_step>) {
                    node_line(s.node);
                    os << " : " << detail::typed(p, g, s.node);
                    if (p.homes[s.node].where != location::none)
                        os << " -> " << home_text(p, g, s.node);
                    os << '\n';
                } else {
                    node_line(s.node);
                    os << " ->";
                    for (std::size_t r = 0; r < s.results.size(); ++r)
                        os << (r ? ", " : " ")
                           << (s.results[r] == no_node ? std::string("(unused)")
                                                       : '%' + std::to_string(s.results[r]) + ' ' +
                                                             home_text(p, g, s.results[r]));
                    os << '\n';
                    const graph::node& n = g[s.node];
                    for (std::size_t b = 0; b < s.bodies.size() && b < 2; ++b)
                        os << indent << "  " << graph::body_name(n.op, b) << ":\n"
                           << to_text(*s.bodies[b], *n.bodies[b], indent + "    ");
                }
            },
            p.steps[k]);
    }
    for (const output_copy& c : p.copies)
        os << indent << "copy: output " << c.output << " <- %" << c.node << ' '
           << home_text(p, g, c.node) << '\n';
    return os.str();
}

} // namespace xtrace::plan
