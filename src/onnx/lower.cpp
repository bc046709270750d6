// An ONNX graph lowered to xtrace's graph IR with the trace builder, so that shapes are checked
// and common subexpressions merged as when a lambda is traced. Values known while lowering
// (initializers, Constant nodes, the dims Shape reads and the arithmetic on them) stay on the
// host and are folded; what the graph computes becomes nodes. ONNX ops xtrace has no node for
// (Gemm, Softmax, LayerNormalization...) are written with the ops it has.

#include "model_data.hpp"

#include <xtrace/interp/kernel_choice.hpp>
#include <xtrace/trace/builder.hpp>
#include <xtrace/trace/fill.hpp>
#include <xtrace/trace/subgraph.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

namespace xtrace::onnx::detail {

namespace {

using graph::node_id;

// What a name stands for while lowering: a node of some trace, or a value known on the host.
struct tval {
    const trace::builder* owner = nullptr; // the trace holding node `id`; null for host values
    node_id id = 0;
    std::shared_ptr<graph::variable_storage> host; // the value, when known while lowering
    dtype type = dtype::float32;
    shape_t shape;
};

// The names one graph (or subgraph) defines, over those of the graphs enclosing it.
struct level {
    explicit level(trace::builder& builder, const level* enclosing = nullptr)
        : b(builder), parent(enclosing) {}

    trace::builder& b;
    const level* parent;
    std::unordered_map<std::string, tval> names;
    // Host values already made nodes of this trace.
    std::unordered_map<const graph::variable_storage*, node_id> made;

    const tval* find(const std::string& name) const {
        for (const level* l = this; l; l = l->parent)
            if (auto it = l->names.find(name); it != l->names.end())
                return &it->second;
        return nullptr;
    }
};

// Folded host values are kept small: beyond this many elements a value is computed by the graph.
constexpr std::int64_t max_folded = 1 << 16;

[[noreturn]] void needs_dims(const std::string& where, const std::string& what) {
    throw xtrace::detail::needs_known_dims(where + ": " + what);
}

class lowering {
public:
    explicit lowering(const model_data& m) : m_(m) {}

    trace::finished_trace run(const std::vector<shape_t>& shapes) {
        auto b = trace::new_trace();
        b->set_function_name(m_.name);
        try {
            level top{*b};
            for (const auto& [name, v] : m_.initializers)
                top.names[name] = host(v);
            for (std::size_t k = 0; k < shapes.size(); ++k)
                top.names[m_.input_names[k]] = node(
                    *b, b->add_arg(static_cast<std::int64_t>(k), m_.inputs[k].type, shapes[k]));
            lower_graph(m_.proto.graph(), top);
            for (std::size_t k = 0; k < m_.output_names.size(); ++k) {
                const tval& v = lookup(top, m_.output_names[k], "the graph's output");
                b->add_output(use(top, v));
            }
        } catch (...) {
            b->abandon();
            throw;
        }
        auto out = trace::finish_trace(*b);
        check_sizes(out.g);
        return out;
    }

private:
    // ---- values ----------------------------------------------------------------------------

    static tval node(const trace::builder& b, node_id id) {
        return {&b, id, nullptr, b.at(id).type, b.at(id).shape};
    }
    static tval host(std::shared_ptr<graph::variable_storage> v) {
        tval t;
        t.type = v->type;
        t.shape = v->shape;
        t.host = std::move(v);
        return t;
    }

    const tval& lookup(const level& l, const std::string& name, const std::string& who) const {
        const tval* v = l.find(name);
        if (!v)
            throw model_error(who + " reads '" + name + "', which is not defined");
        return *v;
    }

    // `v` as a node of level `l`'s trace: host values become a constant (broadcast when every
    // element is the same) or a read of the value (as a variable read, from memory shared by
    // every call).
    node_id use(level& l, const tval& v) {
        if (!v.host)
            return l.b.import(v.owner, v.id);
        if (auto it = l.made.find(v.host.get()); it != l.made.end())
            return it->second;
        const graph::variable_storage& h = *v.host;
        const auto n = static_cast<std::size_t>(num_elements(h.shape));
        bool uniform = true;
        for (std::size_t i = 1; i < n && uniform; ++i)
            uniform = std::memcmp(h.bytes.data(), h.bytes.data() + i * dtype_size(h.type),
                                  dtype_size(h.type)) == 0;
        node_id id;
        if (uniform) {
            const double f = n ? element_as_double(h, 0) : 0.0;
            const std::int64_t i = n ? element_as_int(h, 0) : 0;
            id = l.b.add_constant(h.type, f, i);
            if (!h.shape.empty())
                id = l.b.add_shape_op(op_kind::broadcast_to, h.type, id, h.shape);
        } else {
            id = l.b.add_read_variable(v.host);
        }
        l.made.emplace(v.host.get(), id);
        return id;
    }

    // ---- graph -----------------------------------------------------------------------------

    void lower_graph(const pb::GraphProto& g, level& l) {
        if (&g != &m_.proto.graph())
            for (const auto& t : g.initializer()) {
                auto v = decode_tensor(t, "initializer '" + t.name() + "'", m_.max_bytes);
                l.names[t.name()] = host(std::move(v));
            }
        for (int k = 0; k < g.node_size(); ++k) {
            const pb::NodeProto& n = g.node(k);
            const std::string who = m_.name + ": " + describe(n, k);
            std::vector<const tval*> in;
            for (const auto& name : n.input())
                in.push_back(name.empty() ? nullptr : &lookup(l, name, who));
            std::vector<tval> out;
            try {
                out = lower_node(n, who, attributes(n, who), in, l);
            } catch (const shape_error& e) {
                throw shape_error(who + ": " + e.what());
            }
            for (int o = 0; o < n.output_size(); ++o) {
                if (n.output(o).empty())
                    continue;
                if (static_cast<std::size_t>(o) >= out.size())
                    throw model_error(who + ": output " + std::to_string(o) + " ('" + n.output(o) +
                                      "') is not one xtrace computes");
                l.names[n.output(o)] = std::move(out[static_cast<std::size_t>(o)]);
            }
        }
    }

    // ---- helpers for the ops ---------------------------------------------------------------

    struct op_context {
        const pb::NodeProto& n;
        const std::string& who;
        const attributes& attrs;
        const std::vector<const tval*>& in;
        level& l;

        const tval& input(std::size_t k) const {
            if (k >= in.size() || !in[k])
                throw model_error(who + " needs input " + std::to_string(k));
            return *in[k];
        }
        bool has(std::size_t k) const { return k < in.size() && in[k]; }
        trace::builder& b() const { return l.b; }
    };

    node_id elementwise(const op_context& c, op_kind op, std::vector<node_id> ids) {
        const dtype operand = c.b().at(ids[op == op_kind::where ? 1 : 0]).type;
        for (std::size_t k = op == op_kind::where ? 1 : 0; k < ids.size(); ++k)
            if (c.b().at(ids[k]).type != operand)
                throw model_error(c.who + ": operands of " + std::string(dtype_name(operand)) +
                                  " and " + std::string(dtype_name(c.b().at(ids[k]).type)) +
                                  "; ONNX's " + c.n.op_type() + " takes one element type");
        if (op == op_kind::where && c.b().at(ids[0]).type != dtype::boolean)
            throw model_error(c.who + ": the condition must be BOOL");
        const dtype result = info(op).result == op_result::boolean ? dtype::boolean : operand;
        const auto* kernels = interp::kernels_for<>(op, operand, result);
        if (!kernels || !accepts(info(op).domain, operand))
            throw model_error(c.who + ": " + std::string(info(op).name) + " does not take " +
                              std::string(dtype_name(operand)));
        return c.b().add_elementwise(op, result, ids, kernels);
    }

