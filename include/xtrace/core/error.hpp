#ifndef XTRACE_CORE_ERROR_HPP
#define XTRACE_CORE_ERROR_HPP

#include <stdexcept>
#include <string>

namespace xtrace {

/// Base of every exception xtrace throws.
class error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Shapes that do not fit an operation (broadcast, reshape, matmul, ...): names the op and shapes.
class shape_error : public error {
public:
    using error::error;
};

/// A call that does not match an input signature or a concrete function's specs.
class signature_error : public error {
public:
    using error::error;
};

/// Misuse detected while tracing a function.
class tracing_error : public error {
public:
    using error::error;
};

/// Anything wrong in a model file or in a graph that cannot be written as one (xtrace::onnx):
/// names the node, the value or the field, and says why.
class model_error : public error {
public:
    using error::error;
};

namespace detail {
/// A tracing_error raised because a dim or a rank the trace left unknown had to be known (a
/// host_function's result spec in a body, x.shape() or a matmul on a tensor of unknown rank):
/// a relaxed trace gives way to the call's exact signature.
class needs_known_dims : public tracing_error {
public:
    using tracing_error::tracing_error;
};
} // namespace detail

} // namespace xtrace

#endif
