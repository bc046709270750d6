#ifndef XTRACE_EXPR_NODE_HPP
#define XTRACE_EXPR_NODE_HPP

// Symbolic tensors. The type of an expression is its graph (`node<op::mul, arg<0, float>,
// constant<float>>`); the object carries where that node sits in the trace being recorded.

#include "../core/dtype.hpp"
#include "../core/no_bool.hpp"
#include "../core/op.hpp"
#include "../trace/builder.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace xtrace {

namespace detail {
/// What every symbolic tensor holds, whatever its type: its trace and its node there. The
/// typed handles add nothing, so recording an op is one untyped call.
class symbolic_base {
public:
    symbolic_base(std::shared_ptr<trace::builder> b, graph::node_id id) noexcept
        : b_(std::move(b)), id_(id) {}
    // Out of line when the runtime is compiled separately: a lambda of many ops then holds a
    // call per copy and destruction, not the reference counting itself.
    symbolic_base(const symbolic_base& other) noexcept;
    symbolic_base(symbolic_base&& other) noexcept;
    symbolic_base& operator=(const symbolic_base& other) noexcept;
    symbolic_base& operator=(symbolic_base&& other) noexcept;
    ~symbolic_base();

    /// The trace this tensor belongs to.
    const std::shared_ptr<trace::builder>& builder() const noexcept { return b_; }
    /// Its node in that trace.
    graph::node_id id() const noexcept { return id_; }

private:
    std::shared_ptr<trace::builder> b_;
    graph::node_id id_;
};

/// A node just recorded: what the untyped recording functions return.
struct recorded {
    std::shared_ptr<trace::builder> b;
    graph::node_id id;
};
} // namespace detail

/// Base of every symbolic tensor whose elements are T; what a traced lambda's parameters are.
template <class T>
class symbolic : public detail::not_a_bool, public detail::symbolic_base {
public:
    using value_type = T; ///< element type

    symbolic(std::shared_ptr<trace::builder> b, graph::node_id id)
        : symbolic_base(std::move(b), id) {}
    /// The handle of a recorded node.
    explicit symbolic(detail::recorded r) : symbolic_base(std::move(r.b), r.id) {}

    /// Shape as known at trace time: -1 where the signature leaves a dim unknown. Throws
    /// tracing_error when the rank is unknown (a spec of xtrace::any_rank): see rank_known().
    std::vector<std::int64_t> shape() const { return known_rank_node().shape; }
    /// Number of dims; throws tracing_error when it is unknown (see rank_known()).
    std::size_t rank() const { return known_rank_node().shape.size(); }
    /// False while tracing a spec of xtrace::any_rank (and what is computed from it): the rank
    /// is known only when the graph runs.
    bool rank_known() const { return !is_unknown_rank(node().shape); }
    /// The trace-time shape, unknown_rank_shape() for an unknown rank (for xtrace's own checks).
    const shape_t& traced_shape() const { return node().shape; }
    /// Element type.
    xtrace::dtype dtype() const noexcept { return dtype_of_v<T>; }

private:
    const graph::node& node() const {
        builder()->check_open("shape", id());
        return builder()->at(id());
    }
    const graph::node& known_rank_node() const {
        const graph::node& n = node();
        if (is_unknown_rank(n.shape))
            throw xtrace::detail::needs_known_dims(
                "xtrace: a " + std::string(dtype_name(n.type)) +
                " tensor of unknown rank (from a spec of xtrace::any_rank) has no shape or rank "
                "while tracing; both are known only when the graph runs. Give the signature a "
                "rank (e.g. xtrace::spec<T>({-1, -1})) to read x.shape() or x.rank() in the "
                "lambda");
        return n;
    }
};

/// The `I`-th argument of a traced function, a tensor of T.
template <std::size_t I, class T>
struct arg : symbolic<T> {
    using symbolic<T>::symbolic;
};

