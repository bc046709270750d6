// A traced graph as an ONNX model: one ONNX node (or a few) per graph node, in graph order;
// cond becomes If, while_loop becomes Loop (its condition computed before the loop and again at
// the end of each iteration), scan becomes Scan, variable reads become initializers holding the
// current values.

#include "proto.hpp"

#include <xtrace/onnx/export.hpp>
#include <xtrace/trace/fill.hpp>

#include <fstream>
#include <map>
#include <set>
#include <system_error>

namespace xtrace::onnx::detail {

namespace {

// Names a value by a graph node's id, or by its function argument position.
using name_of_arg = std::function<std::string(std::int64_t position)>;

[[noreturn]] void refuse(graph::node_id id, const graph::node& n, const std::string& why) {
    throw model_error("xtrace::onnx::export_model: node " + std::to_string(id) + " (" +
                      std::string(info(n.op).name) + ") " + why);
}

class exporter {
public:
    exporter(pb::GraphProto& main) : main_(main) {}

    // Appends the nodes of `g` to `out`; returns each node's value name (empty for nodes that
    // have none). Args are named by `arg_name`.
    std::vector<std::string> emit(const graph::graph& g, pb::GraphProto& out,
                                  const name_of_arg& arg_name) {
        const int prefix = graphs_++;
        std::vector<std::string> names(g.nodes.size());
        std::map<graph::node_id, std::vector<std::string>> control_outputs;
        for (graph::node_id id = 0; id < g.nodes.size(); ++id) {
            const graph::node& n = g[id];
            const std::string own = "t" + std::to_string(prefix) + "_" + std::to_string(id);
            auto in = [&](std::size_t k) { return names[n.inputs[k]]; };
            auto unsupported = [&](const std::string& why) { refuse(id, n, why); };
            if (is_unknown_rank(n.shape) || n.rank_pending)
                refuse(id, n,
                       "has unknown rank (a spec of xtrace::any_rank): its axes are known only "
                       "for a concrete rank; export a function traced with a rank (e.g. "
                       "xtrace::spec<T>({-1, -1}))");
            switch (n.op) {
            case op_kind::arg:
                names[id] = arg_name(n.arg_position);
                break;
            case op_kind::constant: {
                graph::variable_storage v;
                v.type = n.type;
                v.bytes.resize(dtype_size(n.type));
                visit_dtype(n.type, [&](auto tag) {
                    using T = typename decltype(tag)::type;
                    const T x =
                        is_floating(n.type) ? static_cast<T>(n.fvalue) : static_cast<T>(n.ivalue);
                    std::memcpy(v.bytes.data(), &x, sizeof(T));
                });
                names[id] = constant(out, v);
                break;
            }
            case op_kind::cast:
                int_attribute(node(out, "Cast", {in(0)}, {own}), "to", to_onnx(n.type));
                names[id] = own;
                break;
            case op_kind::square:
                node(out, "Mul", {in(0), in(0)}, {own});
                names[id] = own;
                break;
            case op_kind::floor:
            case op_kind::ceil:
            case op_kind::round:
                // Integers round to themselves; ONNX's Floor, Ceil and Round take floats only.
                node(out, is_floating(n.type) ? onnx_name(n.op) : "Identity", {in(0)}, {own});
                names[id] = own;
                break;
            case op_kind::rsqrt: {
                const std::string root = own + "_sqrt";
                node(out, "Sqrt", {in(0)}, {root});
                node(out, "Reciprocal", {root}, {own});
                names[id] = own;
                break;
            }
            case op_kind::not_equal: {
                const std::string eq = own + "_eq";
                node(out, "Equal", {in(0), in(1)}, {eq});
                node(out, "Not", {eq}, {own});
                names[id] = own;
                break;
            }
            case op_kind::clip: {
                // clip(x, lo, hi) is minimum(maximum(x, lo), hi), NaN included; ONNX's Clip
                // takes scalar bounds only.
                const std::string low = own + "_max";
                node(out, "Max", {in(0), in(1)}, {low});
                node(out, "Min", {low, in(2)}, {own});
                names[id] = own;
                break;
            }
            case op_kind::relu:
                if (is_floating(n.type)) {
                    node(out, "Relu", {in(0)}, {own});
                } else { // ONNX Runtime has no integer Relu: max(x, 0) is the same
                    graph::variable_storage zero;
                    zero.type = n.type;
                    zero.bytes.resize(dtype_size(n.type));
                    node(out, "Max", {in(0), constant(out, zero)}, {own});
                }
                names[id] = own;
                break;
            case op_kind::neg:
            case op_kind::abs:
            case op_kind::exp:
            case op_kind::log:
            case op_kind::sqrt:
            case op_kind::sin:
            case op_kind::cos:
            case op_kind::tanh:
            case op_kind::sigmoid:
            case op_kind::erf:
            case op_kind::logical_not:
            case op_kind::add:
            case op_kind::sub:
            case op_kind::mul:
            case op_kind::div:
            case op_kind::pow:
            case op_kind::minimum:
            case op_kind::maximum:
            case op_kind::less:
            case op_kind::less_equal:
            case op_kind::greater:
            case op_kind::greater_equal:
            case op_kind::equal:
            case op_kind::logical_and:
            case op_kind::logical_or:
            case op_kind::logical_xor:
            case op_kind::where: {
                std::vector<std::string> ins;
                for (std::size_t k = 0; k < n.inputs.size(); ++k)
                    ins.push_back(in(k));
                node(out, onnx_name(n.op), ins, {own});
                names[id] = own;
                break;
            }
            case op_kind::stop_gradient:
            case op_kind::ensure_shape: // ONNX checks inputs against the model's declared dims
                node(out, "Identity", {in(0)}, {own});
                names[id] = own;
                break;
            case op_kind::sum:
            case op_kind::mean:
            case op_kind::max:
            case op_kind::min:
            case op_kind::prod:
                reduction(out, onnx_name(n.op), in(0), n.axes, n.keep_dims, own);
                names[id] = own;
                break;
            case op_kind::reshape: {
                // The trace-time shape where known (reshape's -1 resolved), else the request.
                const shape_t& s = is_fully_known(n.shape) ? n.shape : n.dims;
                const bool zero = std::find(s.begin(), s.end(), 0) != s.end();
                if (zero && std::find(s.begin(), s.end(), -1) != s.end())
                    unsupported("reshapes to " + shape_string(n.dims) +
                                ": ONNX's Reshape cannot take a 0 dim and a -1 together");
                auto* r = node(out, "Reshape", {in(0), ints(out, s)}, {own});
                if (zero)
                    int_attribute(r, "allowzero", 1);
                names[id] = own;
                break;
            }
            case op_kind::transpose:
                ints_attribute(node(out, "Transpose", {in(0)}, {own}), "perm", n.axes);
                names[id] = own;
                break;
            case op_kind::expand_dims:
                node(out, "Unsqueeze", {in(0), ints(out, n.axes)}, {own});
                names[id] = own;
                break;
            case op_kind::squeeze:
                node(out, "Squeeze", {in(0), ints(out, n.axes)}, {own});
                names[id] = own;
                break;
            case op_kind::broadcast_to:
                node(out, "Expand", {in(0), ints(out, n.dims)}, {own});
                names[id] = own;
                break;
            case op_kind::matmul:
                node(out, "MatMul", {in(0), in(1)}, {own});
                names[id] = own;
                break;
            case op_kind::sum_to: {
                const shape_t& from = g[n.inputs[0]].shape;
                const shape_t& to = n.shape;
                if (!is_fully_known(from) || !is_fully_known(to))
                    unsupported("sums " + shape_string(from) + " to " + shape_string(to) +
                                ": ONNX needs the summed dims known when the model is written");
                std::vector<std::int64_t> axes;
                const std::size_t lead = from.size() - to.size();
                for (std::size_t d = 0; d < from.size(); ++d)
                    if (d < lead || (to[d - lead] == 1 && from[d] != 1))
                        axes.push_back(static_cast<std::int64_t>(d));
                const std::string summed = own + "_sum";
                reduction(out, "ReduceSum", in(0), axes, true, summed);
                node(out, "Reshape", {summed, ints(out, to)}, {own});
                names[id] = own;
                break;
            }
            case op_kind::read_variable:
                if (n.var->argument >= 0)
                    refuse(id, n,
                           "reads " + n.var->describe() +
                               ", passed as an argument; a model cannot take a variable: export "
                               "a function that takes its value as a tensor");
                names[id] = initializer(*n.var);
                break;
            case op_kind::print:
                refuse(id, n,
                       "'" + n.text + "' is a side effect of the program; an ONNX model has none");
            case op_kind::host_function: {
                const trace::fill_call* fill = trace::as_fill(n);
                if (!fill)
                    refuse(id, n, "runs a C++ callback, which a model file cannot hold");
                // A fill of computed length (a while_loop gradient's steps): ConstantOfShape of
                // that length as a rank-1 int64 shape.
                const std::string wide = own + "_n", shape = own + "_shape";
                int_attribute(node(out, "Cast", {in(0)}, {wide}), "to", to_onnx(dtype::int64));
                node(out, "Reshape", {wide, ints(out, {1})}, {shape});
                graph::variable_storage v;
                v.type = n.type;
                v.shape = {1};
                v.bytes.resize(dtype_size(n.type));
                visit_dtype(n.type, [&](auto tag) {
                    using T = typename decltype(tag)::type;
                    const T x = static_cast<T>(fill->value);
                    std::memcpy(v.bytes.data(), &x, sizeof(T));
                });
                auto* c = node(out, "ConstantOfShape", {shape}, {own});
                auto* a = c->add_attribute();
                a->set_name("value");
                a->set_type(pb::AttributeProto::TENSOR);
                encode_tensor(v, *a->mutable_t());
                names[id] = own;
                break;
            }
            case op_kind::assign_variable:
                refuse(id, n,
                       "assigns " + n.var->describe() +
                           "; an ONNX model has no state: export a function that only reads it");
            case op_kind::cond:
                control_outputs[id] = emit_cond(g, id, names, out, own);
                break;
            case op_kind::while_loop:
                control_outputs[id] = emit_loop(g, id, names, out, own);
                break;
            case op_kind::scan:
                control_outputs[id] = emit_scan(g, id, names, out, own);
                break;
            case op_kind::result:
                names[id] =
                    control_outputs.at(n.inputs[0]).at(static_cast<std::size_t>(n.result_index));
                break;
            }
        }
        return names;
    }

