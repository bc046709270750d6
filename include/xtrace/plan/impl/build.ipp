// The runtime section of plan/build.hpp.

#include "../text.hpp"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string_view>

namespace xtrace::plan {

XTRACE_DECL plan build(const graph::graph& g, std::span<const shape_t> arg_shapes) {
    plan p;
    p.shapes = bind_shapes(g, arg_shapes);
    if (auto bound = bind_ranks(g, p.shapes)) { // traced for an unknown rank
        plan q = build(*bound, arg_shapes);
        q.bound_graph = std::move(bound);
        return q;
    }
    const view_choice views = choose_views(g);
    const partitioning parts = partition(g, p.shapes, views);
    const std::vector<group_id> order = order_steps(parts);
    auto make_steps = [&](const std::vector<bool>& unread) {
        home_assignment homes = assign_homes(g, p.shapes, views, parts, unread);
        p.homes = std::move(homes.homes);
        p.copies = std::move(homes.copies);
        p.temp_bytes = homes.temp_bytes;
        p.steps.clear();
        p.register_bytes = 0;
        for (group_id r : order) {
            p.steps.push_back(make_step(g, p.shapes, parts, p.homes, r));
            if (const auto* reg = std::get_if<region>(&p.steps.back()))
                p.register_bytes =
                    std::max(p.register_bytes, std::size_t(reg->register_count) * reg->block * 8);
        }
    };
    make_steps({});
    // A value a region stored for a later step whose pieces compute it again instead (layer
    // norm's x - mean) need not be stored: the steps are made again without its temp. Only the step
    // that computed it changes (it keeps the value in a register, or in a piece); a plan that
    // would then read a value with no home is not taken.
    std::vector<bool> read = read_by_steps(g, p.steps, p.homes, p.copies);
    std::vector<bool> unread(g.nodes.size(), false);
    bool any = false;
    for (const step& s : p.steps)
        if (const auto* r = std::get_if<region>(&s))
            for (graph::node_id id : r->nodes)
                if (p.homes[id].where == location::temp && !read[id])
                    any = unread[id] = true;
    if (any) {
        plan first = p;
        make_steps(unread);
        read = read_by_steps(g, p.steps, p.homes, p.copies);
        for (graph::node_id id = 0; id < g.nodes.size(); ++id)
            if (read[id] && p.homes[id].where == location::none) {
                p = std::move(first);
                break;
            }
    }
    plan_controls(g, p);
    p.fused_leaves = static_fusion_leaves(g, p);
    p.donations = donations(g, p);
    group_concurrent_steps(g, p);
    p.tiling = plan_row_tiles(g, p, arg_shapes);
    if (auto swept = plan_whole_sweep(g, p, arg_shapes))
        return std::move(*swept);
    return p;
}

XTRACE_DECL void plan_controls(const graph::graph& g, plan& p) {
    for (step& s : p.steps)
        if (auto* c = std::get_if<control_step>(&s)) {
            const graph::node& n = g[c->node];
            for (const auto& body : n.bodies)
                c->bodies.push_back(std::make_shared<const plan>(
                    build(*body, body_arg_shapes(*body, n, p.shapes))));
        }
}

// Leaves depth-first from the output, as the expression type lists them (a tree walk of the
// DAG, so capped: a larger tree runs through the interpreter).
XTRACE_DECL fused_leaf_table static_fusion_leaves(const graph::graph& g, const plan& p) {
    if (g.outputs.size() != 1 || !g.effects.empty())
        return {};
    const std::span<const shape_t> shapes = p.shapes;
    const shape_t& out = shapes[g.outputs[0]];
    std::vector<graph::node_id> leaves, stack{g.outputs[0]};
    while (!stack.empty()) {
        const graph::node_id id = stack.back();
        stack.pop_back();
        const graph::node& n = g[id];
        if (n.op == op_kind::arg || n.op == op_kind::constant) {
            if ((n.op == op_kind::arg && shapes[id] != out) || leaves.size() == max_fused_leaves)
                return {};
            leaves.push_back(id);
            continue;
        }
        if (!info(n.op).elementwise || shapes[id] != out)
            return {};
        for (auto it = n.inputs.rbegin(); it != n.inputs.rend(); ++it)
            stack.push_back(*it);
    }
    fused_leaf_table t;
    t.element_bytes = dtype_size(g[g.outputs[0]].type);
    for (std::size_t k = 0; k < leaves.size(); ++k) {
        const home& h = p.homes[leaves[k]];
        if (g[leaves[k]].type != g[g.outputs[0]].type) // a kernel reads leaves of its own dtype
            return {};
        t.bits.push_back(h.where == location::constant ? h.bits : 0);
        if (h.where == location::constant)
            continue;
        t.args.push_back({static_cast<std::uint32_t>(k), h.index});
        if (std::find(t.read.begin(), t.read.end(), h.index) == t.read.end())
            t.read.push_back(h.index);
    }
    return t;
}

namespace detail {

// XTRACE_LOG_PLANS set to anything but "" or "0".
inline bool log_plans() {
    static const bool on = [] {
        const char* v = std::getenv("XTRACE_LOG_PLANS");
        return v && *v && std::string_view(v) != "0";
    }();
    return on;
}

} // namespace detail

XTRACE_DECL std::shared_ptr<const plan> make_plan(const graph::graph& g,
                                                  std::span<const shape_t> arg_shapes) {
    auto p = std::make_shared<const plan>(build(g, arg_shapes));
    if (detail::log_plans()) {
        std::string args;
        for (const shape_t& s : arg_shapes)
            args += (args.empty() ? "" : ", ") + shape_string(s);
        std::clog << "xtrace: plan for arguments of shapes (" + args + ")\n" + to_text(*p, g);
    }
    return p;
}

} // namespace xtrace::plan
