#ifndef XTRACE_FUNCTION_SIGNATURE_HPP
#define XTRACE_FUNCTION_SIGNATURE_HPP

// Signatures of calls and traces: per argument a tensor spec or a static value. What fits what,
// how two signatures relax into one, and how they differ (the retrace reasons).

#include "../config.hpp"
#include "../core/error.hpp"
#include "../core/spec.hpp"
#include "static_value.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace xtrace::detail {

/// One argument of a signature.
struct arg_signature {
    std::optional<tensor_spec> tensor; ///< set for tensor arguments
    std::optional<static_value> value; ///< set for static arguments

    friend bool operator==(const arg_signature&, const arg_signature&) = default;
};

/// A call's or a trace's signature.
using signature = std::vector<arg_signature>;

/// True when a call with signature `call` (all dims known) may run trace `trace`.
XTRACE_DECL bool fits(const signature& trace, const signature& call);

/// The signature both a and b fit, with differing dims unknown; nullopt when dtypes, ranks or
/// static values differ (then no relaxed trace can serve both).
XTRACE_DECL std::optional<signature> relax(const signature& a, const signature& b);

/// Throws signature_error unless `call` fits `expected`, naming the argument, the dim, and the
/// expected and actual specs; `who` names the function, `source` where `expected` came from.
XTRACE_DECL void check_fits(const signature& expected, const signature& call,
                            const std::string& who, const std::string& source);

XTRACE_DECL std::string dim_text(dim_t d);

/// What changed from `from` to `to`, one phrase per argument: "arg 0: dim 1 changed 3 -> 4".
XTRACE_DECL std::vector<std::string> differences(const signature& from, const signature& to);

/// How far `to` is from `from`: {structural differences (argument count, tensor or static,
/// dtype, rank), differing dims and static values}, to be compared lexicographically.
XTRACE_DECL std::pair<std::size_t, std::size_t> signature_distance(const signature& from,
                                                                   const signature& to);

/// "(x0: float32[?,3], x1: float32[3], x2: 2)".
XTRACE_DECL std::string signature_text(const signature& s);

} // namespace xtrace::detail

#if XTRACE_DEFINE_RUNTIME

namespace xtrace::detail {

XTRACE_DECL bool fits(const signature& trace, const signature& call) {
    if (trace.size() != call.size())
        return false;
    for (std::size_t i = 0; i < trace.size(); ++i) {
        const auto &t = trace[i], &c = call[i];
        if (t.tensor.has_value() != c.tensor.has_value())
            return false;
        if (!t.tensor) {
            if (!(*t.value == *c.value))
                return false;
            continue;
        }
        if (t.tensor->type != c.tensor->type || t.tensor->dims.size() != c.tensor->dims.size())
            return false;
        for (std::size_t d = 0; d < t.tensor->dims.size(); ++d)
            if (t.tensor->dims[d] >= 0 && t.tensor->dims[d] != c.tensor->dims[d])
                return false;
    }
    return true;
}

XTRACE_DECL std::optional<signature> relax(const signature& a, const signature& b) {
    if (a.size() != b.size())
        return std::nullopt;
    signature out = a;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i].tensor.has_value() != b[i].tensor.has_value())
            return std::nullopt;
        if (!a[i].tensor) {
            if (!(*a[i].value == *b[i].value))
                return std::nullopt;
            continue;
        }
        const auto &x = *a[i].tensor, &y = *b[i].tensor;
        if (x.type != y.type || x.dims.size() != y.dims.size())
            return std::nullopt;
        for (std::size_t d = 0; d < x.dims.size(); ++d)
            if (x.dims[d] != y.dims[d])
                out[i].tensor->dims[d] = unknown_dim;
    }
    return out;
}