/// A scalar constant of dtype T (what `x * 2.0` makes of 2.0).
template <class T>
struct constant : symbolic<T> {
    using symbolic<T>::symbolic;
};

/// A symbolic tensor of T whose expression type is forgotten: what lets one variable hold the
/// results of different expressions (C++ branches on static values, loops that rebind).
template <class T>
struct erased : symbolic<T> {
    using symbolic<T>::symbolic;
    /// Any symbolic expression of T converts.
    erased(const symbolic<T>& s) : symbolic<T>(s) {}
};

namespace detail {
template <class Op, class... Children>
struct node_value {
    using operands = std::tuple<typename Children::value_type...>;
    // where(c, a, b) has its branches' dtype; every other op its first operand's.
    static constexpr std::size_t typed = Op::kind == op_kind::where ? 1 : 0;
    using type = std::conditional_t<info(Op::kind).result == op_result::boolean, bool,
                                    std::tuple_element_t<typed, operands>>;
};
template <class T, class Child>
struct node_value<op::cast<T>, Child> {
    using type = T;
};
// cond(pred, then, else) has its branches' dtype; while_loop(x) its loop variable's.
template <class Pred, class Then, class Else>
struct node_value<op::cond, Pred, Then, Else> {
    using type = typename Then::value_type;
};
template <class X>
struct node_value<op::while_loop, X> {
    using type = typename X::value_type;
};
} // namespace detail

/// An operation `Op` applied to symbolic operands `Children...`.
template <class Op, class... Children>
struct node : symbolic<typename detail::node_value<Op, Children...>::type> {
    using op_type = Op; ///< the op tag
    using symbolic<typename detail::node_value<Op, Children...>::type>::symbolic;
};

/// True for symbolic tensors (arg, constant, node).
template <class X>
concept symbolic_tensor = requires {
    typename std::remove_cvref_t<X>::value_type;
}
&&std::is_base_of_v<symbolic<typename std::remove_cvref_t<X>::value_type>, std::remove_cvref_t<X>>;

