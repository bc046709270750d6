#ifndef XTRACE_EAGER_TAPE_HPP
#define XTRACE_EAGER_TAPE_HPP

// The tape of a function run eagerly (run_functions_eagerly(true)), as TensorFlow's
// GradientTape records eager ops: while the lambda runs, every op computes its value now and
// also records itself on a deferred builder, the tape, so that xtrace::gradients can
// differentiate eager values as it differentiates traced ones. The tape starts at the call's
// arguments (each a copy), lives while the call's tensors do, and is never run as a whole:
// gradients are computed from it on demand (eager/evaluate.hpp).

#include "../interp/kernel_choice.hpp"
#include "evaluate.hpp"
#include "tensor.hpp"

#include <memory>
#include <span>
#include <tuple>
#include <type_traits>
#include <vector>

namespace xtrace::detail {

/// Makes a fresh tape this thread's active tape for its lifetime, unless one is already active
/// (a function run eagerly inside another records on the outer call's tape).
class tape_scope {
public:
    tape_scope() : owner_(!active_tape()) {
        if (owner_)
            active_tape() = std::make_shared<trace::builder>(trace::builder::deferred_t{});
    }
    tape_scope(const tape_scope&) = delete;
    tape_scope& operator=(const tape_scope&) = delete;
    ~tape_scope() {
        if (owner_)
            active_tape().reset();
    }

private:
    bool owner_;
};

/// `x` recorded as a leaf of the active tape (its value copied there); unchanged when no tape is
/// active.
template <class T>
eager_tensor<T> tape_leaf(eager_tensor<T> x) {
    if constexpr (std::is_floating_point_v<T>)
        if (const auto& tape = active_tape())
            x.record_on(tape, snapshot<T>(x.value(), tape).id());
    return x;
}

/// Operand `x` as a symbolic tensor of `tape`: the tape's node of a value it recorded, a
/// constant of the tape for any other tensor (its value now), a scalar as it is.
template <class X>
auto on_tape(const std::shared_ptr<trace::builder>& tape, const X& x) {
    if constexpr (eager_tensor_type<X>) {
        using T = typename X::value_type;
        if (x.tape() == tape)
            return erased<T>(tape, x.tape_node());
        return snapshot<T>(x.value(), tape);
    } else if constexpr (symbolic_tensor<X>) {
        using T = typename X::value_type;
        if (x.builder() == tape)
            return erased<T>(x);
        return snapshot<T>(evaluate(x), tape);
    } else {
        return x;
    }
}

/// `result`, computed now from `xs`, recorded on the active tape as `record(xs on the
/// tape...)`, the same op on symbolic tensors; unchanged when no tape is active. Integer and
/// bool results are not recorded: no gradient flows through them, and a loop counter would
/// otherwise grow the tape on every iteration. Where a recorded op reads one, it is a constant.
template <class R, class Record, class... Xs>
eager_tensor<R> taped(eager_tensor<R> result, const Record& record, const Xs&... xs) {
    if constexpr (!std::is_floating_point_v<R>)
        return result;
    else if (const auto& tape = active_tape()) {
        const erased<R> s = record(on_tape(tape, xs)...);
        if (s.builder() == tape)
            result.record_on(tape, s.id());
    }
    return result;
}

/// The rule of a node that stands for another value (see linked): its gradient is dy.
class pass_gradient final : public trace::gradient_rule {
public:
    std::vector<graph::node_id> gradients(trace::builder&, graph::node_id dy,
                                          std::span<const graph::node_id>,
                                          graph::node_id) const override {
        return {dy};
    }
};

/// `value` as a node of the active tape that stands for `link` (a tensor of the tape with that
/// value): computing it reads a copy, as computing `link` again from the tape's leaves would
/// not, and gradients flow to `link`. What a loop or scan run now keeps between steps.
template <class T>
erased<T> linked(const xt::xarray<T>& value, const erased<T>& link) {
    const auto& tape = active_tape();
    const auto copy = snapshot<T>(value, tape);
    return erased<T>(
        tape, tape->add_custom_gradient(copy.id(), {link.id()}, std::make_shared<pass_gradient>(),
                                        interp::elementwise_kernels<op::cast<T>, T, T>()));
}

/// `x`, a result of a cond, while_loop or scan run now, as a node of its own on the active tape
/// whose gradient passes on to x's node. A traced cond's or loop's result is a node of its own,
/// so a loop that ran no step, or a branch that returns its input, does not make the result
/// *be* the input: gradients with respect to the result are the result's, run eagerly too.
/// Anything else (no tape, another tape, integers) comes back as it is.
template <class X>
X fresh_on_tape(const X& x) {
    using T = typename X::value_type;
    if constexpr (std::is_floating_point_v<T>) {
        const auto& tape = active_tape();
        if constexpr (eager_tensor_type<X>) {
            if (tape && x.tape() == tape) {
                X out = x;
                out.record_on(tape, linked(x.value(), erased<T>(tape, x.tape_node())).id());
                return out;
            }
        } else if constexpr (std::is_same_v<X, erased<T>>) {
            if (tape && x.builder() == tape)
                return erased<T>(tape, tape->add_custom_gradient(
                                           x.id(), {x.id()}, std::make_shared<pass_gradient>(),
                                           interp::elementwise_kernels<op::cast<T>, T, T>()));
        }
    }
    return x;
}

/// Each tensor of a tuple through fresh_on_tape.
template <class... Xs>
std::tuple<Xs...> fresh_on_tape(const std::tuple<Xs...>& xs) {
    return std::apply([](const auto&... x) { return std::tuple<Xs...>(fresh_on_tape(x)...); }, xs);
}

/// Deferred `y`'s value now as a deferred tensor: linked to y on the active tape when y is
/// the tape's (so that gradients reach what y was computed from), a plain copy otherwise.
template <class T>
erased<T> checkpoint(const erased<T>& y) {
    if constexpr (std::is_floating_point_v<T>)
        if (y.builder() == active_tape())
            return linked(evaluate(y), y);
    return snapshot(evaluate(y));
}

} // namespace xtrace::detail

#endif
