#ifndef XTRACE_TRACE_BUILDER_HPP
#define XTRACE_TRACE_BUILDER_HPP

// Records a trace: every symbolic operation adds its node here as the lambda runs, with its shape
// inferred (shape errors surface at the line that caused them); common subexpressions are merged
// when the trace ends.

#include "../config.hpp"
#include "../core/error.hpp"
#include "../graph/graph.hpp"
#include "../graph/shape_inference.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace xtrace::trace {

class builder;

/// A user's gradient for a value (xtrace::custom_gradient): records, in trace `b`, the
/// gradients of `inputs` given the value's output gradient `dy` and the value `y`.
struct gradient_rule {
    virtual ~gradient_rule() = default;
    virtual std::vector<graph::node_id> gradients(builder& b, graph::node_id dy,
                                                  std::span<const graph::node_id> inputs,
                                                  graph::node_id y) const = 0;
};

/// The graph under construction while a lambda is traced (or, with a parent, while a cond
/// branch or while_loop body is traced inside it).
class builder : public std::enable_shared_from_this<builder> {
public:
    builder() = default;
    /// A builder for a subgraph of `parent`, which must outlive it.
    explicit builder(builder* parent)
        : parent_(parent), variables_allowed_(parent->variables_allowed_) {}

    /// Tags a builder that records no function: what variable reads outside any trace build on
    /// (their values are computed when needed; see eager/evaluate.hpp).
    struct deferred_t {};
    explicit builder(deferred_t) : deferred_(true) {}

    /// True for a builder of values outside any trace.
    bool deferred() const noexcept { return deferred_; }

    /// Whether variables may be created while this trace runs (a function's first trace only).
    void allow_variables(bool allowed) noexcept { variables_allowed_ = allowed; }

    /// Throws tracing_error when a variable is created in a trace that must not create one.
    void check_variable_creation(std::string_view what) const;

    /// The enclosing trace, or nullptr.
    builder* parent() const noexcept { return parent_; }

    /// True when `b` is this trace or encloses it.
    bool within(const builder* b) const noexcept {
        for (const builder* t = this; t; t = t->parent_)
            if (t == b)
                return true;
        return false;
    }

    /// Node `id` of trace `owner` as a node of this trace: itself if `owner` is this trace; if
    /// `owner` encloses it, an arg that captures the value (through every trace in between).
    graph::node_id import(const builder* owner, graph::node_id id);

    /// The enclosing trace's nodes this subgraph captured, in the order of their args.
    const std::vector<graph::node_id>& captures() const noexcept { return captures_; }

    /// The node of tensor argument `index`.
    graph::node_id add_arg(std::int64_t index, dtype type, shape_t shape);

    /// A rank-0 constant; floating dtypes read `f`, the others `i`.
    graph::node_id add_constant(dtype type, double f, std::int64_t i);

    /// An elementwise op over `inputs`, with result dtype `type`; throws shape_error.
    graph::node_id add_elementwise(op_kind op, dtype type, std::span<const graph::node_id> inputs,
                                   const graph::kernel_set* kernels = nullptr);

    /// A reduction of `input` over `axes` (any order, negative allowed); throws shape_error.
    graph::node_id add_reduction(op_kind op, dtype type, graph::node_id input,
                                 std::vector<std::int64_t> axes, bool keep_dims,
                                 const graph::reduce_kernels* kernel);

    /// A shape op of `input` with attributes `attrs` (see graph::normalize_shape_op).
    graph::node_id add_shape_op(op_kind op, dtype type, graph::node_id input,
                                std::vector<std::int64_t> attrs);

    /// sum_to(g, like): g summed over the dims it has beyond, or larger than, like's (with
    /// `kernel`, a sum's); the result has like's shape. Throws shape_error.
    graph::node_id add_sum_to(dtype type, graph::node_id g, graph::node_id like,
                              const graph::reduce_kernels* kernel);

    /// `value`, checked to have a shape that fits `required` (-1: any dim) both now (where its
    /// dims are known) and when planned: a signature_error that starts with `who` otherwise.
    /// The result has `required`'s known dims (`value` itself when it already has them). What an
    /// inlined function's input_signature adds.
    graph::node_id add_ensure_shape(graph::node_id value, const shape_t& required, std::string who,
                                    const graph::kernel_set* identity);

    /// `value`, whose gradient is not its own but `rule`'s with respect to `inputs`
    /// (xtrace::custom_gradient); a node of its own, never merged with another.
    graph::node_id add_custom_gradient(graph::node_id value, std::vector<graph::node_id> inputs,
                                       std::shared_ptr<const gradient_rule> rule,
                                       const graph::kernel_set* identity);

    /// The custom gradient of node `id` and the inputs it is taken for, if it has one.
    const std::pair<std::shared_ptr<const gradient_rule>, std::vector<graph::node_id>>*
    custom_gradient(graph::node_id id) const;

    /// matmul(a, b); throws shape_error.
    graph::node_id add_matmul(dtype type, graph::node_id a, graph::node_id b,
                              graph::matmul_fn kernel);

    /// A print of `inputs` labelled `label`: never merged with another, never pruned, run in
    /// program order.
    graph::node_id add_print(std::string label, std::span<const graph::node_id> inputs,
                             std::vector<graph::print_fn> printers);

    /// A host callback over `inputs` producing a tensor of `type` and `shape` (at the top level
    /// dims may be unknown: the callback tells them); a side effect like print.
    graph::node_id add_host_function(dtype type, shape_t shape,
                                     std::span<const graph::node_id> inputs,
                                     std::shared_ptr<const graph::host_call> call);

