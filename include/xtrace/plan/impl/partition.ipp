// The runtime section of plan/partition.hpp.

#include <algorithm>

namespace xtrace::plan {

namespace detail {

// True when group `from` depends, directly or not, on group `to`.
inline bool reaches(const partitioning& parts, group_id from, group_id to) {
    std::vector<group_id> stack{from};
    std::vector<bool> seen(parts.groups.size(), false);
    while (!stack.empty()) {
        const group_id r = stack.back();
        stack.pop_back();
        if (r == to)
            return true;
        if (seen[r])
            continue;
        seen[r] = true;
        const auto& after = parts.groups[r].after;
        stack.insert(stack.end(), after.begin(), after.end());
    }
    return false;
}

// True when sorted `axes` are the innermost dims of a rank-`rank` tensor (or none).
inline bool innermost(const std::vector<std::int64_t>& axes, std::size_t rank) {
    for (std::size_t k = 0; k < axes.size(); ++k)
        if (axes[k] != static_cast<std::int64_t>(rank - axes.size() + k))
            return false;
    return true;
}

// True when sorted `axes` are the outermost dims.
inline bool outermost(const std::vector<std::int64_t>& axes) {
    for (std::size_t k = 0; k < axes.size(); ++k)
        if (axes[k] != static_cast<std::int64_t>(k))
            return false;
    return true;
}

// Group `target` reads the values of n's operands: it runs after the groups that make them.
inline void add_after(partitioning& parts, group_id target, const graph::node& n) {
    auto& after = parts.groups[target].after;
    for (auto in : n.inputs) {
        const auto ready = parts.ready_after[in];
        if (ready && *ready != target &&
            std::find(after.begin(), after.end(), *ready) == after.end())
            after.push_back(*ready);
    }
}

// Node `id` is computed by, and readable after, group `r`.
inline void place(partitioning& parts, graph::node_id id, group_id r) {
    parts.computed_by[id] = r;
    parts.ready_after[id] = r;
}

// True when reduction `n` can run inside the region computing its input.
inline bool fits_tail(const partitioning& parts, const graph::node& n,
                      std::span<const shape_t> shapes, const view_choice& views) {
    if (!(n.reduce && n.reduce->accumulate))
        return false;
    const graph::node_id in = n.inputs[0];
    const auto r = parts.computed_by[in];
    return r && parts.groups[*r].fused && !parts.in_tail[in] && !views(in) &&
           (innermost(n.axes, shapes[in].size()) || outermost(n.axes));
}

} // namespace detail

XTRACE_DECL node_class classify(op_kind k) noexcept {
    switch (k) {
    case op_kind::arg:
    case op_kind::constant:
        return node_class::leaf;
    case op_kind::cast:
    case op_kind::stop_gradient:
    case op_kind::ensure_shape:
#define XTRACE_X(name, arity, domain, result) case op_kind::name:
        XTRACE_ELEMENTWISE_OPS(XTRACE_X)
#undef XTRACE_X
        return node_class::elementwise;
#define XTRACE_X(name, domain) case op_kind::name:
        XTRACE_REDUCTION_OPS(XTRACE_X)
#undef XTRACE_X
        return node_class::reduction;
#define XTRACE_X(name) case op_kind::name:
        XTRACE_SHAPE_OPS(XTRACE_X)
#undef XTRACE_X
        return node_class::shape_op;
    case op_kind::result:
        return node_class::result;
    case op_kind::matmul:
    case op_kind::print:
    case op_kind::host_function:
    case op_kind::cond:
    case op_kind::while_loop:
    case op_kind::scan:
    case op_kind::read_variable:
    case op_kind::assign_variable:
    case op_kind::sum_to:
        return node_class::alone;
    }
    return node_class::alone;
}

XTRACE_DECL bool may_join(const partitioning& parts, const graph::node& n, const shape_t& shape,
                          group_id r) {
    const group& candidate = parts.groups[r];
    if (!candidate.fused || candidate.shape != shape || candidate.nodes.size() >= max_region_nodes)
        return false;
    for (auto in : n.inputs) {
        if (parts.computed_by[in] == r && !parts.in_tail[in])
            continue;
        const auto ready = parts.ready_after[in];
        if (ready == r) // a view or a tail reduction of this region: needs it whole
            return false;
        if (ready && detail::reaches(parts, *ready, r))
            return false;
    }
    return true;
}

XTRACE_DECL partitioning partition(const graph::graph& g, std::span<const shape_t> shapes,
                                   const view_choice& views) {
    const std::size_t count = g.nodes.size();
    partitioning parts;
    parts.computed_by.resize(count);
    parts.ready_after.resize(count);
    parts.in_tail.assign(count, false);
    std::vector<bool> is_effect(count, false);
    for (auto id : g.effects)
        is_effect[id] = true;
    std::optional<group_id> last_effect;
    auto new_group = [&](bool fused, const shape_t& shape) {
        parts.groups.push_back(group{fused, fused ? shape : shape_t{}, {}, {}, {}});
        return static_cast<group_id>(parts.groups.size() - 1);
    };
    for (graph::node_id id = 0; id < count; ++id) {
        const graph::node& n = g[id];
        const node_class c = classify(n.op);
        if (c == node_class::leaf)
            continue;
        if (c == node_class::shape_op && views(id)) {
            parts.ready_after[id] = parts.ready_after[n.inputs[0]];
            continue;
        }
        if (c == node_class::reduction && detail::fits_tail(parts, n, shapes, views)) {
            const group_id r = *parts.computed_by[n.inputs[0]];
            detail::place(parts, id, r);
            parts.in_tail[id] = true;
            parts.groups[r].tails.push_back(id);
            continue;
        }
        if (c == node_class::result) {
            parts.computed_by[id] = parts.ready_after[id] = parts.computed_by[n.inputs[0]];
            continue;
        }
        if (c != node_class::elementwise) { // a step of its own
            const group_id r = new_group(false, {});
            parts.groups[r].nodes.push_back(id);
            detail::place(parts, id, r);
            detail::add_after(parts, r, n);
            if (is_effect[id]) { // side effects keep program order
                if (last_effect)
                    parts.groups[r].after.push_back(*last_effect);
                last_effect = r;
            }
            continue;
        }
        std::optional<group_id> target;
        for (auto in : n.inputs)
            if (const auto r = parts.computed_by[in]; r && may_join(parts, n, shapes[id], *r)) {
                target = r;
                break;
            }
        for (auto r = parts.groups.size(); !target && r-- > 0;)
            if (may_join(parts, n, shapes[id], static_cast<group_id>(r)))
                target = static_cast<group_id>(r);
        if (!target)
            target = new_group(true, shapes[id]);
        detail::place(parts, id, *target);
        parts.groups[*target].nodes.push_back(id);
        detail::add_after(parts, *target, n);
    }
    return parts;
}

} // namespace xtrace::plan