XTRACE_DECL void check_fits(const signature& expected, const signature& call,
                            const std::string& who, const std::string& source) {
    if (expected.size() != call.size())
        throw signature_error(who + ": called with " + std::to_string(call.size()) +
                              " arguments, " + source + " has " + std::to_string(expected.size()));
    for (std::size_t i = 0; i < call.size(); ++i) {
        const std::string head = who + ": arg " + std::to_string(i) + " ";
        const auto &want = expected[i], &got = call[i];
        if (want.tensor.has_value() != got.tensor.has_value())
            throw signature_error(head + (got.tensor ? "is a tensor" : "is not a tensor") + ", " +
                                  source + " expects " +
                                  (want.tensor ? want.tensor->to_string() : want.value->text()));
        if (!want.tensor) {
            if (!(*want.value == *got.value))
                throw signature_error(head + "is " + got.value->text() + ", " + source +
                                      " expects " + want.value->text());
            continue;
        }
        const tensor_spec &w = *want.tensor, &g = *got.tensor;
        if (w.type != g.type)
            throw signature_error(head + "has dtype " + std::string(dtype_name(g.type)) + ", " +
                                  source + " expects " + w.to_string());
        if (w.dims.size() != g.dims.size())
            throw signature_error(head + "has rank " + std::to_string(g.dims.size()) + " (" +
                                  g.to_string() + "), " + source + " expects " + w.to_string());
        for (std::size_t d = 0; d < w.dims.size(); ++d)
            if (w.dims[d] >= 0 && w.dims[d] != g.dims[d])
                throw signature_error(head + "dim " + std::to_string(d) + " is " +
                                      std::to_string(g.dims[d]) + ", " + source + " expects " +
                                      std::to_string(w.dims[d]) + " (" + w.to_string() + ", got " +
                                      g.to_string() + ")");
    }
}

XTRACE_DECL std::string dim_text(dim_t d) {
    return d < 0 ? std::string("?") : std::to_string(d);
}

XTRACE_DECL std::pair<std::size_t, std::size_t> signature_distance(const signature& from,
                                                                   const signature& to) {
    if (from.size() != to.size())
        return {std::max(from.size(), to.size()) + 1, 0};
    std::pair<std::size_t, std::size_t> d{0, 0};
    for (std::size_t i = 0; i < from.size(); ++i) {
        const auto &f = from[i], &t = to[i];
        if (f.tensor.has_value() != t.tensor.has_value() ||
            (f.tensor && (f.tensor->type != t.tensor->type ||
                          f.tensor->dims.size() != t.tensor->dims.size()))) {
            ++d.first;
        } else if (!f.tensor) {
            d.second += !(*f.value == *t.value);
        } else {
            for (std::size_t k = 0; k < f.tensor->dims.size(); ++k)
                d.second += f.tensor->dims[k] != t.tensor->dims[k];
        }
    }
    return d;
}

XTRACE_DECL std::vector<std::string> differences(const signature& from, const signature& to) {
    std::vector<std::string> out;
    if (from.size() != to.size()) {
        out.push_back("argument count changed " + std::to_string(from.size()) + " -> " +
                      std::to_string(to.size()));
        return out;
    }
    for (std::size_t i = 0; i < from.size(); ++i) {
        const std::string arg = "arg " + std::to_string(i) + ": ";
        const auto &f = from[i], &t = to[i];
        if (f.tensor.has_value() != t.tensor.has_value()) {
            out.push_back(
                arg + (t.tensor ? "static value became a tensor" : "tensor became a static value"));
        } else if (!f.tensor) {
            if (!(*f.value == *t.value))
                out.push_back(arg + "value changed " + f.value->text() + " -> " + t.value->text());
        } else if (f.tensor->type != t.tensor->type) {
            out.push_back(arg + "dtype " + std::string(dtype_name(f.tensor->type)) + " -> " +
                          std::string(dtype_name(t.tensor->type)));
        } else if (f.tensor->dims.size() != t.tensor->dims.size()) {
            out.push_back(arg + "rank changed " + std::to_string(f.tensor->dims.size()) + " -> " +
                          std::to_string(t.tensor->dims.size()));
        } else {
            for (std::size_t d = 0; d < f.tensor->dims.size(); ++d)
                if (f.tensor->dims[d] != t.tensor->dims[d])
                    out.push_back(arg + "dim " + std::to_string(d) + " changed " +
                                  dim_text(f.tensor->dims[d]) + " -> " +
                                  dim_text(t.tensor->dims[d]));
        }
    }
    return out;
}

XTRACE_DECL std::string signature_text(const signature& s) {
    std::string out = "(";
    for (std::size_t i = 0; i < s.size(); ++i) {
        out += (i ? ", x" : "x") + std::to_string(i) + ": ";
        out += s[i].tensor ? s[i].tensor->to_string() : s[i].value->text();
    }
    return out + ")";
}

} // namespace xtrace::detail

#endif

#endif
