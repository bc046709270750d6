#ifndef XTRACE_GRAPH_SHAPE_INFERENCE_HPP
#define XTRACE_GRAPH_SHAPE_INFERENCE_HPP

// Result shapes of ops, shared by tracing (dims may be unknown), run-time shape binding
// (all dims known) and the eager path, so all three reject the same inputs with the same words.

#include "../core/error.hpp"
#include "../core/shape.hpp"
#include "../expr/op.hpp"

#include <algorithm>
#include <span>
#include <string>
#include <vector>

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

/// Sorted, non-negative axes of a reduction over `axes` (negative counts from the end) of a
/// tensor of `shape`; throws shape_error for an axis out of range or given twice.
inline std::vector<std::int64_t> normalize_axes(op_kind op, const shape_t& shape,
                                                std::vector<std::int64_t> axes) {
    const auto rank = static_cast<std::int64_t>(shape.size());
    for (auto& a : axes) {
        if (a < -rank || a >= rank)
            throw shape_error("xtrace::" + std::string(info(op).name) + ": axis " +
                              std::to_string(a) + " is out of range for shape " +
                              shape_string(shape));
        if (a < 0)
            a += rank;
    }
    std::sort(axes.begin(), axes.end());
    if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
        throw shape_error("xtrace::" + std::string(info(op).name) +
                          ": an axis is repeated for shape " + shape_string(shape));
    return axes;
}

/// Shape of a reduction over normalised `axes`.
inline shape_t reduce_shape(const shape_t& shape, const std::vector<std::int64_t>& axes,
                            bool keep_dims) {
    shape_t out;
    for (std::size_t d = 0; d < shape.size(); ++d) {
        const bool reduced = std::binary_search(axes.begin(), axes.end(), std::int64_t(d));
        if (!reduced)
            out.push_back(shape[d]);
        else if (keep_dims)
            out.push_back(1);
    }
    return out;
}

} // namespace xtrace::graph

#endif
