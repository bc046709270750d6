#ifndef XTRACE_GRAPH_DOT_HPP
#define XTRACE_GRAPH_DOT_HPP

#include "../config.hpp"
#include "graph.hpp"

#include <sstream>
#include <string>

namespace xtrace::graph {

/// The graph in Graphviz DOT: one box per node (op, dtype and shape), edges operand -> user.
XTRACE_DECL std::string to_dot(const graph& g, const std::string& name = "xtrace");

} // namespace xtrace::graph

#if XTRACE_DEFINE_RUNTIME

namespace xtrace::graph {

XTRACE_DECL std::string to_dot(const graph& g, const std::string& name) {
    std::ostringstream os;
    os << "digraph \"" << name << "\" {\n  rankdir=TB;\n  node [shape=box, fontname=monospace];\n";
    for (node_id id = 0; id < g.nodes.size(); ++id) {
        const node& n = g.nodes[id];
        os << "  n" << id << " [label=\"";
        if (n.op == op_kind::arg)
            os << 'x' << n.arg_position;
        else if (n.op == op_kind::constant)
            os << (is_floating(n.type) ? std::to_string(n.fvalue) : std::to_string(n.ivalue));
        else
            os << info(n.op).name;
        os << "\\n" << dtype_name(n.type) << shape_string(n.shape) << '"';
        if (n.op == op_kind::arg)
            os << ", shape=ellipse";
        os << "];\n";
        for (node_id in : n.inputs)
            os << "  n" << in << " -> n" << id << ";\n";
    }
    for (std::size_t k = 0; k < g.outputs.size(); ++k)
        os << "  out" << k << " [label=\"output " << k << "\", shape=plaintext];\n  n"
           << g.outputs[k] << " -> out" << k << ";\n";
    os << "}\n";
    return os.str();
}

} // namespace xtrace::graph

#endif

#endif
