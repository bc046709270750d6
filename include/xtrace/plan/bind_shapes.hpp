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
/// (a while_loop's loop variables keep their initial values' shapes; a scan's scanned inputs
/// are seen one leading-dim slice at a time).
inline std::vector<shape_t> body_arg_shapes(const graph::graph& body, const graph::node& n,
                                            const std::vector<shape_t>& shapes) {
    std::vector<shape_t> out;
    for (graph::node_id a : body.args) {
        const std::int64_t k = body[a].arg_position;
        out.push_back(shapes[n.inputs[static_cast<std::size_t>(k)]]);
        if (n.op == op_kind::scan && k >= n.carried && k < n.carried + n.scanned)
            out.back().erase(out.back().begin());
    }
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

/// The concrete shapes of the results of cond, while_loop or scan node `n`; throws shape_error
/// where the branches disagree, the body changes a loop variable's shape, or scanned inputs
/// differ in length.
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
    if (n.op == op_kind::scan) {
        std::vector<shape_t> xs;
        for (std::int64_t k = n.carried; k < n.carried + n.scanned; ++k)
            xs.push_back(shapes[n.inputs[static_cast<std::size_t>(k)]]);
        const std::int64_t length = graph::scan_length(xs);
        std::vector<shape_t> carries;
        for (std::int64_t k = 0; k < n.carried; ++k)
            carries.push_back(shapes[n.inputs[static_cast<std::size_t>(k)]]);
        auto out = body_output_shapes(*n.bodies[0], body_arg_shapes(*n.bodies[0], n, shapes));
        for (std::size_t k = 0; k < out.size(); ++k)
            out[k] = graph::scan_result_shape(carries, k, out[k], length);
        return out;
    }
    const graph::graph& first = *n.bodies[0];
    const graph::graph& second = *n.bodies[1];
    auto a = body_output_shapes(first, body_arg_shapes(first, n, shapes));
    auto b = body_output_shapes(second, body_arg_shapes(second, n, shapes));
    if (n.op == op_kind::cond) {
        for (std::size_t k = 0; k < a.size(); ++k)
            graph::merge_branch_shapes(a[k], b[k], k); // all dims known: throws unless equal
        return a;
    }
    for (std::size_t k = 0; k < b.size(); ++k)
        graph::check_loop_shape(shapes[n.inputs[k]], b[k], k);
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
        auto in = [&](std::size_t k) -> const shape_t& { return shapes[n.inputs[k]]; };
        switch (n.op) { // no default: a new op kind is a compiler warning here
        case op_kind::arg:
        case op_kind::constant:
            break; // args: bound above; constants: rank 0
        case op_kind::cond:
        case op_kind::while_loop:
        case op_kind::scan:
            results.push_back(control_result_shapes(n, shapes));
            controls.push_back(id);
            break;
        case op_kind::result: {
            const auto at = std::find(controls.begin(), controls.end(), n.inputs[0]);
            shapes[id] = results[at - controls.begin()][n.result_index];
            break;
        }
        case op_kind::assign_variable:
            graph::check_assign_shape(*n.var, in(0)); // all dims known: throws unless equal
            shapes[id] = n.shape;
            break;
        case op_kind::read_variable:
        case op_kind::host_function:
            shapes[id] = n.shape; // fully known when traced
            break;
        case op_kind::print:
            shapes[id] = {};
            break;
        case op_kind::matmul:
            shapes[id] = graph::matmul_shape(in(0), in(1));
            break;
#define XTRACE_X(name) case op_kind::name:
            XTRACE_SHAPE_OPS(XTRACE_X)
#undef XTRACE_X
            shapes[id] = graph::shape_op_result(n.op, in(0),
                                                n.rank_pending
                                                    ? graph::normalize_shape_op(n.op, in(0), n.axes)
                                                    : n.shape_attributes());
            break;
#define XTRACE_X(name, domain) case op_kind::name:
            XTRACE_REDUCTION_OPS(XTRACE_X)
#undef XTRACE_X
            shapes[id] = graph::reduce_shape(
                in(0), n.rank_pending ? graph::normalize_axes(n.op, in(0), n.axes) : n.axes,
                n.keep_dims);
            break;
        case op_kind::sum_to:
            shapes[id] = graph::sum_to_shape(in(0), in(1));
            break;
        case op_kind::ensure_shape:
            graph::check_ensured_shape(in(0), n.dims, n.text);
            shapes[id] = in(0);
            break;
        case op_kind::cast:
        case op_kind::stop_gradient:
#define XTRACE_X(name, arity, domain, result) case op_kind::name:
            XTRACE_ELEMENTWISE_OPS(XTRACE_X)
#undef XTRACE_X
            {
                std::array<const shape_t*, 3> operands{};
                for (std::size_t i = 0; i < n.inputs.size(); ++i)
                    operands[i] = &in(i);
                shapes[id] =
                    graph::broadcast_operands(n.op, std::span(operands.data(), n.inputs.size()));
                break;
            }
        }
    }
    return shapes;
}

} // namespace xtrace::plan

#endif

#endif
