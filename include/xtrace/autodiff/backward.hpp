#ifndef XTRACE_AUTODIFF_BACKWARD_HPP
#define XTRACE_AUTODIFF_BACKWARD_HPP

// Reverse-mode differentiation of a trace: from a node's adjoint, walk the recorded nodes
// backwards and record, into the same trace, each one's vector-Jacobian product. Gradients are
// ordinary nodes, so they fuse, plan and run like the forward pass, and can be differentiated
// again. Rules follow TensorFlow's (ties, zeros and infinities included); see the README.

#include "../config.hpp"
#include "../core/error.hpp"
#include "../core/op.hpp"
#include "../graph/graph.hpp"
#include "../trace/builder.hpp"
#include "../trace/fill.hpp"

#if !defined(XTRACE_SEPARATE_COMPILATION) || XTRACE_DEFINE_RUNTIME
#include "../interp/kernel_choice.hpp"
#include "../interp/kernels.hpp"
#endif

#include <algorithm>
#include <memory>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace xtrace::autodiff {

/// What a gradient is taken with respect to: a node of the trace, or every read of a variable.
struct target {
    graph::node_id node = 0;                      ///< when `var` is null
    std::shared_ptr<graph::variable_storage> var; ///< a variable: the sum over its reads
};

/// Records in `b` the gradients of node `y` (seeded with node `seed`, of y's shape and dtype)
/// with respect to each target, in order; a target y does not depend on gets zeros of its shape.
/// Throws tracing_error for an op on the way that has no gradient rule yet.
XTRACE_DECL std::vector<graph::node_id>
backward(trace::builder& b, graph::node_id y, graph::node_id seed, std::span<const target> targets);

namespace detail {

#if !defined(XTRACE_SEPARATE_COMPILATION) || XTRACE_DEFINE_RUNTIME

// Records new nodes in a trace, with the kernels the runtime has for them. A template, so that
// only a program that takes gradients compiles every op's kernels.
template <class Tag = void>
class recorder {
public:
    explicit recorder(trace::builder& b) : b_(b) {}

    trace::builder& builder() const noexcept { return b_; }

    const graph::node& at(graph::node_id id) const { return b_.at(id); }
    graph::node_id size() const { return b_.size(); }
    dtype type(graph::node_id id) const { return b_.at(id).type; }
    shape_t shape(graph::node_id id) const { return b_.at(id).shape; }

    graph::node_id constant(dtype t, double v) {
        return b_.add_constant(t, v, static_cast<std::int64_t>(v));
    }
    graph::node_id op(op_kind k, std::initializer_list<graph::node_id> in) {
        const std::vector<graph::node_id> ids(in);
        const dtype operand = type(ids[k == op_kind::where ? 1 : 0]);
        const dtype result = info(k).result == op_result::boolean ? dtype::boolean : operand;
        return b_.add_elementwise(k, result, ids, interp::kernels_for(k, operand, result));
    }
    graph::node_id cast(graph::node_id x, dtype to) {
        return b_.add_elementwise(op_kind::cast, to, std::span(&x, 1),
                                  interp::kernels_for(op_kind::cast, type(x), to));
    }
    graph::node_id reduce(op_kind k, graph::node_id x, std::vector<std::int64_t> axes, bool keep) {
        return b_.add_reduction(k, type(x), x, std::move(axes), keep, reduce_kernels(k, type(x)));
    }
    graph::node_id shape_op(op_kind k, graph::node_id x, std::vector<std::int64_t> attrs) {
        return b_.add_shape_op(k, type(x), x, std::move(attrs));
    }
    graph::node_id matmul(graph::node_id a, graph::node_id c) {
        return b_.add_matmul(type(a), a, c, interp::matmul_kernel_of_type<Tag>(type(a)));
    }
    graph::node_id sum_to(graph::node_id g, graph::node_id like) {
        return b_.add_sum_to(type(g), g, like, reduce_kernels(op_kind::sum, type(g)));
    }
    // `value` (a rank-0 constant or any node) broadcast to `like`'s shape, in `value`'s dtype.
    graph::node_id broadcast_like(graph::node_id value, graph::node_id like) {
        graph::node_id same = like;
        if (type(like) != type(value))
            same = cast(like, type(value));
        return op(op_kind::where, {constant(dtype::boolean, 1), value, same});
    }
    graph::node_id zeros_like(graph::node_id like) {
        return broadcast_like(constant(type(like), 0), like);
    }

private:
    static const graph::reduce_kernels* reduce_kernels(op_kind k, dtype t) {
        return interp::reduction_kernels_of_kind<Tag>(k, t);
    }

    trace::builder& b_;
};

// One backward pass: adjoints per node, accumulated, then each node's rule.
template <class Tag = void>
class pass {
public:
    explicit pass(trace::builder& b) : r_(b) {}

    /// Gradients stop at node targets instead of flowing on to what computed them (the
    /// targets are then treated as independent inputs: a loop body's recomputed state).
    pass& stop_at_targets() {
        stop_at_targets_ = true;
        return *this;
    }

    std::vector<graph::node_id> run(graph::node_id y, graph::node_id seed,
                                    std::span<const target> targets) {
        const std::pair<graph::node_id, graph::node_id> one{y, seed};
        return run(std::span(&one, 1), targets);
    }

    /// The same from several (node, seed) pairs: the gradients of the sum of their products.
    std::vector<graph::node_id>
    run(std::span<const std::pair<graph::node_id, graph::node_id>> seeds,
        std::span<const target> targets) {
        graph::node_id y = 0;
        for (const auto& s : seeds)
            y = std::max(y, s.first);
        find_relevant(y, targets);
        for (const target& t : targets)
            if (!t.var)
                refuse_unknown_rank(t.node, "a target");
        targets_.assign(targets.begin(), targets.end());
        adjoint_.assign(y + 1, std::nullopt);
        for (const auto& [node, seed] : seeds)
            adjoint_[node] = adjoint_[node] ? r_.op(op_kind::add, {*adjoint_[node], seed}) : seed;
        for (graph::node_id id = y + 1; id-- > 0;)
            if (adjoint_[id] && !(stop_at_targets_ && is_target(id)))
                step(id, *adjoint_[id]);
        std::vector<graph::node_id> out;
        for (const target& t : targets)
            out.push_back(t.var ? of_variable(t.var, y) : of_node(t.node));
        return out;
    }

private:
    using T_id = graph::node_id;

    // relevant_[id]: a target depends on node id... the other way round: node id depends on a
    // target (or is one), so a gradient flowing into it can reach a target.
    void find_relevant(T_id y, std::span<const target> targets) {
        relevant_.assign(y + 1, false);
        for (const target& t : targets)
            if (!t.var && t.node <= y)
                relevant_[t.node] = true;
        for (T_id id = 0; id <= y; ++id) {
            const graph::node& n = r_.at(id);
            for (const target& t : targets)
                if (t.var && is_read_of(n, t.var))
                    relevant_[id] = true;
            // No gradient flows through a stop_gradient or into a bool or integer value (a
            // comparison, a cast to int): what is computed from them does not depend on a
            // target for gradients, as on an eager tape.
            const bool passes =
                n.op != op_kind::stop_gradient && (is_control(n.op) || differentiable(n.type));
            for (T_id in : n.inputs)
                if (relevant_[in] && passes)
                    relevant_[id] = true;
            if (n.custom_gradient) // its rule's inputs, whatever its value was computed from
                if (const auto* found = r_.builder().custom_gradient(id))
                    for (T_id in : found->second)
                        if (in <= y && relevant_[in])
                            relevant_[id] = true;
            for (const auto& body : n.bodies) // a target variable read inside control flow
                for (const target& t : targets)
                    if (t.var && reads(*body, t.var))
                        relevant_[id] = true;
        }
    }

