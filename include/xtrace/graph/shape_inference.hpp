#ifndef XTRACE_GRAPH_SHAPE_INFERENCE_HPP
#define XTRACE_GRAPH_SHAPE_INFERENCE_HPP

// Result shapes of ops, shared by tracing (dims may be unknown), run-time shape binding
// (all dims known) and the eager path, so all three reject the same inputs with the same words.

#include "../config.hpp"
#include "../core/error.hpp"
#include "../core/op.hpp"
#include "../core/shape.hpp"
#include "variable_storage.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <span>
#include <string>
#include <vector>

namespace xtrace::graph {

/// Most elements one tensor may have (2^56): its bytes, and any offset into it, then fit a
/// size_t and an int64 with room to spare.
inline constexpr std::int64_t max_elements = std::int64_t(1) << 56;

/// `s` if a tensor of that shape can exist (rank at most XTRACE_MAX_RANK, at most max_elements
/// elements counting its known dims); else throws shape_error naming `op` and the shape.
XTRACE_DECL shape_t check_size(op_kind op, shape_t s);

/// Broadcast shape of an elementwise op's operands; throws shape_error naming op and shapes.
XTRACE_DECL shape_t broadcast_operands(op_kind op, std::span<const shape_t* const> operands);

/// A reduction's axes `{every_axis}`: every axis of its input, whose rank was unknown when
/// traced (`sum(x)` on a spec of any rank); normalize_axes expands it for a concrete rank.
inline constexpr std::int64_t every_axis = std::numeric_limits<std::int64_t>::min();

/// Sorted, non-negative axes of a reduction over `axes` (negative counts from the end; or
/// `{every_axis}`) of a tensor of `shape`; throws shape_error for an axis out of range or given
/// twice.
XTRACE_DECL std::vector<std::int64_t> normalize_axes(op_kind op, const shape_t& shape,
                                                     std::vector<std::int64_t> axes);

/// Shape of a reduction over normalised `axes`.
XTRACE_DECL shape_t reduce_shape(const shape_t& shape, const std::vector<std::int64_t>& axes,
                                 bool keep_dims);

namespace detail {
[[noreturn]] inline void shape_op_error(op_kind op, const std::string& what) {
    throw shape_error("xtrace::" + std::string(info(op).name) + ": " + what);
}
XTRACE_DECL std::int64_t normalize_axis(op_kind op, std::int64_t axis, std::int64_t bound,
                                        const shape_t& shape);
} // namespace detail

/// Shape of matmul(a, b): [..batch, m, k] x [..batch, k, n] -> [..broadcast batch, m, n].
XTRACE_DECL shape_t matmul_shape(const shape_t& a, const shape_t& b);

/// The attributes of a shape op, normalised against its input's shape: transpose's permutation
/// (reversed dims when empty), expand_dims' and squeeze's axis; reshape's and broadcast_to's
/// requested dims unchanged. Throws shape_error for attributes that fit no input of this rank.
XTRACE_DECL std::vector<std::int64_t> normalize_shape_op(op_kind op, const shape_t& in,
                                                         std::vector<std::int64_t> a);

/// Result shape of a shape op over normalised attributes; throws shape_error (an element count
/// that does not match, a squeezed dim that is not 1, a shape that does not broadcast).
XTRACE_DECL shape_t shape_op_result(op_kind op, const shape_t& in,
                                    const std::vector<std::int64_t>& a);

/// sum_to(g, like): `like`'s shape, which must broadcast to g's (throws shape_error).
XTRACE_DECL shape_t sum_to_shape(const shape_t& g, const shape_t& like);

/// cond: result k's shapes in the then and else branches, merged (a dim unknown in either is
/// unknown); throws shape_error where known dims differ or the ranks do.
XTRACE_DECL shape_t merge_branch_shapes(const shape_t& then_shape, const shape_t& else_shape,
                                        std::size_t k);

/// True when `a` and `b` have the same rank and equal dims wherever both are known (or either
/// rank is unknown).
XTRACE_DECL bool same_known_dims(const shape_t& a, const shape_t& b);

/// while_loop: throws shape_error unless loop variable k has the same shape `after` one
/// iteration as `before` the loop (an unknown dim matches any).
XTRACE_DECL void check_loop_shape(const shape_t& before, const shape_t& after, std::size_t k);

/// scan: the number of steps, the leading dim the scanned tensors of shapes `xs` share (-1 when
/// unknown); throws shape_error for a 0-d one or leading dims that differ.
XTRACE_DECL std::int64_t scan_length(std::span<const shape_t> xs);

/// scan: throws shape_error unless carry k has the same shape `after` one step as `before` the
/// first (an unknown dim matches any).
XTRACE_DECL void check_carry_shape(const shape_t& before, const shape_t& after, std::size_t k);

/// scan: the shape of result k when the body's output k has shape `after`: a carry (k below
/// carries.size()) keeps its initial shape carries[k] (shape_error unless `after` fits it); a
/// per-step output is stacked, [length, after...].
XTRACE_DECL shape_t scan_result_shape(std::span<const shape_t> carries, std::size_t k,
                                      const shape_t& after, std::int64_t length);

/// ensure_shape: throws signature_error, starting with `who`, unless `has` has `required`'s rank
/// and its known dims where both are known.
XTRACE_DECL void check_ensured_shape(const shape_t& has, const shape_t& required,
                                     const std::string& who);

/// variable assign: throws shape_error unless a value of shape `value` fits `var`'s shape (an
/// unknown dim fits any).
XTRACE_DECL void check_assign_shape(const variable_storage& var, const shape_t& value);

} // namespace xtrace::graph