    node_id cast(const op_context& c, node_id id, dtype to) {
        const dtype from = c.b().at(id).type;
        if (from == to)
            return id;
        return c.b().add_elementwise(op_kind::cast, to, {&id, 1},
                                     interp::kernels_for<>(op_kind::cast, from, to));
    }

    node_id constant(const op_context& c, dtype type, double v) {
        return c.b().add_constant(type, v, static_cast<std::int64_t>(v));
    }

    node_id reduce(const op_context& c, op_kind op, node_id id, std::vector<std::int64_t> axes,
                   bool keep) {
        const dtype type = c.b().at(id).type;
        const auto* kernels = interp::reduction_kernels_of_kind<>(op, type);
        if (!kernels)
            throw model_error(c.who + ": " + std::string(info(op).name) + " does not take " +
                              std::string(dtype_name(type)));
        return c.b().add_reduction(op, type, id, std::move(axes), keep, kernels);
    }

    node_id shape_op(const op_context& c, op_kind op, node_id id, std::vector<std::int64_t> a) {
        return c.b().add_shape_op(op, c.b().at(id).type, id, std::move(a));
    }

    node_id matmul(const op_context& c, node_id a, node_id b) {
        const dtype type = c.b().at(a).type;
        if (c.b().at(b).type != type)
            throw model_error(c.who + ": operands of two element types");
        const auto kernel = interp::matmul_kernel_of_type<>(type);
        if (!kernel)
            throw model_error(c.who + ": matmul does not take " + std::string(dtype_name(type)));
        return c.b().add_matmul(type, a, b, kernel);
    }

    // The axes a reduction-like op reads: an attribute, or from `since` on, input 1.
    std::optional<std::vector<std::int64_t>> axes_of(const op_context& c, std::int64_t since) {
        if (m_.opset >= since) {
            if (!c.has(1))
                return std::nullopt;
            return folded_ints(c, c.input(1), "its axes");
        }
        return c.attrs.get_ints("axes");
    }

    std::vector<std::int64_t> folded_ints(const op_context& c, const tval& v,
                                          const std::string& what) {
        if (!v.host)
            throw model_error(c.who + ": " + what +
                              " must be known when the model is loaded (a constant, an "
                              "initializer or arithmetic on Shape); here the graph computes it");
        if (!is_integer(v.type))
            throw model_error(c.who + ": " + what + " must be INT32 or INT64");
        return as_ints(*v.host);
    }

    static std::int64_t normalize_axis(const op_context& c, std::int64_t axis, std::int64_t rank) {
        if (axis < -rank || axis >= rank)
            throw model_error(c.who + ": axis " + std::to_string(axis) +
                              " is out of range for rank " + std::to_string(rank));
        return axis < 0 ? axis + rank : axis;
    }

    std::shared_ptr<graph::variable_storage> fold_result(const op_context& c, dtype type,
                                                         shape_t shape) {
        checked_bytes(type, shape, m_.max_bytes, c.who + "'s result");
        auto v = std::make_shared<graph::variable_storage>();
        v->type = type;
        v->shape = std::move(shape);
        v->bytes.resize(static_cast<std::size_t>(num_elements(v->shape)) * dtype_size(type));
        return v;
    }

    // The result of a shape op on a value: folded on the host when the value is known and small.
    tval shape_result(const op_context& c, const tval& x, op_kind op, std::vector<std::int64_t> a) {
        if (x.host && op == op_kind::reshape) {
            const shape_t out = graph::shape_op_result(op, x.shape, a);
            auto v = std::make_shared<graph::variable_storage>(); // same bytes, new shape
            v->type = x.type;
            v->shape = out;
            v->bytes = x.host->bytes;
            return host(std::move(v));
        }
        if (x.host && (op == op_kind::expand_dims || op == op_kind::squeeze)) {
            auto norm = graph::normalize_shape_op(op, x.shape, a);
            const shape_t out = graph::shape_op_result(op, x.shape, norm);
            auto v = std::make_shared<graph::variable_storage>();
            v->type = x.type;
            v->shape = out;
            v->bytes = x.host->bytes;
            return host(std::move(v));
        }
        return node(c.b(), shape_op(c, op, use(c.l, x), std::move(a)));
    }

    // ---- the ops ---------------------------------------------------------------------------