    static bool differentiable(dtype t) { return is_floating(t); }

    // A cond, while_loop or scan. Its results are read through other nodes, so its own `type`
    // says nothing about whether they are differentiable: it passes relevance whatever it holds.
    static bool is_control(op_kind k) {
        return k == op_kind::cond || k == op_kind::while_loop || k == op_kind::scan;
    }

    // True when arg `position` of subgraph g can pass a gradient to one of g's `live` outputs:
    // along a path of float values that no stop_gradient cuts (a nested control node as
    // passing any input to each of its results). A value that only reaches a body through a
    // stop_gradient, or only reaches outputs no gradient comes back from, gets no gradient from
    // it, as when run eagerly, so nothing is asked of what computed it.
    static bool passes_gradient(const graph::graph& g, std::size_t position,
                                const std::vector<bool>& live) {
        std::vector<bool> from(g.nodes.size(), false);
        for (graph::node_id id = 0; id < g.nodes.size(); ++id) {
            const graph::node& n = g[id];
            if (n.op == op_kind::arg) {
                from[id] =
                    static_cast<std::size_t>(n.arg_position) == position && differentiable(n.type);
                continue;
            }
            if (n.op == op_kind::stop_gradient || (!is_control(n.op) && !differentiable(n.type)))
                continue;
            for (graph::node_id in : n.inputs)
                from[id] = from[id] || from[in];
        }
        for (std::size_t k = 0; k < g.outputs.size(); ++k)
            if (live[k] && from[g.outputs[k]])
                return true;
        return false;
    }

    // The outputs of a loop or scan body that a gradient can come back from: those whose
    // results have one (`seeded`), and each carry (output j, read back as arg j) that passes a
    // gradient to one of them.
    static std::vector<bool> live_outputs(const graph::graph& body, std::size_t carried,
                                          std::vector<bool> seeded) {
        for (bool changed = true; changed;) {
            changed = false;
            for (std::size_t j = 0; j < carried; ++j)
                if (!seeded[j] && passes_gradient(body, j, seeded)) {
                    seeded[j] = true;
                    changed = true;
                }
        }
        return seeded;
    }

    graph::node_id of_node(T_id x) {
        if (x < adjoint_.size() && adjoint_[x])
            return *adjoint_[x];
        return r_.zeros_like(x);
    }

    // A variable's gradient: the sum over its reads up to y.
    graph::node_id of_variable(const std::shared_ptr<graph::variable_storage>& var, T_id y) {
        std::optional<graph::node_id> sum;
        std::optional<graph::node_id> any_read;
        auto count = [&](T_id id) {
            any_read = id;
            if (adjoint_[id])
                sum = sum ? r_.op(op_kind::add, {*sum, *adjoint_[id]}) : *adjoint_[id];
        };
        for (T_id id = 0; id <= y; ++id)
            if (is_read_of(r_.at(id), var))
                count(id);
        for (const auto& [v, read] : captured_reads_) // reads inside control flow, as captures
            if (v == var)
                count(read);
        if (sum)
            return *sum;
        if (any_read)
            return r_.zeros_like(*any_read);
        for (T_id id = 0; id <= y; ++id) // read only where no gradient reached: zeros
            for (const auto& body : r_.at(id).bodies)
                if (reads(*body, var))
                    return r_.zeros_like(r_.builder().add_read_variable(var));
        throw tracing_error("xtrace::gradients: " + var->describe() +
                            " is not read by the traced function, so it has no gradient there; "
                            "read it (variable.read()) where it is used");
    }

    [[noreturn]] static void read_in_control_flow(const graph::variable_storage& var) {
        throw tracing_error("xtrace::gradients: " + var.describe() +
                            " is read inside a cond branch or loop body whose reads were not "
                            "turned into captures; this is a bug in xtrace, please report it");
    }

    // Control node n (at id) as if each read of a target variable in its subgraphs, at any
    // depth, were a capture of one read recorded now: the variable's gradient through n is then
    // that capture's (captured_reads_), and the subgraphs replay without reading it. The read
    // sees the value they saw when nothing assigns the variable from n on; an assignment in n
    // itself is refused as a side effect.
    graph::node capture_target_reads(T_id id, graph::node n) {
        check_replayable(n, false); // before replaying drops what the outputs do not need
        // Every variable the subgraphs read, target or not, must still hold what they read: the
        // backward pass reads it again when it replays them.
        std::vector<std::shared_ptr<graph::variable_storage>> all;
        for (const auto& body : n.bodies)
            storages_read(*body, nullptr, all);
        for (const auto& storage : all)
            for (T_id k = id + 1; k < r_.size(); ++k)
                if (assigns(r_.at(k), storage))
                    throw tracing_error(
                        "xtrace::gradients: " + storage->describe() + " is read inside a " +
                        std::string(info(n.op).name) +
                        " and assigned after it, before the gradient is asked for; the gradient "
                        "through that read needs the value it read: ask for the gradient before "
                        "assigning the variable");
        for (const target& t : targets_) {
            if (!t.var)
                continue;
            std::vector<std::shared_ptr<graph::variable_storage>> storages;
            for (const auto& body : n.bodies)
                storages_read(*body, t.var, storages);
            for (const auto& storage : storages) {
                const T_id read = r_.builder().add_read_variable(storage);
                relevant_.resize(read + 1, false);
                relevant_[read] = true;
                adjoint_.resize(read + 1);
                captured_reads_.emplace_back(t.var, read);
                n.inputs.push_back(read);
                for (auto& body : n.bodies)
                    body = reads_as_arg(r_.builder(), *body, storage, n.inputs.size() - 1);
            }
        }
        return n;
    }

    // The storages, `var` or copies of it (any variable when `var` is null), that graph g or its
    // subgraphs read, added to `out`.
    static void storages_read(const graph::graph& g,
                              const std::shared_ptr<graph::variable_storage>& var,
                              std::vector<std::shared_ptr<graph::variable_storage>>& out) {
        for (const graph::node& n : g.nodes) {
            const bool read = var ? is_read_of(n, var) : n.op == op_kind::read_variable;
            if (read && std::find(out.begin(), out.end(), n.var) == out.end())
                out.push_back(n.var);
            for (const auto& body : n.bodies)
                storages_read(*body, var, out);
        }
    }

    // True when node n, or a subgraph of it, assigns `var`.
    static bool assigns(const graph::node& n, const std::shared_ptr<graph::variable_storage>& var) {
        if (n.op == op_kind::assign_variable && n.var == var)
            return true;
        for (const auto& body : n.bodies)
            for (const graph::node& m : body->nodes)
                if (assigns(m, var))
                    return true;
        return false;
    }

    // Subgraph g of a control node (a subgraph of `parent`'s trace) with every read of `var`, at
    // any depth, replaced by an arg at `position` of the node's inputs; a control node inside
    // that reads it gets the arg as a capture of its own.
    static std::shared_ptr<const graph::graph>
    reads_as_arg(trace::builder& parent, const graph::graph& g,
                 const std::shared_ptr<graph::variable_storage>& var, std::size_t position) {
        auto child = std::make_shared<trace::builder>(&parent);
        std::vector<T_id> args;
        for (auto a : g.args)
            args.push_back(child->add_arg(g[a].arg_position, g[a].type, g[a].shape));
        const T_id value =
            child->add_arg(static_cast<std::int64_t>(position), var->type, var->shape);
        const auto outputs =
            child->replay(g, args, [&](graph::node& n) -> std::optional<graph::node_id> {
                if (n.op == op_kind::read_variable && n.var == var)
                    return value;
                bool inside = false;
                for (const auto& body : n.bodies)
                    inside = inside || reads_storage(*body, var);
                if (inside) {
                    n.inputs.push_back(value);
                    for (auto& body : n.bodies)
                        body = reads_as_arg(*child, *body, var, n.inputs.size() - 1);
                }
                return std::nullopt;
            });
        return finish(*child, outputs);
    }

