#ifndef XTRACE_GRAPH_SHAPE_INFERENCE_HPP
#define XTRACE_GRAPH_SHAPE_INFERENCE_HPP

// Result shapes of ops, shared by tracing (dims may be unknown), run-time shape binding
// (all dims known) and the eager path, so all three reject the same inputs with the same words.

#include "../core/error.hpp"
#include "../core/shape.hpp"
#include "../expr/op.hpp"

#include <span>
#include <string>

namespace xtrace::graph {

/// Broadcast shape of an elementwise op's operands; throws shape_error naming op and shapes.
inline shape_t broadcast_operands(op_kind op, std::span<const shape_t* const> operands) {
    shape_t out;
    for (std::size_t i = 0; i < operands.size(); ++i) {
        if (i == 0) {
            out = *operands[0];
            continue;
        }
        auto b = broadcast_shapes(out, *operands[i]);
        if (!b) {
            std::string msg = "xtrace::" + std::string(info(op).name) + ": cannot broadcast shapes";
            for (std::size_t j = 0; j < operands.size(); ++j)
                msg += (j ? " and " : " ") + shape_string(*operands[j]);
            throw shape_error(msg);
        }
        out = std::move(*b);
    }
    return out;
}

} // namespace xtrace::graph

#endif