    // Names an output: an Identity node per output keeps outputs distinct from inputs and from
    // each other.
    void output(pb::GraphProto& out, const std::string& value, const std::string& name, dtype type,
                const shape_t& shape) {
        node(out, "Identity", {value}, {name});
        describe_value(*out.add_output(), name, type, shape);
    }

    static void describe_value(pb::ValueInfoProto& v, const std::string& name, dtype type,
                               const shape_t& shape, const std::string& dim_prefix = "") {
        v.set_name(name);
        auto* t = v.mutable_type()->mutable_tensor_type();
        t->set_elem_type(to_onnx(type));
        auto* s = t->mutable_shape();
        for (std::size_t d = 0; d < shape.size(); ++d) {
            auto* dim = s->add_dim();
            if (shape[d] >= 0)
                dim->set_dim_value(shape[d]);
            else if (!dim_prefix.empty())
                dim->set_dim_param(dim_prefix + "_d" + std::to_string(d));
        }
    }

private:
    static const char* onnx_name(op_kind op) {
        switch (op) {
        case op_kind::neg:
            return "Neg";
        case op_kind::abs:
            return "Abs";
        case op_kind::relu:
            return "Relu";
        case op_kind::floor:
            return "Floor";
        case op_kind::ceil:
            return "Ceil";
        case op_kind::round:
            return "Round";
        case op_kind::exp:
            return "Exp";
        case op_kind::log:
            return "Log";
        case op_kind::sqrt:
            return "Sqrt";
        case op_kind::sin:
            return "Sin";
        case op_kind::cos:
            return "Cos";
        case op_kind::tanh:
            return "Tanh";
        case op_kind::sigmoid:
            return "Sigmoid";
        case op_kind::erf:
            return "Erf";
        case op_kind::logical_not:
            return "Not";
        case op_kind::add:
            return "Add";
        case op_kind::sub:
            return "Sub";
        case op_kind::mul:
            return "Mul";
        case op_kind::div:
            return "Div";
        case op_kind::pow:
            return "Pow";
        case op_kind::minimum:
            return "Min";
        case op_kind::maximum:
            return "Max";
        case op_kind::less:
            return "Less";
        case op_kind::less_equal:
            return "LessOrEqual";
        case op_kind::greater:
            return "Greater";
        case op_kind::greater_equal:
            return "GreaterOrEqual";
        case op_kind::equal:
            return "Equal";
        case op_kind::logical_and:
            return "And";
        case op_kind::logical_or:
            return "Or";
        case op_kind::logical_xor:
            return "Xor";
        case op_kind::where:
            return "Where";
        case op_kind::sum:
            return "ReduceSum";
        case op_kind::mean:
            return "ReduceMean";
        case op_kind::max:
            return "ReduceMax";
        case op_kind::min:
            return "ReduceMin";
        case op_kind::prod:
            return "ReduceProd";
        default:
            return "?";
        }
    }

