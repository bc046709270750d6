#ifndef XTRACE_CORE_SPEC_HPP
#define XTRACE_CORE_SPEC_HPP

#include "../config.hpp"
#include "dtype.hpp"
#include "error.hpp"
#include "shape.hpp"

#include <string>
#include <utility>

namespace xtrace {

/// What a tensor argument must look like: a dtype and dims, -1 for a dim left open.
struct tensor_spec {
    xtrace::dtype type = dtype::float32; ///< element type
    shape_t dims;                        ///< -1 where any size fits

    /// "float32[?,3]".
    std::string to_string() const { return std::string(dtype_name(type)) + shape_string(dims); }

    friend bool operator==(const tensor_spec&, const tensor_spec&) = default;
};

/// Throws signature_error unless `dims` can be a spec's: each a size >= 0 or -1 (unknown), at
/// most XTRACE_MAX_RANK of them; `what` names the spec in the message.
XTRACE_DECL void check_spec_dims(const shape_t& dims, const std::string& what);

/// A tensor_spec that also carries its element type in its C++ type, so that a concrete
/// function can be traced from it at compile time; converts to tensor_spec.
template <class T>
struct typed_spec : tensor_spec {
    using value_type = T; ///< element type
};

/// A tensor_spec for element type T: `xtrace::spec<float>({-1, 3})`. Throws signature_error
/// for a dim below -1 or a rank above XTRACE_MAX_RANK.
template <supported_element T>
typed_spec<T> spec(shape_t dims = {}) {
    check_spec_dims(dims, "xtrace::spec");
    return typed_spec<T>{tensor_spec{dtype_of_v<T>, std::move(dims)}};
}

} // namespace xtrace

#if XTRACE_DEFINE_RUNTIME

namespace xtrace {

XTRACE_DECL void check_spec_dims(const shape_t& dims, const std::string& what) {
    if (dims.size() > XTRACE_MAX_RANK)
        throw signature_error(what + ": rank " + std::to_string(dims.size()) +
                              " is more than xtrace supports (" + std::to_string(XTRACE_MAX_RANK) +
                              ")");
    for (std::size_t d = 0; d < dims.size(); ++d)
        if (dims[d] < unknown_dim)
            throw signature_error(what + ": dim " + std::to_string(d) + " of " +
                                  shape_string(dims) +
                                  " is negative; a dim is a size >= 0, or -1 for unknown");
}

} // namespace xtrace

#endif

#endif