    // True when graph g, or a subgraph of it, reads storage `var` itself.
    static bool reads_storage(const graph::graph& g,
                              const std::shared_ptr<graph::variable_storage>& var) {
        for (const graph::node& n : g.nodes) {
            if (n.op == op_kind::read_variable && n.var == var)
                return true;
            for (const auto& body : n.bodies)
                if (reads_storage(*body, var))
                    return true;
        }
        return false;
    }

    // Throws unless the subgraphs of control node n can be differentiated by replaying them:
    // no side effects (the backward pass would run them again), no custom gradients (their
    // rules stay with the trace that recorded them), and (with `target_reads`) no read of a
    // target variable (capture_target_reads turns those into captures first).
    void check_replayable(const graph::node& n, bool target_reads = true) const {
        for (const auto& body : n.bodies) {
            for (auto e : body->effects)
                if (!only_reads((*body)[e]))
                    throw tracing_error("xtrace::gradients: a " + std::string(info(n.op).name) +
                                        " with side effects (" +
                                        std::string(info((*body)[e].op).name) +
                                        ") in its subgraphs cannot be differentiated yet: its "
                                        "backward pass would run them again");
            check_no_custom_gradient(*body);
            if (target_reads)
                for (const target& t : targets_)
                    if (t.var && reads(*body, t.var))
                        read_in_control_flow(*t.var);
        }
    }

    // True when node n is a variable read, or a control node whose only effects, at any depth,
    // are reads: nothing a replay would run twice.
    static bool only_reads(const graph::node& n) {
        if (n.op == op_kind::read_variable)
            return true;
        if (n.bodies.empty())
            return false;
        for (const auto& body : n.bodies)
            for (auto e : body->effects)
                if (!only_reads((*body)[e]))
                    return false;
        return true;
    }

    static void check_no_custom_gradient(const graph::graph& g) {
        for (const graph::node& n : g.nodes) {
            if (n.custom_gradient)
                throw tracing_error("xtrace::gradients: a custom_gradient inside a cond branch "
                                    "or loop body cannot be differentiated yet; call it outside "
                                    "the control flow");
            for (const auto& body : n.bodies)
                check_no_custom_gradient(*body);
        }
    }

    // True when node n reads variable `var`, or a copy of it that a read outside any trace
    // (a function running eagerly, plain code) took.
    static bool is_read_of(const graph::node& n,
                           const std::shared_ptr<graph::variable_storage>& var) {
        return n.op == op_kind::read_variable &&
               (n.var == var || (n.var && n.var->copy_of.lock() == var));
    }

    // True when graph g, or a subgraph of it, reads variable `var`.
    static bool reads(const graph::graph& g, const std::shared_ptr<graph::variable_storage>& var) {
        for (const graph::node& n : g.nodes) {
            if (is_read_of(n, var))
                return true;
            for (const auto& body : n.bodies)
                if (reads(*body, var))
                    return true;
        }
        return false;
    }

    // Adds `g` (of the consuming node's shape) to input `in`'s adjoint, summed back to in's
    // shape where broadcasting made it larger; inputs no target depends on are skipped.
    void add(T_id in, T_id g) {
        if (!relevant_[in] || !differentiable(r_.type(in)))
            return;
        g = unbroadcast(g, in);
        adjoint_[in] = adjoint_[in] ? r_.op(op_kind::add, {*adjoint_[in], g}) : g;
    }

    T_id unbroadcast(T_id g, T_id in) {
        const shape_t gs = r_.shape(g), is = r_.shape(in);
        if (gs == is && is_fully_known(is))
            return g;
        if (!is_fully_known(gs) || !is_fully_known(is))
            return r_.sum_to(g, in); // decided per call, from the concrete shapes
        std::vector<std::int64_t> axes;
        const std::size_t lead = gs.size() - is.size();
        for (std::size_t d = 0; d < gs.size(); ++d)
            if (d < lead || (is[d - lead] == 1 && gs[d] != 1))
                axes.push_back(static_cast<std::int64_t>(d));
        T_id s = axes.empty() ? g : r_.reduce(op_kind::sum, g, axes, true);
        if (lead > 0 || r_.shape(s) != is)
            s = r_.shape_op(op_kind::reshape, s, std::vector<std::int64_t>(is.begin(), is.end()));
        return s;
    }

    // g with the reduced axes of a reduction of `x` put back (size 1), then broadcast to x.
    T_id expand(T_id g, T_id x, const std::vector<std::int64_t>& axes, bool keep) {
        if (!keep)
            for (auto a : axes) // ascending: each axis is its final position
                g = r_.shape_op(op_kind::expand_dims, g, {a});
        return r_.broadcast_like(g, x);
    }

    // Elements per result of a reduction of x over axes: a scalar constant when the dims are
    // known, else counted when the graph runs (broadcast to x's shape).
    T_id count(T_id x, const std::vector<std::int64_t>& axes) {
        const shape_t s = r_.shape(x);
        double n = 1;
        bool known = true;
        for (auto a : axes) {
            known = known && s[a] >= 0;
            n *= static_cast<double>(s[a]);
        }
        if (known)
            return r_.constant(r_.type(x), n);
        const T_id ones = r_.broadcast_like(r_.constant(r_.type(x), 1), x);
        return expand(r_.reduce(op_kind::sum, ones, axes, true), x, axes, true);
    }

    T_id zero(T_id like) { return r_.constant(r_.type(like), 0); }
    T_id one(T_id like) { return r_.constant(r_.type(like), 1); }
    T_id mul(T_id a, T_id b) { return r_.op(op_kind::mul, {a, b}); }
    T_id div(T_id a, T_id b) { return r_.op(op_kind::div, {a, b}); }
    T_id neg(T_id a) { return r_.op(op_kind::neg, {a}); }
    T_id where(T_id c, T_id a, T_id b) { return r_.op(op_kind::where, {c, a, b}); }

    [[noreturn]] void no_rule(const graph::node& n) {
        // A cond's or while_loop's results are where its gradient would enter: name the op.
        const op_kind k = n.op == op_kind::result ? r_.at(n.inputs[0]).op : n.op;
        throw tracing_error("xtrace::gradients: " + std::string(info(k).name) +
                            " has no gradient yet; wrap its result in xtrace::stop_gradient if "
                            "no gradient should flow through it");
    }

    // Broadcasting, reductions and shape ops need ranks to route a gradient back; a value of
    // unknown rank (a spec of xtrace::any_rank) has none while tracing.
    // True when a gradient flowing into node n (number id) can reach a target through its
    // inputs, or its custom rule's.
    bool leads_to_target(T_id id, const graph::node& n) const {
        for (T_id in : n.inputs)
            if (relevant_[in])
                return true;
        if (n.custom_gradient)
            if (const auto* found = r_.builder().custom_gradient(id))
                for (T_id in : found->second)
                    if (in < relevant_.size() && relevant_[in])
                        return true;
        return false;
    }

    void refuse_unknown_rank(T_id id, const std::string& what) const {
        const graph::node& n = r_.at(id);
        if (is_unknown_rank(n.shape))
            throw xtrace::detail::needs_known_dims(
                "xtrace::gradients: " + what + " (" + std::string(info(n.op).name) + ", " +
                std::string(dtype_name(n.type)) +
                "[...]) has unknown rank; gradients need ranks known while "
                "tracing: give the signature a rank, e.g. "
                "xtrace::spec<T>({-1, -1}) instead of xtrace::any_rank");
    }