    pb::NodeProto* node(pb::GraphProto& out, const std::string& op,
                        const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs) {
        auto* n = out.add_node();
        n->set_op_type(op);
        n->set_name("n" + std::to_string(nodes_++) + "_" + op);
        for (const auto& i : inputs)
            n->add_input(i);
        for (const auto& o : outputs)
            n->add_output(o);
        return n;
    }

    static void int_attribute(pb::NodeProto* n, const std::string& name, std::int64_t v) {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(pb::AttributeProto::INT);
        a->set_i(v);
    }

    static void ints_attribute(pb::NodeProto* n, const std::string& name,
                               const std::vector<std::int64_t>& v) {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(pb::AttributeProto::INTS);
        for (auto x : v)
            a->add_ints(x);
    }

    static void graph_attribute(pb::NodeProto* n, const std::string& name, pb::GraphProto g) {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(pb::AttributeProto::GRAPH);
        *a->mutable_g() = std::move(g);
    }

    // A Constant node holding `v`; returns its name.
    std::string constant(pb::GraphProto& out, const graph::variable_storage& v) {
        const std::string name = "k" + std::to_string(constants_++);
        auto* c = node(out, "Constant", {}, {name});
        auto* a = c->add_attribute();
        a->set_name("value");
        a->set_type(pb::AttributeProto::TENSOR);
        encode_tensor(v, *a->mutable_t());
        return name;
    }