    std::vector<tval> lower_node(const pb::NodeProto& n, const std::string& who,
                                 const attributes& attrs, const std::vector<const tval*>& in,
                                 level& l) {
        const op_context c{n, who, attrs, in, l};
        const std::string& op = n.op_type();
        auto one = [&](node_id id) { return std::vector<tval>{node(l.b, id)}; };
        auto x = [&](std::size_t k) { return use(l, c.input(k)); };

        if (op == "Identity")
            return {c.input(0)};
        if (op == "Dropout") {
            if (c.has(2) && (!c.input(2).host || element_as_int(*c.input(2).host, 0) != 0))
                throw model_error(who + ": Dropout in training mode is not inference");
            if (n.output_size() > 1 && !n.output(1).empty())
                throw model_error(who + ": Dropout's mask output is not computed");
            return {c.input(0)};
        }
        if (op == "Constant")
            return {host(constant_value(c))};
        if (op == "ConstantOfShape")
            return {constant_of_shape(c)};
        if (op == "Shape")
            return {shape_of(c)};
        if (op == "Size") {
            const tval& v = c.input(0);
            if (!is_fully_known(v.shape))
                needs_dims(who, "Size of a value with unknown dims " + shape_string(v.shape));
            const auto count = num_elements(v.shape);
            return {host(make_host(dtype::int64, {}, [&](std::size_t) { return count; }))};
        }
        if (op == "Gather")
            return {gather(c)};
        if (op == "Concat")
            return {concat(c)};
        if (op == "Range")
            return {range(c)};
        if (op == "Slice")
            return {slice(c)};
        if (op == "Cast") {
            const auto to = from_onnx(attrs.get_int("to", 0));
            if (!to)
                throw model_error(who + ": casts to " + onnx_type_name(attrs.get_int("to", 0)) +
                                  "; xtrace has FLOAT, DOUBLE, INT32, INT64 and BOOL");
            const tval& v = c.input(0);
            if (v.host && num_elements(v.shape) <= max_folded)
                return {host(make_host(*to, v.shape, [&](std::size_t i) {
                    return is_floating(v.type) ? element_as_double(*v.host, i)
                                               : static_cast<double>(element_as_int(*v.host, i));
                }))};
            return one(cast(c, x(0), *to));
        }
        if (op == "Unsqueeze" || op == "Squeeze")
            return {squeeze_or_unsqueeze(c, op == "Unsqueeze")};
        if (op == "Reshape")
            return {reshape(c)};
        if (op == "Flatten")
            return {flatten(c)};
        if (op == "Expand")
            return {expand(c)};
        if (op == "Transpose") {
            std::vector<std::int64_t> perm =
                attrs.get_ints("perm").value_or(std::vector<std::int64_t>{});
            return {shape_result(c, c.input(0), op_kind::transpose, std::move(perm))};
        }
        if (auto u = unary_op(op))
            return one(elementwise(c, *u, {x(0)}));
        if (op == "Reciprocal") {
            const node_id v = x(0);
            return one(elementwise(c, op_kind::div, {constant(c, l.b.at(v).type, 1), v}));
        }
        if (op == "LeakyRelu") {
            const node_id v = x(0);
            const dtype t = l.b.at(v).type;
            const node_id negative = elementwise(c, op_kind::less, {v, constant(c, t, 0)});
            const node_id scaled =
                elementwise(c, op_kind::mul, {v, constant(c, t, attrs.get_float("alpha", 0.01f))});
            return one(elementwise(c, op_kind::where, {negative, scaled, v}));
        }
        if (auto b = binary_op(op)) {
            if (auto folded = fold_integer_arithmetic(c, *b))
                return {*folded};
            node_id lhs = x(0), rhs = x(1);
            if (*b == op_kind::pow && l.b.at(rhs).type != l.b.at(lhs).type)
                rhs = cast(c, rhs, l.b.at(lhs).type); // Pow's exponent may have its own type
            return one(elementwise(c, *b, {lhs, rhs}));
        }
        if (op == "Where")
            return one(elementwise(c, op_kind::where, {x(0), x(1), x(2)}));
        if (op == "Min" || op == "Max" || op == "Sum" || op == "Mean") {
            if (in.empty())
                throw model_error(who + " has no inputs");
            const op_kind k = op == "Min"   ? op_kind::minimum
                              : op == "Max" ? op_kind::maximum
                                            : op_kind::add;
            node_id acc = x(0);
            for (std::size_t i = 1; i < in.size(); ++i)
                acc = elementwise(c, k, {acc, x(i)});
            if (op == "Mean")
                acc = elementwise(
                    c, op_kind::div,
                    {acc, constant(c, l.b.at(acc).type, static_cast<double>(in.size()))});
            return one(acc);
        }
        if (op == "Clip")
            return one(clip(c));
        if (op == "ReduceSum" || op == "ReduceMean" || op == "ReduceMax" || op == "ReduceMin" ||
            op == "ReduceProd" || op == "ReduceSumSquare" || op == "ReduceLogSumExp")
            return one(reduction(c));
        if (op == "MatMul")
            return one(matmul_numpy(c, x(0), x(1)));
        if (op == "Gemm")
            return one(gemm(c));
        if (op == "Softmax" || op == "LogSoftmax")
            return one(softmax(c, op == "LogSoftmax"));
        if (op == "LayerNormalization")
            return layer_norm(c);
        if (op == "If")
            return if_node(c);
        if (op == "Loop")
            return loop(c);
        if (op == "Scan")
            return scan(c);
        throw model_error(who + ": xtrace has no lowering for op '" + op + "'");
    }

    static std::optional<op_kind> unary_op(const std::string& op) {
        static const std::unordered_map<std::string, op_kind> ops{
            {"Neg", op_kind::neg},         {"Abs", op_kind::abs},   {"Relu", op_kind::relu},
            {"Floor", op_kind::floor},     {"Ceil", op_kind::ceil}, {"Round", op_kind::round},
            {"Exp", op_kind::exp},         {"Log", op_kind::log},   {"Sqrt", op_kind::sqrt},
            {"Sin", op_kind::sin},         {"Cos", op_kind::cos},   {"Tanh", op_kind::tanh},
            {"Sigmoid", op_kind::sigmoid}, {"Erf", op_kind::erf},   {"Not", op_kind::logical_not}};
        auto it = ops.find(op);
        return it == ops.end() ? std::nullopt : std::optional(it->second);
    }

    static std::optional<op_kind> binary_op(const std::string& op) {
        static const std::unordered_map<std::string, op_kind> ops{
            {"Add", op_kind::add},
            {"Sub", op_kind::sub},
            {"Mul", op_kind::mul},
            {"Div", op_kind::div},
            {"Pow", op_kind::pow},
            {"Less", op_kind::less},
            {"LessOrEqual", op_kind::less_equal},
            {"Greater", op_kind::greater},
            {"GreaterOrEqual", op_kind::greater_equal},
            {"Equal", op_kind::equal},
            {"And", op_kind::logical_and},
            {"Or", op_kind::logical_or},
            {"Xor", op_kind::logical_xor}};
        auto it = ops.find(op);
        return it == ops.end() ? std::nullopt : std::optional(it->second);
    }

    // Integer arithmetic on known values (shape arithmetic: batch * 3, dims - 1) is folded, so
    // that a Reshape reading it still knows its target. Same shapes or a single element only.
    std::optional<tval> fold_integer_arithmetic(const op_context& c, op_kind op) {
        if (op != op_kind::add && op != op_kind::sub && op != op_kind::mul && op != op_kind::div)
            return std::nullopt;
        const tval& a = c.input(0);
        const tval& b = c.input(1);
        if (!a.host || !b.host || !is_integer(a.type) || a.type != b.type)
            return std::nullopt;
        const auto na = num_elements(a.shape), nb = num_elements(b.shape);
        if (na > max_folded || nb > max_folded)
            return std::nullopt;
        shape_t out;
        if (a.shape == b.shape || nb == 1)
            out = a.shape.size() >= b.shape.size() ? a.shape : b.shape;
        else if (na == 1)
            out = b.shape.size() >= a.shape.size() ? b.shape : a.shape;
        else
            return std::nullopt;
        if (num_elements(out) != std::max(na, nb))
            return std::nullopt;
        const auto x = as_ints(*a.host), y = as_ints(*b.host);
        if (op == op_kind::div && std::find(y.begin(), y.end(), 0) != y.end())
            throw model_error(c.who + ": integer division by zero in shape arithmetic");
        return host(make_host(a.type, out, [&](std::size_t i) {
            const std::int64_t p = x[na == 1 ? 0 : i], q = y[nb == 1 ? 0 : i];
            switch (op) {
            case op_kind::add:
                return scalar::add(p, q);
            case op_kind::sub:
                return scalar::sub(p, q);
            case op_kind::mul:
                return scalar::mul(p, q);
            default:
                return scalar::div(p, q);
            }
        }));
    }

    std::shared_ptr<graph::variable_storage> constant_value(const op_context& c) {
        if (const auto* t = c.attrs.get_tensor("value"))
            return decode_tensor(*t, c.who + "'s value", m_.max_bytes);
        if (const auto* a = c.attrs.find("value_float");
            a && a->type() == pb::AttributeProto::FLOAT) {
            const double f = a->f();
            return make_host(dtype::float32, {}, [&](std::size_t) { return f; });
        }
        if (const auto* a = c.attrs.find("value_int"); a && a->type() == pb::AttributeProto::INT) {
            const std::int64_t i = a->i();
            return make_host(dtype::int64, {}, [&](std::size_t) { return i; });
        }
        if (auto ints = c.attrs.get_ints("value_ints"))
            return make_host(dtype::int64, {static_cast<dim_t>(ints->size())},
                             [&](std::size_t i) { return (*ints)[i]; });
        if (const auto* a = c.attrs.find("value_floats");
            a && a->type() == pb::AttributeProto::FLOATS)
            return make_host(dtype::float32, {a->floats_size()}, [&](std::size_t i) {
                return static_cast<double>(a->floats(static_cast<int>(i)));
            });
        throw model_error(c.who +
                          " has no value xtrace reads (value, value_float(s), value_int(s))");
    }

