#ifndef XTRACE_TRACE_BUILDER_HPP
#define XTRACE_TRACE_BUILDER_HPP

// Records a trace: every symbolic operation adds its node here as the lambda runs, with its shape
// inferred (shape errors surface at the line that caused them) and common subexpressions merged.

#include "../config.hpp"
#include "../core/error.hpp"
#include "../graph/graph.hpp"
#include "../graph/shape_inference.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace xtrace::trace {

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

    /// matmul(a, b); throws shape_error.
    graph::node_id add_matmul(dtype type, graph::node_id a, graph::node_id b,
                              graph::matmul_fn kernel);

    /// A print of `inputs` labelled `label`: never merged with another, never pruned, run in
    /// program order.
    graph::node_id add_print(std::string label, std::span<const graph::node_id> inputs,
                             std::vector<graph::print_fn> printers);

    /// A host callback over `inputs` producing a tensor of `type` and `shape` (fully known); a
    /// side effect like print.
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

    /// The value of variable `var` when this point of the program runs.
    graph::node_id add_read_variable(std::shared_ptr<graph::variable_storage> var);

    /// Writes `value` (its shape must be the variable's) to variable `var`; with `update`,
    /// writes update(var, value) instead, reading and writing under one lock (assign_add).
    graph::node_id add_assign_variable(std::shared_ptr<graph::variable_storage> var,
                                       graph::node_id value,
                                       const graph::kernel_set* update = nullptr,
                                       bool initializer = false);

    /// The node `id` as recorded so far.
    const graph::node& at(graph::node_id id) const { return g_.nodes[id]; }

    /// Marks `id` as the function's next output.
    void add_output(graph::node_id id);

    /// True once the trace is over; symbolic tensors that escaped it can no longer be used.
    bool finished() const noexcept { return finished_; }

    /// Throws tracing_error when the trace is over (a symbolic tensor kept past its trace).
    void check_open(std::string_view what) const;

    /// The same for node `id` used by `what`: the message names its dtype and shape.
    void check_open(std::string_view what, graph::node_id id) const;

    /// Names the traced function in messages ("xtrace::function" when unnamed).
    void set_function_name(std::string name) { function_name_ = std::move(name); }

    /// A graph computing node `id` alone, from this builder's nodes so far (it stays open).
    graph::graph extract(graph::node_id id) const;

    /// Ends the trace and hands over the graph, without the nodes no output needs.
    graph::graph finish();

    /// Ends a trace that failed: its symbolic tensors can no longer be used.
    void abandon() noexcept { finished_ = true; }

private:
    graph::node_id push(graph::node n);

    // Hash-consing: an op over the same operands is recorded once.
    graph::node_id intern(graph::node n);

    static graph::graph prune(graph::graph g);

    graph::graph g_; // kept after finish(), so that messages can describe escaped tensors
    std::string function_name_;
    std::unordered_map<std::string, graph::node_id> cse_;
    bool finished_ = false;
    builder* parent_ = nullptr;
    bool variables_allowed_ = true;
    bool deferred_ = false;
    std::vector<graph::node_id> captures_;
    std::unordered_map<graph::node_id, graph::node_id> capture_of_;
};

/// A new trace; with `parent`, a subgraph of it (which must outlive it).
XTRACE_DECL std::shared_ptr<builder> new_trace(builder* parent = nullptr);

#if XTRACE_DEFINE_RUNTIME

XTRACE_DECL std::shared_ptr<builder> new_trace(builder* parent) {
    return parent ? std::make_shared<builder>(parent) : std::make_shared<builder>();
}

XTRACE_DECL void builder::check_variable_creation(std::string_view what) const {
    if (!variables_allowed_)
        throw tracing_error(
            "xtrace::variable: " + std::string(what) +
            " was created on a later trace of a function; variables may only be created on "
            "the first trace, because every later trace would make a new one. Create it "
            "once, outside the function, or guard its creation so that later traces reuse "
            "it (e.g. `if (!w) w.emplace(...)` with a std::optional member)");
}

XTRACE_DECL graph::node_id builder::import(const builder* owner, graph::node_id id) {
    if (owner == this)
        return id;
    owner->check_open({}, id);
    if (!parent_ || !within(owner))
        throw tracing_error("xtrace: operands come from different traces; a symbolic tensor "
                            "was captured from another traced function");
    const graph::node_id outer = parent_->import(owner, id);
    if (auto it = capture_of_.find(outer); it != capture_of_.end())
        return it->second;
    const graph::node& src = parent_->at(outer);
    const auto local = add_arg(static_cast<std::int64_t>(g_.args.size()), src.type, src.shape);
    captures_.push_back(outer);
    capture_of_.emplace(outer, local);
    return local;
}

XTRACE_DECL graph::node_id builder::add_arg(std::int64_t index, dtype type, shape_t shape) {
    graph::node n;
    n.op = op_kind::arg;
    n.type = type;
    n.shape = std::move(shape);
    n.index = index;
    const auto id = push(std::move(n));
    g_.args.push_back(id);
    return id;
}

XTRACE_DECL graph::node_id builder::add_constant(dtype type, double f, std::int64_t i) {
    graph::node n;
    n.op = op_kind::constant;
    n.type = type;
    n.fvalue = is_floating(type) ? f : 0.0;
    n.ivalue = is_floating(type) ? 0 : i;
    return intern(std::move(n));
}