    // A Constant node holding int64 `v` (rank 1, or rank 0 when `scalar`); returns its name.
    std::string ints(pb::GraphProto& out, const std::vector<std::int64_t>& v, bool scalar = false) {
        const std::string name = "k" + std::to_string(constants_++);
        auto* c = node(out, "Constant", {}, {name});
        auto* a = c->add_attribute();
        a->set_name("value");
        a->set_type(pb::AttributeProto::TENSOR);
        auto* t = a->mutable_t();
        t->set_data_type(pb::TensorProto::INT64);
        if (!scalar)
            t->add_dims(static_cast<std::int64_t>(v.size()));
        for (auto x : v)
            t->add_int64_data(x);
        return name;
    }

    // A reduction over `axes` (none: the value itself). Opset 17 takes ReduceSum's axes as an
    // input and the other reductions' as an attribute.
    void reduction(pb::GraphProto& out, const std::string& op, const std::string& in,
                   const std::vector<std::int64_t>& axes, bool keep, const std::string& own) {
        if (axes.empty()) {
            node(out, "Identity", {in}, {own});
            return;
        }
        pb::NodeProto* r = op == "ReduceSum" ? node(out, op, {in, ints(out, axes)}, {own})
                                             : node(out, op, {in}, {own});
        if (op != "ReduceSum")
            ints_attribute(r, "axes", axes);
        int_attribute(r, "keepdims", keep ? 1 : 0);
    }

    // The initializer holding variable `v`'s current value; one per variable.
    std::string initializer(const graph::variable_storage& v) {
        if (auto it = initializers_.find(&v); it != initializers_.end())
            return it->second;
        std::string name = v.name.empty() ? "variable" : v.name;
        for (char& c : name)
            if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
                c = '_';
        name = "var_" + name + "_" + std::to_string(initializers_.size());
        auto* t = main_.add_initializer();
        {
            const std::lock_guard lock(v.mutex);
            encode_tensor(v, *t);
        }
        t->set_name(name);
        initializers_.emplace(&v, name);
        return name;
    }

