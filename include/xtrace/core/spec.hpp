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
    shape_t dims; ///< -1 where any size fits; unknown_rank_shape() where any rank fits

    /// "float32[?,3]".
    std::string to_string() const { return std::string(dtype_name(type)) + shape_string(dims); }

    friend bool operator==(const tensor_spec&, const tensor_spec&) = default;
};

/// Throws signature_error unless `dims` can be a spec's: each a size >= 0 or -1 (unknown), at
/// most XTRACE_MAX_RANK of them, or (when `any_rank_allowed`) unknown_rank_shape(); `what` names
/// the spec in the message.
XTRACE_DECL void check_spec_dims(const shape_t& dims, const std::string& what,
                                 bool any_rank_allowed = true);

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
    check_spec_dims(dims, "xtrace::spec", false); // any rank: spec<T>(xtrace::any_rank)
    return typed_spec<T>{tensor_spec{dtype_of_v<T>, std::move(dims)}};
}

/// Tags a spec of unknown rank: `xtrace::spec<float>(xtrace::any_rank)` fits a tensor of any
/// rank and dims (TensorFlow's `TensorSpec(shape=None)`).
struct any_rank_t {
    struct tag {};
    // Not constructible from {}, so that spec<T>({}) stays a 0-d spec (std::nullopt_t's way).
    explicit constexpr any_rank_t(tag) {}
};
/// See any_rank_t.
inline constexpr any_rank_t any_rank{any_rank_t::tag{}};

/// A tensor_spec for element type T and any rank.
template <supported_element T>
typed_spec<T> spec(any_rank_t) {
    return typed_spec<T>{tensor_spec{dtype_of_v<T>, unknown_rank_shape()}};
}

} // namespace xtrace

#if XTRACE_DEFINE_RUNTIME

namespace xtrace {

XTRACE_DECL void check_spec_dims(const shape_t& dims, const std::string& what,
                                 bool any_rank_allowed) {
    if (any_rank_allowed && is_unknown_rank(dims))
        return; // spec<T>(any_rank)
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
