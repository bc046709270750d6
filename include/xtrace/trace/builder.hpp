#ifndef XTRACE_TRACE_BUILDER_HPP
#define XTRACE_TRACE_BUILDER_HPP

// Records a trace: every symbolic operation adds its node here as the lambda runs, with its shape
// inferred (shape errors surface at the line that caused them) and common subexpressions merged.

#include "../core/error.hpp"
#include "../graph/graph.hpp"
#include "../graph/shape_inference.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace xtrace::trace {

/// The graph under construction while a lambda is traced.
class builder {
public:
    /// The node of tensor argument `index`.
    graph::node_id add_arg(std::int64_t index, dtype type, shape_t shape) {
        graph::node n;
        n.op = op_kind::arg;
        n.type = type;
        n.shape = std::move(shape);
        n.index = index;
        const auto id = push(std::move(n));
        g_.args.push_back(id);
        return id;
    }

    /// A rank-0 constant; floating dtypes read `f`, the others `i`.
    graph::node_id add_constant(dtype type, double f, std::int64_t i) {
        graph::node n;
        n.op = op_kind::constant;
        n.type = type;
        n.fvalue = is_floating(type) ? f : 0.0;
        n.ivalue = is_floating(type) ? 0 : i;
        return intern(std::move(n));
    }

    /// An elementwise op over `inputs`, with result dtype `type`; throws shape_error.
    graph::node_id add_elementwise(op_kind op, dtype type, std::span<const graph::node_id> inputs,
                                   const graph::kernel_set* kernels = nullptr) {
        check_open(info(op).name);
        std::array<const shape_t*, 3> shapes{};
        for (std::size_t i = 0; i < inputs.size(); ++i)
            shapes[i] = &g_.nodes[inputs[i]].shape;
        graph::node n;
        n.op = op;
        n.type = type;
        n.inputs.assign(inputs.begin(), inputs.end());
        n.kernels = kernels;
        n.shape = graph::broadcast_operands(op, std::span(shapes.data(), inputs.size()));
        return intern(std::move(n));
    }

    /// A reduction of `input` over `axes` (any order, negative allowed); throws shape_error.
    graph::node_id add_reduction(op_kind op, dtype type, graph::node_id input,
                                 std::vector<std::int64_t> axes, bool keep_dims,
                                 graph::reduce_fn kernel) {
        check_open(info(op).name);
        graph::node n;
        n.op = op;
        n.type = type;
        n.inputs = {input};
        n.axes = graph::normalize_axes(op, g_.nodes[input].shape, std::move(axes));
        n.keep_dims = keep_dims;
        n.reduce = kernel;
        n.shape = graph::reduce_shape(g_.nodes[input].shape, n.axes, keep_dims);
        return intern(std::move(n));
    }

    /// A shape op of `input` with attributes `attrs` (see graph::normalize_shape_op).
    graph::node_id add_shape_op(op_kind op, dtype type, graph::node_id input,
                                std::vector<std::int64_t> attrs) {
        check_open(info(op).name);
        graph::node n;
        n.op = op;
        n.type = type;
        n.inputs = {input};
        n.axes = graph::normalize_shape_op(op, g_.nodes[input].shape, std::move(attrs));
        n.shape = graph::shape_op_result(op, g_.nodes[input].shape, n.axes);
        return intern(std::move(n));
    }

    /// matmul(a, b); throws shape_error.
    graph::node_id add_matmul(dtype type, graph::node_id a, graph::node_id b,
                              graph::matmul_fn kernel) {
        check_open("matmul");
        graph::node n;
        n.op = op_kind::matmul;
        n.type = type;
        n.inputs = {a, b};
        n.matmul = kernel;
        n.shape = graph::matmul_shape(g_.nodes[a].shape, g_.nodes[b].shape);
        return intern(std::move(n));
    }

    /// A print of `inputs` labelled `label`: never merged with another, never pruned, run in
    /// program order.
    graph::node_id add_print(std::string label, std::span<const graph::node_id> inputs,
                             std::vector<graph::print_fn> printers) {
        check_open("print");
        graph::node n;
        n.op = op_kind::print;
        n.type = dtype::boolean;
        n.inputs.assign(inputs.begin(), inputs.end());
        n.text = std::move(label);
        n.printers = std::move(printers);
        const auto id = push(std::move(n));
        g_.effects.push_back(id);
        return id;
    }