    std::vector<std::string> emit_cond(const graph::graph& g, graph::node_id id,
                                       const std::vector<std::string>& names, pb::GraphProto& out,
                                       const std::string& own) {
        const graph::node& n = g[id];
        auto outer = [&](std::int64_t p) { return names[n.inputs[static_cast<std::size_t>(p)]]; };
        std::vector<std::string> results;
        for (std::size_t k = 0; k < n.bodies[0]->outputs.size(); ++k)
            results.push_back(own + "_r" + std::to_string(k));
        auto* c = node(out, "If", {names[n.inputs[0]]}, results);
        const char* branch_names[] = {"then_branch", "else_branch"};
        for (std::size_t b = 0; b < 2; ++b) {
            const graph::graph& body = *n.bodies[b];
            pb::GraphProto sub;
            sub.set_name(own + (b ? "_else" : "_then"));
            const auto inner = emit(body, sub, outer);
            for (std::size_t k = 0; k < body.outputs.size(); ++k) {
                const graph::node& o = body[body.outputs[k]];
                output(sub, inner[body.outputs[k]], results[k] + (b ? "_else" : "_then"), o.type,
                       o.shape);
            }
            graph_attribute(c, branch_names[b], std::move(sub));
        }
        return results;
    }

    std::vector<std::string> emit_loop(const graph::graph& g, graph::node_id id,
                                       const std::vector<std::string>& names, pb::GraphProto& out,
                                       const std::string& own) {
        const graph::node& n = g[id];
        const graph::graph& test = *n.bodies[0];
        const graph::graph& body = *n.bodies[1];
        const std::size_t vars = body.outputs.size();
        auto outer = [&](std::int64_t p) { return names[n.inputs[static_cast<std::size_t>(p)]]; };
        // ONNX's Loop tests its condition after each iteration: test it once before the loop.
        const std::string first = emit(test, out, outer)[test.outputs[0]];
        const std::string trips =
            n.max_iterations >= 0 ? ints(out, {n.max_iterations}, true) : std::string();
        std::vector<std::string> inputs{trips, first}, results;
        for (std::size_t k = 0; k < vars; ++k) {
            inputs.push_back(outer(static_cast<std::int64_t>(k)));
            results.push_back(own + "_r" + std::to_string(k));
        }
        pb::GraphProto sub;
        sub.set_name(own + "_body");
        describe_value(*sub.add_input(), own + "_iteration", dtype::int64, {});
        describe_value(*sub.add_input(), own + "_going", dtype::boolean, {});
        std::vector<std::string> current;
        for (std::size_t k = 0; k < vars; ++k) {
            current.push_back(own + "_v" + std::to_string(k));
            const graph::node& init = g[n.inputs[k]];
            describe_value(*sub.add_input(), current.back(), init.type, init.shape);
        }
        auto in_body = [&](const std::vector<std::string>& loop_vars) {
            return [&, loop_vars](std::int64_t p) {
                return p < static_cast<std::int64_t>(vars) ? loop_vars[static_cast<std::size_t>(p)]
                                                           : outer(p);
            };
        };
        const auto stepped = emit(body, sub, in_body(current));
        std::vector<std::string> next;
        for (std::size_t k = 0; k < vars; ++k)
            next.push_back(stepped[body.outputs[k]]);
        const std::string again = emit(test, sub, in_body(next))[test.outputs[0]];
        output(sub, again, own + "_again", dtype::boolean, {});
        for (std::size_t k = 0; k < vars; ++k) {
            const graph::node& init = g[n.inputs[k]];
            output(sub, next[k], own + "_next" + std::to_string(k), init.type, init.shape);
        }
        graph_attribute(node(out, "Loop", inputs, results), "body", std::move(sub));
        return results;
    }

