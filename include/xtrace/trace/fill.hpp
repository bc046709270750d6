#ifndef XTRACE_TRACE_FILL_HPP
#define XTRACE_TRACE_FILL_HPP

// A 1-D tensor of n copies of one value, where n is a tensor the graph computes (ONNX's
// ConstantOfShape of a computed shape). Its length is known only when it runs, so it is recorded
// as a host_function node with an unknown dim, and the graph runs in stages around it
// (plan/stages.hpp). A while_loop's gradient uses one, of length the trip count, as the scanned
// input of a scan that replays the loop and stores each iteration's state; the ONNX exporter
// writes it back as ConstantOfShape.

#include "../config.hpp"
#include "../core/error.hpp"
#include "builder.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace xtrace::trace {

/// The callback of a fill node: n read from its one operand (a single int32 or int64 element).
struct fill_call final : graph::host_call {
    fill_call(dtype type, double value, dtype count_type, std::int64_t max_count)
        : type(type), value(value), count_type(count_type), max_count(max_count) {}

    void run(const std::byte* const* data, const std::int64_t* const*,
             const std::vector<std::int64_t>*, const std::vector<std::int64_t>& out_shape,
             std::byte* out) const override {
        write(out, out_shape.empty() ? 1 : out_shape[0]);
        (void)data;
    }
    void run_dynamic(const std::byte* const* data, const std::int64_t* const*,
                     const std::vector<std::int64_t>*,
                     graph::result_allocator& out) const override {
        const std::int64_t n = count(data[0]);
        write(out.allocate({n}), n);
    }

    dtype type;             ///< of the result
    double value;           ///< every element's value
    dtype count_type;       ///< of the operand holding n
    std::int64_t max_count; ///< the longest fill allowed (a loaded model's byte limit)

private:
    std::int64_t count(const std::byte* p) const {
        std::int64_t n = 0;
        if (count_type == dtype::int32) {
            std::int32_t v;
            std::memcpy(&v, p, sizeof v);
            n = v;
        } else {
            std::memcpy(&n, p, sizeof n);
        }
        if (n < 0 || n > max_count)
            throw shape_error("xtrace: a fill (ConstantOfShape) of computed length " +
                              std::to_string(n) +
                              (n < 0 ? "; a length cannot be negative"
                                     : ", more than its limit of " + std::to_string(max_count)));
        return n;
    }
    void write(std::byte* out, std::int64_t n) const {
        const auto fill = [&]<class T>(T) {
            std::fill_n(reinterpret_cast<T*>(out), n, static_cast<T>(value));
        };
        switch (type) {
        case dtype::float32:
            return fill(float());
        case dtype::float64:
            return fill(double());
        case dtype::int32:
            return fill(std::int32_t());
        case dtype::int64:
            return fill(std::int64_t());
        case dtype::boolean:
            return fill(bool());
        }
    }
};

/// A node of `b`: a 1-D `type` tensor of `value`s, as long as the single element of `count` (an
/// int32 or int64 node of b) says when it runs, at most `max_count` (else shape_error). Only at
/// a function's top level (see builder::add_host_function).
inline graph::node_id add_fill(builder& b, dtype type, double value, graph::node_id count,
                               std::int64_t max_count = std::numeric_limits<std::int64_t>::max()) {
    const dtype count_type = b.at(count).type;
    if (count_type != dtype::int32 && count_type != dtype::int64)
        throw tracing_error("xtrace: a fill's length must be an int32 or int64 tensor");
    const graph::node_id inputs[1] = {count};
    return b.add_host_function(
        type, {-1}, inputs, std::make_shared<const fill_call>(type, value, count_type, max_count));
}

/// The fill callback of host_function node `n`, or null when it runs a user's callback.
inline const fill_call* as_fill(const graph::node& n) {
    return n.op == op_kind::host_function ? dynamic_cast<const fill_call*>(n.host.get()) : nullptr;
}

} // namespace xtrace::trace

#endif
