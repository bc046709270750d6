// The runtime section of trace/builder.hpp.

namespace xtrace::trace {

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

XTRACE_DECL graph::node builder::make(op_kind op, dtype type,
                                      std::span<const graph::node_id> inputs) {
    graph::node n;
    n.op = op;
    n.type = type;
    n.inputs.assign(inputs.begin(), inputs.end());
    return n;
}

XTRACE_DECL graph::node_id builder::record(graph::node n, recording how) {
    const auto id = push(std::move(n));
    if (how == recording::merged) {
        mergeable_.resize(g_.nodes.size(), false);
        mergeable_[id] = true;
    }
    if (how == recording::effect)
        g_.effects.push_back(id);
    return id;
}

XTRACE_DECL graph::node_id builder::add_arg(std::int64_t index, dtype type, shape_t shape) {
    graph::node n = make(op_kind::arg, type);
    n.shape = std::move(shape);
    n.arg_position = index;
    const auto id = record(std::move(n), recording::kept);
    g_.args.push_back(id);
    return id;
}

XTRACE_DECL graph::node_id builder::add_constant(dtype type, double f, std::int64_t i) {
    graph::node n = make(op_kind::constant, type);
    n.fvalue = is_floating(type) ? f : 0.0;
    n.ivalue = is_floating(type) ? 0 : i;
    return record(std::move(n), recording::merged);
}

XTRACE_DECL graph::node_id builder::add_elementwise(op_kind op, dtype type,
                                                    std::span<const graph::node_id> inputs,
                                                    const graph::kernel_set* kernels) {
    check_open(info(op).name);
    std::array<const shape_t*, 3> shapes{};
    for (std::size_t i = 0; i < inputs.size(); ++i)
        shapes[i] = &g_.nodes[inputs[i]].shape;
    graph::node n = make(op, type, inputs);
    n.kernels = kernels;
    n.shape = graph::broadcast_operands(op, std::span(shapes.data(), inputs.size()));
    return record(std::move(n), recording::merged);
}

XTRACE_DECL graph::node_id builder::add_reduction(op_kind op, dtype type, graph::node_id input,
                                                  std::vector<std::int64_t> axes, bool keep_dims,
                                                  const graph::reduce_kernels* kernel) {
    check_open(info(op).name);
    graph::node n = make(op, type, {&input, 1});
    n.keep_dims = keep_dims;
    n.reduce = kernel;
    if (is_unknown_rank(g_.nodes[input].shape)) { // the axes are normalised when planned
        const bool every = axes.size() == 1 && axes[0] == graph::every_axis;
        n.axes = std::move(axes);
        n.rank_pending = true;
        n.shape = every && !keep_dims ? shape_t{} : unknown_rank_shape();
        return record(std::move(n), recording::merged);
    }
    n.axes = graph::normalize_axes(op, g_.nodes[input].shape, std::move(axes));
    n.shape = graph::reduce_shape(g_.nodes[input].shape, n.axes, keep_dims);
    return record(std::move(n), recording::merged);
}

XTRACE_DECL graph::node_id builder::add_shape_op(op_kind op, dtype type, graph::node_id input,
                                                 std::vector<std::int64_t> attrs) {
    check_open(info(op).name);
    graph::node n = make(op, type, {&input, 1});
    const bool by_dims = op == op_kind::reshape || op == op_kind::broadcast_to;
    if (!by_dims && is_unknown_rank(g_.nodes[input].shape)) { // normalised when planned
        n.shape = op == op_kind::transpose && !attrs.empty() ? shape_t(attrs.size(), unknown_dim)
                                                             : unknown_rank_shape();
        n.axes = std::move(attrs);
        n.rank_pending = true;
        return record(std::move(n), recording::merged);
    }
    (by_dims ? n.dims : n.axes) =
        graph::normalize_shape_op(op, g_.nodes[input].shape, std::move(attrs));
    n.shape = is_unknown_rank(g_.nodes[input].shape) // reshape, broadcast_to: checked when planned
                  ? shape_t(n.dims)
                  : graph::shape_op_result(op, g_.nodes[input].shape, n.shape_attributes());
    return record(std::move(n), recording::merged);
}

XTRACE_DECL graph::node_id builder::add_sum_to(dtype type, graph::node_id g, graph::node_id like,
                                               const graph::reduce_kernels* kernel) {
    check_open("sum_to");
    refuse_unknown_rank("sum_to", {g, like});
    const std::array<graph::node_id, 2> operands{g, like};
    graph::node n = make(op_kind::sum_to, type, operands);
    n.reduce = kernel;
    n.shape = graph::sum_to_shape(g_.nodes[g].shape, g_.nodes[like].shape);
    return record(std::move(n), recording::merged);
}

XTRACE_DECL graph::node_id builder::add_ensure_shape(graph::node_id value, const shape_t& required,
                                                     std::string who,
                                                     const graph::kernel_set* identity) {
    check_open("ensure_shape");
    const shape_t& has = g_.nodes[value].shape;
    graph::check_ensured_shape(has, required, who);
    if (is_unknown_rank(required))
        return value;
    // A rank, or a dim, unknown here that `required` knows: checked when planned.
    bool refines = is_unknown_rank(has);
    for (std::size_t d = 0; !refines && d < has.size(); ++d)
        refines = has[d] < 0 && required[d] >= 0;
    if (!refines)
        return value;
    graph::node n = make(op_kind::ensure_shape, g_.nodes[value].type, {&value, 1});
    n.kernels = identity;
    n.dims = required;
    n.text = std::move(who);
    n.shape = is_unknown_rank(has) ? required : has;
    for (std::size_t d = 0; d < n.shape.size(); ++d)
        if (required[d] >= 0)
            n.shape[d] = required[d];
    return record(std::move(n), recording::merged);
}

XTRACE_DECL graph::node_id builder::add_custom_gradient(graph::node_id value,
                                                        std::vector<graph::node_id> inputs,
                                                        std::shared_ptr<const gradient_rule> rule,
                                                        const graph::kernel_set* identity) {
    check_open("custom_gradient");
    graph::node n = make(op_kind::stop_gradient, g_.nodes[value].type, {&value, 1});
    n.kernels = identity;
    n.custom_gradient = true;
    n.shape = g_.nodes[value].shape;
    const auto id = record(std::move(n), recording::kept);
    custom_gradients_.emplace(id, std::pair(std::move(rule), std::move(inputs)));
    return id;
}

XTRACE_DECL const std::pair<std::shared_ptr<const gradient_rule>, std::vector<graph::node_id>>*
builder::custom_gradient(graph::node_id id) const {
    const auto it = custom_gradients_.find(id);
    return it == custom_gradients_.end() ? nullptr : &it->second;
}

XTRACE_DECL graph::node_id builder::add_matmul(dtype type, graph::node_id a, graph::node_id b,
                                               graph::matmul_fn kernel) {
    check_open("matmul");
    refuse_unknown_rank("matmul", {a, b});
    const std::array<graph::node_id, 2> operands{a, b};
    graph::node n = make(op_kind::matmul, type, operands);
    n.matmul = kernel;
    n.shape = graph::matmul_shape(g_.nodes[a].shape, g_.nodes[b].shape);
    return record(std::move(n), recording::merged);
}

XTRACE_DECL graph::node_id builder::add_print(std::string label,
                                              std::span<const graph::node_id> inputs,
                                              std::vector<graph::print_fn> printers) {
    check_open("print");
    graph::node n = make(op_kind::print, dtype::boolean, inputs);
    n.text = std::move(label);
    n.printers = std::move(printers);
    return record(std::move(n), recording::effect);
}

XTRACE_DECL graph::node_id
builder::add_host_function(dtype type, shape_t shape, std::span<const graph::node_id> inputs,
                           std::shared_ptr<const graph::host_call> call) {
    check_open("host_function");
    // At a function's top level the graph runs in stages around such a host function
    // (plan/stages.hpp); a body's results must have shapes its cond or loop can plan for.
    if (parent_ && !is_fully_known(shape))
        throw xtrace::detail::needs_known_dims(
            "xtrace::host_function: inside a cond, switch_case, while_loop or scan body the "
            "spec's dims must all be known, got " +
            shape_string(shape) +
            "; call the host_function outside the body, or give its spec known dims");
    graph::node n = make(op_kind::host_function, type, inputs);
    n.shape = std::move(shape);
    n.host = std::move(call);
    return record(std::move(n), recording::effect);
}

XTRACE_DECL std::vector<graph::node_id>
builder::add_control(op_kind op, std::vector<graph::node_id> inputs,
                     std::vector<std::shared_ptr<const graph::graph>> bodies,
                     std::span<const graph::node> results, std::int64_t limit) {
    check_open(info(op).name);
    graph::node n = make(op, dtype::boolean, inputs);
    n.max_iterations = limit;
    n.bodies = std::move(bodies);
    return record_control(std::move(n), results);
}

XTRACE_DECL std::vector<graph::node_id> builder::add_scan(std::vector<graph::node_id> inputs,
                                                          std::shared_ptr<const graph::graph> body,
                                                          std::span<const graph::node> results,
                                                          std::int64_t carried,
                                                          std::int64_t scanned, bool reverse) {
    check_open("scan");
    graph::node n = make(op_kind::scan, dtype::boolean, inputs);
    n.carried = carried;
    n.scanned = scanned;
    n.reverse = reverse;
    n.bodies = {std::move(body)};
    return record_control(std::move(n), results);
}

XTRACE_DECL std::vector<graph::node_id>
builder::record_control(graph::node n, std::span<const graph::node> results) {
    const bool effect = std::any_of(n.bodies.begin(), n.bodies.end(),
                                    [](const auto& b) { return !b->effects.empty(); });
    const auto id = record(std::move(n), effect ? recording::effect : recording::kept);
    std::vector<graph::node_id> out;
    for (std::size_t k = 0; k < results.size(); ++k) {
        graph::node r = make(op_kind::result, results[k].type, {&id, 1});
        r.shape = results[k].shape;
        r.result_index = static_cast<std::int64_t>(k);
        out.push_back(record(std::move(r), recording::kept));
    }
    return out;
}

XTRACE_DECL graph::node_id
builder::add_read_variable(std::shared_ptr<graph::variable_storage> var) {
    check_open("variable::read");
    graph::node n = make(op_kind::read_variable, var->type);
    n.shape = var->shape;
    n.var = std::move(var);
    return record(std::move(n), recording::effect); // ordered with the assignments around it
}

XTRACE_DECL graph::node_id
builder::add_assign_variable(std::shared_ptr<graph::variable_storage> var, graph::node_id value,
                             const graph::kernel_set* update, bool initializer) {
    check_open("variable::assign");
    graph::check_assign_shape(*var, g_.nodes[value].shape);
    graph::node n = make(op_kind::assign_variable, var->type, {&value, 1});
    n.shape = var->shape;
    n.var = std::move(var);
    n.kernels = update;
    n.initializer = initializer;
    return record(std::move(n), recording::effect);
}

XTRACE_DECL std::vector<graph::node_id> builder::replay(const graph::graph& g,
                                                        std::span<const graph::node_id> args) {
    return replay(g, args, replay_hook());
}

XTRACE_DECL std::vector<graph::node_id> builder::replay(const graph::graph& g,
                                                        std::span<const graph::node_id> args,
                                                        const replay_hook& hook) {
    check_open("replay");
    std::vector<bool> needed(g.nodes.size(), false);
    for (auto id : g.outputs)
        needed[id] = true;
    for (std::size_t i = g.nodes.size(); i-- > 0;)
        if (needed[i])
            for (auto in : g.nodes[i].inputs)
                needed[in] = true;
    std::vector<graph::node_id> map(g.nodes.size(), 0);
    for (std::size_t k = 0; k < g.args.size(); ++k)
        map[g.args[k]] = args[k];
    for (graph::node_id id = 0; id < g.nodes.size(); ++id) {
        const graph::node& n = g.nodes[id];
        if (!needed[id] || n.op == op_kind::arg)
            continue;
        graph::node copy = n;
        for (auto& in : copy.inputs)
            in = map[in];
        if (hook)
            if (const auto instead = hook(copy)) {
                map[id] = *instead;
                continue;
            }
        const bool read = copy.op == op_kind::read_variable; // ordered as effects are
        map[id] = record(std::move(copy), read ? recording::effect : recording::kept);
    }
    std::vector<graph::node_id> out;
    for (auto id : g.outputs)
        out.push_back(map[id]);
    return out;
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

XTRACE_DECL void builder::refuse_unknown_rank(std::string_view op,
                                              std::initializer_list<graph::node_id> inputs) const {
    for (graph::node_id in : inputs)
        if (is_unknown_rank(g_.nodes[in].shape))
            throw xtrace::detail::needs_known_dims(
                "xtrace::" + std::string(op) + ": an operand has unknown rank (" +
                std::string(dtype_name(g_.nodes[in].type)) +
                "[...], from a spec of xtrace::any_rank); " + std::string(op) +
                " needs its operands' ranks while tracing: give the signature a rank, e.g. "
                "xtrace::spec<T>({-1, -1})");
}

XTRACE_DECL graph::graph builder::finish() {
    finished_ = true;
    return prune(merge_equal(g_, mergeable_));
}

XTRACE_DECL graph::node_id builder::push(graph::node n) {
    g_.nodes.push_back(std::move(n));
    return static_cast<graph::node_id>(g_.nodes.size() - 1);
}

// Equal mergeable nodes, in order, stand for the first of them: the key is every field that
// decides what a node computes, its operands already merged. Done when the trace ends, not as
// nodes are recorded, so that while tracing each op is a value of its own, as in TensorFlow: a
// gradient with respect to one of two equal values does not flow through the other.
XTRACE_DECL graph::graph builder::merge_equal(graph::graph g, const std::vector<bool>& mergeable) {
    std::unordered_map<std::string, graph::node_id> first;
    std::vector<graph::node_id> same(g.nodes.size());
    std::string key;
    for (graph::node_id id = 0; id < g.nodes.size(); ++id) {
        graph::node& n = g.nodes[id];
        for (auto& in : n.inputs)
            in = same[in];
        same[id] = id;
        if (id >= mergeable.size() || !mergeable[id])
            continue;
        key.clear();
        auto put = [&](const auto& v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
        put(n.op);
        put(n.type);
        put(n.fvalue);
        put(n.ivalue);
        put(n.max_iterations);
        put(n.carried);
        put(n.scanned);
        put(n.initializer);
        for (auto in : n.inputs)
            put(in);
        put(n.keep_dims);
        for (auto a : n.axes)
            put(a);
        put(std::int64_t(-2)); // separates axes from dims
        for (auto d : n.dims)
            put(d);
        same[id] = first.try_emplace(key, id).first->second;
    }
    for (auto* ids : {&g.args, &g.outputs, &g.effects})
        for (auto& id : *ids)
            id = same[id];
    return g;
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
    std::sort(out.args.begin(), out.args.end(), [&](auto a, auto b) {
        return out.nodes[a].arg_position < out.nodes[b].arg_position;
    });
    for (auto id : g.outputs)
        out.outputs.push_back(remap[id]);
    for (auto id : g.effects)
        out.effects.push_back(remap[id]);
    return out;
}

} // namespace xtrace::trace