    void step(T_id id, T_id g) {
        refuse_unknown_rank(id, "a value on the way");
        for (T_id in : r_.at(id).inputs)
            if (relevant_[in])
                refuse_unknown_rank(in, "an operand on the way");
        const graph::node n = r_.at(id); // a copy: recording new nodes moves the old ones
        if (n.op == op_kind::result) {   // gathered for its cond, differentiated there
            auto& seeds = result_adjoints_[n.inputs[0]];
            seeds.emplace_back(static_cast<std::size_t>(n.result_index), g);
            if (!adjoint_[n.inputs[0]])
                adjoint_[n.inputs[0]] = g; // marks the cond to visit
            return;
        }
        if (n.op == op_kind::cond)
            return differentiate_cond(id, capture_target_reads(id, n));
        if (n.op == op_kind::while_loop)
            return differentiate_loop(id, capture_target_reads(id, n));
        if (n.op == op_kind::scan) // before the dtype test: the node's own dtype is a placeholder
            return differentiate_scan(id, capture_target_reads(id, n));
        if (!differentiable(n.type))
            return; // comparisons, logic, integer values: no gradient (TensorFlow: None)
        if (!leads_to_target(id, n))
            return; // its rule would only compute gradients nobody reads (and might not apply)
        const auto in = [&](std::size_t k) { return n.inputs[k]; };
        switch (n.op) {
        case op_kind::ensure_shape: // the value itself
            return add(in(0), g);
        case op_kind::stop_gradient:
            if (const auto* found = r_.builder().custom_gradient(id)) {
                const auto custom = *found; // the rule may record custom gradients of its own
                const auto grads = custom.first->gradients(r_.builder(), g, custom.second, id);
                for (std::size_t k = 0; k < grads.size() && k < custom.second.size(); ++k)
                    add(custom.second[k], grads[k]);
            }
            return;
        case op_kind::arg:
        case op_kind::constant:
        case op_kind::read_variable:
        case op_kind::floor:
        case op_kind::ceil:
        case op_kind::round:
            return; // leaves, and piecewise-constant functions (zero almost everywhere)
        case op_kind::neg:
            return add(in(0), neg(g));
        case op_kind::abs: { // sign(x) * g: 0 at 0, as TensorFlow
            const T_id x = in(0);
            const T_id pos = r_.op(op_kind::greater, {x, zero(x)});
            const T_id negative = r_.op(op_kind::less, {x, zero(x)});
            return add(x, where(pos, g, where(negative, neg(g), zero(x))));
        }
        case op_kind::square:
            return add(in(0), mul(g, mul(r_.constant(n.type, 2), in(0))));
        case op_kind::relu: // 0 at 0, as TensorFlow
            return add(in(0), where(r_.op(op_kind::greater, {in(0), zero(in(0))}), g, zero(id)));
        case op_kind::exp:
            return add(in(0), mul(g, id));
        case op_kind::log:
            return add(in(0), div(g, in(0)));
        case op_kind::sqrt: // g / (2 sqrt(x)): inf at 0, as TensorFlow
            return add(in(0), div(g, mul(r_.constant(n.type, 2), id)));
        case op_kind::rsqrt: // -x^(-3/2) / 2
            return add(in(0), mul(g, mul(r_.constant(n.type, -0.5), mul(id, mul(id, id)))));
        case op_kind::sin:
            return add(in(0), mul(g, r_.op(op_kind::cos, {in(0)})));
        case op_kind::cos:
            return add(in(0), neg(mul(g, r_.op(op_kind::sin, {in(0)}))));
        case op_kind::tanh:
            return add(in(0), mul(g, r_.op(op_kind::sub, {one(id), mul(id, id)})));
        case op_kind::sigmoid:
            return add(in(0), mul(g, mul(id, r_.op(op_kind::sub, {one(id), id}))));
        case op_kind::erf: // 2/sqrt(pi) e^(-x^2)
            return add(in(0), mul(g, mul(r_.constant(n.type, 1.1283791670955126),
                                         r_.op(op_kind::exp, {neg(mul(in(0), in(0)))}))));
        case op_kind::add:
            add(in(0), g);
            return add(in(1), g);
        case op_kind::sub:
            add(in(0), g);
            return add(in(1), neg(g));
        case op_kind::mul:
            add(in(0), mul(g, in(1)));
            return add(in(1), mul(g, in(0)));
        case op_kind::div:
            add(in(0), div(g, in(1)));
            return add(in(1), neg(div(mul(g, id), in(1)))); // -g a / b^2 = -g (a/b) / b
        case op_kind::pow: { // d/da = b a^(b-1); d/db = a^b log(a), taken as 0 where a <= 0
            const T_id a = in(0), e = in(1);
            const T_id em1 = r_.op(op_kind::sub, {e, one(e)});
            add(a, mul(g, mul(e, r_.op(op_kind::pow, {a, em1}))));
            const T_id positive = r_.op(op_kind::greater, {a, zero(a)});
            const T_id log_a =
                where(positive, r_.op(op_kind::log, {a}), r_.broadcast_like(zero(a), a));
            return add(e, mul(g, mul(id, log_a)));
        }
        case op_kind::maximum:
        case op_kind::minimum: { // ties go to the first operand, as TensorFlow
            const op_kind pick =
                n.op == op_kind::maximum ? op_kind::greater_equal : op_kind::less_equal;
            const T_id first = r_.op(pick, {in(0), in(1)});
            const T_id none = zero(id);
            add(in(0), where(first, g, none));
            return add(in(1), where(first, none, g));
        }
        case op_kind::clip: { // clip(x, lo, hi): x gets g inside [lo, hi], lo below, hi above
            const T_id x = in(0), lo = in(1), hi = in(2);
            const T_id below = r_.op(op_kind::less, {x, lo});
            const T_id above = r_.op(op_kind::greater, {x, hi});
            const T_id none = zero(id);
            add(x, where(below, none, where(above, none, g)));
            add(lo, where(below, g, none));
            return add(hi, where(above, g, none));
        }
        case op_kind::where: {
            const T_id none = zero(id);
            add(in(1), where(in(0), g, none));
            return add(in(2), where(in(0), none, g));
        }
        case op_kind::cast:
            if (differentiable(r_.type(in(0))))
                add(in(0), r_.cast(g, r_.type(in(0))));
            return;
        case op_kind::sum:
            return add(in(0), expand(g, in(0), n.axes, n.keep_dims));
        case op_kind::mean:
            return add(in(0), div(expand(g, in(0), n.axes, n.keep_dims), count(in(0), n.axes)));
        case op_kind::max:
        case op_kind::min: { // shared equally among the elements that attain it
            const T_id x = in(0);
            const T_id hit =
                r_.cast(r_.op(op_kind::equal, {x, expand(id, x, n.axes, n.keep_dims)}), n.type);
            const T_id hits = r_.reduce(op_kind::sum, hit, n.axes, n.keep_dims);
            return add(x, div(mul(hit, expand(g, x, n.axes, n.keep_dims)),
                              expand(hits, x, n.axes, n.keep_dims)));
        }
        case op_kind::prod: { // with zeros: only the one zero of a group gets the others' product
            const T_id x = in(0);
            const T_id is_zero = r_.op(op_kind::equal, {x, zero(x)});
            const T_id zeros = r_.reduce(op_kind::sum, r_.cast(is_zero, n.type), n.axes, true);
            const T_id nonzero = r_.reduce(op_kind::prod, where(is_zero, one(x), x), n.axes, true);
            const T_id ge = expand(g, x, n.axes, n.keep_dims);
            const T_id z = expand(zeros, x, n.axes, true);
            const T_id p = expand(nonzero, x, n.axes, true);
            const T_id none = zero(x);
            const T_id at_zero = where(r_.op(op_kind::equal, {z, one(x)}), mul(ge, p), none);
            const T_id elsewhere =
                where(r_.op(op_kind::equal, {z, zero(x)}), div(mul(ge, p), x), none);
            return add(x, where(is_zero, at_zero, elsewhere));
        }
        case op_kind::reshape: {
            const shape_t s = r_.shape(in(0));
            if (std::count(s.begin(), s.end(), unknown_dim) > 1)
                throw xtrace::detail::needs_known_dims(
                    "xtrace::gradients: reshape of " + shape_string(s) +
                    " has more than one unknown dim; its gradient needs them");
            return add(in(0), r_.shape_op(op_kind::reshape, g,
                                          std::vector<std::int64_t>(s.begin(), s.end())));
        }
        case op_kind::transpose: {
            std::vector<std::int64_t> inverse(n.axes.size());
            for (std::size_t i = 0; i < n.axes.size(); ++i)
                inverse[static_cast<std::size_t>(n.axes[i])] = static_cast<std::int64_t>(i);
            return add(in(0), r_.shape_op(op_kind::transpose, g, inverse));
        }
        case op_kind::expand_dims:
            return add(in(0), r_.shape_op(op_kind::squeeze, g, {n.axes[0]}));
        case op_kind::squeeze:
            return add(in(0), r_.shape_op(op_kind::expand_dims, g, {n.axes[0]}));
        case op_kind::broadcast_to:
            return add(in(0), g); // summed back to the input's shape by add
        case op_kind::matmul: {   // dA = dC B^T, dB = A^T dC, batch dims summed back
            const T_id a = in(0), b = in(1);
            add(a, r_.matmul(g, swap_last(b)));
            return add(b, r_.matmul(swap_last(a), g));
        }
        case op_kind::sum_to:
            return add(in(0), r_.broadcast_like(g, in(0)));
        case op_kind::result:
        case op_kind::cond:
        case op_kind::while_loop:
        case op_kind::scan:
        case op_kind::print:
        case op_kind::host_function:
        case op_kind::assign_variable:
        case op_kind::less:
        case op_kind::less_equal:
        case op_kind::greater:
        case op_kind::greater_equal:
        case op_kind::equal:
        case op_kind::not_equal:
        case op_kind::logical_not:
        case op_kind::logical_and:
        case op_kind::logical_or:
        case op_kind::logical_xor:
            no_rule(n);
        }
    }