    /// A cond or while_loop node over `inputs` running `bodies`, with one result per output
    /// of its last body (types and trace-time shapes `results`); returns the result nodes.
    /// Effects inside the bodies make it an effect here.
    /// A while_loop's `limit` bounds its iterations (-1: none).
    std::vector<graph::node_id> add_control(op_kind op, std::vector<graph::node_id> inputs,
                                            std::vector<std::shared_ptr<const graph::graph>> bodies,
                                            std::span<const graph::node> results,
                                            std::int64_t limit = -1);

    /// A scan node over `inputs` (`carried` initial states, then `scanned` tensors sliced along
    /// their leading dim, then captures) running `body`, with one result per body output:
    /// the final states, then the stacked per-step outputs (types and trace-time shapes
    /// `results`); `reverse` runs the steps from the last slice to the first (a gradient's
    /// backward scan). Returns the result nodes.
    std::vector<graph::node_id> add_scan(std::vector<graph::node_id> inputs,
                                         std::shared_ptr<const graph::graph> body,
                                         std::span<const graph::node> results, std::int64_t carried,
                                         std::int64_t scanned, bool reverse = false);

    /// The value of variable `var` when this point of the program runs.
    graph::node_id add_read_variable(std::shared_ptr<graph::variable_storage> var);

    /// Writes `value` (its shape must be the variable's) to variable `var`; with `update`,
    /// writes update(var, value) instead, reading and writing under one lock (assign_add).
    graph::node_id add_assign_variable(std::shared_ptr<graph::variable_storage> var,
                                       graph::node_id value,
                                       const graph::kernel_set* update = nullptr,
                                       bool initializer = false);

    /// Records the nodes of finished graph `g` that its outputs need (not its other effects)
    /// into this trace, g's args standing for `args` (one per g.args entry, in order); returns
    /// the nodes standing for g's outputs. What differentiating a cond branch starts from.
    std::vector<graph::node_id> replay(const graph::graph& g, std::span<const graph::node_id> args);

    /// Decides, for each node replayed (its inputs already this trace's), to stand a node of this
    /// trace for it (returned), or to record it as it has been left (nullopt).
    using replay_hook = std::function<std::optional<graph::node_id>(graph::node&)>;

    /// replay, with `hook` deciding each node: what turns a variable's reads into an arg.
    std::vector<graph::node_id> replay(const graph::graph& g, std::span<const graph::node_id> args,
                                       const replay_hook& hook);

    /// The node `id` as recorded so far.
    const graph::node& at(graph::node_id id) const { return g_.nodes[id]; }

    /// Nodes recorded so far.
    graph::node_id size() const noexcept { return static_cast<graph::node_id>(g_.nodes.size()); }

    /// Marks `id` as the function's next output.
    void add_output(graph::node_id id);

    /// True once the trace is over; symbolic tensors that escaped it can no longer be used.
    bool finished() const noexcept { return finished_; }

    /// Throws tracing_error when the trace is over (a symbolic tensor kept past its trace).
    void check_open(std::string_view what) const;

    /// The same for node `id` used by `what`: the message names its dtype and shape.
    void check_open(std::string_view what, graph::node_id id) const;

    /// Throws tracing_error naming `op` when one of `inputs` has unknown rank (an op that needs
    /// ranks while tracing: matmul, sum_to).
    void refuse_unknown_rank(std::string_view op,
                             std::initializer_list<graph::node_id> inputs) const;

    /// Names the traced function in messages ("xtrace::function" when unnamed).
    void set_function_name(std::string name) { function_name_ = std::move(name); }

    /// A graph computing node `id` alone, from this builder's nodes so far (it stays open).
    graph::graph extract(graph::node_id id) const;

    /// Ends the trace and hands over the graph, without the nodes no output needs.
    graph::graph finish();

    /// Ends a trace that failed: its symbolic tensors can no longer be used.
    void abandon() noexcept { finished_ = true; }

private:
    // How a node joins the graph.
    enum class recording : std::uint8_t {
        merged, // a pure op: merged with an equal one when the trace ends (merge_equal)
        kept,   // always a node of its own (args, control nodes and their results)
        effect  // kept, and run in program order with the other effects (print, assign...)
    };

    // A node of `op` and dtype `type` over `inputs`, its other fields left to the caller.
    static graph::node make(op_kind op, dtype type, std::span<const graph::node_id> inputs = {});

    // Every add_* ends here: the node recorded as `how` says; returns its id.
    graph::node_id record(graph::node n, recording how);

    // A control node (cond, while_loop, scan) and its result nodes.
    std::vector<graph::node_id> record_control(graph::node n, std::span<const graph::node> results);

    graph::node_id push(graph::node n);

    // g with each mergeable node equal to an earlier one replaced by it where it is read.
    static graph::graph merge_equal(graph::graph g, const std::vector<bool>& mergeable);

    static graph::graph prune(graph::graph g);

    graph::graph g_; // kept after finish(), so that messages can describe escaped tensors
    std::string function_name_;
    std::vector<bool> mergeable_; // per node: recorded as merged (what finish() may merge)
    bool finished_ = false;
    builder* parent_ = nullptr;
    bool variables_allowed_ = true;
    bool deferred_ = false;
    std::vector<graph::node_id> captures_;
    std::unordered_map<graph::node_id,
                       std::pair<std::shared_ptr<const gradient_rule>, std::vector<graph::node_id>>>
        custom_gradients_;
    std::unordered_map<graph::node_id, graph::node_id> capture_of_;
};

/// A new trace; with `parent`, a subgraph of it (which must outlive it).
XTRACE_DECL std::shared_ptr<builder> new_trace(builder* parent = nullptr);

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

#if XTRACE_DEFINE_RUNTIME
#include "impl/builder.ipp"
#endif

#endif