#if XTRACE_DEFINE_RUNTIME

namespace xtrace::graph {

XTRACE_DECL shape_t check_size(op_kind op, shape_t s) {
    if (s.size() > XTRACE_MAX_RANK)
        detail::shape_op_error(op, "the result would have rank " + std::to_string(s.size()) +
                                       "; the most xtrace supports is " +
                                       std::to_string(XTRACE_MAX_RANK));
    std::int64_t n = 1;
    bool overflow = false;
    for (dim_t d : s) {
        if (d == 0)
            return s; // no elements, whatever the other dims
        if (d > 0)
            overflow = overflow || __builtin_mul_overflow(n, d, &n) || n > max_elements;
    }
    if (overflow)
        detail::shape_op_error(op, "the result " + shape_string(s) +
                                       " would have more than 2^56 elements");
    return s;
}

XTRACE_DECL shape_t broadcast_operands(op_kind op, std::span<const shape_t* const> operands) {
    shape_t out;
    for (std::size_t i = 0; i < operands.size(); ++i) {
        if (i == 0) {
            out = *operands[0];
            continue;
        }
        auto b = broadcast_shapes(out, *operands[i]);
        if (!b) {
            std::string msg = "xtrace::" + std::string(info(op).name) + ": cannot broadcast shapes";
            for (std::size_t j = 0; j < operands.size(); ++j)
                msg += (j ? " and " : " ") + shape_string(*operands[j]);
            throw shape_error(msg);
        }
        out = std::move(*b);
    }
    return check_size(op, std::move(out));
}

XTRACE_DECL std::vector<std::int64_t> normalize_axes(op_kind op, const shape_t& shape,
                                                     std::vector<std::int64_t> axes) {
    const auto rank = static_cast<std::int64_t>(shape.size());
    if (axes.size() == 1 && axes[0] == every_axis) {
        axes.resize(shape.size());
        std::iota(axes.begin(), axes.end(), std::int64_t(0));
    }
    for (auto& a : axes) {
        if (a < -rank || a >= rank)
            throw shape_error("xtrace::" + std::string(info(op).name) + ": axis " +
                              std::to_string(a) + " is out of range for shape " +
                              shape_string(shape));
        if (a < 0)
            a += rank;
    }
    std::sort(axes.begin(), axes.end());
    if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
        throw shape_error("xtrace::" + std::string(info(op).name) +
                          ": an axis is repeated for shape " + shape_string(shape));
    return axes;
}

XTRACE_DECL shape_t reduce_shape(const shape_t& shape, const std::vector<std::int64_t>& axes,
                                 bool keep_dims) {
    shape_t out;
    for (std::size_t d = 0; d < shape.size(); ++d) {
        const bool reduced = std::binary_search(axes.begin(), axes.end(), std::int64_t(d));
        if (!reduced)
            out.push_back(shape[d]);
        else if (keep_dims)
            out.push_back(1);
    }
    return out;
}

} // namespace xtrace::graph

namespace xtrace::graph::detail {

XTRACE_DECL std::int64_t normalize_axis(op_kind op, std::int64_t axis, std::int64_t bound,
                                        const shape_t& shape) {
    if (axis < -bound || axis >= bound)
        shape_op_error(op, "axis " + std::to_string(axis) + " is out of range for shape " +
                               shape_string(shape));
    return axis < 0 ? axis + bound : axis;
}

} // namespace xtrace::graph::detail