    // A cond's gradient is a cond over its branches' gradients: each branch, replayed into a
    // subgraph, is differentiated there with respect to every float input of the cond, given
    // the adjoints of the cond's results; the gradient cond takes the same branch.
    void differentiate_cond(T_id id, const graph::node& n) {
        check_replayable(n);
        std::vector<std::optional<T_id>> seeds(n.bodies[0]->outputs.size());
        for (const auto& [k, g] : result_adjoints_[id])
            seeds[k] = seeds[k] ? r_.op(op_kind::add, {*seeds[k], g}) : g;
        std::vector<T_id> results(seeds.size(), 0);
        for (T_id k = id + 1; k < r_.size(); ++k)
            if (r_.at(k).op == op_kind::result && r_.at(k).inputs[0] == id)
                results[static_cast<std::size_t>(r_.at(k).result_index)] = k;
        std::vector<graph::node_id> inputs = n.inputs; // pred, captured values, then seeds
        for (std::size_t k = 0; k < seeds.size(); ++k)
            inputs.push_back(seeds[k] ? *seeds[k] : r_.zeros_like(results[k]));
        // One gradient per float input after the predicate, in both branches.
        std::vector<std::size_t> wrt;
        std::vector<bool> live(seeds.size());
        for (std::size_t k = 0; k < seeds.size(); ++k)
            live[k] = seeds[k].has_value();
        for (std::size_t p = 1; p < n.inputs.size(); ++p)
            if (differentiable(r_.type(n.inputs[p])) && relevant_[n.inputs[p]] &&
                (passes_gradient(*n.bodies[0], p, live) || passes_gradient(*n.bodies[1], p, live)))
                wrt.push_back(p);
        if (wrt.empty())
            return;
        std::vector<std::shared_ptr<const graph::graph>> bodies;
        for (const auto& body : n.bodies)
            bodies.push_back(branch_gradient(*body, n, inputs, wrt));
        std::vector<graph::node> result_types(wrt.size());
        for (std::size_t i = 0; i < wrt.size(); ++i) {
            result_types[i].type = r_.type(n.inputs[wrt[i]]);
            result_types[i].shape = r_.shape(n.inputs[wrt[i]]);
        }
        const auto grads = r_.builder().add_control(op_kind::cond, inputs, bodies, result_types);
        for (std::size_t i = 0; i < wrt.size(); ++i)
            add(n.inputs[wrt[i]], grads[i]);
    }

    // The gradient of one branch `body` of cond `n`: a graph over the gradient cond's inputs
    // returning the gradient of each input in `wrt`.
    std::shared_ptr<const graph::graph> branch_gradient(const graph::graph& body,
                                                        const graph::node& n,
                                                        const std::vector<graph::node_id>& inputs,
                                                        const std::vector<std::size_t>& wrt) {
        auto child = std::make_shared<trace::builder>(&r_.builder());
        std::vector<graph::node_id> args(inputs.size());
        for (std::size_t p = 0; p < inputs.size(); ++p)
            args[p] = child->add_arg(static_cast<std::int64_t>(p), r_.type(inputs[p]),
                                     r_.shape(inputs[p]));
        std::vector<graph::node_id> body_args;
        for (auto a : body.args)
            body_args.push_back(args[static_cast<std::size_t>(body[a].arg_position)]);
        const auto outputs = child->replay(body, body_args);
        std::vector<std::pair<graph::node_id, graph::node_id>> seeds;
        const std::size_t first_seed = n.inputs.size();
        for (std::size_t k = 0; k < outputs.size(); ++k)
            if (differentiable(child->at(outputs[k]).type))
                seeds.emplace_back(outputs[k], args[first_seed + k]);
        std::vector<target> targets;
        for (auto p : wrt)
            targets.push_back({args[p], nullptr});
        const auto grads =
            seeds.empty() ? std::vector<graph::node_id>() : pass<Tag>(*child).run(seeds, targets);
        detail::recorder<Tag> local(*child);
        for (std::size_t i = 0; i < wrt.size(); ++i)
            child->add_output(seeds.empty() ? local.zeros_like(args[wrt[i]]) : grads[i]);
        return std::make_shared<const graph::graph>(child->finish());
    }

    bool is_target(T_id id) const {
        for (const target& t : targets_)
            if (!t.var && t.node == id)
                return true;
        return false;
    }

    // A while_loop's gradient. Its trip count N is counted by a second run of the loop. At a
    // function's top level the loop then becomes a scan over N steps, whose gradient stores each
    // iteration's state (differentiate_scan): linear in N. Elsewhere (a body, where a length
    // known only at run time cannot be planned, or an eager tape) it stores nothing.
    void differentiate_loop(T_id id, const graph::node& n) {
        check_replayable(n);
        if (!r_.builder().parent() && !r_.builder().deferred())
            return differentiate_loop_as_scan(id, n);
        differentiate_loop_by_recomputing(id, n);
    }

