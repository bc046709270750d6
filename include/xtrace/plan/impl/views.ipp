// The runtime section of plan/views.hpp.

namespace xtrace::plan {

XTRACE_DECL view_choice choose_views(const graph::graph& g) {
    view_choice views{std::vector<bool>(g.nodes.size(), false)};
    for (graph::node_id id = 0; id < g.nodes.size(); ++id) {
        const graph::node& n = g[id];
        if (!is_shape_op(n.op))
            continue;
        const graph::node_id src = n.inputs[0];
        const bool strided_source = g[src].op == op_kind::arg || views(src);
        views.is_view[id] = n.op != op_kind::reshape || !strided_source;
    }
    return views;
}

} // namespace xtrace::plan
