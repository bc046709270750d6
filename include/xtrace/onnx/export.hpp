#ifndef XTRACE_ONNX_EXPORT_HPP
#define XTRACE_ONNX_EXPORT_HPP

// A traced graph written as an ONNX model (opset 17): what carries over, and what does not, is
// listed in the README's "Deployment" section. Part of the optional xtrace::onnx library.

#include "../function/concrete_function.hpp"
#include "../function/traced_function.hpp"

#include <filesystem>
#include <string>

namespace xtrace::onnx {

/// The ONNX opset exported models are written for.
inline constexpr std::int64_t export_opset = 17;

namespace detail {

/// The serialized ONNX model of trace `t`, its graph named after `name`; throws model_error
/// naming the first node that has no ONNX counterpart.
std::string export_trace(const function_detail::trace_entry& t, const std::string& name);

/// Writes `bytes` to `path` (std::system_error when it cannot).
void write_file(const std::filesystem::path& path, const std::string& bytes);

} // namespace detail

/// The concrete function's graph as a serialized ONNX model.
template <class Traced, std::size_t Arity>
std::string export_model(const concrete_function<Traced, Arity>& f) {
    return detail::export_trace(f.trace(), f.name());
}

/// The graph `f` traces for `specs` (as get_concrete_function takes them), as a serialized
/// ONNX model.
template <class F, class... Specs>
std::string export_model(const traced_function<F>& f, const Specs&... specs) {
    return export_model(f.get_concrete_function(specs...));
}

/// Writes the concrete function's graph to `path` as an ONNX model.
template <class Traced, std::size_t Arity>
void save(const concrete_function<Traced, Arity>& f, const std::filesystem::path& path) {
    detail::write_file(path, export_model(f));
}

/// Writes the graph `f` traces for `specs` to `path` as an ONNX model.
template <class F, class... Specs>
void save(const traced_function<F>& f, const std::filesystem::path& path, const Specs&... specs) {
    detail::write_file(path, export_model(f, specs...));
}

} // namespace xtrace::onnx

#endif
