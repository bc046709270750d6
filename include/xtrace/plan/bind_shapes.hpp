#ifndef XTRACE_PLAN_BIND_SHAPES_HPP
#define XTRACE_PLAN_BIND_SHAPES_HPP

// Concrete shapes for every node of a graph, from the arguments' concrete shapes. A trace with
// unknown dims is bound here, per call shape, without running the lambda again; shape errors
// that only concrete dims reveal are thrown here.

#include "../config.hpp"
#include "../graph/graph.hpp"
#include "../graph/shape_inference.hpp"

#include <algorithm>
#include <array>
#include <span>
#include <string>
#include <vector>

namespace xtrace::plan {

std::vector<shape_t> bind_shapes(const graph::graph& g, std::span<const shape_t> arg_shapes);

/// The concrete shapes of the args of `body`, a subgraph of node `n` whose inputs have `shapes`
/// (a while_loop's loop variables keep their initial values' shapes).
inline std::vector<shape_t> body_arg_shapes(const graph::graph& body, const graph::node& n,
                                            const std::vector<shape_t>& shapes) {
    std::vector<shape_t> out;
    for (graph::node_id a : body.args)
        out.push_back(shapes[n.inputs[body[a].index]]);
    return out;
}

/// The concrete shapes of the outputs of `body` run on args of `arg_shapes`.
inline std::vector<shape_t> body_output_shapes(const graph::graph& body,
                                               const std::vector<shape_t>& arg_shapes) {
    const auto shapes = bind_shapes(body, arg_shapes);
    std::vector<shape_t> out;
    for (graph::node_id o : body.outputs)
        out.push_back(shapes[o]);
    return out;
}

/// The concrete shapes of the results of cond or while_loop node `n`; throws shape_error where
/// the branches disagree or the body changes a loop variable's shape.
XTRACE_DECL std::vector<shape_t> control_result_shapes(const graph::node& n,
                                                       const std::vector<shape_t>& shapes);

/// Shapes of all nodes of `g` when its tensor arguments have `arg_shapes` (in g.args order).
XTRACE_DECL std::vector<shape_t> bind_shapes(const graph::graph& g,
                                             std::span<const shape_t> arg_shapes);

} // namespace xtrace::plan

#if XTRACE_DEFINE_RUNTIME

namespace xtrace::plan {

XTRACE_DECL std::vector<shape_t> control_result_shapes(const graph::node& n,
                                                       const std::vector<shape_t>& shapes) {
    const graph::graph& first = *n.bodies[0];
    const graph::graph& second = *n.bodies[1];
    auto a = body_output_shapes(first, body_arg_shapes(first, n, shapes));
    auto b = body_output_shapes(second, body_arg_shapes(second, n, shapes));
    if (n.op == op_kind::cond) {
        for (std::size_t k = 0; k < a.size(); ++k)
            if (a[k] != b[k])
                throw shape_error("xtrace::cond: result " + std::to_string(k) + " has shape " +
                                  shape_string(a[k]) + " in the then branch but " +
                                  shape_string(b[k]) +
                                  " in the else branch; both branches must return the same "
                                  "shapes");
        return a;
    }
    for (std::size_t k = 0; k < b.size(); ++k)
        if (b[k] != shapes[n.inputs[k]])
            throw shape_error("xtrace::while_loop: loop variable " + std::to_string(k) +
                              " has shape " + tuple_string(shapes[n.inputs[k]]) +
                              " before the loop, but shape " + tuple_string(b[k]) +
                              " after one iteration; the body must keep each loop variable's "
                              "shape");
    for (std::size_t k = 0; k < b.size(); ++k)
        b[k] = shapes[n.inputs[k]];
    return b;
}

XTRACE_DECL std::vector<shape_t> bind_shapes(const graph::graph& g,
                                             std::span<const shape_t> arg_shapes) {
    std::vector<shape_t> shapes(g.nodes.size());
    for (std::size_t i = 0; i < g.args.size(); ++i)
        shapes[g.args[i]] = arg_shapes[i];
    std::vector<std::vector<shape_t>> results; // of the cond and while_loop nodes, in order
    std::vector<graph::node_id> controls;
    for (graph::node_id id = 0; id < g.nodes.size(); ++id) {
        const graph::node& n = g.nodes[id];
        if (n.op == op_kind::arg || n.op == op_kind::constant)
            continue;
        if (n.op == op_kind::cond || n.op == op_kind::while_loop) {
            results.push_back(control_result_shapes(n, shapes));
            controls.push_back(id);
            continue;
        }
        if (n.op == op_kind::result) {
            const auto at = std::find(controls.begin(), controls.end(), n.inputs[0]);
            shapes[id] = results[at - controls.begin()][n.index];
            continue;
        }
        if (n.op == op_kind::read_variable) {
            shapes[id] = n.shape;
            continue;
        }
        if (n.op == op_kind::assign_variable) {
            if (shapes[n.inputs[0]] != n.shape)
                throw shape_error("xtrace::variable::assign: " + n.var->describe() + " has shape " +
                                  shape_string(n.shape) + ", the value assigned has shape " +
                                  shape_string(shapes[n.inputs[0]]));
            shapes[id] = n.shape;
            continue;
        }
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

#endif