    tval constant_of_shape(const op_context& c) {
        if (!c.input(0).host && c.input(0).shape == shape_t{1} && is_integer(c.input(0).type))
            return computed_length_fill(c);
        const auto dims = folded_ints(c, c.input(0), "its shape");
        shape_t shape(dims.begin(), dims.end());
        graph::variable_storage fill;
        fill.type = dtype::float32;
        fill.bytes.resize(sizeof(float)); // zeros: 0.0f
        std::shared_ptr<graph::variable_storage> decoded;
        if (const auto* t = c.attrs.get_tensor("value")) {
            decoded = decode_tensor(*t, c.who + "'s value", m_.max_bytes);
            if (num_elements(decoded->shape) != 1)
                throw model_error(c.who + ": value must hold one element");
        }
        const graph::variable_storage& v = decoded ? *decoded : fill;
        checked_bytes(v.type, shape, m_.max_bytes, c.who + "'s result");
        if (num_elements(shape) <= max_folded) {
            const bool f = is_floating(v.type);
            const double d =
                f ? element_as_double(v, 0) : static_cast<double>(element_as_int(v, 0));
            return host(make_host(v.type, shape, [&](std::size_t) { return d; }));
        }
        // Too large to fold: a constant broadcast by the graph.
        const node_id k = c.b().add_constant(v.type, element_as_double(v, 0), element_as_int(v, 0));
        return node(c.b(), shape_op(c, op_kind::broadcast_to, k, shape));
    }

    // ConstantOfShape of a rank-1 shape the graph computes (an exported while_loop gradient's
    // steps): a fill node, whose length is known when it runs (at the model's top level only).
    tval computed_length_fill(const op_context& c) {
        const auto* t = c.attrs.get_tensor("value");
        std::shared_ptr<graph::variable_storage> v;
        if (t) {
            v = decode_tensor(*t, c.who + "'s value", m_.max_bytes);
            if (num_elements(v->shape) != 1)
                throw model_error(c.who + ": value must hold one element");
        }
        const dtype type = v ? v->type : dtype::float32;
        const double value = !v                  ? 0.0
                             : is_floating(type) ? element_as_double(*v, 0)
                                                 : static_cast<double>(element_as_int(*v, 0));
        if (c.b().parent())
            needs_dims(c.who, "has a shape the graph computes, inside a subgraph");
        return node(c.b(), trace::add_fill(c.b(), type, value, use(c.l, c.input(0)),
                                           m_.max_bytes / dtype_size(type)));
    }

    tval shape_of(const op_context& c) {
        const tval& v = c.input(0);
        const auto rank = static_cast<std::int64_t>(v.shape.size());
        auto clamp = [&](std::int64_t a) {
            if (a < 0)
                a += rank;
            return std::clamp<std::int64_t>(a, 0, rank);
        };
        const std::int64_t start = clamp(c.attrs.get_int("start", 0));
        const std::int64_t end = clamp(c.attrs.get_int("end", rank));
        shape_t dims;
        for (std::int64_t d = start; d < end; ++d) {
            if (v.shape[static_cast<std::size_t>(d)] < 0)
                needs_dims(c.who,
                           "reads dim " + std::to_string(d) + " of " + shape_string(v.shape));
            dims.push_back(v.shape[static_cast<std::size_t>(d)]);
        }
        return host(make_host(dtype::int64, {static_cast<dim_t>(dims.size())},
                              [&](std::size_t i) { return dims[i]; }));
    }

    tval gather(const op_context& c) {
        const tval& data = c.input(0);
        const tval& idx = c.input(1);
        if (!data.host || !idx.host)
            throw model_error(c.who + ": Gather of values the graph computes has no xtrace op; "
                                      "only Gather on known values (shape arithmetic) is lowered");
        const auto rank = static_cast<std::int64_t>(data.shape.size());
        if (rank == 0)
            throw model_error(c.who + ": Gather from a rank-0 value");
        const std::int64_t axis = normalize_axis(c, c.attrs.get_int("axis", 0), rank);
        const auto indices = folded_ints(c, idx, "its indices");
        const std::int64_t size = data.shape[static_cast<std::size_t>(axis)];
        shape_t out(data.shape.begin(), data.shape.begin() + axis);
        out.insert(out.end(), idx.shape.begin(), idx.shape.end());
        out.insert(out.end(), data.shape.begin() + axis + 1, data.shape.end());
        checked_bytes(data.type, out, m_.max_bytes, c.who + "'s result");
        if (num_elements(out) > max_folded)
            throw model_error(c.who + ": Gather of more than " + std::to_string(max_folded) +
                              " known elements");
        std::int64_t inner = 1;
        for (auto d = static_cast<std::size_t>(axis) + 1; d < data.shape.size(); ++d)
            inner *= data.shape[d];
        const auto n_idx = static_cast<std::int64_t>(indices.size());
        for (auto i : indices)
            if (i < -size || i >= size)
                throw model_error(c.who + ": index " + std::to_string(i) +
                                  " is out of range for dim " + std::to_string(size));
        return host(make_host(data.type, out, [&](std::size_t e) {
            const auto k = static_cast<std::int64_t>(e);
            const std::int64_t o = k / (n_idx * inner), j = (k / inner) % n_idx, r = k % inner;
            const std::int64_t i = indices[static_cast<std::size_t>(j)] < 0
                                       ? indices[static_cast<std::size_t>(j)] + size
                                       : indices[static_cast<std::size_t>(j)];
            const auto src = static_cast<std::size_t>((o * size + i) * inner + r);
            return is_floating(data.type) ? element_as_double(*data.host, src)
                                          : static_cast<double>(element_as_int(*data.host, src));
        }));
    }

    tval concat(const op_context& c) {
        if (c.in.empty())
            throw model_error(c.who + " has no inputs");
        for (const tval* v : c.in)
            if (!v || !v->host)
                throw model_error(c.who + ": Concat of values the graph computes has no xtrace "
                                          "op; only Concat of known values (shapes) is lowered");
        const tval& first = *c.in[0];
        const auto rank = static_cast<std::int64_t>(first.shape.size());
        if (rank == 0)
            throw model_error(c.who + ": Concat of rank-0 values");
        const std::int64_t axis = normalize_axis(c, c.attrs.get_int("axis", 0), rank);
        shape_t out = first.shape;
        out[static_cast<std::size_t>(axis)] = 0;
        for (const tval* v : c.in) {
            if (v->type != first.type || v->shape.size() != first.shape.size())
                throw model_error(c.who + ": inputs of different element types or ranks");
            for (std::size_t d = 0; d < out.size(); ++d)
                if (static_cast<std::int64_t>(d) != axis && v->shape[d] != first.shape[d])
                    throw shape_error("Concat: shapes " + shape_string(first.shape) + " and " +
                                      shape_string(v->shape) + " differ off axis " +
                                      std::to_string(axis));
            out[static_cast<std::size_t>(axis)] += v->shape[static_cast<std::size_t>(axis)];
        }
        if (num_elements(out) > max_folded)
            throw model_error(c.who + ": Concat of more than " + std::to_string(max_folded) +
                              " known elements");
        std::int64_t outer = 1, inner = 1;
        for (std::int64_t d = 0; d < axis; ++d)
            outer *= out[static_cast<std::size_t>(d)];
        for (auto d = static_cast<std::size_t>(axis) + 1; d < out.size(); ++d)
            inner *= out[d];
        auto v = fold_result(c, first.type, out);
        std::size_t at = 0;
        const std::size_t esize = dtype_size(first.type);
        for (std::int64_t o = 0; o < outer; ++o)
            for (const tval* p : c.in) {
                const auto chunk =
                    static_cast<std::size_t>(p->shape[static_cast<std::size_t>(axis)] * inner) *
                    esize;
                if (chunk)
                    std::memcpy(v->bytes.data() + at,
                                p->host->bytes.data() + static_cast<std::size_t>(o) * chunk, chunk);
                at += chunk;
            }
        return host(std::move(v));
    }

