#ifndef XTRACE_FUNCTION_SIGNATURE_HPP
#define XTRACE_FUNCTION_SIGNATURE_HPP

// Signatures of calls and traces: per argument a tensor spec or a static value. One comparison
// lists how two signatures differ; what fits what, how two signatures relax into one, why a call
// is rejected and why a retrace happened are all read from it.

#include "../config.hpp"
#include "../core/error.hpp"
#include "../core/spec.hpp"
#include "static_value.hpp"

#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace xtrace::function_detail {

/// A variable argument's dtype and shape (TensorFlow's VariableSpec): the trace reads and
/// assigns whichever variable of that dtype and shape a call passes.
struct variable_signature {
    tensor_spec spec; ///< its dtype and dims, all known
    friend bool operator==(const variable_signature& a, const variable_signature& b) {
        return a.spec == b.spec;
    }
};

/// One argument of a signature: a tensor's spec, a static argument's value, or a variable's
/// spec.
using arg_signature = std::variant<tensor_spec, static_value, variable_signature>;

/// A call's or a trace's signature.
using signature = std::vector<arg_signature>;

/// The spec of a tensor argument, or nullptr for a static one.
inline const tensor_spec* tensor_of(const arg_signature& a) noexcept {
    return std::get_if<tensor_spec>(&a);
}
/// The same, writable.
inline tensor_spec* tensor_of(arg_signature& a) noexcept {
    return std::get_if<tensor_spec>(&a);
}
/// The value of a static argument, or nullptr for another kind.
inline const static_value* static_of(const arg_signature& a) noexcept {
    return std::get_if<static_value>(&a);
}
/// The spec of a variable argument, or nullptr for another kind.
inline const tensor_spec* variable_of(const arg_signature& a) noexcept {
    const auto* v = std::get_if<variable_signature>(&a);
    return v ? &v->spec : nullptr;
}

/// One way a signature differs from another.
struct mismatch {
    enum class kind : std::uint8_t {
        count, ///< different argument counts (the only mismatch then listed)
        role,  ///< different kinds of argument (tensor, static value, variable)
        value, ///< different static values, or variables of different dtypes or shapes
        dtype, ///< different tensor dtypes
        rank,  ///< same dtype, different ranks
        dim    ///< same dtype and rank, a different dim (one mismatch per dim)
    };
    kind what;
    std::size_t arg = 0; ///< the argument (not for count)
    std::size_t dim = 0; ///< the dim (dim only)

    /// True for the mismatches no relaxed dim can bridge (all but dim and value).
    bool structural() const noexcept { return what != kind::dim && what != kind::value; }
};

/// How `to` differs from `from`, argument by argument. With `unknown_matches`, an unknown dim
/// of `from` matches any dim of `to` (is `to` served by `from`?); without, it is a dim like any
/// other (what changed?).
XTRACE_DECL std::vector<mismatch> compare(const signature& from, const signature& to,
                                          bool unknown_matches);

/// The dims of the tensor arguments of `s`, in order.
XTRACE_DECL std::vector<shape_t> tensor_shapes(const signature& s);

/// True when a call with signature `call` (all dims known) may run trace `trace`.
XTRACE_DECL bool fits(const signature& trace, const signature& call);

/// The signature both a and b fit, with differing dims unknown and differing ranks unknown (as
/// TensorFlow relaxes [1] and [2, 3] to an unknown shape); nullopt when dtypes, argument kinds or
/// static values differ (then no relaxed trace can serve both).
XTRACE_DECL std::optional<signature> relax(const signature& a, const signature& b);

/// Throws signature_error unless `call` fits `expected`, naming the argument, the dim, and the
/// expected and actual specs; `who` names the function, `source` where `expected` came from.
XTRACE_DECL void check_fits(const signature& expected, const signature& call,
                            const std::string& who, const std::string& source);

/// "?" for an unknown dim, else the size.
XTRACE_DECL std::string dim_text(dim_t d);

/// "?" for an unknown rank, else the number of dims.
XTRACE_DECL std::string rank_text(const shape_t& dims);

/// What changed from `from` to `to`, one phrase per mismatch: "arg 0: dim 1 changed 3 -> 4".
XTRACE_DECL std::vector<std::string> differences(const signature& from, const signature& to);

/// How far `to` is from `from`: {structural mismatches (argument count, tensor or static,
/// dtype, rank), differing dims and static values}, to be compared lexicographically.
XTRACE_DECL std::pair<std::size_t, std::size_t> signature_distance(const signature& from,
                                                                   const signature& to);

/// "(x0: float32[?,3], x1: float32[3], x2: 2)".
XTRACE_DECL std::string signature_text(const signature& s);

/// "float32[?,3]" for a tensor, the value for a static argument, "variable float32[2]" for a
/// variable.
XTRACE_DECL std::string arg_text(const arg_signature& a);

} // namespace xtrace::function_detail

#if XTRACE_DEFINE_RUNTIME
#include "impl/signature.ipp"
#endif

#endif