    // `n` as the scan over N = its trip count of steps that runs its body without its test,
    // differentiated as a scan.
    void differentiate_loop_as_scan(T_id id, const graph::node& n) {
        const graph::graph& body = *n.bodies[1];
        const std::size_t vars = body.outputs.size();
        bool any_float = false;
        for (std::size_t j = 0; j < vars; ++j)
            any_float = any_float || differentiable(r_.type(n.inputs[j]));
        if (!any_float)
            return;
        const std::vector<T_id> captures(n.inputs.begin() + static_cast<std::ptrdiff_t>(vars),
                                         n.inputs.end());
        const T_id steps =
            trace::add_fill(r_.builder(), dtype::int32, 0, count_iterations(n, captures)[vars]);
        graph::node s;
        s.op = op_kind::scan;
        s.inputs.assign(n.inputs.begin(), n.inputs.begin() + static_cast<std::ptrdiff_t>(vars));
        s.inputs.push_back(steps);
        s.inputs.insert(s.inputs.end(), captures.begin(), captures.end());
        s.carried = static_cast<std::int64_t>(vars);
        s.scanned = 1;
        auto [b, a] = scan_subgraph(s.inputs, vars, 1);
        const std::vector<T_id> state(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(vars));
        const std::vector<T_id> caps(a.begin() + static_cast<std::ptrdiff_t>(vars + 1), a.end());
        s.bodies = {finish(*b, replay_loop_graph(*b, body, vars, state, caps))};
        differentiate_scan(id, s);
    }

    // The loop `n` run again from its initial values with a counter: its results are the loop
    // variables', then the trip count (int32).
    std::vector<T_id> count_iterations(const graph::node& n, const std::vector<T_id>& captures) {
        const std::size_t vars = n.bodies[1]->outputs.size();
        std::vector<T_id> count_in(n.inputs.begin(),
                                   n.inputs.begin() + static_cast<std::ptrdiff_t>(vars));
        count_in.push_back(r_.constant(dtype::int32, 0));
        count_in.insert(count_in.end(), captures.begin(), captures.end());
        return r_.builder().add_control(op_kind::while_loop, count_in,
                                        {counting_test(*n.bodies[0], vars, count_in),
                                         counting_body(*n.bodies[1], vars, count_in)},
                                        result_nodes(count_in, vars + 1), n.max_iterations);
    }

    // Without storing its iterations: a backward loop over k = N-1 .. 0 recomputes the state
    // after k iterations (an inner loop from the initial values) and applies the body's
    // vector-Jacobian product to it. Quadratic in N in time, constant in memory.
    void differentiate_loop_by_recomputing(T_id id, const graph::node& n) {
        const graph::graph& body = *n.bodies[1];
        const std::size_t vars = body.outputs.size();
        std::vector<T_id> init(n.inputs.begin(),
                               n.inputs.begin() + static_cast<std::ptrdiff_t>(vars));
        std::vector<T_id> captures(n.inputs.begin() + static_cast<std::ptrdiff_t>(vars),
                                   n.inputs.end());
        // The loop's results and their adjoints (zeros where none reached them).
        std::vector<T_id> results(vars, 0);
        for (T_id k = id + 1; k < r_.size(); ++k)
            if (r_.at(k).op == op_kind::result && r_.at(k).inputs[0] == id)
                results[static_cast<std::size_t>(r_.at(k).result_index)] = k;
        std::vector<std::optional<T_id>> seed(vars);
        for (const auto& [k, g] : result_adjoints_[id])
            seed[k] = seed[k] ? r_.op(op_kind::add, {*seed[k], g}) : g;
        std::vector<std::size_t> float_vars, float_caps;
        for (std::size_t j = 0; j < vars; ++j)
            if (differentiable(r_.type(init[j])))
                float_vars.push_back(j);
        std::vector<bool> seeded(vars);
        for (std::size_t j = 0; j < vars; ++j)
            seeded[j] = seed[j].has_value();
        const std::vector<bool> live = live_outputs(body, vars, seeded);
        for (std::size_t i = 0; i < captures.size(); ++i)
            if (differentiable(r_.type(captures[i])) && relevant_[captures[i]] &&
                passes_gradient(body, vars + i, live))
                float_caps.push_back(i);
        if (float_vars.empty())
            return;

        const auto counted = count_iterations(n, captures);
        const T_id last = r_.op(op_kind::sub, {counted[vars], r_.constant(dtype::int32, 1)});

        // The backward loop: k, the float loop variables' adjoints, the float captures'
        // accumulated gradients; then the captures and initial values it reads.
        std::vector<T_id> back_in{last};
        for (auto j : float_vars)
            back_in.push_back(seed[j] ? *seed[j] : r_.zeros_like(results[j]));
        for (auto i : float_caps)
            back_in.push_back(r_.zeros_like(captures[i]));
        const std::size_t back_vars = back_in.size();
        back_in.insert(back_in.end(), captures.begin(), captures.end());
        back_in.insert(back_in.end(), init.begin(), init.end());
        const auto back = r_.builder().add_control(
            op_kind::while_loop, back_in,
            {backward_test(back_in), backward_body(body, vars, captures.size(), float_vars,
                                                   float_caps, back_in, back_vars)},
            result_nodes(back_in, back_vars), -1);
        for (std::size_t a = 0; a < float_vars.size(); ++a)
            add(init[float_vars[a]], back[1 + a]);
        for (std::size_t c = 0; c < float_caps.size(); ++c)
            add(captures[float_caps[c]], back[1 + float_vars.size() + c]);
    }

