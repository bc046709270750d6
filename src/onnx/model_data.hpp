#ifndef XTRACE_SRC_ONNX_MODEL_DATA_HPP
#define XTRACE_SRC_ONNX_MODEL_DATA_HPP

// A model file, checked: its graph's structure (names, order, ops, attributes' types) and its
// initializers decoded. What lowering starts from, once per input shapes if need be.

#include "proto.hpp"

#include <xtrace/core/spec.hpp>
#include <xtrace/onnx/model.hpp>
#include <xtrace/trace/finish.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace xtrace::onnx::detail {

/// The newest opset of the default domain that xtrace reads.
inline constexpr std::int64_t newest_opset = 18;

/// A checked model.
struct model_data {
    pb::ModelProto proto;
    std::string name;
    std::int64_t opset = 0;
    std::uint64_t max_bytes = 0;
    std::vector<std::string> input_names, output_names;
    std::vector<tensor_spec> inputs, outputs;
    /// The main graph's initializers, decoded (never written: shared by every lowering).
    std::unordered_map<std::string, std::shared_ptr<graph::variable_storage>> initializers;
};

/// Parses and checks `bytes`; throws model_error naming the first thing wrong.
std::shared_ptr<const model_data> read_model(std::string_view bytes, const load_options& options);

/// The model's graph lowered to xtrace's IR for inputs of `shapes` (-1: unknown). Throws
/// xtrace::detail::needs_known_dims when an unknown dim must be known (shape arithmetic),
/// model_error for what the model asks that xtrace cannot do, shape_error for shapes that do not
/// fit its ops.
trace::finished_trace lower(const model_data& m, const std::vector<shape_t>& shapes);

} // namespace xtrace::onnx::detail

#endif
