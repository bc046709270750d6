#ifndef XTRACE_CORE_SHAPE_HPP
#define XTRACE_CORE_SHAPE_HPP

#include "../config.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace xtrace {

/// One dimension; `unknown_dim` (-1) where a signature leaves it open.
using dim_t = std::int64_t;
/// A shape as known at trace time (dims may be unknown) or at run time (all known).
using shape_t = std::vector<dim_t>;

/// The value of a dimension that is not known at trace time.
inline constexpr dim_t unknown_dim = -1;

/// The one entry of a trace-time shape whose rank is unknown (xtrace::any_rank): no real shape
/// has a dim of -2, so `{unknown_rank_dim}` cannot be mistaken for a rank-1 shape by code that
/// asks is_unknown_rank first.
inline constexpr dim_t unknown_rank_dim = -2;

/// The trace-time shape of a tensor of unknown rank.
inline shape_t unknown_rank_shape() {
    return {unknown_rank_dim};
}

/// True for the shape of a tensor of unknown rank (unknown_rank_shape()).
inline bool is_unknown_rank(std::span<const dim_t> s) noexcept {
    return s.size() == 1 && s[0] == unknown_rank_dim;
}

/// "[2,?,3]": a shape as printed in messages and signatures; "[...]" for an unknown rank.
XTRACE_DECL std::string shape_string(std::span<const dim_t> s);

/// "(2, None, 3)", "(1,)", "()": a shape as TensorFlow prints one, for messages that follow
/// TensorFlow's wording.
XTRACE_DECL std::string tuple_string(std::span<const dim_t> s);

/// Number of elements, or -1 if a dim is unknown.
inline dim_t num_elements(std::span<const dim_t> s) noexcept {
    dim_t n = 1;
    for (dim_t d : s) {
        if (d < 0)
            return unknown_dim;
        n *= d;
    }
    return n;
}

/// True when every dim is known.
inline bool is_fully_known(std::span<const dim_t> s) noexcept {
    for (dim_t d : s)
        if (d < 0)
            return false;
    return true;
}

/// NumPy broadcasting of two shapes; nullopt when they are incompatible. Unknown dims broadcast
/// optimistically (an unknown against n > 1 gives n; the run-time binding checks the guess); an
/// unknown rank gives an unknown rank.
XTRACE_DECL std::optional<shape_t> broadcast_shapes(std::span<const dim_t> a,
                                                    std::span<const dim_t> b);

} // namespace xtrace

#if XTRACE_DEFINE_RUNTIME

namespace xtrace {

XTRACE_DECL std::string shape_string(std::span<const dim_t> s) {
    if (is_unknown_rank(s))
        return "[...]";
    std::string out = "[";
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (i)
            out += ',';
        out += s[i] < 0 ? std::string("?") : std::to_string(s[i]);
    }
    return out + "]";
}

XTRACE_DECL std::string tuple_string(std::span<const dim_t> s) {
    if (is_unknown_rank(s))
        return "<unknown>";
    std::string out = "(";
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (i)
            out += ", ";
        out += s[i] < 0 ? std::string("None") : std::to_string(s[i]);
    }
    return out + (s.size() == 1 ? ",)" : ")");
}

XTRACE_DECL std::optional<shape_t> broadcast_shapes(std::span<const dim_t> a,
                                                    std::span<const dim_t> b) {
    if (is_unknown_rank(a) || is_unknown_rank(b))
        return unknown_rank_shape();
    const std::size_t rank = a.size() > b.size() ? a.size() : b.size();
    shape_t out(rank);
    for (std::size_t i = 0; i < rank; ++i) {
        const dim_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
        const dim_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
        if (da == db || db == 1)
            out[i] = da;
        else if (da == 1)
            out[i] = db;
        else if (da < 0)
            out[i] = db;
        else if (db < 0)
            out[i] = da;
        else
            return std::nullopt;
    }
    return out;
}

} // namespace xtrace

#endif

#endif
