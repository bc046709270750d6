#ifndef XTRACE_CORE_OP_HPP
#define XTRACE_CORE_OP_HPP

// Every operation xtrace knows, declared once: the runtime kind (graph IR), the compile-time tag
// (expression types) and the facts both sides share (name, arity, accepted dtypes, result dtype).

#include "dtype.hpp"

#include <concepts>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace xtrace {

/// Which element types an op accepts.
enum class op_domain : std::uint8_t {
    any,      ///< every dtype
    numeric,  ///< float32, float64, int32, int64
    floating, ///< float32, float64
    logical   ///< bool
};

/// How an op's result dtype follows from its operands.
enum class op_result : std::uint8_t {
    same,    ///< the operands' dtype (for where: the branches')
    boolean, ///< bool (comparisons)
    target   ///< a dtype carried by the node (cast)
};

// X(name, arity, domain, result) for the elementwise ops but cast (a template tag, below).
#define XTRACE_ELEMENTWISE_OPS(X)                                                                  \
    X(neg, 1, numeric, same)                                                                       \
    X(abs, 1, numeric, same)                                                                       \
    X(square, 1, numeric, same)                                                                    \
    X(relu, 1, numeric, same)                                                                      \
    X(floor, 1, numeric, same)                                                                     \
    X(ceil, 1, numeric, same)                                                                      \
    X(round, 1, numeric, same)                                                                     \
    X(exp, 1, floating, same)                                                                      \
    X(log, 1, floating, same)                                                                      \
    X(sqrt, 1, floating, same)                                                                     \
    X(rsqrt, 1, floating, same)                                                                    \
    X(sin, 1, floating, same)                                                                      \
    X(cos, 1, floating, same)                                                                      \
    X(tanh, 1, floating, same)                                                                     \
    X(sigmoid, 1, floating, same)                                                                  \
    X(erf, 1, floating, same)                                                                      \
    X(logical_not, 1, logical, same)                                                               \
    X(add, 2, numeric, same)                                                                       \
    X(sub, 2, numeric, same)                                                                       \
    X(mul, 2, numeric, same)                                                                       \
    X(div, 2, numeric, same)                                                                       \
    X(pow, 2, numeric, same)                                                                       \
    X(minimum, 2, numeric, same)                                                                   \
    X(maximum, 2, numeric, same)                                                                   \
    X(less, 2, numeric, boolean)                                                                   \
    X(less_equal, 2, numeric, boolean)                                                             \
    X(greater, 2, numeric, boolean)                                                                \
    X(greater_equal, 2, numeric, boolean)                                                          \
    X(equal, 2, any, boolean)                                                                      \
    X(not_equal, 2, any, boolean)                                                                  \
    X(logical_and, 2, logical, same)                                                               \
    X(logical_or, 2, logical, same)                                                                \
    X(logical_xor, 2, logical, same)                                                               \
    X(where, 3, any, same)                                                                         \
    X(clip, 3, numeric, same)

// X(name, domain) for the reductions over a list of axes.
#define XTRACE_REDUCTION_OPS(X)                                                                    \
    X(sum, numeric)                                                                                \
    X(mean, numeric)                                                                               \
    X(max, numeric)                                                                                \
    X(min, numeric)                                                                                \
    X(prod, numeric)

// X(name) for the shape ops: they move no data where a strided view will do.
#define XTRACE_SHAPE_OPS(X)                                                                        \
    X(reshape)                                                                                     \
    X(transpose)                                                                                   \
    X(expand_dims)                                                                                 \
    X(squeeze)                                                                                     \
    X(broadcast_to)