    /// A host callback over `inputs` producing a tensor of `type` and `shape` (fully known); a
    /// side effect like print.
    graph::node_id add_host_function(dtype type, shape_t shape,
                                     std::span<const graph::node_id> inputs,
                                     std::shared_ptr<const graph::host_call> call) {
        check_open("host_function");
        if (!is_fully_known(shape))
            throw tracing_error("xtrace::host_function: the spec's dims must all be known, got " +
                                shape_string(shape));
        graph::node n;
        n.op = op_kind::host_function;
        n.type = type;
        n.shape = std::move(shape);
        n.inputs.assign(inputs.begin(), inputs.end());
        n.host = std::move(call);
        const auto id = push(std::move(n));
        g_.effects.push_back(id);
        return id;
    }

    /// The node `id` as recorded so far.
    const graph::node& at(graph::node_id id) const { return g_.nodes[id]; }

    /// Marks `id` as the function's next output.
    void add_output(graph::node_id id) {
        check_open("return");
        g_.outputs.push_back(id);
    }

    /// True once the trace is over; symbolic tensors that escaped it can no longer be used.
    bool finished() const noexcept { return finished_; }

    /// Throws tracing_error when the trace is over (a symbolic tensor kept past its trace).
    void check_open(std::string_view what) const {
        if (finished_)
            throw tracing_error("xtrace::" + std::string(what) +
                                ": a symbolic tensor was used after its trace ended; symbolic "
                                "tensors live only inside the traced call");
    }

    /// Ends the trace and hands over the graph, without the nodes no output needs.
    graph::graph finish() {
        finished_ = true;
        return prune(std::move(g_));
    }

private:
    graph::node_id push(graph::node n) {
        g_.nodes.push_back(std::move(n));
        return static_cast<graph::node_id>(g_.nodes.size() - 1);
    }

    // Hash-consing: an op over the same operands is recorded once.
    graph::node_id intern(graph::node n) {
        std::string key;
        key.reserve(32 + 4 * n.inputs.size());
        auto put = [&](const auto& v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
        put(n.op);
        put(n.type);
        put(n.fvalue);
        put(n.ivalue);
        for (auto in : n.inputs)
            put(in);
        put(n.keep_dims);
        for (auto a : n.axes)
            put(a);
        auto [it, inserted] = cse_.try_emplace(std::move(key), 0);
        if (inserted)
            it->second = push(std::move(n));
        return it->second;
    }

    static graph::graph prune(graph::graph g) {
        std::vector<char> live(g.nodes.size(), 0);
        for (auto id : g.args)
            live[id] = 1;
        for (auto id : g.outputs)
            live[id] = 1;
        for (auto id : g.effects)
            live[id] = 1;
        for (std::size_t i = g.nodes.size(); i-- > 0;)
            if (live[i])
                for (auto in : g.nodes[i].inputs)
                    live[in] = 1;
        std::vector<graph::node_id> remap(g.nodes.size());
        graph::graph out;
        for (std::size_t i = 0; i < g.nodes.size(); ++i) {
            if (!live[i])
                continue;
            remap[i] = static_cast<graph::node_id>(out.nodes.size());
            out.nodes.push_back(std::move(g.nodes[i]));
            for (auto& in : out.nodes.back().inputs)
                in = remap[in];
        }
        for (auto id : g.args)
            out.args.push_back(remap[id]);
        std::sort(out.args.begin(), out.args.end(),
                  [&](auto a, auto b) { return out.nodes[a].index < out.nodes[b].index; });
        for (auto id : g.outputs)
            out.outputs.push_back(remap[id]);
        for (auto id : g.effects)
            out.effects.push_back(remap[id]);
        return out;
    }

    graph::graph g_;
    std::unordered_map<std::string, graph::node_id> cse_;
    bool finished_ = false;
};

namespace detail {
inline builder*& current_slot() noexcept {
    thread_local builder* current = nullptr;
    return current;
}
} // namespace detail

/// The trace being recorded on this thread, or nullptr.
inline builder* current() noexcept {
    return detail::current_slot();
}

/// Makes `b` the current trace for its lifetime (traces nest: the previous one comes back).
class scope {
public:
    explicit scope(builder& b) noexcept : previous_(detail::current_slot()) {
        detail::current_slot() = &b;
    }
    scope(const scope&) = delete;
    scope& operator=(const scope&) = delete;
    ~scope() { detail::current_slot() = previous_; }

private:
    builder* previous_;
};

} // namespace xtrace::trace

#endif