    // A scan's gradient, as TensorFlow's accumulators do for loops: the scan run again with
    // every step's incoming carries stacked (O(N) memory), then a scan in the other direction
    // over those,
    // the scanned slices and the per-step outputs' adjoints, applying the body's
    // vector-Jacobian product at each step. Linear in N in time and memory.
    void differentiate_scan(T_id id, const graph::node& n) {
        check_replayable(n);
        const graph::graph& body = *n.bodies[0];
        const auto carried = static_cast<std::size_t>(n.carried);
        const auto scanned = static_cast<std::size_t>(n.scanned);
        const std::size_t outputs = body.outputs.size();
        const std::vector<T_id> init(n.inputs.begin(),
                                     n.inputs.begin() + static_cast<std::ptrdiff_t>(carried));
        const std::vector<T_id> xs(n.inputs.begin() + static_cast<std::ptrdiff_t>(carried),
                                   n.inputs.begin() +
                                       static_cast<std::ptrdiff_t>(carried + scanned));
        const std::vector<T_id> caps(
            n.inputs.begin() + static_cast<std::ptrdiff_t>(carried + scanned), n.inputs.end());
        std::vector<T_id> results(outputs, 0);
        for (T_id k = id + 1; k < r_.size(); ++k)
            if (r_.at(k).op == op_kind::result && r_.at(k).inputs[0] == id)
                results[static_cast<std::size_t>(r_.at(k).result_index)] = k;
        std::vector<std::optional<T_id>> seed(outputs);
        for (const auto& [k, g] : result_adjoints_[id])
            seed[k] = seed[k] ? r_.op(op_kind::add, {*seed[k], g}) : g;
        std::vector<std::size_t> float_carries, float_xs, float_caps, float_outs;
        for (std::size_t j = 0; j < carried; ++j)
            if (differentiable(r_.type(init[j])))
                float_carries.push_back(j);
        std::vector<bool> seeded(outputs);
        for (std::size_t k = 0; k < outputs; ++k)
            seeded[k] = seed[k].has_value();
        const std::vector<bool> live = live_outputs(body, carried, seeded);
        for (std::size_t s = 0; s < scanned; ++s)
            if (differentiable(r_.type(xs[s])) && relevant_[xs[s]] &&
                passes_gradient(body, carried + s, live))
                float_xs.push_back(s);
        for (std::size_t i = 0; i < caps.size(); ++i)
            if (differentiable(r_.type(caps[i])) && relevant_[caps[i]] &&
                passes_gradient(body, carried + scanned + i, live))
                float_caps.push_back(i);
        for (std::size_t k = carried; k < outputs; ++k)
            if (differentiable(body[body.outputs[k]].type))
                float_outs.push_back(k);
        if (float_carries.empty() && float_xs.empty() && float_caps.empty())
            return;

        // 1. The carries each step starts from, stacked: the scan again, emitting them.
        std::vector<T_id> stacked;
        if (carried > 0) {
            auto [b, a] = scan_subgraph(n.inputs, carried, scanned);
            auto next = replay_scan_body(*b, body, a);
            next.resize(carried);
            next.insert(next.end(), a.begin(), a.begin() + static_cast<std::ptrdiff_t>(carried));
            std::vector<graph::node> types(2 * carried);
            for (std::size_t j = 0; j < carried; ++j) {
                types[j].type = r_.type(init[j]);
                types[j].shape = r_.shape(init[j]);
                types[carried + j].type = r_.type(init[j]);
                types[carried + j].shape = stacked_shape(xs, r_.shape(init[j]));
            }
            const auto fwd = r_.builder().add_scan(n.inputs, finish(*b, next), types, n.carried,
                                                   n.scanned, n.reverse);
            stacked.assign(fwd.begin() + static_cast<std::ptrdiff_t>(carried), fwd.end());
        }

        // 2. The reverse scan. Carries: the float carries' adjoints, the float captures'
        // accumulated gradients. Scanned: the stacked carries, the scanned inputs, the float
        // per-step outputs' adjoints. Captures: the scan's own.
        std::vector<T_id> back_in;
        for (auto j : float_carries)
            back_in.push_back(seed[j] ? *seed[j] : r_.zeros_like(results[j]));
        for (auto i : float_caps)
            back_in.push_back(r_.zeros_like(caps[i]));
        const std::size_t back_carried = back_in.size();
        back_in.insert(back_in.end(), stacked.begin(), stacked.end());
        back_in.insert(back_in.end(), xs.begin(), xs.end());
        for (auto k : float_outs)
            back_in.push_back(seed[k] ? *seed[k] : r_.zeros_like(results[k]));
        const std::size_t back_scanned = back_in.size() - back_carried;
        back_in.insert(back_in.end(), caps.begin(), caps.end());

        auto [b, a] = scan_subgraph(back_in, back_carried, back_scanned);
        recorder<Tag> r(*b);
        // The body replayed at step t: carries from the stacked slices, the scanned slices,
        // the captures.
        std::vector<T_id> at(n.inputs.size());
        for (std::size_t j = 0; j < carried; ++j)
            at[j] = a[back_carried + j];
        for (std::size_t s = 0; s < scanned; ++s)
            at[carried + s] = a[back_carried + carried + s];
        for (std::size_t i = 0; i < caps.size(); ++i)
            at[carried + scanned + i] = a[back_carried + back_scanned + i];
        const auto outs = replay_scan_body(*b, body, at);
        std::vector<std::pair<T_id, T_id>> seeds;
        for (std::size_t f = 0; f < float_carries.size(); ++f)
            seeds.emplace_back(outs[float_carries[f]], a[f]);
        for (std::size_t f = 0; f < float_outs.size(); ++f)
            seeds.emplace_back(outs[float_outs[f]], a[back_carried + carried + scanned + f]);
        std::vector<target> targets;
        for (auto j : float_carries)
            targets.push_back({at[j], nullptr});
        for (auto s : float_xs)
            targets.push_back({at[carried + s], nullptr});
        for (auto i : float_caps)
            targets.push_back({at[carried + scanned + i], nullptr});
        const auto grads = pass(*b).stop_at_targets().run(seeds, targets);
        std::vector<T_id> next;
        for (std::size_t f = 0; f < float_carries.size(); ++f)
            next.push_back(grads[f]);
        const std::size_t g_caps = float_carries.size() + float_xs.size();
        for (std::size_t c = 0; c < float_caps.size(); ++c)
            next.push_back(r.op(op_kind::add, {a[float_carries.size() + c], grads[g_caps + c]}));
        for (std::size_t s = 0; s < float_xs.size(); ++s)
            next.push_back(grads[float_carries.size() + s]);
        std::vector<graph::node> types(next.size());
        for (std::size_t k = 0; k < back_carried; ++k) {
            types[k].type = r_.type(back_in[k]);
            types[k].shape = r_.shape(back_in[k]);
        }
        for (std::size_t s = 0; s < float_xs.size(); ++s) {
            types[back_carried + s].type = r_.type(xs[float_xs[s]]);
            types[back_carried + s].shape = r_.shape(xs[float_xs[s]]);
        }
        const auto back = r_.builder().add_scan(
            back_in, finish(*b, next), types, static_cast<std::int64_t>(back_carried),
            static_cast<std::int64_t>(back_scanned), !n.reverse);
        for (std::size_t f = 0; f < float_carries.size(); ++f)
            add(init[float_carries[f]], back[f]);
        for (std::size_t c = 0; c < float_caps.size(); ++c)
            add(caps[float_caps[c]], back[float_carries.size() + c]);
        for (std::size_t s = 0; s < float_xs.size(); ++s)
            add(xs[float_xs[s]], back[back_carried + s]);
    }

    // A scan body builder: one arg per input of its scan node, in order; the `scanned` inputs
    // after the first `carried` are seen one leading-dim slice at a time.
    std::pair<std::shared_ptr<trace::builder>, std::vector<T_id>>
    scan_subgraph(const std::vector<T_id>& inputs, std::size_t carried, std::size_t scanned) {
        auto child = std::make_shared<trace::builder>(&r_.builder());
        std::vector<T_id> args;
        for (std::size_t p = 0; p < inputs.size(); ++p) {
            shape_t s = r_.shape(inputs[p]);
            if (p >= carried && p < carried + scanned)
                s.erase(s.begin());
            args.push_back(child->add_arg(static_cast<std::int64_t>(p), r_.type(inputs[p]), s));
        }
        return {child, args};
    }

    // The trace-time shape of per-step values of shape `row` stacked over the steps of a scan
    // of `xs`.
    shape_t stacked_shape(const std::vector<T_id>& xs, const shape_t& row) const {
        std::vector<shape_t> shapes;
        for (T_id x : xs)
            shapes.push_back(r_.shape(x));
        shape_t out{graph::scan_length(shapes)};
        out.insert(out.end(), row.begin(), row.end());
        return out;
    }

    // A scan body replayed on `inputs_at`, one value per input of its scan node (carries,
    // slices, captures).
    static std::vector<T_id> replay_scan_body(trace::builder& b, const graph::graph& body,
                                              const std::vector<T_id>& inputs_at) {
        std::vector<T_id> args;
        for (auto a : body.args)
            args.push_back(inputs_at[static_cast<std::size_t>(body[a].arg_position)]);
        return b.replay(body, args);
    }

    // Result descriptors (dtype, shape) for the first `count` of `inputs`.
    std::vector<graph::node> result_nodes(const std::vector<T_id>& inputs, std::size_t count) {
        std::vector<graph::node> out(count);
        for (std::size_t k = 0; k < count; ++k) {
            out[k].type = r_.type(inputs[k]);
            out[k].shape = r_.shape(inputs[k]);
        }
        return out;
    }

    // A subgraph builder with one arg per input of its control node, in order.
    std::pair<std::shared_ptr<trace::builder>, std::vector<T_id>>
    subgraph(const std::vector<T_id>& inputs) {
        auto child = std::make_shared<trace::builder>(&r_.builder());
        std::vector<T_id> args;
        for (std::size_t p = 0; p < inputs.size(); ++p)
            args.push_back(child->add_arg(static_cast<std::int64_t>(p), r_.type(inputs[p]),
                                          r_.shape(inputs[p])));
        return {child, args};
    }

