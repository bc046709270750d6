#ifndef XTRACE_GRAPH_TEXT_HPP
#define XTRACE_GRAPH_TEXT_HPP

#include "graph.hpp"

#include <sstream>
#include <string>

namespace xtrace::graph {

/// A readable dump of the IR, one node per line: `%2 = mul(%0, %1) : float32[?,3]`.
inline std::string to_text(const graph& g) {
    std::ostringstream os;
    for (node_id id = 0; id < g.nodes.size(); ++id) {
        const node& n = g.nodes[id];
        os << '%' << id << " = ";
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
            if (info(n.op).reduction) {
                os << ", axes=" << shape_string(n.axes);
                if (n.keep_dims)
                    os << ", keep_dims";
            }
            os << ')';
        }
        os << " : " << dtype_name(n.type) << shape_string(n.shape) << '\n';
    }
    os << "return";
    for (std::size_t i = 0; i < g.outputs.size(); ++i)
        os << (i ? ", %" : " %") << g.outputs[i];
    os << '\n';
    return os.str();
}

} // namespace xtrace::graph

#endif