XTRACE_DECL graph::node_id builder::add_elementwise(op_kind op, dtype type,
                                                    std::span<const graph::node_id> inputs,
                                                    const graph::kernel_set* kernels) {
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

XTRACE_DECL graph::node_id builder::add_reduction(op_kind op, dtype type, graph::node_id input,
                                                  std::vector<std::int64_t> axes, bool keep_dims,
                                                  const graph::reduce_kernels* kernel) {
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

XTRACE_DECL graph::node_id builder::add_shape_op(op_kind op, dtype type, graph::node_id input,
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

XTRACE_DECL graph::node_id builder::add_matmul(dtype type, graph::node_id a, graph::node_id b,
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

XTRACE_DECL graph::node_id builder::add_print(std::string label,
                                              std::span<const graph::node_id> inputs,
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

XTRACE_DECL graph::node_id
builder::add_host_function(dtype type, shape_t shape, std::span<const graph::node_id> inputs,
                           std::shared_ptr<const graph::host_call> call) {
    check_open("host_function");
    if (!is_fully_known(shape))
        throw detail::needs_known_dims(
            "xtrace::host_function: the spec's dims must all be known, got " + shape_string(shape));
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

XTRACE_DECL std::vector<graph::node_id>
builder::add_control(op_kind op, std::vector<graph::node_id> inputs,
                     std::vector<std::shared_ptr<const graph::graph>> bodies,
                     std::span<const graph::node> results, std::int64_t limit) {
    check_open(info(op).name);
    graph::node n;
    n.op = op;
    n.type = dtype::boolean;
    n.inputs = std::move(inputs);
    n.ivalue = limit;
    const bool effect = std::any_of(bodies.begin(), bodies.end(),
                                    [](const auto& b) { return !b->effects.empty(); });
    n.bodies = std::move(bodies);
    const auto id = push(std::move(n));
    if (effect)
        g_.effects.push_back(id);
    std::vector<graph::node_id> out;
    for (std::size_t k = 0; k < results.size(); ++k) {
        graph::node r;
        r.op = op_kind::result;
        r.type = results[k].type;
        r.shape = results[k].shape;
        r.inputs = {id};
        r.index = static_cast<std::int64_t>(k);
        out.push_back(push(std::move(r)));
    }
    return out;
}

XTRACE_DECL graph::node_id
builder::add_read_variable(std::shared_ptr<graph::variable_storage> var) {
    check_open("variable::read");
    graph::node n;
    n.op = op_kind::read_variable;
    n.type = var->type;
    n.shape = var->shape;
    n.var = std::move(var);
    const auto id = push(std::move(n));
    g_.effects.push_back(id); // ordered with the assignments around it
    return id;
}

XTRACE_DECL graph::node_id
builder::add_assign_variable(std::shared_ptr<graph::variable_storage> var, graph::node_id value,
                             const graph::kernel_set* update, bool initializer) {
    check_open("variable::assign");
    const shape_t& s = g_.nodes[value].shape;
    bool fits = s.size() == var->shape.size();
    for (std::size_t d = 0; fits && d < s.size(); ++d)
        fits = s[d] < 0 || s[d] == var->shape[d];
    if (!fits)
        throw shape_error("xtrace::variable::assign: " + var->describe() + " has shape " +
                          shape_string(var->shape) + ", the value assigned has shape " +
                          shape_string(s));
    graph::node n;
    n.op = op_kind::assign_variable;
    n.type = var->type;
    n.shape = var->shape;
    n.inputs = {value};
    n.var = std::move(var);
    n.kernels = update;
    n.ivalue = initializer ? 1 : 0;
    const auto id = push(std::move(n));
    g_.effects.push_back(id);
    return id;
}

XTRACE_DECL void builder::add_output(graph::node_id id) {
    check_open("return");
    g_.outputs.push_back(id);
}

XTRACE_DECL void builder::check_open(std::string_view what) const {
    check_open(what, static_cast<graph::node_id>(-1));
}

XTRACE_DECL void builder::check_open(std::string_view what, graph::node_id id) const {
    if (!finished_)
        return;
    std::string tensor = "a symbolic tensor";
    if (id < g_.nodes.size())
        tensor += " (" + std::string(dtype_name(g_.nodes[id].type)) +
                  shape_string(g_.nodes[id].shape) + ")";
    const builder* root = this;
    while (root->parent_)
        root = root->parent_;
    const std::string& fn =
        root->function_name_.empty() ? "xtrace::function" : root->function_name_;
    throw tracing_error((what.empty() ? "xtrace" : "xtrace::" + std::string(what)) + ": " + tensor +
                        " traced by " + fn +
                        " was used after its trace ended; symbolic tensors live only inside "
                        "the traced call, or the cond branch or while_loop body, that made them "
                        "(return values from a branch instead of storing them outside it)");
}

XTRACE_DECL graph::graph builder::extract(graph::node_id id) const {
    graph::graph g;
    g.nodes.assign(g_.nodes.begin(), g_.nodes.begin() + id + 1);
    g.outputs = {id};
    return prune(std::move(g));
}

XTRACE_DECL graph::graph builder::finish() {
    finished_ = true;
    return prune(g_);
}

XTRACE_DECL graph::node_id builder::push(graph::node n) {
    g_.nodes.push_back(std::move(n));
    return static_cast<graph::node_id>(g_.nodes.size() - 1);
}

XTRACE_DECL graph::node_id builder::intern(graph::node n) {
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

XTRACE_DECL graph::graph builder::prune(graph::graph g) {
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

#endif

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