    tval range(const op_context& c) {
        const tval& s = c.input(0);
        const tval& e = c.input(1);
        const tval& d = c.input(2);
        if (!s.host || !e.host || !d.host)
            throw model_error(c.who + ": Range over values the graph computes has no xtrace op");
        const double start = element_as_double(*s.host, 0), limit = element_as_double(*e.host, 0),
                     delta = element_as_double(*d.host, 0);
        if (delta == 0)
            throw model_error(c.who + ": Range with a delta of 0");
        const double count = std::max(0.0, std::ceil((limit - start) / delta));
        if (!(count <= static_cast<double>(max_folded)))
            throw model_error(c.who + ": Range of more than " + std::to_string(max_folded) +
                              " elements");
        return host(make_host(s.type, {static_cast<dim_t>(count)}, [&](std::size_t i) {
            return start + static_cast<double>(i) * delta;
        }));
    }

    tval slice(const op_context& c) {
        const tval& data = c.input(0);
        if (!data.host || data.shape.size() != 1)
            throw model_error(c.who + ": only Slice of a known rank-1 value (a shape) is lowered");
        std::vector<std::int64_t> starts, ends, steps{1};
        if (m_.opset >= 10) {
            starts = folded_ints(c, c.input(1), "its starts");
            ends = folded_ints(c, c.input(2), "its ends");
            if (c.has(3) &&
                folded_ints(c, c.input(3), "its axes") != std::vector<std::int64_t>{0} &&
                folded_ints(c, c.input(3), "its axes") != std::vector<std::int64_t>{-1})
                throw model_error(c.who + ": Slice of a rank-1 value along another axis");
            if (c.has(4))
                steps = folded_ints(c, c.input(4), "its steps");
        } else {
            starts = c.attrs.get_ints("starts").value_or(std::vector<std::int64_t>{});
            ends = c.attrs.get_ints("ends").value_or(std::vector<std::int64_t>{});
        }
        if (starts.size() != 1 || ends.size() != 1 || steps.size() != 1 || steps[0] == 0)
            throw model_error(c.who + ": Slice needs one start, end and non-zero step");
        const std::int64_t n = data.shape[0], step = steps[0];
        // ONNX's clamping: [0, n] for a positive step; for a negative one the start to
        // [0, n-1] and the end to [-1, n-1].
        auto fix = [&](std::int64_t v, bool is_end) {
            if (v < 0)
                v += n;
            return step > 0 ? std::clamp<std::int64_t>(v, 0, n)
                            : std::clamp<std::int64_t>(v, is_end ? -1 : 0, n - 1);
        };
        const std::int64_t b = fix(starts[0], false), e = fix(ends[0], true);
        std::vector<std::size_t> picked;
        for (std::int64_t i = b; step > 0 ? i < e : i > e; i += step)
            picked.push_back(static_cast<std::size_t>(i));
        return host(make_host(data.type, {static_cast<dim_t>(picked.size())}, [&](std::size_t i) {
            return is_floating(data.type)
                       ? element_as_double(*data.host, picked[i])
                       : static_cast<double>(element_as_int(*data.host, picked[i]));
        }));
    }

    tval squeeze_or_unsqueeze(const op_context& c, bool unsqueeze) {
        const tval& v = c.input(0);
        auto axes = axes_of(c, 13);
        const auto rank = static_cast<std::int64_t>(v.shape.size());
        if (!axes) {
            if (unsqueeze)
                throw model_error(c.who + " has no axes");
            axes.emplace();
            for (std::int64_t d = 0; d < rank; ++d) {
                if (v.shape[static_cast<std::size_t>(d)] < 0)
                    needs_dims(c.who, "squeezes every 1 of " + shape_string(v.shape));
                if (v.shape[static_cast<std::size_t>(d)] == 1)
                    axes->push_back(d);
            }
        }
        const std::int64_t out_rank =
            unsqueeze ? rank + static_cast<std::int64_t>(axes->size()) : rank;
        for (auto& a : *axes)
            a = normalize_axis(c, a, out_rank);
        std::sort(axes->begin(), axes->end());
        if (std::adjacent_find(axes->begin(), axes->end()) != axes->end())
            throw model_error(c.who + ": an axis is repeated");
        tval cur = v;
        if (unsqueeze)
            for (auto a : *axes)
                cur = shape_result(c, cur, op_kind::expand_dims, {a});
        else
            for (auto it = axes->rbegin(); it != axes->rend(); ++it)
                cur = shape_result(c, cur, op_kind::squeeze, {*it});
        return cur;
    }

    tval reshape(const op_context& c) {
        const tval& v = c.input(0);
        std::vector<std::int64_t> dims;
        if (m_.opset >= 5)
            dims = folded_ints(c, c.input(1), "its shape");
        else
            dims = c.attrs.get_ints("shape").value_or(std::vector<std::int64_t>{});
        const bool allow_zero = c.attrs.get_int("allowzero", 0) != 0;
        int open = 0;
        for (std::size_t d = 0; d < dims.size(); ++d) {
            if (dims[d] == 0 && !allow_zero) {
                if (d >= v.shape.size())
                    throw model_error(c.who + ": shape " + shape_string(dims) + " copies dim " +
                                      std::to_string(d) + " of " + shape_string(v.shape));
                dims[d] = v.shape[d];
            }
            if (dims[d] == -1)
                ++open;
            else if (dims[d] < 0)
                throw model_error(c.who + ": shape " + shape_string(dims) + " has a negative dim");
        }
        if (open > 1)
            needs_dims(c.who, "reshapes " + shape_string(v.shape) + " to " + shape_string(dims));
        return shape_result(c, v, op_kind::reshape, std::move(dims));
    }

    tval flatten(const op_context& c) {
        const tval& v = c.input(0);
        const auto rank = static_cast<std::int64_t>(v.shape.size());
        std::int64_t axis = c.attrs.get_int("axis", 1);
        if (axis < 0)
            axis += rank;
        if (axis < 0 || axis > rank)
            throw model_error(c.who + ": axis out of range for rank " + std::to_string(rank));
        auto product = [&](std::int64_t from, std::int64_t to) -> std::int64_t {
            std::int64_t p = 1;
            for (std::int64_t d = from; d < to; ++d) {
                if (v.shape[static_cast<std::size_t>(d)] < 0)
                    return -1;
                p *= v.shape[static_cast<std::size_t>(d)];
            }
            return p;
        };
        const std::int64_t outer = product(0, axis), inner = product(axis, rank);
        if (outer < 0 && inner < 0)
            needs_dims(c.who, "flattens " + shape_string(v.shape));
        return shape_result(c, v, op_kind::reshape, {outer, inner});
    }