    // `g` (a loop's cond or body) replayed on loop variables `vars_at` and captures `caps_at`.
    static std::vector<T_id> replay_loop_graph(trace::builder& b, const graph::graph& g,
                                               std::size_t vars, const std::vector<T_id>& state,
                                               const std::vector<T_id>& caps) {
        std::vector<T_id> args;
        for (auto a : g.args) {
            const auto p = static_cast<std::size_t>(g[a].arg_position);
            args.push_back(p < vars ? state[p] : caps[p - vars]);
        }
        return b.replay(g, args);
    }

    static std::shared_ptr<const graph::graph> finish(trace::builder& b,
                                                      const std::vector<T_id>& outputs) {
        for (auto o : outputs)
            b.add_output(o);
        return std::make_shared<const graph::graph>(b.finish());
    }

    // The counting loop: (state..., n) with captures after; its cond is the loop's.
    std::shared_ptr<const graph::graph> counting_test(const graph::graph& test, std::size_t vars,
                                                      const std::vector<T_id>& inputs) {
        auto [b, a] = subgraph(inputs);
        const std::vector<T_id> state(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(vars));
        const std::vector<T_id> caps(a.begin() + static_cast<std::ptrdiff_t>(vars + 1), a.end());
        return finish(*b, replay_loop_graph(*b, test, vars, state, caps));
    }

    std::shared_ptr<const graph::graph> counting_body(const graph::graph& body, std::size_t vars,
                                                      const std::vector<T_id>& inputs) {
        auto [b, a] = subgraph(inputs);
        recorder<Tag> r(*b);
        const std::vector<T_id> state(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(vars));
        const std::vector<T_id> caps(a.begin() + static_cast<std::ptrdiff_t>(vars + 1), a.end());
        auto next = replay_loop_graph(*b, body, vars, state, caps);
        next.push_back(r.op(op_kind::add, {a[vars], r.constant(dtype::int32, 1)}));
        return finish(*b, next);
    }

    std::shared_ptr<const graph::graph> backward_test(const std::vector<T_id>& inputs) {
        auto [b, a] = subgraph(inputs);
        recorder<Tag> r(*b);
        return finish(*b, {r.op(op_kind::greater_equal, {a[0], r.constant(dtype::int32, 0)})});
    }

    // One backward step: state after k iterations recomputed from the initial values, then the
    // body's vector-Jacobian product at it.
    std::shared_ptr<const graph::graph> backward_body(const graph::graph& body, std::size_t vars,
                                                      std::size_t n_caps,
                                                      const std::vector<std::size_t>& float_vars,
                                                      const std::vector<std::size_t>& float_caps,
                                                      const std::vector<T_id>& inputs,
                                                      std::size_t back_vars) {
        auto [b, a] = subgraph(inputs);
        recorder<Tag> r(*b);
        const T_id k = a[0];
        const std::vector<T_id> caps(a.begin() + static_cast<std::ptrdiff_t>(back_vars),
                                     a.begin() + static_cast<std::ptrdiff_t>(back_vars + n_caps));
        const std::vector<T_id> init(a.begin() + static_cast<std::ptrdiff_t>(back_vars + n_caps),
                                     a.end());
        // Inner loop: (state..., j) while j < k, with k and the captures after.
        std::vector<T_id> inner_in = init;
        inner_in.push_back(r.constant(dtype::int32, 0));
        inner_in.push_back(k);
        inner_in.insert(inner_in.end(), caps.begin(), caps.end());
        std::shared_ptr<const graph::graph> inner_test, inner_body;
        {
            pass nested(*b);
            auto [tb, ta] = nested.subgraph(inner_in);
            recorder<Tag> tr(*tb);
            inner_test = finish(*tb, {tr.op(op_kind::less, {ta[vars], ta[vars + 1]})});
            auto [bb, ba] = nested.subgraph(inner_in);
            recorder<Tag> br(*bb);
            const std::vector<T_id> state(ba.begin(),
                                          ba.begin() + static_cast<std::ptrdiff_t>(vars));
            const std::vector<T_id> icaps(ba.begin() + static_cast<std::ptrdiff_t>(vars + 2),
                                          ba.end());
            auto next = replay_loop_graph(*bb, body, vars, state, icaps);
            next.push_back(br.op(op_kind::add, {ba[vars], br.constant(dtype::int32, 1)}));
            next.push_back(ba[vars + 1]);
            inner_body = finish(*bb, next);
        }
        std::vector<graph::node> inner_types(vars + 2);
        for (std::size_t j = 0; j < vars + 2; ++j) {
            inner_types[j].type = b->at(inner_in[j]).type;
            inner_types[j].shape = b->at(inner_in[j]).shape;
        }
        const auto state_k = b->add_control(op_kind::while_loop, inner_in, {inner_test, inner_body},
                                            inner_types, -1);
        const std::vector<T_id> state(state_k.begin(),
                                      state_k.begin() + static_cast<std::ptrdiff_t>(vars));
        // The body at state_k, differentiated with respect to state_k and the captures.
        const auto outputs = replay_loop_graph(*b, body, vars, state, caps);
        std::vector<std::pair<T_id, T_id>> seeds;
        for (std::size_t f = 0; f < float_vars.size(); ++f)
            seeds.emplace_back(outputs[float_vars[f]], a[1 + f]);
        std::vector<target> targets;
        for (auto j : float_vars)
            targets.push_back({state[j], nullptr});
        for (auto i : float_caps)
            targets.push_back({caps[i], nullptr});
        const auto grads = pass(*b).stop_at_targets().run(seeds, targets);
        std::vector<T_id> next{r.op(op_kind::sub, {k, r.constant(dtype::int32, 1)})};
        for (std::size_t f = 0; f < float_vars.size(); ++f)
            next.push_back(grads[f]);
        for (std::size_t c = 0; c < float_caps.size(); ++c)
            next.push_back(
                r.op(op_kind::add, {a[1 + float_vars.size() + c], grads[float_vars.size() + c]}));
        return finish(*b, next);
    }

    T_id swap_last(T_id x) {
        const std::size_t rank = r_.shape(x).size();
        std::vector<std::int64_t> perm(rank);
        std::iota(perm.begin(), perm.end(), std::int64_t(0));
        std::swap(perm[rank - 1], perm[rank - 2]);
        return r_.shape_op(op_kind::transpose, x, perm);
    }

    recorder<Tag> r_;
    std::vector<std::optional<graph::node_id>> adjoint_;
    std::vector<bool> relevant_;
    std::vector<target> targets_;
    bool stop_at_targets_ = false;
    // Per cond: the adjoints of its results, by result index.
    std::unordered_map<T_id, std::vector<std::pair<std::size_t, T_id>>> result_adjoints_;
    // Reads recorded for target variables read inside control flow (capture_target_reads).
    std::vector<std::pair<std::shared_ptr<graph::variable_storage>, T_id>> captured_reads_;
};

#endif

} // namespace detail

} // namespace xtrace::autodiff

#if XTRACE_DEFINE_RUNTIME && defined(XTRACE_SEPARATE_COMPILATION)

namespace xtrace::autodiff {

XTRACE_DECL std::vector<graph::node_id> backward(trace::builder& b, graph::node_id y,
                                                 graph::node_id seed,
                                                 std::span<const target> targets) {
    return detail::pass<>(b).run(y, seed, targets);
}

} // namespace xtrace::autodiff

#endif

#endif
