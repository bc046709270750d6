// Shape inference, generation, printing and shrinking of random programs (see program.hpp).

#include "program.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

namespace xtrace::fuzz {

namespace {

std::int64_t count(const dims& s) {
    return std::accumulate(s.begin(), s.end(), std::int64_t(1), std::multiplies<>());
}

std::optional<dims> broadcast(const dims& a, const dims& b) {
    dims out(std::max(a.size(), b.size()));
    for (std::size_t i = 0; i < out.size(); ++i) {
        const std::int64_t x = i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
        const std::int64_t y = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
        if (x != y && x != 1 && y != 1)
            return std::nullopt;
        out[i] = x == 1 ? y : x;
    }
    return out;
}

bool floating(dtype t) {
    return t == dtype::float32 || t == dtype::float64;
}

bool integral(dtype t) {
    return t == dtype::int32 || t == dtype::int64;
}

bool rounding(op_kind op) {
    return op == op_kind::floor || op == op_kind::ceil || op == op_kind::round;
}

bool comparison(op_kind op) {
    return info(op).result == op_result::boolean;
}

bool is_unary(op_kind op) {
    return info(op).elementwise && info(op).arity == 1 && op != op_kind::cast;
}

bool is_binary(op_kind op) {
    return info(op).elementwise && info(op).arity == 2;
}

// The result of unary `op` on `x`, or nothing when it does not apply.
std::optional<value_info> unary(op_kind op, const value_info& x) {
    if (!is_unary(op) || !accepts(info(op).domain, x.type))
        return std::nullopt;
    if (rounding(op) && floating(x.type) && !x.exact)
        return std::nullopt; // an ulp's difference would move the result by a whole unit
    return value_info{x.type, x.shape, x.exact && !transcendental(op), x.zero_sign};
}

// The result of binary `op` on a and b (shapes broadcast), or nothing.
std::optional<value_info> binary(op_kind op, const value_info& a, const value_info& b) {
    if (!is_binary(op) || a.type != b.type || !accepts(info(op).domain, a.type))
        return std::nullopt;
    if (comparison(op) && floating(a.type) && !(a.exact && b.exact))
        return std::nullopt; // a comparison of values that differ by an ulp may flip
    auto s = broadcast(a.shape, b.shape);
    if (!s)
        return std::nullopt;
    return value_info{comparison(op) ? dtype::boolean : a.type, *s, a.exact && b.exact,
                      a.zero_sign && b.zero_sign};
}

bool valid_axis(std::int64_t axis, std::size_t rank) {
    const auto r = static_cast<std::int64_t>(rank);
    return axis >= -r && axis < r;
}

std::optional<value_info> infer_step(const step& s, const std::vector<value_info>& v) {
    auto operand = [&](int k) -> const value_info* {
        const int i = s.in[static_cast<std::size_t>(k)];
        return i >= 0 && static_cast<std::size_t>(i) < v.size() ? &v[static_cast<std::size_t>(i)]
                                                                : nullptr;
    };
    const value_info* a = operand(0);
    const value_info* b = operand(1);
    const value_info* c = operand(2);
    if (!a)
        return std::nullopt;
    switch (s.kind) {
    case step_kind::unary:
        return unary(s.op, *a);
    case step_kind::binary:
        if (!b || (s.op == op_kind::div && !floating(a->type)))
            return std::nullopt; // integer division by a tensor could divide by zero
        return binary(s.op, *a, *b);
    case step_kind::scalar_right:
    case step_kind::scalar_left: {
        if (a->type == dtype::boolean)
            return std::nullopt;
        if (integral(a->type) &&
            (s.scalar != static_cast<double>(static_cast<std::int64_t>(s.scalar)) ||
             (s.op == op_kind::div && (s.kind == step_kind::scalar_left || s.scalar == 0))))
            return std::nullopt;
        const value_info scalar{a->type, {}, true, true};
        return s.kind == step_kind::scalar_right ? binary(s.op, *a, scalar)
                                                 : binary(s.op, scalar, *a);
    }
    case step_kind::where:
    case step_kind::clip: {
        if (!b || !c || b->type != c->type)
            return std::nullopt;
        if (s.kind == step_kind::where ? a->type != dtype::boolean
                                       : (a->type != b->type || a->type == dtype::boolean))
            return std::nullopt;
        auto ab = broadcast(a->shape, b->shape);
        auto abc = ab ? broadcast(*ab, c->shape) : std::nullopt;
        if (!abc)
            return std::nullopt;
        return value_info{b->type, *abc, a->exact && b->exact && c->exact,
                          a->zero_sign && b->zero_sign && c->zero_sign};
    }
    case step_kind::cast:
        if (floating(a->type) && !floating(s.to) && !a->exact)
            return std::nullopt;
        return value_info{s.to, a->shape, a->exact, a->zero_sign};
    case step_kind::host_flatten: {
        value_info r = *a;
        r.shape = {count(a->shape)};
        return r;
    }
    case step_kind::reduce: {
        if (!info(s.op).reduction || a->type == dtype::boolean)
            return std::nullopt;
        std::vector<std::int64_t> axes;
        for (auto ax : s.attrs) {
            if (!valid_axis(ax, a->shape.size()))
                return std::nullopt;
            axes.push_back(ax < 0 ? ax + static_cast<std::int64_t>(a->shape.size()) : ax);
        }
        std::sort(axes.begin(), axes.end());
        if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
            return std::nullopt;
        dims out;
        for (std::size_t d = 0; d < a->shape.size(); ++d) {
            const bool reduced =
                std::binary_search(axes.begin(), axes.end(), static_cast<std::int64_t>(d));
            if (!reduced)
                out.push_back(a->shape[d]);
            else if (s.keep)
                out.push_back(1);
        }
        const bool order_free = s.op == op_kind::max || s.op == op_kind::min || integral(a->type);
        const bool extremum = s.op == op_kind::max || s.op == op_kind::min;
        return value_info{a->type, out, a->exact && order_free, a->zero_sign && !extremum};
    }
    case step_kind::shape: {
        const dims& in = a->shape;
        const auto rank = static_cast<std::int64_t>(in.size());
        dims out;
        switch (s.op) {
        case op_kind::reshape: {
            std::int64_t known = 1;
            int unknown = 0;
            for (auto d : s.attrs) {
                if (d == -1)
                    ++unknown;
                else if (d < 0)
                    return std::nullopt;
                else
                    known *= d;
            }
            if (unknown > 1 || (unknown == 0 && known != count(in)) ||
                (unknown == 1 && (known == 0 || count(in) % known != 0)))
                return std::nullopt;
            out = s.attrs;
            for (auto& d : out)
                if (d == -1)
                    d = count(in) / known;
            break;
        }
        case op_kind::transpose: {
            if (static_cast<std::int64_t>(s.attrs.size()) != rank)
                return std::nullopt;
            std::vector<char> seen(in.size(), 0);
            for (auto p : s.attrs) {
                if (!valid_axis(p, in.size()))
                    return std::nullopt;
                const auto q = static_cast<std::size_t>(p < 0 ? p + rank : p);
                if (seen[q]++)
                    return std::nullopt;
                out.push_back(in[q]);
            }
            break;
        }
        case op_kind::expand_dims: {
            if (s.attrs.size() != 1 || s.attrs[0] < -rank - 1 || s.attrs[0] > rank)
                return std::nullopt;
            const auto ax = s.attrs[0] < 0 ? s.attrs[0] + rank + 1 : s.attrs[0];
            out = in;
            out.insert(out.begin() + ax, 1);
            break;
        }
        case op_kind::squeeze: {
            if (s.attrs.size() != 1 || !valid_axis(s.attrs[0], in.size()))
                return std::nullopt;
            const auto ax = s.attrs[0] < 0 ? s.attrs[0] + rank : s.attrs[0];
            if (in[static_cast<std::size_t>(ax)] != 1)
                return std::nullopt;
            out = in;
            out.erase(out.begin() + ax);
            break;
        }
        case op_kind::broadcast_to: {
            auto b2 = broadcast(in, s.attrs);
            if (!b2 || *b2 != s.attrs)
                return std::nullopt;
            out = s.attrs;
            break;
        }
        default:
            return std::nullopt;
        }
        if (out.size() > 6)
            return std::nullopt;
        return value_info{a->type, out, a->exact, a->zero_sign};
    }
    case step_kind::matmul: {
        if (!b || a->type != b->type || a->type == dtype::boolean || a->shape.size() < 2 ||
            b->shape.size() < 2 || a->shape.back() != b->shape[b->shape.size() - 2])
            return std::nullopt;
        auto batch = broadcast(dims(a->shape.begin(), a->shape.end() - 2),
                               dims(b->shape.begin(), b->shape.end() - 2));
        if (!batch)
            return std::nullopt;
        batch->push_back(a->shape[a->shape.size() - 2]);
        batch->push_back(b->shape.back());
        return value_info{a->type, *batch, a->exact && b->exact && integral(a->type), true};
    }
    case step_kind::gradient:
        if (!floating(a->type) || !b || b->type != a->type)
            return std::nullopt;
        // Traced and eager gradients come from differently shaped graphs (loops unrolled,
        // the branch taken), summed in other orders: their values are compared by the
        // gradient tests (autodiff/), their shapes and exceptions here.
        return value_info{b->type, b->shape, false, true, false, false};
    case step_kind::softmax:
    case step_kind::logsumexp: {
        if (!floating(a->type) || s.attrs.size() != 1 || !valid_axis(s.attrs[0], a->shape.size()))
            return std::nullopt;
        dims out = a->shape;
        if (s.kind == step_kind::logsumexp) {
            const auto r = static_cast<std::int64_t>(out.size());
            out.erase(out.begin() + (s.attrs[0] < 0 ? s.attrs[0] + r : s.attrs[0]));
        }
        return value_info{a->type, out, false, true};
    }
    case step_kind::cond: {
        if (a->type != dtype::boolean || !a->shape.empty() || !b)
            return std::nullopt;
        auto then_v = unary(s.op, *b);
        auto else_v = unary(s.op2, *b);
        if (!then_v || !else_v)
            return std::nullopt;
        if (c) {
            then_v = binary(op_kind::add, *then_v, *c);
            if (!then_v || then_v->shape != b->shape)
                return std::nullopt;
        }
        return value_info{b->type, b->shape, then_v->exact && else_v->exact,
                          then_v->zero_sign && else_v->zero_sign};
    }
    case step_kind::switch_case: {
        if (a->type != dtype::int32 || !a->shape.empty() || !b)
            return std::nullopt;
        auto first = unary(s.op, *b);
        auto second = unary(s.op2, *b);
        if (!first || !second)
            return std::nullopt;
        return value_info{b->type, b->shape, first->exact && second->exact,
                          first->zero_sign && second->zero_sign};
    }
    case step_kind::scan: {
        if (a->type != dtype::int32 || !a->shape.empty() || !b || b->type == dtype::boolean ||
            b->shape.empty() || s.attrs.size() != 1 || s.attrs[0] < 0 || s.attrs[0] > 1)
            return std::nullopt;
        value_info row = *b;
        row.shape.erase(row.shape.begin());
        auto body = unary(s.op, row);
        if (!body)
            return std::nullopt;
        body = binary(s.op2, *body, value_info{b->type, {}, true, true});
        if (!body || body->shape != row.shape || body->type != b->type)
            return std::nullopt;
        if (s.attrs[0] == 1) // the final carry: the counter, exact
            return value_info{b->type, {}, true, true};
        return value_info{b->type, b->shape, body->exact, body->zero_sign};
    }
    case step_kind::loop: {
        if (a->type != dtype::int32 || !a->shape.empty() || !b || b->type == dtype::boolean ||
            s.attrs.empty() || s.attrs.size() > 2 || s.attrs[0] < 0 || s.attrs[0] > 4 ||
            (s.attrs.size() == 2 && s.attrs[1] < 0))
            return std::nullopt;
        auto body = unary(s.op, *b);
        if (!body)
            return std::nullopt;
        if (c) {
            body = binary(s.op2, *body, *c);
            if (!body || body->shape != b->shape || body->type != b->type)
                return std::nullopt;
        }
        return value_info{b->type, b->shape, body->exact, body->zero_sign};
    }
    }
    return std::nullopt;
}

template <class T>
T pick(std::mt19937_64& rng, std::initializer_list<T> items) {
    return items.begin()[std::uniform_int_distribution<std::size_t>(0, items.size() - 1)(rng)];
}

int uniform(std::mt19937_64& rng, int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
}

// A value number, most often one of the latest (programs grow chains, not just fans).
int recent(std::mt19937_64& rng, std::size_t pool) {
    const int n = static_cast<int>(pool);
    if (uniform(rng, 0, 2) > 0)
        return std::max(0, n - 1 - uniform(rng, 0, 3));
    return uniform(rng, 0, n - 1);
}

const std::vector<op_kind>& unary_ops() {
    static const std::vector<op_kind> ops = {
        op_kind::neg,           op_kind::abs,  op_kind::square,  op_kind::relu,
        op_kind::floor,         op_kind::ceil, op_kind::round,   op_kind::exp,
        op_kind::log,           op_kind::sqrt, op_kind::rsqrt,   op_kind::sin,
        op_kind::cos,           op_kind::tanh, op_kind::sigmoid, op_kind::logical_not,
        op_kind::stop_gradient, op_kind::erf};
    return ops;
}

const std::vector<op_kind>& binary_ops() {
    static const std::vector<op_kind> ops = {
        op_kind::add,        op_kind::sub,         op_kind::mul,           op_kind::div,
        op_kind::pow,        op_kind::minimum,     op_kind::maximum,       op_kind::less,
        op_kind::less_equal, op_kind::greater,     op_kind::greater_equal, op_kind::equal,
        op_kind::not_equal,  op_kind::logical_and, op_kind::logical_or,    op_kind::logical_xor};
    return ops;
}

op_kind any_of(std::mt19937_64& rng, const std::vector<op_kind>& ops) {
    return ops[static_cast<std::size_t>(uniform(rng, 0, static_cast<int>(ops.size()) - 1))];
}

// Random axes of a rank-r value, some negative.
std::vector<std::int64_t> random_axes(std::mt19937_64& rng, std::size_t rank) {
    std::vector<std::int64_t> axes;
    for (std::size_t d = 0; d < rank; ++d)
        if (uniform(rng, 0, 1))
            axes.push_back(uniform(rng, 0, 1)
                               ? static_cast<std::int64_t>(d)
                               : static_cast<std::int64_t>(d) - static_cast<std::int64_t>(rank));
    std::shuffle(axes.begin(), axes.end(), rng);
    return axes;
}

// A candidate step of a random kind over the pool; infer_step decides whether it is valid.
step random_step(std::mt19937_64& rng, const std::vector<value_info>& pool) {
    step s;
    const std::size_t n = pool.size();
    auto other = [&](const value_info& like) {
        // An operand of the same dtype whose shape broadcasts with `like`, if one is found.
        for (int tries = 0; tries < 12; ++tries) {
            const int k = recent(rng, n);
            const auto& v = pool[static_cast<std::size_t>(k)];
            if (v.type == like.type && broadcast(v.shape, like.shape))
                return k;
        }
        return -1;
    };
    s.in[0] = recent(rng, n);
    const value_info& a = pool[static_cast<std::size_t>(s.in[0])];
    const int kind = uniform(rng, 0, 99);
    if (floating(a.type) && uniform(rng, 0, 24) == 0) {
        s.kind = step_kind::gradient;
        for (int tries = 0; tries < 12 && s.in[1] < 0; ++tries) {
            const int k = uniform(rng, 0, static_cast<int>(n) - 1);
            if (pool[static_cast<std::size_t>(k)].type == a.type)
                s.in[1] = k;
        }
    } else if (kind < 22) {
        s.kind = step_kind::unary;
        s.op = any_of(rng, unary_ops());
    } else if (kind < 42) {
        s.kind = step_kind::binary;
        s.op = any_of(rng, binary_ops());
        s.in[1] = other(a);
    } else if (kind < 52) {
        s.kind = uniform(rng, 0, 3) ? step_kind::scalar_right : step_kind::scalar_left;
        s.op = any_of(rng, binary_ops());
        s.scalar = pick(rng, {0.0, -0.0, 0.5, -1.5, 2.0, 3.0, -1.0, 1.0});
    } else if (kind < 58) {
        s.kind = uniform(rng, 0, 2) ? step_kind::where : step_kind::clip;
        if (s.kind == step_kind::where) {
            for (int tries = 0;
                 tries < 12 && pool[static_cast<std::size_t>(s.in[0])].type != dtype::boolean;
                 ++tries)
                s.in[0] = recent(rng, n);
            s.in[1] = recent(rng, n);
            s.in[2] = other(pool[static_cast<std::size_t>(s.in[1])]);
        } else {
            s.in[1] = other(a);
            s.in[2] = other(a);
        }
    } else if (kind < 66) {
        s.kind = step_kind::cast;
        s.to =
            pick(rng, {dtype::float32, dtype::float64, dtype::int32, dtype::int64, dtype::boolean});
    } else if (kind < 75) {
        s.kind = step_kind::reduce;
        s.op = pick(rng, {op_kind::sum, op_kind::mean, op_kind::max, op_kind::min, op_kind::prod});
        if (uniform(rng, 0, 3))
            s.attrs = random_axes(rng, a.shape.size());
        else
            for (std::size_t d = 0; d < a.shape.size(); ++d)
                s.attrs.push_back(static_cast<std::int64_t>(d));
        s.keep = uniform(rng, 0, 1) == 1;
    } else if (kind < 87) {
        s.kind = step_kind::shape;
        const auto rank = static_cast<std::int64_t>(a.shape.size());
        switch (uniform(rng, 0, 4)) {
        case 0: {
            s.op = op_kind::reshape;
            dims rest = a.shape; // regroup the dims: merge two neighbours or split one
            std::shuffle(rest.begin(), rest.end(), rng);
            if (rest.size() >= 2 && uniform(rng, 0, 1)) {
                rest[0] *= rest[1];
                rest.erase(rest.begin() + 1);
            } else {
                rest.push_back(1);
            }
            if (!rest.empty() && count(a.shape) > 0 && uniform(rng, 0, 1))
                rest[static_cast<std::size_t>(uniform(rng, 0, static_cast<int>(rest.size()) - 1))] =
                    -1;
            s.attrs = rest;
            break;
        }
        case 1:
            s.op = op_kind::transpose;
            s.attrs.resize(a.shape.size());
            std::iota(s.attrs.begin(), s.attrs.end(), std::int64_t(0));
            std::shuffle(s.attrs.begin(), s.attrs.end(), rng);
            break;
        case 2:
            s.op = op_kind::expand_dims;
            s.attrs = {uniform(rng, static_cast<int>(-rank - 1), static_cast<int>(rank))};
            break;
        case 3:
            s.op = op_kind::squeeze;
            for (std::int64_t d = 0; d < rank; ++d)
                if (a.shape[static_cast<std::size_t>(d)] == 1)
                    s.attrs = {uniform(rng, 0, 1) ? d : d - rank};
            break;
        default:
            s.op = op_kind::broadcast_to;
            s.attrs = a.shape;
            for (auto& d : s.attrs)
                if (d == 1)
                    d = pick(rng, {1, 2, 3});
            if (uniform(rng, 0, 1))
                s.attrs.insert(s.attrs.begin(), pick(rng, {1, 2}));
        }
    } else if (kind < 91) {
        s.kind = step_kind::matmul;
        // a times a's transpose over its last two dims, or times another value that fits.
        s.in[1] = s.in[0];
        for (int tries = 0; tries < 8; ++tries) {
            const int k = recent(rng, n);
            const auto& v = pool[static_cast<std::size_t>(k)];
            if (v.type == a.type && v.shape.size() >= 2 && a.shape.size() >= 2 &&
                v.shape[v.shape.size() - 2] == a.shape.back())
                s.in[1] = k;
        }
    } else if (kind < 92) {
        s.kind = step_kind::host_flatten;
    } else if (kind < 94) {
        s.kind = uniform(rng, 0, 1) ? step_kind::softmax : step_kind::logsumexp;
        s.attrs = {uniform(rng, -static_cast<int>(a.shape.size()),
                           std::max(0, static_cast<int>(a.shape.size()) - 1))};
    } else if (kind < 97) {
        s.kind = step_kind::cond;
        s.in[1] = s.in[0];
        s.in[0] = -1;
        for (int tries = 0; tries < 16 && s.in[0] < 0; ++tries) {
            const int k = uniform(rng, 0, static_cast<int>(n) - 1);
            const auto& v = pool[static_cast<std::size_t>(k)];
            if (v.type == dtype::boolean && v.shape.empty())
                s.in[0] = k;
        }
        s.op = any_of(rng, unary_ops());
        s.op2 = any_of(rng, unary_ops());
        if (uniform(rng, 0, 1))
            s.in[2] = other(pool[static_cast<std::size_t>(s.in[1])]);
    } else {
        const int pick_kind = uniform(rng, 0, 2);
        s.kind = pick_kind == 0   ? step_kind::loop
                 : pick_kind == 1 ? step_kind::switch_case
                                  : step_kind::scan;
        s.in[1] = s.in[0];
        s.in[0] = -1;
        for (int k = 0; k < static_cast<int>(n) && s.in[0] < 0; ++k)
            if (pool[static_cast<std::size_t>(k)].type == dtype::int32 &&
                pool[static_cast<std::size_t>(k)].shape.empty())
                s.in[0] = k;
        s.attrs = {uniform(rng, 0, s.kind == step_kind::scan ? 1 : 3)};
        if (s.kind == step_kind::loop && uniform(rng, 0, 2) == 0)
            s.attrs.push_back(uniform(rng, 0, 3)); // maximum_iterations
        s.op = any_of(rng, unary_ops());
        s.op2 = pick(
            rng, {op_kind::add, op_kind::sub, op_kind::mul, op_kind::minimum, op_kind::maximum});
        if (s.kind != step_kind::scan && uniform(rng, 0, 1))
            s.in[2] = other(pool[static_cast<std::size_t>(s.in[1])]);
    }
    return s;
}

// A random shape, and shapes that broadcast with it for the other inputs.
std::vector<dims> random_inputs(std::mt19937_64& rng) {
    const int rank = uniform(rng, 0, 5);
    dims base;
    for (int d = 0; d < rank; ++d)
        base.push_back(pick(rng, {1, 2, 3, 4, 5, 7, 1, 2, 0}));
    while (count(base) > 600)
        base[static_cast<std::size_t>(uniform(rng, 0, rank - 1))] = 2;
    std::vector<dims> shapes;
    for (std::size_t i = 0; i < input_types.size(); ++i) {
        dims s = base;
        if (uniform(rng, 0, 2) == 0 && !s.empty())
            s.erase(s.begin(), s.begin() + uniform(rng, 0, static_cast<int>(s.size())));
        for (auto& d : s)
            if (uniform(rng, 0, 4) == 0)
                d = 1;
        shapes.push_back(s);
    }
    return shapes;
}

// Value numbers: a value made by step k is number input_types.size() + k.
std::string name(int v) {
    return (static_cast<std::size_t>(v) < input_types.size() ? "x" : "v") + std::to_string(v);
}

std::string type_name(dtype t) {
    switch (t) {
    case dtype::float32:
        return "float";
    case dtype::float64:
        return "double";
    case dtype::int32:
        return "std::int32_t";
    case dtype::int64:
        return "std::int64_t";
    case dtype::boolean:
        return "bool";
    }
    return "?";
}

std::string list(const std::vector<std::int64_t>& v) {
    std::string out = "{";
    for (std::size_t i = 0; i < v.size(); ++i)
        out += (i ? ", " : "") + std::to_string(v[i]);
    return out + "}";
}

// The C++ spelling of elementwise op `op` on the given operand expressions.
std::string call(op_kind op, const std::vector<std::string>& xs) {
    switch (op) {
    case op_kind::neg:
        return "-" + xs[0];
    case op_kind::logical_not:
        return "!" + xs[0];
    case op_kind::add:
        return "(" + xs[0] + " + " + xs[1] + ")";
    case op_kind::sub:
        return "(" + xs[0] + " - " + xs[1] + ")";
    case op_kind::mul:
        return "(" + xs[0] + " * " + xs[1] + ")";
    case op_kind::div:
        return "(" + xs[0] + " / " + xs[1] + ")";
    case op_kind::less:
        return "(" + xs[0] + " < " + xs[1] + ")";
    case op_kind::less_equal:
        return "(" + xs[0] + " <= " + xs[1] + ")";
    case op_kind::greater:
        return "(" + xs[0] + " > " + xs[1] + ")";
    case op_kind::greater_equal:
        return "(" + xs[0] + " >= " + xs[1] + ")";
    case op_kind::equal:
        return "(" + xs[0] + " == " + xs[1] + ")";
    case op_kind::not_equal:
        return "(" + xs[0] + " != " + xs[1] + ")";
    case op_kind::logical_and:
        return "(" + xs[0] + " & " + xs[1] + ")";
    case op_kind::logical_or:
        return "(" + xs[0] + " | " + xs[1] + ")";
    case op_kind::logical_xor:
        return "(" + xs[0] + " ^ " + xs[1] + ")";
    default: {
        std::string out = "xtrace::" + std::string(info(op).name) + "(";
        for (std::size_t i = 0; i < xs.size(); ++i)
            out += (i ? ", " : "") + xs[i];
        return out + ")";
    }
    }
}

std::string scalar_text(double s, dtype t) {
    std::ostringstream os;
    os << type_name(t) << "(" << (std::signbit(s) && s == 0 ? "-0.0" : "");
    if (!(std::signbit(s) && s == 0))
        os << s;
    os << ")";
    return os.str();
}

// True when step s may lose its inexact operands' relative accuracy (see value_info::checked).
bool cancels(const step& s, const std::vector<value_info>& v, bool inexact_operand) {
    const bool float_operand = floating(v[static_cast<std::size_t>(s.in[0])].type);
    switch (s.kind) {
    case step_kind::reduce:
        return float_operand && s.op != op_kind::max && s.op != op_kind::min;
    case step_kind::matmul:
        return float_operand;
    case step_kind::unary:
        return inexact_operand && (s.op == op_kind::sin || s.op == op_kind::cos);
    case step_kind::binary:
    case step_kind::scalar_left:
    case step_kind::scalar_right:
        return inexact_operand &&
               (s.op == op_kind::add || s.op == op_kind::sub || s.op == op_kind::pow);
    case step_kind::cond:
    case step_kind::loop:
    case step_kind::switch_case:
    case step_kind::scan:
        return inexact_operand;
    default:
        return false;
    }
}

} // namespace

std::optional<std::vector<value_info>> infer(const program& p) {
    if (p.input_shapes.size() != input_types.size())
        return std::nullopt;
    std::vector<value_info> v;
    for (std::size_t i = 0; i < input_types.size(); ++i)
        v.push_back({input_types[i], p.input_shapes[i], true, true});
    for (const step& s : p.steps) {
        auto r = infer_step(s, v);
        if (!r)
            return std::nullopt;
        r->single = !r->exact && r->type == dtype::float32;
        bool inexact_operand = false;
        for (int i : s.in) {
            if (i < 0)
                continue;
            const value_info& operand = v[static_cast<std::size_t>(i)];
            r->single = r->single || (!r->exact && operand.single);
            r->checked = r->checked && operand.checked;
            inexact_operand = inexact_operand || !operand.exact;
        }
        r->checked = r->checked && !cancels(s, v, inexact_operand);
        v.push_back(*r);
    }
    for (int o : p.outputs)
        if (o < 0 || static_cast<std::size_t>(o) >= v.size())
            return std::nullopt;
    return v;
}

program generate(std::mt19937_64& rng, std::size_t size) {
    program p;
    p.input_shapes = random_inputs(rng);
    auto v = *infer(p);
    for (std::size_t k = 0; k < size; ++k) {
        for (int tries = 0; tries < 40; ++tries) {
            step s = random_step(rng, v);
            if (infer_step(s, v)) {
                p.steps.push_back(s);
                v = *infer(p);
                break;
            }
        }
    }
    // The last values of each dtype are returned (the rest would be pruned unseen).
    for (dtype t : output_types) {
        std::size_t taken = 0;
        for (std::size_t k = v.size(); k-- > input_types.size() && taken < output_slots;)
            if (v[k].type == t) {
                p.outputs.push_back(static_cast<int>(k));
                ++taken;
            }
    }
    return p;
}

std::vector<int> returned_values(const program& p, const std::vector<value_info>& vals) {
    std::vector<int> out;
    for (dtype t : output_types) {
        std::vector<int> of_type;
        for (int o : p.outputs)
            if (vals[static_cast<std::size_t>(o)].type == t && of_type.size() < output_slots)
                of_type.push_back(o);
        int stand_in = 0;
        while (input_types[static_cast<std::size_t>(stand_in)] != t)
            ++stand_in;
        of_type.resize(output_slots, stand_in);
        out.insert(out.end(), of_type.begin(), of_type.end());
    }
    return out;
}

std::string to_cpp(const program& p, const std::vector<std::string>& inputs_text) {
    const auto vals = *infer(p);
    std::ostringstream os;
    os << "auto f = xtrace::function([](";
    for (std::size_t i = 0; i < input_types.size(); ++i)
        os << (i ? ", " : "") << "auto " << name(static_cast<int>(i));
    os << ") {\n";
    for (std::size_t k = 0; k < p.steps.size(); ++k) {
        const step& s = p.steps[k];
        const int self = static_cast<int>(input_types.size() + k);
        auto in = [&](int j) { return name(s.in[static_cast<std::size_t>(j)]); };
        const dtype t = vals[static_cast<std::size_t>(s.in[0])].type;
        std::string e;
        switch (s.kind) {
        case step_kind::unary:
            e = call(s.op, {in(0)});
            break;
        case step_kind::binary:
            e = call(s.op, {in(0), in(1)});
            break;
        case step_kind::scalar_right:
            e = call(s.op, {in(0), scalar_text(s.scalar, t)});
            break;
        case step_kind::scalar_left:
            e = call(s.op, {scalar_text(s.scalar, t), in(0)});
            break;
        case step_kind::where:
        case step_kind::clip:
            e = call(s.kind == step_kind::where ? op_kind::where : op_kind::clip,
                     {in(0), in(1), in(2)});
            break;
        case step_kind::cast:
            e = "xtrace::cast<" + type_name(s.to) + ">(" + in(0) + ")";
            break;
        case step_kind::reduce:
            e = "xtrace::" + std::string(info(s.op).name) + "(" + in(0) + ", " + list(s.attrs) +
                (s.keep ? ", xtrace::keep_dims)" : ")");
            break;
        case step_kind::shape:
            e = "xtrace::" + std::string(info(s.op).name) + "(" + in(0) + ", " +
                (s.op == op_kind::expand_dims || s.op == op_kind::squeeze
                     ? std::to_string(s.attrs[0])
                     : list(s.attrs)) +
                ")";
            break;
        case step_kind::matmul:
            e = "xtrace::matmul(" + in(0) + ", " + in(1) + ")";
            break;
        case step_kind::gradient:
            e = "xtrace::gradients(xtrace::sum(" + in(0) + "), " + in(1) + ")";
            break;
        case step_kind::host_flatten:
            e = "xtrace::host_function([](const xt::xarray<" + type_name(t) +
                ">& h) { return xt::xarray<" + type_name(t) +
                ">(xt::flatten(h)); }, xtrace::spec<" + type_name(t) + ">({-1}), " + in(0) + ")";
            break;
        case step_kind::softmax:
        case step_kind::logsumexp:
            e = std::string(s.kind == step_kind::softmax ? "xtrace::softmax("
                                                         : "xtrace::logsumexp(") +
                in(0) + ", " + std::to_string(s.attrs[0]) + ")";
            break;
        case step_kind::cond: {
            std::string then_e = call(s.op, {in(1)});
            if (s.in[2] >= 0)
                then_e = call(op_kind::add, {then_e, in(2)});
            e = "xtrace::cond(" + in(0) + ", [&] { return " + then_e + "; }, [&] { return " +
                call(s.op2, {in(1)}) + "; })";
            break;
        }
        case step_kind::switch_case:
            e = "xtrace::switch_case(" + in(0) + ", [&] { return " + call(s.op, {in(1)}) +
                "; }, [&] { return " + call(s.op2, {in(1)}) + "; }, [&] { return " + in(1) + "; })";
            break;
        case step_kind::scan: {
            const std::string type = type_name(vals[static_cast<std::size_t>(s.in[1])].type);
            e = std::string("std::get<") + (s.attrs[0] == 1 ? "0" : "1") +
                ">(xtrace::scan([&](auto c, auto x) { return std::make_tuple(c + " + type +
                "(1), " + call(s.op2, {call(s.op, {"x"}), "c"}) + "); }, xtrace::cast<" + type +
                ">(" + in(0) + "), " + in(1) + "))";
            break;
        }
        case step_kind::loop: {
            std::string body = call(s.op, {"v"});
            if (s.in[2] >= 0)
                body = call(s.op2, {body, in(2)});
            e = "std::get<1>(xtrace::while_loop([](auto i, auto) { return i < " +
                std::to_string(s.attrs[0]) +
                "; }, [&](auto i, auto v) { return std::make_tuple(i + 1, " + body + "); }, " +
                in(0) + " * 0, " + in(1) +
                (s.attrs.size() > 1
                     ? ", xtrace::maximum_iterations(" + std::to_string(s.attrs[1]) + ")"
                     : std::string()) +
                "))";
            break;
        }
        }
        os << "    auto " << name(self) << " = " << e << ";\n";
    }
    os << "    return std::make_tuple(";
    for (std::size_t i = 0; i < p.outputs.size(); ++i)
        os << (i ? ", " : "") << name(p.outputs[i]);
    os << ");\n});\n";
    for (std::size_t i = 0; i < input_types.size(); ++i)
        os << "xt::xarray<" << type_name(input_types[i]) << "> " << name(static_cast<int>(i))
           << " = " << inputs_text[i] << ";\n";
    os << "auto r = f(";
    for (std::size_t i = 0; i < input_types.size(); ++i)
        os << (i ? ", " : "") << name(static_cast<int>(i));
    os << ");\n";
    return os.str();
}

std::vector<program> shrink_candidates(const program& p) {
    std::vector<program> out;
    if (p.outputs.size() > 1)
        for (int o : p.outputs) {
            program q = p;
            q.outputs = {o};
            out.push_back(q);
        }
    const int inputs = static_cast<int>(input_types.size());
    // Drop step k, reading one of its operands wherever its value was read.
    for (std::size_t k = p.steps.size(); k-- > 0;) {
        const int removed = inputs + static_cast<int>(k);
        for (int operand : p.steps[k].in) {
            if (operand < 0)
                continue;
            program q = p;
            q.steps.erase(q.steps.begin() + static_cast<std::ptrdiff_t>(k));
            auto remap = [&](int& v) {
                if (v == removed)
                    v = operand;
                else if (v > removed)
                    --v;
            };
            for (std::size_t j = k; j < q.steps.size(); ++j)
                for (int& v : q.steps[j].in)
                    if (v >= 0)
                        remap(v);
            for (int& o : q.outputs)
                remap(o);
            out.push_back(q);
        }
    }
    // Simpler inputs: every dim 1 where it was not.
    for (std::size_t i = 0; i < p.input_shapes.size(); ++i)
        for (std::size_t d = 0; d < p.input_shapes[i].size(); ++d)
            if (p.input_shapes[i][d] > 1) {
                program q = p;
                q.input_shapes[i][d] = 1;
                out.push_back(q);
            }
    return out;
}

} // namespace xtrace::fuzz
