#include "proto.hpp"

#include <cstring>
#include <limits>

namespace xtrace::onnx::detail {

std::optional<dtype> from_onnx(std::int64_t code) noexcept {
    switch (code) {
    case pb::TensorProto::FLOAT:
        return dtype::float32;
    case pb::TensorProto::DOUBLE:
        return dtype::float64;
    case pb::TensorProto::INT32:
        return dtype::int32;
    case pb::TensorProto::INT64:
        return dtype::int64;
    case pb::TensorProto::BOOL:
        return dtype::boolean;
    default:
        return std::nullopt;
    }
}

pb::TensorProto::DataType to_onnx(dtype t) noexcept {
    switch (t) {
    case dtype::float32:
        return pb::TensorProto::FLOAT;
    case dtype::float64:
        return pb::TensorProto::DOUBLE;
    case dtype::int32:
        return pb::TensorProto::INT32;
    case dtype::int64:
        return pb::TensorProto::INT64;
    case dtype::boolean:
        return pb::TensorProto::BOOL;
    }
    return pb::TensorProto::UNDEFINED;
}

std::string onnx_type_name(std::int64_t code) {
    if (code >= std::numeric_limits<int>::min() && code <= std::numeric_limits<int>::max() &&
        pb::TensorProto::DataType_IsValid(static_cast<int>(code)))
        return pb::TensorProto::DataType_Name(static_cast<pb::TensorProto::DataType>(code));
    return "element type " + std::to_string(code);
}

std::string describe(const pb::NodeProto& n, int index) {
    std::string who =
        n.name().empty() ? "node " + std::to_string(index) : "node '" + n.name() + "'";
    return who + " (" + n.op_type() + ")";
}

std::uint64_t checked_bytes(dtype type, std::span<const std::int64_t> dims, std::uint64_t max_bytes,
                            const std::string& what) {
    if (dims.size() > XTRACE_MAX_RANK)
        throw model_error(what + " has rank " + std::to_string(dims.size()) +
                          "; the most xtrace supports is " + std::to_string(XTRACE_MAX_RANK));
    std::uint64_t bytes = dtype_size(type);
    bool empty = false;
    for (std::int64_t d : dims) {
        if (d < 0)
            throw model_error(what + " has a negative dim " + shape_string(dims));
        if (d == 0)
            empty = true;
    }
    if (empty)
        return 0;
    for (std::int64_t d : dims) {
        if (bytes > max_bytes / static_cast<std::uint64_t>(d))
            throw model_error(what + " of shape " + shape_string(dims) + " would hold more than " +
                              std::to_string(max_bytes) +
                              " bytes (load_options::max_tensor_bytes)");
        bytes *= static_cast<std::uint64_t>(d);
    }
    return bytes;
}

namespace {

// Copies `count` typed elements of a repeated field into `out`, converted to T.
template <class T, class Field>
void copy_field(const Field& field, std::byte* out) {
    auto* o = reinterpret_cast<T*>(out);
    for (int i = 0; i < field.size(); ++i)
        o[i] = scalar::convert<T>(field.Get(i));
}

} // namespace

std::shared_ptr<graph::variable_storage>
decode_tensor(const pb::TensorProto& t, const std::string& what, std::uint64_t max_bytes) {
    const auto type = from_onnx(t.data_type());
    if (!type)
        throw model_error(what + " has element type " + onnx_type_name(t.data_type()) +
                          "; xtrace has FLOAT, DOUBLE, INT32, INT64 and BOOL");
    if (t.data_location() == pb::TensorProto::EXTERNAL || t.external_data_size() > 0)
        throw model_error(what + " keeps its data in an external file; xtrace loads "
                                 "self-contained models only");
    if (t.has_segment())
        throw model_error(what + " is a segment of a tensor; xtrace loads whole tensors only");
    const shape_t dims(t.dims().begin(), t.dims().end());
    const std::uint64_t bytes = checked_bytes(*type, dims, max_bytes, what);
    const std::uint64_t count = bytes / dtype_size(*type);
    auto v = std::make_shared<graph::variable_storage>();
    v->name = what;
    v->type = *type;
    v->shape = dims;
    auto size_error = [&](std::uint64_t got, std::string_view field) {
        return model_error(what + " of shape " + shape_string(dims) + " needs " +
                           std::to_string(count) + " elements, its " + std::string(field) +
                           " holds " + std::to_string(got));
    };
    if (t.has_raw_data()) {
        if (t.raw_data().size() != bytes)
            throw size_error(t.raw_data().size() / dtype_size(*type), "raw_data");
        v->bytes.resize(bytes);
        if (bytes)
            std::memcpy(v->bytes.data(), t.raw_data().data(), bytes);
        if (*type == dtype::boolean) // a byte other than 0 or 1 is not a bool
            for (auto& b : v->bytes)
                b = std::byte(b != std::byte(0));
        return v;
    }
    v->bytes.resize(bytes);
    switch (*type) {
    case dtype::float32:
        if (static_cast<std::uint64_t>(t.float_data_size()) != count)
            throw size_error(t.float_data_size(), "float_data");
        copy_field<float>(t.float_data(), v->bytes.data());
        break;
    case dtype::float64:
        if (static_cast<std::uint64_t>(t.double_data_size()) != count)
            throw size_error(t.double_data_size(), "double_data");
        copy_field<double>(t.double_data(), v->bytes.data());
        break;
    case dtype::int32:
        if (static_cast<std::uint64_t>(t.int32_data_size()) != count)
            throw size_error(t.int32_data_size(), "int32_data");
        copy_field<std::int32_t>(t.int32_data(), v->bytes.data());
        break;
    case dtype::boolean:
        if (static_cast<std::uint64_t>(t.int32_data_size()) != count)
            throw size_error(t.int32_data_size(), "int32_data");
        copy_field<bool>(t.int32_data(), v->bytes.data());
        break;
    case dtype::int64:
        if (static_cast<std::uint64_t>(t.int64_data_size()) != count)
            throw size_error(t.int64_data_size(), "int64_data");
        copy_field<std::int64_t>(t.int64_data(), v->bytes.data());
        break;
    }
    return v;
}

void encode_tensor(const graph::variable_storage& v, pb::TensorProto& t) {
    t.set_data_type(to_onnx(v.type));
    for (dim_t d : v.shape)
        t.add_dims(d);
    t.set_raw_data(v.bytes.data(), v.bytes.size());
}

double element_as_double(const graph::variable_storage& v, std::size_t i) {
    return visit_dtype(v.type, [&](auto tag) {
        using T = typename decltype(tag)::type;
        T x;
        std::memcpy(&x, v.bytes.data() + i * sizeof(T), sizeof(T));
        return static_cast<double>(x);
    });
}

std::int64_t element_as_int(const graph::variable_storage& v, std::size_t i) {
    return visit_dtype(v.type, [&](auto tag) {
        using T = typename decltype(tag)::type;
        T x;
        std::memcpy(&x, v.bytes.data() + i * sizeof(T), sizeof(T));
        return scalar::convert<std::int64_t>(x);
    });
}

std::vector<std::int64_t> as_ints(const graph::variable_storage& v) {
    std::vector<std::int64_t> out(v.bytes.size() / dtype_size(v.type));
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = element_as_int(v, i);
    return out;
}

const pb::AttributeProto* attributes::find(std::string_view name) const {
    for (const auto& a : node_.attribute())
        if (a.name() == name)
            return &a;
    return nullptr;
}

const pb::AttributeProto* attributes::typed(std::string_view name,
                                            pb::AttributeProto::AttributeType t,
                                            std::string_view expected) const {
    const pb::AttributeProto* a = find(name);
    if (!a)
        return nullptr;
    // Models written before the type field existed leave it UNDEFINED: infer it from the data.
    pb::AttributeProto::AttributeType has = a->type();
    if (has == pb::AttributeProto::UNDEFINED) {
        if (a->has_i())
            has = pb::AttributeProto::INT;
        else if (a->has_f())
            has = pb::AttributeProto::FLOAT;
        else if (a->ints_size())
            has = pb::AttributeProto::INTS;
        else if (a->has_g())
            has = pb::AttributeProto::GRAPH;
        else if (a->has_t())
            has = pb::AttributeProto::TENSOR;
        else if (a->floats_size())
            has = pb::AttributeProto::FLOATS;
    }
    if (has != t)
        throw model_error(where_ + ": attribute '" + std::string(name) + "' should be " +
                          std::string(expected) + ", it is " +
                          (pb::AttributeProto::AttributeType_IsValid(has)
                               ? pb::AttributeProto::AttributeType_Name(has)
                               : std::to_string(has)));
    return a;
}

std::int64_t attributes::get_int(std::string_view name, std::int64_t fallback) const {
    const auto* a = typed(name, pb::AttributeProto::INT, "an INT");
    return a ? a->i() : fallback;
}

float attributes::get_float(std::string_view name, float fallback) const {
    const auto* a = typed(name, pb::AttributeProto::FLOAT, "a FLOAT");
    return a ? a->f() : fallback;
}

std::optional<std::vector<std::int64_t>> attributes::get_ints(std::string_view name) const {
    const auto* a = typed(name, pb::AttributeProto::INTS, "INTS");
    if (!a)
        return std::nullopt;
    return std::vector<std::int64_t>(a->ints().begin(), a->ints().end());
}

const pb::GraphProto& attributes::get_graph(std::string_view name) const {
    const auto* a = typed(name, pb::AttributeProto::GRAPH, "a GRAPH");
    if (!a)
        throw model_error(where_ + " has no attribute '" + std::string(name) + "'");
    return a->g();
}

const pb::TensorProto* attributes::get_tensor(std::string_view name) const {
    const auto* a = typed(name, pb::AttributeProto::TENSOR, "a TENSOR");
    return a ? &a->t() : nullptr;
}

} // namespace xtrace::onnx::detail