    tval expand(const op_context& c) {
        const tval& v = c.input(0);
        const auto dims = folded_ints(c, c.input(1), "its shape");
        const auto target = broadcast_shapes(v.shape, dims);
        if (!target)
            throw shape_error("Expand: " + shape_string(v.shape) + " does not broadcast with " +
                              shape_string(dims));
        if (!is_fully_known(*target))
            needs_dims(c.who, "expands " + shape_string(v.shape) + " to " + shape_string(dims));
        if (*target == v.shape)
            return v;
        return node(c.b(), shape_op(c, op_kind::broadcast_to, use(c.l, v), *target));
    }

    node_id clip(const op_context& c) {
        node_id v = use(c.l, c.input(0));
        const dtype t = c.b().at(v).type;
        if (m_.opset >= 11) {
            if (c.has(1))
                v = elementwise(c, op_kind::maximum, {v, use(c.l, c.input(1))});
            if (c.has(2))
                v = elementwise(c, op_kind::minimum, {v, use(c.l, c.input(2))});
            return v;
        }
        if (c.attrs.find("min"))
            v = elementwise(c, op_kind::maximum, {v, constant(c, t, c.attrs.get_float("min", 0))});
        if (c.attrs.find("max"))
            v = elementwise(c, op_kind::minimum, {v, constant(c, t, c.attrs.get_float("max", 0))});
        return v;
    }

    node_id reduction(const op_context& c) {
        const std::string& op = c.n.op_type();
        node_id v = use(c.l, c.input(0));
        const auto rank = static_cast<std::int64_t>(c.b().at(v).shape.size());
        auto axes = axes_of(c, op == "ReduceSum" ? 13 : 18);
        const bool keep = c.attrs.get_int("keepdims", 1) != 0;
        if (!axes || axes->empty()) {
            if (c.attrs.get_int("noop_with_empty_axes", 0) != 0)
                return v;
            axes.emplace(static_cast<std::size_t>(rank));
            std::iota(axes->begin(), axes->end(), 0);
        }
        for (auto& a : *axes)
            a = normalize_axis(c, a, rank);
        if (op == "ReduceSumSquare")
            return reduce(c, op_kind::sum, elementwise(c, op_kind::mul, {v, v}), *axes, keep);
        if (op == "ReduceLogSumExp") {
            const node_id m = reduce(c, op_kind::max, v, *axes, true);
            const node_id e = elementwise(c, op_kind::exp, {elementwise(c, op_kind::sub, {v, m})});
            node_id s = elementwise(
                c, op_kind::add,
                {elementwise(c, op_kind::log, {reduce(c, op_kind::sum, e, *axes, true)}), m});
            if (!keep)
                s = reduce(c, op_kind::sum, s, *axes, false); // drops the kept dims of size 1
            return s;
        }
        const op_kind k = op == "ReduceSum"    ? op_kind::sum
                          : op == "ReduceMean" ? op_kind::mean
                          : op == "ReduceMax"  ? op_kind::max
                          : op == "ReduceMin"  ? op_kind::min
                                               : op_kind::prod;
        return reduce(c, k, v, *axes, keep);
    }

    // numpy's matmul: rank-1 operands get a dim of 1, dropped from the result.
    node_id matmul_numpy(const op_context& c, node_id a, node_id b) {
        const bool vec_a = c.b().at(a).shape.size() == 1, vec_b = c.b().at(b).shape.size() == 1;
        if (c.b().at(a).shape.empty() || c.b().at(b).shape.empty())
            throw shape_error("MatMul of a rank-0 value");
        if (vec_a)
            a = shape_op(c, op_kind::expand_dims, a, {0});
        if (vec_b)
            b = shape_op(c, op_kind::expand_dims, b, {1});
        node_id r = matmul(c, a, b);
        if (vec_b)
            r = shape_op(c, op_kind::squeeze, r, {-1});
        if (vec_a)
            r = shape_op(c, op_kind::squeeze, r, {vec_b ? -1 : -2});
        return r;
    }

    node_id gemm(const op_context& c) {
        node_id a = use(c.l, c.input(0)), b = use(c.l, c.input(1));
        if (c.b().at(a).shape.size() != 2 || c.b().at(b).shape.size() != 2)
            throw shape_error("Gemm: A and B must have rank 2, they are " +
                              shape_string(c.b().at(a).shape) + " and " +
                              shape_string(c.b().at(b).shape));
        if (c.attrs.get_int("transA", 0))
            a = shape_op(c, op_kind::transpose, a, {1, 0});
        if (c.attrs.get_int("transB", 0))
            b = shape_op(c, op_kind::transpose, b, {1, 0});
        const dtype t = c.b().at(a).type;
        node_id y = matmul(c, a, b);
        const float alpha = c.attrs.get_float("alpha", 1.f), beta = c.attrs.get_float("beta", 1.f);
        if (alpha != 1.f)
            y = elementwise(c, op_kind::mul, {y, constant(c, t, alpha)});
        if (c.has(2) && beta != 0.f) {
            node_id bias = use(c.l, c.input(2));
            if (beta != 1.f)
                bias = elementwise(c, op_kind::mul, {bias, constant(c, t, beta)});
            y = elementwise(c, op_kind::add, {y, bias});
        }
        return y;
    }

    node_id softmax(const op_context& c, bool log) {
        const node_id v = use(c.l, c.input(0));
        const auto rank = static_cast<std::int64_t>(c.b().at(v).shape.size());
        std::vector<std::int64_t> axes;
        if (m_.opset >= 13) {
            axes.push_back(
                normalize_axis(c, c.attrs.get_int("axis", -1), std::max<std::int64_t>(rank, 1)));
        } else { // before opset 13 the input is coerced to 2-D at `axis`: every dim from it on
            std::int64_t axis = c.attrs.get_int("axis", 1);
            axis = normalize_axis(c, axis, std::max<std::int64_t>(rank, 1));
            for (std::int64_t d = axis; d < rank; ++d)
                axes.push_back(d);
        }
        if (rank == 0)
            throw shape_error(c.n.op_type() + " of a rank-0 value");
        const node_id m = reduce(c, op_kind::max, v, axes, true);
        const node_id shifted = elementwise(c, op_kind::sub, {v, m});
        const node_id e = elementwise(c, op_kind::exp, {shifted});
        const node_id s = reduce(c, op_kind::sum, e, axes, true);
        if (log)
            return elementwise(c, op_kind::sub, {shifted, elementwise(c, op_kind::log, {s})});
        return elementwise(c, op_kind::div, {e, s});
    }