/// The kind of a graph node.
enum class op_kind : std::uint8_t {
    arg,      ///< a tensor argument of the traced function
    constant, ///< a scalar constant (weakly typed scalars become these)
    cast,     ///< elementwise conversion to the node's dtype
#define XTRACE_X(name, arity, domain, result) name,
    XTRACE_ELEMENTWISE_OPS(XTRACE_X)
#undef XTRACE_X
#define XTRACE_X(name, domain) name,
        XTRACE_REDUCTION_OPS(XTRACE_X)
#undef XTRACE_X
#define XTRACE_X(name) name,
            XTRACE_SHAPE_OPS(XTRACE_X)
#undef XTRACE_X
                matmul, ///< matrix product over the last two dims, leading dims broadcast
    print, ///< writes its inputs to std::cout when run (a side effect, kept in program order)
    host_function,   ///< a C++ callback run on concrete values (a side effect, in program order)
    cond,            ///< runs one of two subgraphs, chosen by a 0-d bool tensor
    while_loop,      ///< runs a body subgraph while a condition subgraph gives true
    scan,            ///< runs a body subgraph once per leading-dim slice of its scanned inputs,
                     ///< carrying state and stacking per-step outputs (tf.scan, lax.scan)
    result,          ///< the index-th result of a cond or while_loop
    read_variable,   ///< the value of a variable when the step runs (in program order)
    assign_variable, ///< writes a variable (a side effect, in program order)
    stop_gradient,   ///< its operand's value; gradients do not flow through it
    ensure_shape,    ///< its operand's value, whose shape must fit the node's `dims` (an inlined
                     ///< traced function's input_signature); checked when planned
    sum_to,          ///< operand 0 summed over the dims it was broadcast along to operand 1's
                     ///< shape (a gradient's way back through broadcasting)
};

/// Facts about one op kind.
struct op_info {
    std::string_view name; ///< as printed in graphs and messages
    int arity;             ///< operand count
    op_domain domain;      ///< accepted operand dtypes
    op_result result;      ///< result dtype rule
    bool elementwise;      ///< fusable into an elementwise region
    bool reduction;        ///< reduces over a list of axes
};

