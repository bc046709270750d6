// The runtime section of function/signature.hpp.

#include <algorithm>

namespace xtrace::function_detail {

XTRACE_DECL std::vector<mismatch> compare(const signature& from, const signature& to,
                                          bool unknown_matches) {
    using kind = mismatch::kind;
    if (from.size() != to.size())
        return {mismatch{kind::count}};
    std::vector<mismatch> out;
    for (std::size_t i = 0; i < from.size(); ++i) {
        const tensor_spec *f = tensor_of(from[i]), *t = tensor_of(to[i]);
        if (from[i].index() != to[i].index()) {
            out.push_back({kind::role, i});
        } else if (const tensor_spec* v = variable_of(from[i])) {
            // Variables fit by dtype and shape; no dim of theirs is ever relaxed.
            const tensor_spec* w = variable_of(to[i]);
            if (v->type != w->type || v->dims != w->dims)
                out.push_back({kind::value, i});
        } else if (!f) {
            if (!(*static_of(from[i]) == *static_of(to[i])))
                out.push_back({kind::value, i});
        } else if (f->type != t->type) {
            out.push_back({kind::dtype, i});
        } else if (is_unknown_rank(f->dims) || is_unknown_rank(t->dims)) {
            // An unknown rank fits any shape; compared exactly, only another unknown rank.
            if (!(is_unknown_rank(f->dims) && (unknown_matches || is_unknown_rank(t->dims))))
                out.push_back({kind::rank, i});
        } else if (f->dims.size() != t->dims.size()) {
            out.push_back({kind::rank, i});
        } else {
            for (std::size_t d = 0; d < f->dims.size(); ++d)
                if (f->dims[d] != t->dims[d] && !(unknown_matches && f->dims[d] < 0))
                    out.push_back({kind::dim, i, d});
        }
    }
    return out;
}

XTRACE_DECL std::vector<shape_t> tensor_shapes(const signature& s) {
    std::vector<shape_t> shapes;
    for (const auto& a : s)
        if (const tensor_spec* t = tensor_of(a))
            shapes.push_back(t->dims);
    return shapes;
}

XTRACE_DECL bool fits(const signature& trace, const signature& call) {
    return compare(trace, call, true).empty();
}

XTRACE_DECL std::optional<signature> relax(const signature& a, const signature& b) {
    const auto found = compare(a, b, false);
    if (std::any_of(found.begin(), found.end(), [](const mismatch& m) {
            return m.what != mismatch::kind::dim && m.what != mismatch::kind::rank;
        }))
        return std::nullopt;
    signature out = a;
    for (const mismatch& m : found) { // as TensorFlow: differing dims, then differing ranks
        shape_t& dims = tensor_of(out[m.arg])->dims;
        if (m.what == mismatch::kind::rank)
            dims = unknown_rank_shape();
        else
            dims[m.dim] = unknown_dim;
    }
    return out;
}

XTRACE_DECL void check_fits(const signature& expected, const signature& call,
                            const std::string& who, const std::string& source) {
    const auto found = compare(expected, call, true);
    if (found.empty())
        return;
    const mismatch& m = found.front();
    if (m.what == mismatch::kind::count)
        throw signature_error(who + ": called with " + std::to_string(call.size()) +
                              " arguments, " + source + " has " + std::to_string(expected.size()));
    const std::string head = who + ": arg " + std::to_string(m.arg) + " ";
    const std::string want = arg_text(expected[m.arg]);
    const tensor_spec* got = tensor_of(call[m.arg]);
    static constexpr const char* kinds[] = {"a tensor", "a static value", "a variable"};
    switch (m.what) {
    case mismatch::kind::count:
        break;
    case mismatch::kind::role:
        throw signature_error(head + "is " + kinds[call[m.arg].index()] + ", " + source +
                              " expects " + kinds[expected[m.arg].index()] + " (" + want + ")");
    case mismatch::kind::value:
        throw signature_error(head + "is " + arg_text(call[m.arg]) + ", " + source + " expects " +
                              want);
    case mismatch::kind::dtype:
        throw signature_error(head + "has dtype " + std::string(dtype_name(got->type)) + ", " +
                              source + " expects " + want);
    case mismatch::kind::rank:
        throw signature_error(head + "has rank " + rank_text(got->dims) + " (" + got->to_string() +
                              "), " + source + " expects " + want);
    case mismatch::kind::dim:
        throw signature_error(head + "dim " + std::to_string(m.dim) + " is " +
                              std::to_string(got->dims[m.dim]) + ", " + source + " expects " +
                              std::to_string(tensor_of(expected[m.arg])->dims[m.dim]) + " (" +
                              want + ", got " + got->to_string() + ")");
    }
}

XTRACE_DECL std::string dim_text(dim_t d) {
    return d < 0 ? std::string("?") : std::to_string(d);
}

XTRACE_DECL std::string rank_text(const shape_t& dims) {
    return is_unknown_rank(dims) ? std::string("?") : std::to_string(dims.size());
}

XTRACE_DECL std::pair<std::size_t, std::size_t> signature_distance(const signature& from,
                                                                   const signature& to) {
    if (from.size() != to.size())
        return {std::max(from.size(), to.size()) + 1, 0};
    std::pair<std::size_t, std::size_t> d{0, 0};
    for (const mismatch& m : compare(from, to, false))
        ++(m.structural() ? d.first : d.second);
    return d;
}

XTRACE_DECL std::vector<std::string> differences(const signature& from, const signature& to) {
    std::vector<std::string> out;
    for (const mismatch& m : compare(from, to, false)) {
        if (m.what == mismatch::kind::count) {
            out.push_back("argument count changed " + std::to_string(from.size()) + " -> " +
                          std::to_string(to.size()));
            continue;
        }
        const std::string arg = "arg " + std::to_string(m.arg) + ": ";
        const tensor_spec *f = tensor_of(from[m.arg]), *t = tensor_of(to[m.arg]);
        switch (m.what) {
        case mismatch::kind::count:
            break;
        case mismatch::kind::role: {
            static constexpr const char* kinds[] = {"tensor", "static value", "variable"};
            out.push_back(arg + kinds[from[m.arg].index()] + " became a " +
                          kinds[to[m.arg].index()]);
            break;
        }
        case mismatch::kind::value:
            out.push_back(arg + "value changed " + arg_text(from[m.arg]) + " -> " +
                          arg_text(to[m.arg]));
            break;
        case mismatch::kind::dtype:
            out.push_back(arg + "dtype " + std::string(dtype_name(f->type)) + " -> " +
                          std::string(dtype_name(t->type)));
            break;
        case mismatch::kind::rank:
            out.push_back(arg + "rank changed " + rank_text(f->dims) + " -> " + rank_text(t->dims));
            break;
        case mismatch::kind::dim:
            out.push_back(arg + "dim " + std::to_string(m.dim) + " changed " +
                          dim_text(f->dims[m.dim]) + " -> " + dim_text(t->dims[m.dim]));
            break;
        }
    }
    return out;
}

XTRACE_DECL std::string arg_text(const arg_signature& a) {
    if (const tensor_spec* v = variable_of(a))
        return "variable " + v->to_string();
    const tensor_spec* t = tensor_of(a);
    return t ? t->to_string() : static_of(a)->text();
}

XTRACE_DECL std::string signature_text(const signature& s) {
    std::string out = "(";
    for (std::size_t i = 0; i < s.size(); ++i)
        out += (i ? ", x" : "x") + std::to_string(i) + ": " + arg_text(s[i]);
    return out + ")";
}

} // namespace xtrace::function_detail
