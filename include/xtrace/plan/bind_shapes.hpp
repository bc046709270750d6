#ifndef XTRACE_PLAN_BIND_SHAPES_HPP
#define XTRACE_PLAN_BIND_SHAPES_HPP

// Concrete shapes for every node of a graph, from the arguments' concrete shapes. A trace with
// unknown dims is bound here, per call shape, without running the lambda again; shape errors
// that only concrete dims reveal are thrown here.

#include "../graph/graph.hpp"
#include "../graph/shape_inference.hpp"

#include <array>
#include <span>
#include <vector>

namespace xtrace::plan {

/// Shapes of all nodes of `g` when its tensor arguments have `arg_shapes` (in g.args order).
inline std::vector<shape_t> bind_shapes(const graph::graph& g,
                                        std::span<const shape_t> arg_shapes) {
    std::vector<shape_t> shapes(g.nodes.size());
    for (std::size_t i = 0; i < g.args.size(); ++i)
        shapes[g.args[i]] = arg_shapes[i];
    for (graph::node_id id = 0; id < g.nodes.size(); ++id) {
        const graph::node& n = g.nodes[id];
        if (n.op == op_kind::arg || n.op == op_kind::constant)
            continue;
        if (n.op == op_kind::print) {
            shapes[id] = {};
            continue;
        }
        if (n.op == op_kind::host_function) {
            shapes[id] = n.shape;
            continue;
        }
        if (n.op == op_kind::matmul) {
            shapes[id] = graph::matmul_shape(shapes[n.inputs[0]], shapes[n.inputs[1]]);
            continue;
        }
        if (is_shape_op(n.op)) {
            shapes[id] = graph::shape_op_result(n.op, shapes[n.inputs[0]], n.axes);
            continue;
        }
        if (info(n.op).reduction) {
            shapes[id] = graph::reduce_shape(shapes[n.inputs[0]], n.axes, n.keep_dims);
            continue;
        }
        std::array<const shape_t*, 3> in{};
        for (std::size_t i = 0; i < n.inputs.size(); ++i)
            in[i] = &shapes[n.inputs[i]];
        shapes[id] = graph::broadcast_operands(n.op, std::span(in.data(), n.inputs.size()));
    }
    return shapes;
}

} // namespace xtrace::plan

#endif
