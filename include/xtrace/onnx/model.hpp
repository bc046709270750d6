#ifndef XTRACE_ONNX_MODEL_HPP
#define XTRACE_ONNX_MODEL_HPP

// A model loaded from an ONNX file: its graph lowered to xtrace's graph IR, planned per input
// shapes and run by xtrace's interpreter, as a traced function's graph is. Part of the optional
// xtrace::onnx library (find_package(xtrace COMPONENTS onnx); target xtrace::onnx).

#include "../config.hpp"
#include "../core/spec.hpp"
#include "../function/stats.hpp"
#include "value.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace xtrace::onnx {

/// How a model is loaded.
struct load_options {
    /// Plans kept, one per distinct set of input shapes; the least recently used goes first.
    std::size_t max_plans = 16;
    /// The largest tensor, in bytes, that a model may hold or compute: beyond it loading or
    /// calling throws model_error (a hostile file cannot make xtrace allocate without bound).
    std::uint64_t max_tensor_bytes = std::uint64_t(1) << 32;
    /// Names the model in messages; the graph's name when empty.
    std::string name;
};

namespace detail {

struct model_state;

/// A tensor argument as a loaded model reads it: dtype, shape, element strides, data.
struct argument_view {
    dtype type = dtype::float32;
    std::size_t rank = 0;
    std::array<std::int64_t, XTRACE_MAX_RANK> shape{};
    std::array<std::int64_t, XTRACE_MAX_RANK> strides{};
    const void* data = nullptr;
};

/// An xtensor container a model takes as an argument.
template <class X>
concept container_argument = requires(const X& x) {
    typename X::value_type;
    x.data();
    x.shape();
    x.strides();
    x.dimension();
}
&&is_supported_dtype_v<typename X::value_type>;

/// Describes argument `position` (signature_error when its rank is above XTRACE_MAX_RANK).
template <class X>
argument_view view_of(const X& x, std::size_t position) {
    argument_view v;
    v.type = dtype_of_v<typename X::value_type>;
    v.rank = x.dimension();
    if (v.rank > XTRACE_MAX_RANK)
        throw signature_error("xtrace::onnx::model: argument " + std::to_string(position) +
                              " has rank " + std::to_string(v.rank) +
                              "; the most xtrace supports is " + std::to_string(XTRACE_MAX_RANK));
    for (std::size_t d = 0; d < v.rank; ++d) {
        v.shape[d] = static_cast<std::int64_t>(x.shape()[d]);
        v.strides[d] = static_cast<std::int64_t>(x.strides()[d]);
    }
    v.data = x.data() + x.data_offset();
    return v;
}

} // namespace detail

/// A loaded ONNX model: call it with xtensor containers, one per model input, in order; it
/// returns one value per model output.
class model {
public:
    /// Runs the model; throws signature_error when an argument's dtype, rank or a known dim
    /// differs from the model's input.
    template <class... X>
    std::vector<value> operator()(const X&... args) const {
        static_assert((detail::container_argument<X> && ...),
                      "xtrace::onnx::model: pass xt::xarray or xt::xtensor arguments of float, "
                      "double, int32, int64 or bool");
        std::size_t position = 0;
        const std::array<detail::argument_view, sizeof...(X)> views{
            detail::view_of(args, position++)...};
        return run(std::span<const detail::argument_view>(views.data(), views.size()));
    }

    /// Runs the model on values whose dtypes are known only at run time.
    std::vector<value> run(const std::vector<value>& args) const;
    /// Runs the model on described arguments.
    std::vector<value> run(std::span<const detail::argument_view> args) const;

    /// The model's input names, in call order.
    const std::vector<std::string>& input_names() const;
    /// The model's output names, in result order.
    const std::vector<std::string>& output_names() const;
    /// The inputs' dtypes and dims (-1 where a dim is symbolic or unknown).
    const std::vector<tensor_spec>& input_specs() const;
    /// The outputs' dtypes and dims as the model declares them (-1 where unknown).
    const std::vector<tensor_spec>& output_specs() const;
    /// "(x: float32[?,3]) -> y: float32[?,4]".
    std::string signature() const;
    /// The name messages use.
    const std::string& name() const;
    /// The opset of the default ONNX domain the model was written for.
    std::int64_t opset() const;
    /// True when the graph was lowered once for every input shape (symbolic dims left unknown);
    /// false when it is lowered again per input shapes (its shape arithmetic needs the dims).
    bool lowered_once() const;

    /// The lowered graph for inputs of these shapes, one node per line.
    std::string graph_text(const std::vector<shape_t>& shapes) const;
    /// The plan calls with inputs of these shapes run (fused regions, steps, homes).
    std::string plan_text(const std::vector<shape_t>& shapes) const;

    /// Calls, plan-cache hits, lowerings and plans made, time spent.
    function_stats stats() const;
    /// Plans currently cached.
    std::size_t cache_size() const;

    /// Made by load(); public for std::make_shared.
    explicit model(std::shared_ptr<detail::model_state> state) : state_(std::move(state)) {}

private:
    std::shared_ptr<detail::model_state> state_;
};

/// Loads the ONNX model in file `path`; throws model_error for anything wrong in it (naming
/// what), std::system_error when the file cannot be read.
model load(const std::filesystem::path& path, const load_options& options = {});

/// Loads an ONNX model from its serialized bytes; throws model_error for anything wrong in them.
model load_bytes(std::string_view bytes, const load_options& options = {});

} // namespace xtrace::onnx

#endif
