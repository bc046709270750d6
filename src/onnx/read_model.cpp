// Checking a model file before anything runs: it parses, declares an opset xtrace reads, names
// every value once and defines it before use (which also rules out cycles), uses only ops xtrace
// lowers, and its initializers hold what their shapes say.

#include "model_data.hpp"

#include <climits>
#include <unordered_set>

namespace xtrace::onnx::detail {

namespace {

const std::unordered_set<std::string_view>& supported_ops() {
    static const std::unordered_set<std::string_view> ops{"Identity",
                                                          "Dropout",
                                                          "Constant",
                                                          "ConstantOfShape",
                                                          "Shape",
                                                          "Size",
                                                          "Gather",
                                                          "Concat",
                                                          "Unsqueeze",
                                                          "Squeeze",
                                                          "Reshape",
                                                          "Flatten",
                                                          "Expand",
                                                          "Transpose",
                                                          "Cast",
                                                          "Range",
                                                          "Slice",
                                                          "Neg",
                                                          "Abs",
                                                          "Relu",
                                                          "Floor",
                                                          "Ceil",
                                                          "Round",
                                                          "Exp",
                                                          "Log",
                                                          "Sqrt",
                                                          "Reciprocal",
                                                          "Sin",
                                                          "Cos",
                                                          "Tanh",
                                                          "Sigmoid",
                                                          "Erf",
                                                          "Not",
                                                          "LeakyRelu",
                                                          "Add",
                                                          "Sub",
                                                          "Mul",
                                                          "Div",
                                                          "Pow",
                                                          "Less",
                                                          "LessOrEqual",
                                                          "Greater",
                                                          "GreaterOrEqual",
                                                          "Equal",
                                                          "And",
                                                          "Or",
                                                          "Xor",
                                                          "Where",
                                                          "Min",
                                                          "Max",
                                                          "Sum",
                                                          "Mean",
                                                          "Clip",
                                                          "ReduceSum",
                                                          "ReduceMean",
                                                          "ReduceMax",
                                                          "ReduceMin",
                                                          "ReduceProd",
                                                          "ReduceSumSquare",
                                                          "ReduceLogSumExp",
                                                          "MatMul",
                                                          "Gemm",
                                                          "Softmax",
                                                          "LogSoftmax",
                                                          "LayerNormalization",
                                                          "If",
                                                          "Loop",
                                                          "Scan"};
    return ops;
}

// A value's dtype and dims from its ValueInfo; `what` names it in messages.
tensor_spec spec_of(const pb::ValueInfoProto& v, const std::string& what) {
    if (!v.has_type() || !v.type().has_tensor_type())
        throw model_error(what + " is not a tensor (sequences, maps and optionals are not read)");
    const auto& t = v.type().tensor_type();
    const auto type = from_onnx(t.elem_type());
    if (!type)
        throw model_error(what + " has element type " + onnx_type_name(t.elem_type()) +
                          "; xtrace has FLOAT, DOUBLE, INT32, INT64 and BOOL");
    if (!t.has_shape())
        throw model_error(what + " has no shape: xtrace needs every input's rank");
    if (t.shape().dim_size() > XTRACE_MAX_RANK)
        throw model_error(what + " has rank " + std::to_string(t.shape().dim_size()) +
                          "; the most xtrace supports is " + std::to_string(XTRACE_MAX_RANK));
    tensor_spec s{*type, {}};
    for (const auto& d : t.shape().dim()) {
        if (d.has_dim_value() && d.dim_value() < 0)
            throw model_error(what + " has a negative dim " + std::to_string(d.dim_value()));
        s.dims.push_back(d.has_dim_value() ? d.dim_value() : unknown_dim);
    }
    return s;
}

class checker {
public:
    explicit checker(const model_data& m) : m_(m) {}

