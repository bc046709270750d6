// The runtime section of graph/text.hpp.

#include "../shape_inference.hpp"

#include <sstream>
#include <vector>

namespace xtrace::graph {

namespace detail {
// Axes as the lambda wrote them for an input of unknown rank: "{-1}", "{all}" (every_axis),
// "{}" (transpose's reversal), normalised only when planned.
inline std::string pending_axes(const std::vector<std::int64_t>& axes) {
    std::string out = "{";
    for (std::size_t i = 0; i < axes.size(); ++i)
        out +=
            (i ? "," : "") + (axes[i] == every_axis ? std::string("all") : std::to_string(axes[i]));
    return out + "}";
}
} // namespace detail

XTRACE_DECL std::string node_text(const node& n, std::span<const std::string> operands) {
    std::ostringstream os;
    auto list = [&](bool first) {
        for (const auto& o : operands) {
            os << (first ? "" : ", ") << o;
            first = false;
        }
    };
    const std::string_view name = info(n.op).name;
    switch (n.op) {
    case op_kind::arg:
        os << "arg " << n.arg_position;
        break;
    case op_kind::constant:
        os << "constant ";
        if (is_floating(n.type))
            os << n.fvalue;
        else if (n.type == dtype::boolean)
            os << (n.ivalue ? "true" : "false");
        else
            os << n.ivalue;
        break;
    case op_kind::print:
        os << name << "(\"" << n.text << '"';
        list(false);
        os << ')';
        break;
    case op_kind::result:
        os << name << '(';
        list(true);
        os << ", " << n.result_index << ')';
        break;
    case op_kind::read_variable:
    case op_kind::assign_variable:
        os << name << '(';
        list(true);
        os << (operands.empty() ? "" : ", ") << '\'' << n.var->name << "')";
        break;
#define XTRACE_X(op_name) case op_kind::op_name:
        XTRACE_SHAPE_OPS(XTRACE_X)
#undef XTRACE_X
        os << name << '(';
        list(true);
        os << ", "
           << (n.rank_pending ? detail::pending_axes(n.axes) : shape_string(n.shape_attributes()))
           << ')';
        break;
#define XTRACE_X(op_name, domain) case op_kind::op_name:
        XTRACE_REDUCTION_OPS(XTRACE_X)
#undef XTRACE_X
        os << name << '(';
        list(true);
        os << ", axes=" << (n.rank_pending ? detail::pending_axes(n.axes) : shape_string(n.axes))
           << (n.keep_dims ? ", keep_dims)" : ")");
        break;
    case op_kind::scan:
        os << name << '(';
        list(true);
        os << ", carried=" << n.carried << ", scanned=" << n.scanned
           << (n.reverse ? ", reverse)" : ")");
        break;
    case op_kind::ensure_shape:
        os << name << '(';
        list(true);
        os << ", " << shape_string(n.dims) << ')';
        break;
    case op_kind::cast:
    case op_kind::stop_gradient:
    case op_kind::sum_to:
#define XTRACE_X(op_name, arity, domain, result) case op_kind::op_name:
        XTRACE_ELEMENTWISE_OPS(XTRACE_X)
#undef XTRACE_X
    case op_kind::matmul:
    case op_kind::host_function:
    case op_kind::cond:
    case op_kind::while_loop:
        os << name << '(';
        list(true);
        os << ')';
        break;
    }
    return os.str();
}

XTRACE_DECL std::string to_text(const graph& g, const std::string& indent) {
    std::ostringstream os;
    std::vector<std::string> operands;
    for (node_id id = 0; id < g.nodes.size(); ++id) {
        const node& n = g.nodes[id];
        operands.clear();
        for (node_id in : n.inputs)
            operands.push_back('%' + std::to_string(in));
        os << indent << '%' << id << " = " << node_text(n, operands);
        if (n.bodies.empty()) {
            os << " : " << dtype_name(n.type) << shape_string(n.shape) << '\n';
            continue;
        }
        os << '\n';
        for (std::size_t b = 0; b < n.bodies.size() && b < 2; ++b)
            os << indent << "  " << body_name(n.op, b) << ":\n"
               << to_text(*n.bodies[b], indent + "    ");
    }
    os << indent << "return";
    for (std::size_t i = 0; i < g.outputs.size(); ++i)
        os << (i ? ", %" : " %") << g.outputs[i];
    os << '\n';
    return os.str();
}

} // namespace xtrace::graph