    // Scan(carries..., xs...) with num_scan_inputs = xs, slicing and stacking along axis 0 (the
    // defaults); the body's state and slice inputs are its first args.
    std::vector<std::string> emit_scan(const graph::graph& g, graph::node_id id,
                                       const std::vector<std::string>& names, pb::GraphProto& out,
                                       const std::string& own) {
        const graph::node& n = g[id];
        const graph::graph& body = *n.bodies[0];
        const auto ins = static_cast<std::size_t>(n.carried + n.scanned);
        auto outer = [&](std::int64_t p) { return names[n.inputs[static_cast<std::size_t>(p)]]; };
        std::vector<std::string> inputs, results, local;
        for (std::size_t k = 0; k < ins; ++k)
            inputs.push_back(outer(static_cast<std::int64_t>(k)));
        for (std::size_t k = 0; k < body.outputs.size(); ++k)
            results.push_back(own + "_r" + std::to_string(k));
        pb::GraphProto sub;
        sub.set_name(own + "_body");
        for (std::size_t k = 0; k < ins; ++k) {
            const graph::node& in = g[n.inputs[k]];
            local.push_back(own + (k < static_cast<std::size_t>(n.carried) ? "_state" : "_slice") +
                            std::to_string(k));
            shape_t s = in.shape;
            if (k >= static_cast<std::size_t>(n.carried))
                s.erase(s.begin());
            describe_value(*sub.add_input(), local.back(), in.type, s);
        }
        const auto stepped = emit(body, sub, [&](std::int64_t p) {
            return p < static_cast<std::int64_t>(ins) ? local[static_cast<std::size_t>(p)]
                                                      : outer(p);
        });
        for (std::size_t k = 0; k < body.outputs.size(); ++k) {
            const graph::node& o = body[body.outputs[k]];
            const shape_t s =
                k < static_cast<std::size_t>(n.carried) ? g[n.inputs[k]].shape : o.shape;
            output(sub, stepped[body.outputs[k]], own + "_out" + std::to_string(k), o.type, s);
        }
        auto* scan = node(out, "Scan", inputs, results);
        int_attribute(scan, "num_scan_inputs", n.scanned);
        if (n.reverse) { // ONNX: each scanned input read backwards, each output prepended
            ints_attribute(scan, "scan_input_directions",
                           std::vector<std::int64_t>(static_cast<std::size_t>(n.scanned), 1));
            // An INTS attribute with no values is malformed for ONNX's checker: a scan with no
            // per-step outputs (a loop gradient's reverse scan) has none.
            const std::size_t per_step = body.outputs.size() - static_cast<std::size_t>(n.carried);
            if (per_step > 0)
                ints_attribute(scan, "scan_output_directions",
                               std::vector<std::int64_t>(per_step, 1));
        }
        graph_attribute(scan, "body", std::move(sub));
        return results;
    }

    pb::GraphProto& main_;
    std::map<const graph::variable_storage*, std::string> initializers_;
    int graphs_ = 0;
    int nodes_ = 0;
    int constants_ = 0;
};

} // namespace

std::string export_trace(const function_detail::trace_entry& t, const std::string& name) {
    pb::ModelProto m;
    m.set_ir_version(8); // opset 17's
    m.set_producer_name("xtrace");
    m.set_producer_version(std::to_string(XTRACE_VERSION_MAJOR) + "." +
                           std::to_string(XTRACE_VERSION_MINOR) + "." +
                           std::to_string(XTRACE_VERSION_PATCH));
    auto* opset = m.add_opset_import();
    opset->set_domain("");
    opset->set_version(export_opset);
    pb::GraphProto& g = *m.mutable_graph();
    std::string graph_name = name;
    for (char& c : graph_name)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
            c = '_';
    g.set_name(graph_name);
    g.set_doc_string(name + t.pretty());
    exporter e(g);
    auto arg_name = [](std::int64_t p) { return "x" + std::to_string(p); };
    for (graph::node_id a : t.g.args) {
        const graph::node& n = t.g[a];
        exporter::describe_value(*g.add_input(), arg_name(n.arg_position), n.type, n.shape,
                                 arg_name(n.arg_position));
    }
    const auto names = e.emit(t.g, g, arg_name);
    for (std::size_t k = 0; k < t.g.outputs.size(); ++k)
        e.output(g, names[t.g.outputs[k]], "y" + std::to_string(k), t.outputs[k].type,
                 t.outputs[k].dims);
    std::string bytes;
    if (!m.SerializeToString(&bytes))
        throw model_error("xtrace::onnx::export_model: the model of " + name +
                          " could not be serialized (over 2 GiB?)");
    return bytes;
}

void write_file(const std::filesystem::path& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (out)
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out)
        throw std::system_error(errno, std::generic_category(),
                                "xtrace::onnx::save: cannot write " + path.string());
}

} // namespace xtrace::onnx::detail
