#ifndef XTRACE_GRAPH_TEXT_HPP
#define XTRACE_GRAPH_TEXT_HPP

#include "../config.hpp"
#include "graph.hpp"

#include <sstream>
#include <string>

namespace xtrace::graph {

/// A readable dump of the IR, one node per line: `%2 = mul(%0, %1) : float32[?,3]`; the
/// subgraphs of cond and while_loop nodes follow theirs, indented.
XTRACE_DECL std::string to_text(const graph& g, const std::string& indent = "");

} // namespace xtrace::graph

#if XTRACE_DEFINE_RUNTIME

namespace xtrace::graph {

XTRACE_DECL std::string to_text(const graph& g, const std::string& indent) {
    std::ostringstream os;
    for (node_id id = 0; id < g.nodes.size(); ++id) {
        const node& n = g.nodes[id];
        os << indent << '%' << id << " = ";
        if (n.op == op_kind::arg) {
            os << "arg " << n.index;
        } else if (n.op == op_kind::constant) {
            os << "constant ";
            if (is_floating(n.type))
                os << n.fvalue;
            else if (n.type == dtype::boolean)
                os << (n.ivalue ? "true" : "false");
            else
                os << n.ivalue;
        } else {
            os << info(n.op).name << '(';
            if (n.op == op_kind::print)
                os << '"' << n.text << (n.inputs.empty() ? "\"" : "\", ");
            for (std::size_t i = 0; i < n.inputs.size(); ++i)
                os << (i ? ", %" : "%") << n.inputs[i];
            if (is_shape_op(n.op))
                os << ", " << shape_string(n.axes);
            if (n.op == op_kind::result)
                os << ", " << n.index;
            if (n.var)
                os << (n.inputs.empty() ? "" : ", ") << '\'' << n.var->name << '\'';
            if (info(n.op).reduction) {
                os << ", axes=" << shape_string(n.axes);
                if (n.keep_dims)
                    os << ", keep_dims";
            }
            os << ')';
        }
        if (n.bodies.empty()) {
            os << " : " << dtype_name(n.type) << shape_string(n.shape) << '\n';
            continue;
        }
        os << '\n';
        const char* names[2] = {n.op == op_kind::cond ? "then" : "cond",
                                n.op == op_kind::cond ? "else" : "body"};
        for (std::size_t b = 0; b < n.bodies.size() && b < 2; ++b)
            os << indent << "  " << names[b] << ":\n" << to_text(*n.bodies[b], indent + "    ");
    }
    os << indent << "return";
    for (std::size_t i = 0; i < g.outputs.size(); ++i)
        os << (i ? ", %" : " %") << g.outputs[i];
    os << '\n';
    return os.str();
}

} // namespace xtrace::graph

#endif

#endif
