#ifndef XTRACE_GRAPH_TEXT_HPP
#define XTRACE_GRAPH_TEXT_HPP

#include "../config.hpp"
#include "graph.hpp"

#include <span>
#include <string>

namespace xtrace::graph {

/// What node `n` computes, its operands written as `operands` (one string per input):
/// "mul(%0, %1)", "sum(%2, axes=[1], keep_dims)", "constant 0.5", "arg 0".
XTRACE_DECL std::string node_text(const node& n, std::span<const std::string> operands);

/// The name of subgraph `b` of a node of kind `op`, as dumps print it: "then"/"else" (cond),
/// "cond"/"body" (while_loop), "body" (scan).
inline const char* body_name(op_kind op, std::size_t b) noexcept {
    if (op == op_kind::cond)
        return b == 0 ? "then" : "else";
    if (op == op_kind::scan)
        return "body";
    return b == 0 ? "cond" : "body";
}

/// A readable dump of the IR, one node per line: `%2 = mul(%0, %1) : float32[?,3]`; the
/// subgraphs of cond, while_loop and scan nodes follow theirs, indented.
XTRACE_DECL std::string to_text(const graph& g, const std::string& indent = "");

} // namespace xtrace::graph

#if XTRACE_DEFINE_RUNTIME
#include "impl/text.ipp"
#endif

#endif