    std::vector<tval> layer_norm(const op_context& c) {
        const node_id v = use(c.l, c.input(0));
        const auto rank = static_cast<std::int64_t>(c.b().at(v).shape.size());
        const dtype t = c.b().at(v).type;
        const std::int64_t axis =
            normalize_axis(c, c.attrs.get_int("axis", -1), std::max<std::int64_t>(rank, 1));
        std::vector<std::int64_t> axes;
        for (std::int64_t d = axis; d < rank; ++d)
            axes.push_back(d);
        const node_id mean = reduce(c, op_kind::mean, v, axes, true);
        const node_id centred = elementwise(c, op_kind::sub, {v, mean});
        const node_id var =
            reduce(c, op_kind::mean, elementwise(c, op_kind::mul, {centred, centred}), axes, true);
        const node_id inv =
            elementwise(c, op_kind::rsqrt,
                        {elementwise(c, op_kind::add,
                                     {var, constant(c, t, c.attrs.get_float("epsilon", 1e-5f))})});
        node_id y = elementwise(c, op_kind::mul, {centred, inv});
        y = elementwise(c, op_kind::mul, {y, use(c.l, c.input(1))});
        if (c.has(2))
            y = elementwise(c, op_kind::add, {y, use(c.l, c.input(2))});
        return {node(c.b(), y), node(c.b(), mean), node(c.b(), inv)};
    }

    // A rank-0 bool from a one-element condition.
    node_id predicate(const op_context& c, node_id p) {
        const graph::node& n = c.b().at(p);
        if (n.type != dtype::boolean)
            throw model_error(c.who + ": the condition must be BOOL, it is " +
                              std::string(dtype_name(n.type)));
        if (n.shape.empty())
            return p;
        for (dim_t d : n.shape)
            if (d != 1)
                throw shape_error("the condition must hold one element, its shape is " +
                                  shape_string(n.shape));
        return shape_op(c, op_kind::reshape, p, {});
    }

    // The outputs of subgraph `g` lowered into level `inner` (its inputs already named).
    std::vector<trace::traced_value> lower_body(const pb::GraphProto& g, level& inner) {
        lower_graph(g, inner);
        std::vector<trace::traced_value> outs;
        for (const auto& o : g.output())
            outs.push_back(
                {&inner.b, use(inner, lookup(inner, o.name(), "subgraph '" + g.name() + "'"))});
        return outs;
    }

    std::vector<tval> if_node(const op_context& c) {
        const tval& p = c.input(0);
        const pb::GraphProto& then_g = c.attrs.get_graph("then_branch");
        const pb::GraphProto& else_g = c.attrs.get_graph("else_branch");
        if (then_g.output_size() != else_g.output_size())
            throw model_error(c.who + ": the branches return " +
                              std::to_string(then_g.output_size()) + " and " +
                              std::to_string(else_g.output_size()) + " values");
        if (p.host) { // known condition: only the taken branch, inline (as a Python if)
            if (p.type != dtype::boolean || num_elements(p.shape) != 1)
                throw model_error(c.who + ": the condition must be one BOOL");
            const pb::GraphProto& taken = element_as_int(*p.host, 0) ? then_g : else_g;
            level inner{c.b(), &c.l};
            std::vector<tval> out;
            for (const auto& v : lower_body(taken, inner))
                out.push_back(node(c.b(), v.id));
            return out;
        }
        std::vector<node_id> inputs{predicate(c, use(c.l, p))};
        std::array<trace::subgraph, 2> bodies{
            trace::trace_subgraph(c.b(),
                                  [&](const std::shared_ptr<trace::builder>& child) {
                                      level inner{*child, &c.l};
                                      return lower_body(then_g, inner);
                                  }),
            trace::trace_subgraph(c.b(), [&](const std::shared_ptr<trace::builder>& child) {
                level inner{*child, &c.l};
                return lower_body(else_g, inner);
            })};
        std::vector<graph::node> results(bodies[0].g->outputs.size());
        for (std::size_t k = 0; k < results.size(); ++k) {
            const graph::node& t = (*bodies[0].g)[bodies[0].g->outputs[k]];
            const graph::node& e = (*bodies[1].g)[bodies[1].g->outputs[k]];
            if (t.type != e.type)
                throw model_error(c.who + ": output " + std::to_string(k) + " is " +
                                  std::string(dtype_name(t.type)) + " in then_branch and " +
                                  std::string(dtype_name(e.type)) + " in else_branch");
            results[k].type = t.type;
            results[k].shape = graph::merge_branch_shapes(t.shape, e.shape, k);
        }
        trace::bind_captures(inputs, 0, 1, bodies);
        const auto ids = c.b().add_control(op_kind::cond, std::move(inputs),
                                           {bodies[0].g, bodies[1].g}, results);
        std::vector<tval> out;
        for (auto id : ids)
            out.push_back(node(c.b(), id));
        return out;
    }

    // Loop(M, cond, v...) as a while_loop over (i, going, v...): the condition is going, and
    // i < M when M is given; the body runs ONNX's body and counts i.
    std::vector<tval> loop(const op_context& c) {
        const pb::GraphProto& body = c.attrs.get_graph("body");
        const std::size_t vars = c.in.size() < 2 ? 0 : c.in.size() - 2;
        if (body.input_size() != static_cast<int>(vars + 2))
            throw model_error(c.who + ": the body takes " + std::to_string(body.input_size()) +
                              " inputs, the loop carries " + std::to_string(vars) + " (plus 2)");
        if (body.output_size() != static_cast<int>(vars + 1))
            throw model_error(c.who + ": the body returns " + std::to_string(body.output_size()) +
                              " values for " + std::to_string(vars) +
                              " loop variables: scan outputs are not lowered");
        trace::builder& b = c.b();
        std::int64_t limit = -1;
        std::optional<node_id> trips;
        if (c.has(0)) {
            if (c.input(0).host)
                limit = std::max<std::int64_t>(0, element_as_int(*c.input(0).host, 0));
            else
                trips = cast(c, use(c.l, c.input(0)), dtype::int64);
        }
        std::vector<node_id> inputs{b.add_constant(dtype::int64, 0, 0),
                                    c.has(1) ? predicate(c, use(c.l, c.input(1)))
                                             : b.add_constant(dtype::boolean, 1, 1)};
        if (trips)
            trips = predicate_free_scalar(c, *trips);
        for (std::size_t k = 0; k < vars; ++k)
            inputs.push_back(use(c.l, c.input(k + 2)));
        const std::size_t carried = inputs.size();
        auto args = [&](trace::builder& child) {
            std::vector<node_id> ids;
            for (std::size_t k = 0; k < carried; ++k)
                ids.push_back(child.add_arg(static_cast<std::int64_t>(k), b.at(inputs[k]).type,
                                            b.at(inputs[k]).shape));
            return ids;
        };
        std::array<trace::subgraph, 2> bodies{
            trace::trace_subgraph(
                b,
                [&](const std::shared_ptr<trace::builder>& child) {
                    const auto ids = args(*child);
                    node_id going = ids[1];
                    if (trips) {
                        level l{*child, &c.l};
                        const op_context cc{c.n, c.who, c.attrs, c.in, l};
                        const node_id below =
                            elementwise(cc, op_kind::less, {ids[0], child->import(&b, *trips)});
                        going = elementwise(cc, op_kind::logical_and, {going, below});
                    }
                    return std::vector<trace::traced_value>{{child.get(), going}};
                }),
            trace::trace_subgraph(b, [&](const std::shared_ptr<trace::builder>& child) {
                const auto ids = args(*child);
                level inner{*child, &c.l};
                for (int k = 0; k < body.input_size(); ++k)
                    if (!body.input(k).name().empty())
                        inner.names[body.input(k).name()] =
                            node(*child, ids[static_cast<std::size_t>(k)]);
                auto outs = lower_body(body, inner);
                const op_context cc{c.n, c.who, c.attrs, c.in, inner};
                const node_id next = elementwise(cc, op_kind::add,
                                                 {ids[0], child->add_constant(dtype::int64, 1, 1)});
                const node_id again = predicate(cc, child->import(outs[0].owner, outs[0].id));
                std::vector<trace::traced_value> result{{child.get(), next}, {child.get(), again}};
                result.insert(result.end(), outs.begin() + 1, outs.end());
                return result;
            })};
        const graph::graph& stepped = *bodies[1].g;
        std::vector<graph::node> results(carried);
        for (std::size_t k = 0; k < carried; ++k) {
            results[k].type = b.at(inputs[k]).type;
            results[k].shape = b.at(inputs[k]).shape;
            const graph::node& after = stepped[stepped.outputs[k]];
            if (after.type != results[k].type)
                throw model_error(c.who + ": loop variable " + std::to_string(k) + " is " +
                                  std::string(dtype_name(results[k].type)) +
                                  " before an iteration and " +
                                  std::string(dtype_name(after.type)) + " after");
            graph::check_loop_shape(results[k].shape, after.shape, k);
        }
        trace::bind_captures(inputs, carried, carried, bodies);
        const auto ids = b.add_control(op_kind::while_loop, std::move(inputs),
                                       {bodies[0].g, bodies[1].g}, results, limit);
        std::vector<tval> out;
        for (std::size_t k = 2; k < ids.size(); ++k)
            out.push_back(node(b, ids[k]));
        return out;
    }

