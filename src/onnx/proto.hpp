#ifndef XTRACE_SRC_ONNX_PROTO_HPP
#define XTRACE_SRC_ONNX_PROTO_HPP

// What export and import share about ONNX's protobuf messages: dtype codes, tensors to and from
// variable storage (with every size checked before anything is allocated), attributes read with
// their types checked, and how messages name nodes.

#include <onnx/onnx_pb.h>

#include <xtrace/core/dtype.hpp>
#include <xtrace/core/error.hpp>
#include <xtrace/core/scalar_ops.hpp>
#include <xtrace/core/shape.hpp>
#include <xtrace/graph/variable_storage.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace xtrace::onnx::detail {

namespace pb = ::onnx;

/// The xtrace dtype of ONNX element type `code`, if xtrace has it.
std::optional<dtype> from_onnx(std::int64_t code) noexcept;

/// The ONNX element type of `t`.
pb::TensorProto::DataType to_onnx(dtype t) noexcept;

/// ONNX's name of element type `code` ("FLOAT16"), or its number.
std::string onnx_type_name(std::int64_t code);

/// "node 'name' (OpType)", or "node 3 (OpType)" when it has no name.
std::string describe(const pb::NodeProto& n, int index);

/// The byte size of a tensor of `type` and `dims` (all known); throws model_error naming
/// `what` when a dim is negative or the size overflows or exceeds `max_bytes`.
std::uint64_t checked_bytes(dtype type, std::span<const std::int64_t> dims, std::uint64_t max_bytes,
                            const std::string& what);

/// The value of TensorProto `t` as variable storage named `what`; throws model_error when its
/// type is not xtrace's, its data lives outside the model, or its data does not fit its dims.
std::shared_ptr<graph::variable_storage>
decode_tensor(const pb::TensorProto& t, const std::string& what, std::uint64_t max_bytes);

/// Writes `v` (row-major bytes of its dtype) into `t` as raw data.
void encode_tensor(const graph::variable_storage& v, pb::TensorProto& t);

/// Element `i` of a host tensor as a double / an int64.
double element_as_double(const graph::variable_storage& v, std::size_t i);
std::int64_t element_as_int(const graph::variable_storage& v, std::size_t i);

/// The elements of an integer host tensor (any dtype converted).
std::vector<std::int64_t> as_ints(const graph::variable_storage& v);

/// A host tensor of `type` and `shape` whose element i is `value(i)` (converted to `type`).
template <class F>
std::shared_ptr<graph::variable_storage> make_host(dtype type, shape_t shape, F&& value);

/// Reading a node's attributes with their types checked: model_error names the node, the
/// attribute and the type it has.
class attributes {
public:
    attributes(const pb::NodeProto& n, std::string where) : node_(n), where_(std::move(where)) {}

    const pb::AttributeProto* find(std::string_view name) const;
    std::int64_t get_int(std::string_view name, std::int64_t fallback) const;
    float get_float(std::string_view name, float fallback) const;
    std::optional<std::vector<std::int64_t>> get_ints(std::string_view name) const;
    const pb::GraphProto& get_graph(std::string_view name) const;
    const pb::TensorProto* get_tensor(std::string_view name) const;
    const std::string& where() const noexcept { return where_; }

private:
    const pb::AttributeProto* typed(std::string_view name, pb::AttributeProto::AttributeType t,
                                    std::string_view expected) const;
    const pb::NodeProto& node_;
    std::string where_;
};

template <class F>
std::shared_ptr<graph::variable_storage> make_host(dtype type, shape_t shape, F&& value) {
    auto v = std::make_shared<graph::variable_storage>();
    v->type = type;
    const auto n = static_cast<std::size_t>(num_elements(shape));
    v->shape = std::move(shape);
    v->bytes.resize(n * dtype_size(type));
    visit_dtype(type, [&](auto tag) {
        using T = typename decltype(tag)::type;
        auto* out = reinterpret_cast<T*>(v->bytes.data());
        for (std::size_t i = 0; i < n; ++i)
            out[i] = scalar::convert<T>(value(i));
    });
    return v;
}

} // namespace xtrace::onnx::detail

#endif