namespace xtrace::graph {

XTRACE_DECL shape_t matmul_shape(const shape_t& a, const shape_t& b) {
    auto fail = [&](const std::string& why) {
        throw shape_error("xtrace::matmul: cannot multiply " + shape_string(a) + " by " +
                          shape_string(b) + ": " + why);
    };
    if (a.size() < 2 || b.size() < 2)
        fail("both operands need at least 2 dims");
    const dim_t k1 = a[a.size() - 1], k2 = b[b.size() - 2];
    if (k1 >= 0 && k2 >= 0 && k1 != k2)
        fail("inner dims " + std::to_string(k1) + " and " + std::to_string(k2) + " differ");
    auto batch =
        broadcast_shapes(std::span(a.data(), a.size() - 2), std::span(b.data(), b.size() - 2));
    if (!batch)
        fail("batch dims do not broadcast");
    shape_t out = *batch;
    out.push_back(a[a.size() - 2]);
    out.push_back(b[b.size() - 1]);
    return check_size(op_kind::matmul, std::move(out));
}

XTRACE_DECL std::vector<std::int64_t> normalize_shape_op(op_kind op, const shape_t& in,
                                                         std::vector<std::int64_t> a) {
    const auto rank = static_cast<std::int64_t>(in.size());
    if (op == op_kind::transpose) {
        if (a.empty())
            for (std::int64_t d = rank; d-- > 0;)
                a.push_back(d);
        std::vector<char> seen(in.size(), 0);
        if (static_cast<std::int64_t>(a.size()) != rank)
            detail::shape_op_error(op, "permutation " + shape_string(a) + " does not fit shape " +
                                           shape_string(in));
        for (auto& p : a) {
            p = detail::normalize_axis(op, p, rank, in);
            if (seen[static_cast<std::size_t>(p)]++)
                detail::shape_op_error(op, "permutation " + shape_string(a) + " repeats a dim");
        }
    } else if (op == op_kind::expand_dims) {
        a[0] = detail::normalize_axis(op, a[0], rank + 1, in);
    } else if (op == op_kind::squeeze) {
        a[0] = detail::normalize_axis(op, a[0], rank, in);
    }
    return a;
}

XTRACE_DECL shape_t shape_op_result(op_kind op, const shape_t& in,
                                    const std::vector<std::int64_t>& a) {
    switch (op) {
    case op_kind::reshape: {
        shape_t requested;
        for (dim_t d : a)
            requested.push_back(d == -1 ? 1 : d);
        check_size(op, requested); // `known` below cannot overflow
        std::int64_t known = 1;
        std::ptrdiff_t open = -1;
        for (std::size_t i = 0; i < a.size(); ++i) {
            if (a[i] == -1 && open < 0)
                open = static_cast<std::ptrdiff_t>(i);
            else if (a[i] < 0)
                detail::shape_op_error(op, "cannot reshape " + shape_string(in) + " into " +
                                               shape_string(a) +
                                               ": one -1 at most, no other "
                                               "negative dims");
            else
                known *= a[i];
        }
        shape_t out = a;
        if (!is_fully_known(in))
            return check_size(op, out); // bound with concrete dims later
        const std::int64_t n = num_elements(in);
        if (open >= 0 ? (known == 0 ? n != 0 : n % known != 0) : known != n)
            detail::shape_op_error(op, "cannot reshape " + shape_string(in) + " (" +
                                           std::to_string(n) + " elements) into " +
                                           shape_string(a));
        if (open >= 0)
            out[static_cast<std::size_t>(open)] = known == 0 ? 0 : n / known;
        return check_size(op, std::move(out));
    }
    case op_kind::transpose: {
        shape_t out(in.size());
        for (std::size_t i = 0; i < a.size(); ++i)
            out[i] = in[static_cast<std::size_t>(a[i])];
        return out;
    }
    case op_kind::expand_dims: {
        shape_t out = in;
        out.insert(out.begin() + a[0], 1);
        return check_size(op, std::move(out));
    }
    case op_kind::squeeze: {
        const dim_t d = in[static_cast<std::size_t>(a[0])];
        if (d != 1 && d != unknown_dim)
            detail::shape_op_error(op, "dim " + std::to_string(a[0]) + " of shape " +
                                           shape_string(in) + " is " + std::to_string(d) +
                                           ", not 1");
        shape_t out = in;
        out.erase(out.begin() + a[0]);
        return out;
    }
    case op_kind::broadcast_to: {
        auto b = broadcast_shapes(in, a);
        bool fits = b && b->size() == a.size();
        for (std::size_t i = 0; fits && i < a.size(); ++i)
            fits = a[i] >= 0 && ((*b)[i] == a[i] || (*b)[i] == unknown_dim);
        if (!fits)
            detail::shape_op_error(op, "cannot broadcast shape " + shape_string(in) + " to " +
                                           shape_string(a));
        return check_size(op, shape_t(a.begin(), a.end()));
    }
    default:
        return in;
    }
}

XTRACE_DECL void check_ensured_shape(const shape_t& has, const shape_t& required,
                                     const std::string& who) {
    if (is_unknown_rank(has) || is_unknown_rank(required))
        return; // checked when planned, where every rank is known
    bool fits = has.size() == required.size();
    for (std::size_t d = 0; fits && d < has.size(); ++d)
        fits = has[d] < 0 || required[d] < 0 || has[d] == required[d];
    if (!fits)
        throw signature_error(who + " must have shape " + shape_string(required) + ", it has " +
                              shape_string(has));
}

XTRACE_DECL shape_t sum_to_shape(const shape_t& g, const shape_t& like) {
    const auto b = broadcast_shapes(like, g);
    bool ok = b && like.size() <= g.size();
    for (std::size_t d = 0; ok && d < g.size(); ++d) // an unknown dim of like's may be 1
        ok = (*b)[d] == g[d] || g[d] < 0 || (*b)[d] < 0;
    if (!ok)
        throw shape_error("xtrace::sum_to: " + shape_string(like) + " does not broadcast to " +
                          shape_string(g));
    return like;
}

XTRACE_DECL shape_t merge_branch_shapes(const shape_t& then_shape, const shape_t& else_shape,
                                        std::size_t k) {
    if (is_unknown_rank(then_shape) || is_unknown_rank(else_shape))
        return unknown_rank_shape();
    bool ok = then_shape.size() == else_shape.size();
    shape_t out(then_shape);
    for (std::size_t d = 0; ok && d < then_shape.size(); ++d) {
        if (then_shape[d] >= 0 && else_shape[d] >= 0 && then_shape[d] != else_shape[d])
            ok = false;
        else if (then_shape[d] != else_shape[d])
            out[d] = unknown_dim;
    }
    if (!ok)
        throw shape_error("xtrace::cond: result " + std::to_string(k) + " has shape " +
                          shape_string(then_shape) + " in the then branch but " +
                          shape_string(else_shape) +
                          " in the else branch; both branches must return the same shapes");
    return out;
}

XTRACE_DECL bool same_known_dims(const shape_t& a, const shape_t& b) {
    if (is_unknown_rank(a) || is_unknown_rank(b))
        return true;
    bool ok = a.size() == b.size();
    for (std::size_t d = 0; ok && d < a.size(); ++d)
        ok = a[d] < 0 || b[d] < 0 || a[d] == b[d];
    return ok;
}

XTRACE_DECL void check_loop_shape(const shape_t& before, const shape_t& after, std::size_t k) {
    if (!same_known_dims(before, after))
        throw shape_error("xtrace::while_loop: loop variable " + std::to_string(k) + " has shape " +
                          tuple_string(before) + " before the loop, but shape " +
                          tuple_string(after) +
                          " after one iteration; the body must keep each loop variable's shape");
}

XTRACE_DECL std::int64_t scan_length(std::span<const shape_t> xs) {
    std::int64_t length = unknown_dim;
    std::size_t known = 0;
    for (std::size_t k = 0; k < xs.size(); ++k) {
        if (is_unknown_rank(xs[k])) // its slices' rank would be unknown too
            throw xtrace::detail::needs_known_dims(
                "xtrace::scan: scanned tensor " + std::to_string(k) +
                " has unknown rank (from a spec of xtrace::any_rank); scan "
                "slices it while tracing: give the signature a rank");
        if (xs[k].empty())
            throw shape_error("xtrace::scan: scanned tensor " + std::to_string(k) +
                              " is 0-d; each scanned tensor is sliced along its leading dim, so "
                              "it needs rank >= 1");
        if (xs[k][0] < 0)
            continue;
        if (length >= 0 && xs[k][0] != length)
            throw shape_error("xtrace::scan: scanned tensor " + std::to_string(known) +
                              " has shape " + shape_string(xs[known]) + " but scanned tensor " +
                              std::to_string(k) + " has shape " + shape_string(xs[k]) +
                              "; all scanned tensors must have the same leading dim (the number "
                              "of steps)");
        length = xs[k][0];
        known = k;
    }
    return length;
}

XTRACE_DECL void check_carry_shape(const shape_t& before, const shape_t& after, std::size_t k) {
    if (!same_known_dims(before, after))
        throw shape_error("xtrace::scan: carry " + std::to_string(k) + " has shape " +
                          shape_string(before) + " initially, but shape " + shape_string(after) +
                          " after one step; fn must keep each carry's shape");
}

XTRACE_DECL shape_t scan_result_shape(std::span<const shape_t> carries, std::size_t k,
                                      const shape_t& after, std::int64_t length) {
    if (k < carries.size()) {
        check_carry_shape(carries[k], after, k);
        return carries[k];
    }
    if (is_unknown_rank(after))
        return after;
    shape_t stacked{length};
    stacked.insert(stacked.end(), after.begin(), after.end());
    return stacked;
}

XTRACE_DECL void check_assign_shape(const variable_storage& var, const shape_t& value) {
    if (!same_known_dims(value, var.shape)) // a variable's dims are all known
        throw shape_error("xtrace::variable::assign: " + var.describe() + " has shape " +
                          shape_string(var.shape) + ", the value assigned has shape " +
                          shape_string(value));
}

} // namespace xtrace::graph

#endif

#endif