    // Scan(state..., xs...) (opset 9 on) as a scan node: slices and stacks along axis 0, all
    // forward or all reversed; other axes and mixed directions are refused.
    std::vector<tval> scan(const op_context& c) {
        if (m_.opset < 9)
            throw model_error(c.who + ": Scan before opset 9 (with sequence_lens) is not lowered");
        const pb::GraphProto& body = c.attrs.get_graph("body");
        const std::int64_t scanned = c.attrs.get_int("num_scan_inputs", -1);
        if (scanned < 1 || scanned > static_cast<std::int64_t>(c.in.size()))
            throw model_error(c.who + ": num_scan_inputs is " + std::to_string(scanned) + " for " +
                              std::to_string(c.in.size()) + " inputs");
        const auto carried = c.in.size() - static_cast<std::size_t>(scanned);
        for (const char* a : {"scan_input_axes", "scan_output_axes"})
            if (const auto v = c.attrs.get_ints(a))
                for (std::int64_t x : *v)
                    if (x != 0)
                        throw model_error(c.who + ": " + a + " other than 0 is not lowered");
        // Every input and output forward, or every one reversed (what xtrace's own reverse
        // scans export as); a mix is refused. An absent list means all forward.
        std::optional<std::int64_t> direction;
        const std::size_t stacked_outputs =
            static_cast<std::size_t>(std::max(0, body.output_size() - static_cast<int>(carried)));
        for (const auto& [a, count] :
             {std::pair{"scan_input_directions", static_cast<std::size_t>(scanned)},
              std::pair{"scan_output_directions", stacked_outputs}}) {
            const auto v = c.attrs.get_ints(a);
            for (std::size_t k = 0; k < count; ++k) {
                const std::int64_t x = v && k < v->size() ? (*v)[k] : 0;
                if ((x != 0 && x != 1) || (direction && *direction != x))
                    throw model_error(c.who + ": " + a +
                                      " mixes directions; only all forward (0) or all reversed "
                                      "(1) is lowered");
                direction = x;
            }
        }
        if (body.input_size() != static_cast<int>(c.in.size()))
            throw model_error(c.who + ": the body takes " + std::to_string(body.input_size()) +
                              " inputs for " + std::to_string(c.in.size()));
        if (body.output_size() < static_cast<int>(carried))
            throw model_error(c.who + ": the body returns " + std::to_string(body.output_size()) +
                              " values for " + std::to_string(carried) + " states");
        trace::builder& b = c.b();
        std::vector<node_id> inputs;
        std::vector<shape_t> xs;
        for (std::size_t k = 0; k < c.in.size(); ++k) {
            if (!c.has(k))
                throw model_error(c.who + ": input " + std::to_string(k) + " is missing");
            inputs.push_back(use(c.l, c.input(k)));
            if (k >= carried)
                xs.push_back(b.at(inputs.back()).shape);
        }
        const std::int64_t length = graph::scan_length(xs);
        std::array<trace::subgraph, 1> bodies{
            trace::trace_subgraph(b, [&](const std::shared_ptr<trace::builder>& child) {
                std::vector<node_id> ids;
                for (std::size_t k = 0; k < inputs.size(); ++k) {
                    shape_t s = b.at(inputs[k]).shape;
                    if (k >= carried)
                        s.erase(s.begin());
                    ids.push_back(
                        child->add_arg(static_cast<std::int64_t>(k), b.at(inputs[k]).type, s));
                }
                level inner{*child, &c.l};
                for (int k = 0; k < body.input_size(); ++k)
                    if (!body.input(k).name().empty())
                        inner.names[body.input(k).name()] =
                            node(*child, ids[static_cast<std::size_t>(k)]);
                return lower_body(body, inner);
            })};
        const graph::graph& stepped = *bodies[0].g;
        std::vector<shape_t> carries;
        for (std::size_t k = 0; k < carried; ++k)
            carries.push_back(b.at(inputs[k]).shape);
        std::vector<graph::node> results(stepped.outputs.size());
        for (std::size_t k = 0; k < results.size(); ++k) {
            const graph::node& after = stepped[stepped.outputs[k]];
            results[k].type = after.type;
            if (k < carried && after.type != b.at(inputs[k]).type)
                throw model_error(c.who + ": state " + std::to_string(k) + " is " +
                                  std::string(dtype_name(b.at(inputs[k]).type)) +
                                  " before a step and " + std::string(dtype_name(after.type)) +
                                  " after");
            results[k].shape = graph::scan_result_shape(carries, k, after.shape, length);
        }
        const auto ins = inputs.size();
        trace::bind_captures(inputs, ins, ins, bodies);
        const auto ids =
            b.add_scan(std::move(inputs), bodies[0].g, results, static_cast<std::int64_t>(carried),
                       scanned, direction == std::int64_t(1));
        std::vector<tval> out;
        for (auto id : ids)
            out.push_back(node(b, id));
        return out;
    }

    // A one-element trip count as a rank-0 value.
    node_id predicate_free_scalar(const op_context& c, node_id id) {
        const shape_t& s = c.b().at(id).shape;
        if (s.empty())
            return id;
        if (num_elements(s) != 1)
            throw shape_error("Loop's trip count must hold one element, its shape is " +
                              shape_string(s));
        return shape_op(c, op_kind::reshape, id, {});
    }

    // Every tensor the lowered graph holds with known dims stays under max_tensor_bytes.
    void check_sizes(const graph::graph& g) const {
        for (const auto& n : g.nodes) {
            if (is_fully_known(n.shape))
                checked_bytes(n.type, n.shape, m_.max_bytes,
                              m_.name + ": a " + std::string(info(n.op).name) + " result");
            for (const auto& body : n.bodies)
                check_sizes(*body);
        }
    }

    const model_data& m_;
};

} // namespace

trace::finished_trace lower(const model_data& m, const std::vector<shape_t>& shapes) {
    return lowering(m).run(shapes);
}

} // namespace xtrace::onnx::detail