/// The facts of op kind k.
constexpr op_info info(op_kind k) noexcept {
    switch (k) {
    case op_kind::arg:
        return {"arg", 0, op_domain::any, op_result::same, false, false};
    case op_kind::constant:
        return {"constant", 0, op_domain::any, op_result::same, false, false};
    case op_kind::cast:
        return {"cast", 1, op_domain::any, op_result::target, true, false};
#define XTRACE_X(name, arity, domain, result)                                                      \
    case op_kind::name:                                                                            \
        return {#name, arity, op_domain::domain, op_result::result, true, false};
        XTRACE_ELEMENTWISE_OPS(XTRACE_X)
#undef XTRACE_X
#define XTRACE_X(name, domain)                                                                     \
    case op_kind::name:                                                                            \
        return {#name, 1, op_domain::domain, op_result::same, false, true};
        XTRACE_REDUCTION_OPS(XTRACE_X)
#undef XTRACE_X
#define XTRACE_X(name)                                                                             \
    case op_kind::name:                                                                            \
        return {#name, 1, op_domain::any, op_result::same, false, false};
        XTRACE_SHAPE_OPS(XTRACE_X)
#undef XTRACE_X
    case op_kind::host_function:
        return {"host_function", -1, op_domain::any, op_result::same, false, false};
    case op_kind::print:
        return {"print", -1, op_domain::any, op_result::same, false, false};
    case op_kind::matmul:
        return {"matmul", 2, op_domain::numeric, op_result::same, false, false};
    case op_kind::cond:
        return {"cond", -1, op_domain::any, op_result::same, false, false};
    case op_kind::while_loop:
        return {"while_loop", -1, op_domain::any, op_result::same, false, false};
    case op_kind::scan:
        return {"scan", -1, op_domain::any, op_result::same, false, false};
    case op_kind::result:
        return {"result", 1, op_domain::any, op_result::same, false, false};
    case op_kind::read_variable:
        return {"read_variable", 0, op_domain::any, op_result::same, false, false};
    case op_kind::assign_variable:
        return {"assign_variable", 1, op_domain::any, op_result::same, false, false};
    case op_kind::stop_gradient:
        return {"stop_gradient", 1, op_domain::any, op_result::same, true, false};
    case op_kind::ensure_shape:
        return {"ensure_shape", 1, op_domain::any, op_result::same, true, false};
    case op_kind::sum_to:
        return {"sum_to", 2, op_domain::numeric, op_result::same, false, false};
    }
    return {"?", 0, op_domain::any, op_result::same, false, false};
}

/// True for the transcendental elementwise ops (exp, log, sin, cos, tanh, sigmoid, erf): computed
/// by library functions, correctly rounded by none, so two implementations may differ by an ulp.
constexpr bool transcendental(op_kind k) noexcept {
    switch (k) {
    case op_kind::exp:
    case op_kind::log:
    case op_kind::sin:
    case op_kind::cos:
    case op_kind::tanh:
    case op_kind::sigmoid:
    case op_kind::erf:
        return true;
    default:
        return false;
    }
}

/// True when an op of domain d accepts operands of dtype t.
constexpr bool accepts(op_domain d, dtype t) noexcept {
    switch (d) {
    case op_domain::any:
        return true;
    case op_domain::numeric:
        return t != dtype::boolean;
    case op_domain::floating:
        return is_floating(t);
    case op_domain::logical:
        return t == dtype::boolean;
    }
    return false;
}

/// Compile-time op tags: the first parameter of `node<Op, ...>`, one per op.
namespace op {
#define XTRACE_TAG(name_)                                                                          \
    struct name_ {                                                                                 \
        static constexpr op_kind kind = op_kind::name_;                                            \
        static constexpr std::string_view name = #name_;                                           \
        friend constexpr bool operator==(name_, name_) { return true; }                            \
    };
#define XTRACE_X(name_, arity_, domain_, result_) XTRACE_TAG(name_)
XTRACE_ELEMENTWISE_OPS(XTRACE_X)
#undef XTRACE_X
#define XTRACE_X(name_, domain_) XTRACE_TAG(name_)
XTRACE_REDUCTION_OPS(XTRACE_X)
#undef XTRACE_X
#define XTRACE_X(name_) XTRACE_TAG(name_)
XTRACE_SHAPE_OPS(XTRACE_X)
#undef XTRACE_X
XTRACE_TAG(matmul)
XTRACE_TAG(host_function)
XTRACE_TAG(cond)
XTRACE_TAG(while_loop)
XTRACE_TAG(scan)
XTRACE_TAG(read_variable)

/// Conversion to element type T; `op::cast<>` stands for every cast in inspection queries.
template <class T = void>
struct cast {
    static constexpr op_kind kind = op_kind::cast;
    static constexpr std::string_view name = "cast";
    using target = T;
    friend constexpr bool operator==(cast, cast) { return true; }
};
} // namespace op

#undef XTRACE_TAG

/// True for the shape ops (reshape, transpose, expand_dims, squeeze, broadcast_to).
constexpr bool is_shape_op(op_kind k) noexcept {
    switch (k) {
#define XTRACE_X(name) case op_kind::name:
        XTRACE_SHAPE_OPS(XTRACE_X)
#undef XTRACE_X
        return true;
    default:
        return false;
    }
}

/// Calls f(Op{}, std::type_identity<T>{}, std::type_identity<R>{}) for elementwise op `op` on
/// operands of dtype `operand` (for where: the branches') producing `result`, and returns what
/// it returns; `none` for a combination no op builds. What run-time dispatch over every op and
/// dtype (the separately compiled runtime's kernels and eager evaluation) is written with.
template <class Ret, class F>
Ret visit_elementwise(op_kind op, dtype operand, dtype result, Ret none, F&& f) {
    if (op == op_kind::cast)
        return visit_dtype(operand, [&](auto from) {
            return visit_dtype(result, [&](auto to) -> Ret {
                return f(op::cast<typename decltype(to)::type>{}, from, to);
            });
        });
    return visit_dtype(operand, [&](auto tag) -> Ret {
        using T = typename decltype(tag)::type;
        switch (op) {
#define XTRACE_X(name, arity, domain, res)                                                         \
    case op_kind::name:                                                                            \
        if constexpr (accepts(op_domain::domain, dtype_of_v<T>)) {                                 \
            using R = std::conditional_t<op_result::res == op_result::boolean, bool, T>;           \
            if (dtype_of_v<R> == result)                                                           \
                return f(op::name{}, tag, std::type_identity<R>{});                                \
        }                                                                                          \
        return none;
            XTRACE_ELEMENTWISE_OPS(XTRACE_X)
#undef XTRACE_X
        default:
            return none;
        }
    });
}

/// True for the op tags declared in xtrace::op.
template <class Op>
concept op_tag = requires {
    { Op::kind } -> std::convertible_to<op_kind>;
    { Op::name } -> std::convertible_to<std::string_view>;
};

} // namespace xtrace

#endif
