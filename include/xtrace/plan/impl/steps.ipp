// The runtime section of plan/steps.hpp.

#include "../pieces.hpp"
#include "../registers.hpp"

#include <algorithm>

namespace xtrace::plan {

XTRACE_DECL std::vector<group_id> order_steps(const partitioning& parts) {
    const std::size_t count = parts.groups.size();
    std::vector<group_id> order;
    std::vector<bool> done(count, false);
    while (order.size() < count)
        for (group_id r = 0; r < count; ++r) {
            const auto& after = parts.groups[r].after;
            if (!done[r] &&
                std::all_of(after.begin(), after.end(), [&](group_id d) { return done[d]; })) {
                done[r] = true;
                order.push_back(r);
            }
        }
    return order;
}

namespace detail {

inline region make_region(const graph::graph& g, std::span<const shape_t> shapes,
                          const partitioning& parts, const std::vector<home>& homes, group_id r) {
    const group& grp = parts.groups[r];
    region reg;
    reg.shape = grp.shape;
    reg.size = static_cast<std::size_t>(num_elements(grp.shape));
    reg.nodes = grp.nodes;
    for (auto id : reg.nodes)
        for (auto in : g[id].inputs)
            if (parts.computed_by[in] != r &&
                std::find(reg.inputs.begin(), reg.inputs.end(), in) == reg.inputs.end())
                reg.inputs.push_back(in);
    for (auto id : reg.nodes)
        reg.live_out.push_back(homes[id].where != location::none);
    use_pieces(reg, g, homes, grp.tails);
    for (auto id : grp.tails) {
        const graph::node_id in = g[id].inputs[0];
        tail_reduction t{id, 0, 1, static_cast<std::size_t>(num_elements(shapes[id])),
                         !innermost(g[id].axes, shapes[in].size())};
        t.slot = static_cast<std::uint16_t>(
            reg.inputs.size() +
            (std::find(reg.nodes.begin(), reg.nodes.end(), in) - reg.nodes.begin()));
        for (auto a : g[id].axes)
            t.count *= static_cast<std::size_t>(shapes[in][a]);
        reg.tails.push_back(t);
    }
    allocate_registers(reg, g, shapes);
    return reg;
}

} // namespace detail

XTRACE_DECL step make_step(const graph::graph& g, std::span<const shape_t> shapes,
                           const partitioning& parts, const std::vector<home>& homes, group_id r) {
    const group& grp = parts.groups[r];
    if (grp.fused)
        return detail::make_region(g, shapes, parts, homes, r);
    const graph::node_id id = grp.nodes[0];
    const graph::node& n = g[id];
    if (n.op != op_kind::cond && n.op != op_kind::while_loop && n.op != op_kind::scan)
        return node_step{id};
    control_step c{id, {}, std::vector<graph::node_id>(n.bodies.back()->outputs.size(), no_node)};
    for (graph::node_id k = id + 1; k < g.nodes.size(); ++k)
        if (g[k].op == op_kind::result && g[k].inputs[0] == id)
            c.results[static_cast<std::size_t>(g[k].result_index)] = k;
    return c;
}

} // namespace xtrace::plan