namespace expr {

/// Nodes of expression type E, leaves included, counted with repetition (the tree as written,
/// not the DAG): what inspection reports and what bounds static fusion.
template <class E>
inline constexpr std::size_t tree_size = 1;
template <class Op, class... Cs>
inline constexpr std::size_t tree_size<node<Op, Cs...>> = (std::size_t(1) + ... + tree_size<Cs>);

/// The trace an op over `operands` is recorded in: the one being recorded on this thread when
/// the operands all belong to it or to traces that enclose it (a cond branch or loop body using
/// outer values captures them), else the first operand's.
XTRACE_DECL std::shared_ptr<trace::builder>
target_trace_of(std::span<const detail::symbolic_base* const> operands);

/// target_trace_of(operands...).
template <class... Ts>
std::shared_ptr<trace::builder> target_trace(const symbolic<Ts>&... operands) {
    const detail::symbolic_base* all[] = {&operands...};
    return target_trace_of(all);
}

/// Records elementwise op `op` with result dtype `type` over `operands` in their trace, with
/// `kernels` (see interp/kernel_choice.hpp).
XTRACE_DECL detail::recorded
record_elementwise(op_kind op, dtype type, std::span<const detail::symbolic_base* const> operands,
                   const graph::kernel_set* kernels);

/// The operand dtype that picks the kernels of `Op(children...)` (for where: the branches').
template <class Op, class... Children>
using operand_t = typename std::tuple_element_t<Op::kind == op_kind::where ? 1 : 0,
                                                std::tuple<Children...>>::value_type;

/// Records `Op(children...)` with `kernels` in their trace and returns its typed handle.
template <class Op, class... Children>
node<Op, Children...> make_node(const graph::kernel_set* kernels, const Children&... children) {
    using result = node<Op, Children...>;
    const detail::symbolic_base* operands[] = {&children...};
    return result(
        record_elementwise(Op::kind, dtype_of_v<typename result::value_type>, operands, kernels));
}

/// Records reduction `Op` of `x` over `axes` in x's trace.
template <class Op, class X>
node<Op, X> make_reduction(const X& x, std::vector<std::int64_t> axes, bool keep_dims,
                           const graph::reduce_kernels* kernel) {
    x.builder()->check_open(Op::name, x.id());
    const auto b = target_trace(x);
    const auto id =
        b->add_reduction(Op::kind, dtype_of_v<typename X::value_type>,
                         b->import(x.builder().get(), x.id()), std::move(axes), keep_dims, kernel);
    return node<Op, X>(b, id);
}

/// Records shape op `Op` of `x` with attributes `attrs` in x's trace.
template <class Op, class X>
node<Op, X> make_shape_op(const X& x, std::vector<std::int64_t> attrs) {
    x.builder()->check_open(Op::name, x.id());
    const auto b = target_trace(x);
    const auto id = b->add_shape_op(Op::kind, dtype_of_v<typename X::value_type>,
                                    b->import(x.builder().get(), x.id()), std::move(attrs));
    return node<Op, X>(b, id);
}

/// Records matmul(a, b) in their trace.
template <class A, class B>
node<op::matmul, A, B> make_matmul(const A& a, const B& b, graph::matmul_fn kernel) {
    const auto t = target_trace(a, b);
    const auto id =
        t->add_matmul(dtype_of_v<typename A::value_type>, t->import(a.builder().get(), a.id()),
                      t->import(b.builder().get(), b.id()), kernel);
    return node<op::matmul, A, B>(t, id);
}

/// A constant of dtype T in the trace an op beside `like` is recorded in.
template <class T, class U>
constant<T> make_constant(const symbolic<U>& like, T value) {
    const auto b = target_trace(like);
    b->check_open("constant");
    graph::node_id id;
    if constexpr (std::is_floating_point_v<T>)
        id = b->add_constant(dtype_of_v<T>, value, 0);
    else
        id = b->add_constant(dtype_of_v<T>, 0.0, static_cast<std::int64_t>(value));
    return constant<T>(b, id);
}

} // namespace expr
} // namespace xtrace

#if XTRACE_DEFINE_RUNTIME

namespace xtrace::detail {

XTRACE_DECL symbolic_base::symbolic_base(const symbolic_base& other) noexcept = default;
XTRACE_DECL symbolic_base::symbolic_base(symbolic_base&& other) noexcept = default;
XTRACE_DECL symbolic_base& symbolic_base::operator=(const symbolic_base& other) noexcept = default;
XTRACE_DECL symbolic_base& symbolic_base::operator=(symbolic_base&& other) noexcept = default;
XTRACE_DECL symbolic_base::~symbolic_base() = default;

} // namespace xtrace::detail

namespace xtrace::expr {

XTRACE_DECL std::shared_ptr<trace::builder>
target_trace_of(std::span<const detail::symbolic_base* const> operands) {
    trace::builder* current = trace::current();
    if (current && std::all_of(operands.begin(), operands.end(),
                               [&](const auto* x) { return current->within(x->builder().get()); }))
        return current->shared_from_this();
    return operands[0]->builder();
}

XTRACE_DECL detail::recorded
record_elementwise(op_kind op, dtype type, std::span<const detail::symbolic_base* const> operands,
                   const graph::kernel_set* kernels) {
    for (const auto* x : operands)
        x->builder()->check_open(info(op).name, x->id());
    auto b = target_trace_of(operands);
    std::array<graph::node_id, 3> ids{};
    for (std::size_t i = 0; i < operands.size(); ++i)
        ids[i] = b->import(operands[i]->builder().get(), operands[i]->id());
    const auto id = b->add_elementwise(op, type, std::span(ids.data(), operands.size()), kernels);
    return {std::move(b), id};
}

} // namespace xtrace::expr

#endif

#endif