    // Checks `g` given the names its enclosing graphs define.
    void check(const pb::GraphProto& g, std::unordered_set<std::string> defined, int depth) {
        const std::string where = depth ? "subgraph '" + g.name() + "'" : "the graph";
        if (depth > 32)
            throw model_error("subgraphs nest more than 32 deep");
        auto define = [&](const std::string& name, const std::string& what) {
            if (name.empty())
                throw model_error(what + " has an empty name");
            if (!defined.insert(name).second)
                throw model_error(what + " defines '" + name +
                                  "', which is already defined (names must be unique)");
        };
        for (const auto& t : g.initializer())
            define(t.name(), where + "'s initializer");
        for (const auto& i : g.input())
            if (depth == 0 ? !m_.initializers.count(i.name()) : true)
                define(i.name(), where + "'s input");
        for (int k = 0; k < g.node_size(); ++k) {
            const pb::NodeProto& n = g.node(k);
            const std::string who = describe(n, k) + " in " + where;
            if (!n.domain().empty() && n.domain() != "ai.onnx")
                throw model_error(who + " is from domain '" + n.domain() +
                                  "', which xtrace does not read");
            if (!supported_ops().count(n.op_type()))
                throw model_error(who + ": xtrace has no lowering for op '" + n.op_type() + "'");
            for (const auto& in : n.input())
                if (!in.empty() && !defined.count(in))
                    throw model_error(who + " reads '" + in +
                                      "', which no input, initializer or earlier node defines "
                                      "(a misspelt name, a cycle, or nodes out of order)");
            for (const auto& a : n.attribute())
                if (a.has_g() || a.type() == pb::AttributeProto::GRAPH)
                    check(a.g(), defined, depth + 1);
                else if (a.graphs_size() > 0)
                    throw model_error(who + ": attribute '" + a.name() +
                                      "' holds a list of graphs, which xtrace does not read");
            for (const auto& out : n.output())
                if (!out.empty())
                    define(out, who);
        }
        for (const auto& o : g.output())
            if (!defined.count(o.name()))
                throw model_error(where + "'s output '" + o.name() + "' is never defined");
    }

private:
    const model_data& m_;
};

} // namespace

std::shared_ptr<const model_data> read_model(std::string_view bytes, const load_options& options) {
    auto m = std::make_shared<model_data>();
    m->max_bytes = options.max_tensor_bytes;
    if (bytes.size() > static_cast<std::size_t>(INT_MAX))
        throw model_error("xtrace::onnx::load: a model of over 2 GiB cannot be read");
    if (!m->proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
        throw model_error("xtrace::onnx::load: the bytes are not an ONNX model (protobuf could not "
                          "parse them: truncated, corrupt, or a field of the wrong type)");
    const pb::ModelProto& p = m->proto;
    for (const auto& o : p.opset_import()) {
        if (o.domain().empty() || o.domain() == "ai.onnx") {
            if (o.version() > newest_opset || o.version() < 1)
                throw model_error("xtrace::onnx::load: the model needs opset " +
                                  std::to_string(o.version()) +
                                  " of the default domain; xtrace reads opsets 1 to " +
                                  std::to_string(newest_opset));
            m->opset = o.version();
        }
    }
    if (m->opset == 0)
        throw model_error("xtrace::onnx::load: the model imports no opset of the default domain");
    if (!p.has_graph())
        throw model_error("xtrace::onnx::load: the model has no graph");
    const pb::GraphProto& g = p.graph();
    m->name = !options.name.empty() ? options.name
              : !g.name().empty()   ? "model '" + g.name() + "'"
                                    : "the ONNX model";
    const std::string who = "xtrace::onnx::load: " + m->name;
    for (const auto& t : g.initializer()) {
        auto v = decode_tensor(t, who + ": initializer '" + t.name() + "'", m->max_bytes);
        v->name = t.name();
        if (!m->initializers.emplace(t.name(), std::move(v)).second)
            throw model_error(who + ": initializer '" + t.name() + "' is defined twice");
    }
    for (const auto& i : g.input()) {
        if (m->initializers.count(i.name()))
            continue; // an input with a default: xtrace treats it as the constant
        m->inputs.push_back(spec_of(i, who + ": input '" + i.name() + "'"));
        m->input_names.push_back(i.name());
    }
    for (const auto& o : g.output()) {
        if (o.name().empty())
            throw model_error(who + ": an output has an empty name");
        tensor_spec s{dtype::float32, {}};
        if (o.has_type() && o.type().has_tensor_type() && o.type().tensor_type().has_shape())
            s = spec_of(o, who + ": output '" + o.name() + "'");
        else if (o.has_type() && o.type().has_tensor_type()) {
            const auto type = from_onnx(o.type().tensor_type().elem_type());
            if (!type)
                throw model_error(who + ": output '" + o.name() + "' has element type " +
                                  onnx_type_name(o.type().tensor_type().elem_type()));
            s.type = *type;
        }
        m->outputs.push_back(s);
        m->output_names.push_back(o.name());
    }
    if (m->output_names.empty())
        throw model_error(who + " has no outputs");
    try {
        checker(*m).check(g, {}, 0);
    } catch (const model_error& e) {
        throw model_error(who + ": " + e.what());
    }
    return m;
}

} // namespace xtrace::onnx::detail
