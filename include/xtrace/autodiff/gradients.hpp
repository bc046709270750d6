#ifndef XTRACE_AUTODIFF_GRADIENTS_HPP
#define XTRACE_AUTODIFF_GRADIENTS_HPP

// Gradients of traced code, as tf.gradients / GradientTape.gradient and jax.grad spell them:
//   auto [gx, gw] = xtrace::gradients(loss, x, w);   // inside a traced lambda
//   auto step = xtrace::function(xtrace::value_and_grad(loss_fn, xtrace::argnums<1>));
// A gradient is a symbolic tensor of its target's dtype and shape, recorded in the same trace
// (so it fuses and runs with the forward pass, and can be differentiated again).

#include "../core/spec.hpp"
#include "../eager/evaluate.hpp"
#include "../eager/tape.hpp"
#include "../interp/kernel_choice.hpp"
#include "../ops/host_function.hpp"
#include "../ops/tensor_like.hpp"
#include "../ops/variable.hpp"
#include "backward.hpp"

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace xtrace {

/// Which arguments grad and value_and_grad differentiate: `xtrace::argnums<0, 2>`.
template <std::size_t... I>
struct argnums_t {};
/// See argnums_t.
template <std::size_t... I>
inline constexpr argnums_t<I...> argnums{};

/// y with an explicit output gradient dy (of y's shape): `gradients(output_gradient(y, dy), x)`
/// computes the vector-Jacobian product dy^T dy/dx (tf.gradients' grad_ys).
template <class Y, class D>
struct output_gradient_t {
    Y y;  ///< the output
    D dy; ///< its gradient
};
/// See output_gradient_t.
template <class Y, class D>
output_gradient_t<Y, D> output_gradient(const Y& y, const D& dy) {
    return {y, dy};
}

namespace detail {

template <class X>
struct is_variable : std::false_type {};
template <class T>
struct is_variable<variable<T>> : std::true_type {};

template <class X>
struct gradient_value {
    using type = value_of_t<X>;
};
template <class T>
struct gradient_value<variable<T>> {
    using type = T;
};

template <class X>
constexpr void check_gradient_target() {
    if constexpr (is_variable<std::remove_cvref_t<X>>::value) {
        static_assert(std::is_floating_point_v<typename gradient_value<X>::type>,
                      "xtrace::gradients: gradients exist for float and double variables only");
    } else {
        static_assert(tensor_like<X>,
                      "xtrace::gradients: differentiate with respect to tensors of the traced "
                      "lambda (arguments or intermediate values) or xtrace::variable objects");
        if constexpr (tensor_like<X>)
            static_assert(std::is_floating_point_v<value_of_t<X>>,
                          "xtrace::gradients: a gradient with respect to an integer or bool "
                          "tensor does not exist; differentiate with respect to a float32 or "
                          "float64 tensor (convert with xtrace::cast<float>(x) before using it)");
    }
}

// The backward pass, instantiated (header-only: compiled) only by code that takes gradients.
template <class Tag>
std::vector<graph::node_id> run_backward(trace::builder& b, graph::node_id y, graph::node_id seed,
                                         std::span<const autodiff::target> targets) {
#if defined(XTRACE_SEPARATE_COMPILATION)
    return autodiff::backward(b, y, seed, targets);
#else
    return autodiff::detail::pass<Tag>(b).run(y, seed, targets);
#endif
}

template <class Y, class D, class... Xs>
auto gradients_of(const Y& y, const D* dy, const Xs&... xs);

// A gradient target as a tensor of `tape` (a variable as it is); one the tape did not record
// cannot be what y was computed from.
template <class X>
auto tape_target(const std::shared_ptr<trace::builder>& tape, const X& x, std::size_t position) {
    if constexpr (is_variable<X>::value) {
        return x;
    } else {
        const bool recorded = [&] {
            if constexpr (eager_tensor_type<X>)
                return x.tape() == tape;
            else
                return x.builder() == tape;
        }();
        if (!recorded)
            throw tracing_error("xtrace::gradients: target " + std::to_string(position) +
                                " was not computed while this function ran eagerly (its tape "
                                "records the function's arguments, variable reads and every op "
                                "on them); differentiate with respect to those");
        return on_tape(tape, x);
    }
}

// gradients under run_functions_eagerly(true): the same backward pass over the ops the call's
// tape recorded, its results computed now (and recorded too, so they can be differentiated
// again).
template <class Y, class D, class... Xs>
auto eager_gradients(const Y& y, const D* dy, const Xs&... xs) {
    const auto& tape = active_tape();
    const bool recorded = [&] {
        if constexpr (eager_tensor_type<Y>)
            return tape && y.tape() == tape;
        else
            return tape && y.builder() == tape;
    }();
    if (!recorded)
        throw tracing_error("xtrace::gradients: y is an eager value computed outside any "
                            "function (or outside the one running eagerly now); gradients are "
                            "taken of code that xtrace::function runs, traced or eagerly");
    const auto sy = on_tape(tape, y);
    const auto targets = [&]<std::size_t... K>(std::index_sequence<K...>) {
        const auto all = std::forward_as_tuple(xs...);
        return std::tuple(tape_target(tape, std::get<K>(all), K)...);
    }
    (std::index_sequence_for<Xs...>{});
    const auto symbolic_gradients = std::apply(
        [&](const auto&... t) {
            if (dy) {
                const auto sd = on_tape(tape, *dy);
                return gradients_of(sy, &sd, t...);
            }
            return gradients_of(sy, static_cast<const decltype(sy)*>(nullptr), t...);
        },
        targets);
    if constexpr (sizeof...(Xs) == 1)
        return to_eager(symbolic_gradients);
    else
        return std::apply([](const auto&... g) { return std::tuple(to_eager(g)...); },
                          symbolic_gradients);
}

template <class Y, class D, class... Xs>
auto gradients_of(const Y& y, const D* dy, const Xs&... xs) {
    static_assert(tensor_like<Y>, "xtrace::gradients: y must be a tensor");
    static_assert(std::is_floating_point_v<value_of_t<Y>>,
                  "xtrace::gradients: y must be a float32 or float64 tensor");
    static_assert(sizeof...(Xs) > 0, "xtrace::gradients: name what to differentiate with "
                                     "respect to: gradients(y, x, ...)");
    (check_gradient_target<Xs>(), ...);
    if constexpr (!symbolic_tensor<Y> || (eager_tensor_type<Xs> || ...)) {
        return eager_gradients(y, dy, xs...);
    } else {
        const auto b = expr::target_trace(y);
        b->check_open("gradients", y.id());
        const graph::node_id yid = b->import(y.builder().get(), y.id());
        graph::node_id seed;
        if (dy) {
            static_assert(std::is_same_v<value_of_t<D>, value_of_t<Y>>,
                          "xtrace::gradients: the output gradient's dtype must be y's");
            seed = b->import(dy->builder().get(), dy->id());
            const shape_t ys = b->at(yid).shape, ds = b->at(seed).shape;
            if (ys.size() != ds.size())
                throw shape_error("xtrace::gradients: y has shape " + shape_string(ys) +
                                  ", its output gradient " + shape_string(ds));
        } else {
            const shape_t ys = b->at(yid).shape;
            if (!ys.empty())
                throw tracing_error("xtrace::gradients: y has shape " + shape_string(ys) +
                                    "; gradients are of a 0-d y (reduce it, e.g. "
                                    "xtrace::sum(y)), or pass its output gradient: "
                                    "gradients(output_gradient(y, dy), x)");
            seed = b->add_constant(dtype_of_v<value_of_t<Y>>, 1.0, 1);
        }
        std::vector<autodiff::target> targets;
        auto add_target = [&](const auto& x) {
            using X = std::remove_cvref_t<decltype(x)>;
            if constexpr (is_variable<X>::value)
                targets.push_back({0, x.storage()});
            else
                targets.push_back({b->import(x.builder().get(), x.id()), nullptr});
        };
        (add_target(xs), ...);
        const auto ids = run_backward<Y>(*b, yid, seed, targets);
        std::size_t k = 0;
        auto wrap = [&](auto tag) {
            using T = typename decltype(tag)::type;
            return erased<T>(b, ids[k++]);
        };
        if constexpr (sizeof...(Xs) == 1)
            return wrap(std::type_identity<typename gradient_value<Xs>::type>{}...);
        else
            return std::tuple<erased<typename gradient_value<Xs>::type>...>{
                wrap(std::type_identity<typename gradient_value<Xs>::type>{})...};
    }
}

} // namespace detail

/// The gradients of y (a 0-d float tensor) with respect to each x: a tensor of x's dtype and
/// shape for each (one tensor for one x, a std::tuple for several). An x may be an argument, an
/// intermediate tensor, or an xtrace::variable (its gradient sums over every read of it in the
/// trace); an x that y does not depend on gets zeros (TensorFlow's
/// unconnected_gradients=ZERO). Inside a traced lambda only.
template <class Y, class... Xs>
auto gradients(const Y& y, const Xs&... xs) {
    return detail::gradients_of(y, static_cast<const Y*>(nullptr), xs...);
}

/// The same with an explicit output gradient dy for a y of any shape.
template <class Y, class D, class... Xs>
auto gradients(const output_gradient_t<Y, D>& y, const Xs&... xs) {
    return detail::gradients_of(y.y, &y.dy, xs...);
}

/// x's value, through which no gradient flows (tf.stop_gradient, jax.lax.stop_gradient).
template <tensor_like X>
auto stop_gradient(const X& x) {
    using T = detail::value_of_t<X>;
    if constexpr (symbolic_tensor<X>) {
        const auto b = expr::target_trace(x);
        b->check_open("stop_gradient", x.id());
        const graph::node_id in = b->import(x.builder().get(), x.id());
        return erased<T>(b, b->add_elementwise(op_kind::stop_gradient, dtype_of_v<T>,
                                               std::span(&in, 1),
                                               interp::elementwise_kernels<op::cast<T>, T, T>()));
    } else {
        return detail::taped(
            x, [](const auto& s) { return erased<T>(stop_gradient(s)); }, x);
    }
}

namespace detail {

// A custom_gradient's backward function, called with typed tensors during the backward pass.
template <class Backward, class Y, class... Xs>
class typed_gradient_rule final : public trace::gradient_rule {
public:
    explicit typed_gradient_rule(Backward backward) : backward_(std::move(backward)) {}

    std::vector<graph::node_id> gradients(trace::builder& b, graph::node_id dy,
                                          std::span<const graph::node_id> inputs,
                                          graph::node_id y) const override {
        const auto self = b.shared_from_this();
        auto result = [&]<std::size_t... K>(std::index_sequence<K...>) {
            return backward_(erased<Y>(self, dy), erased<Xs>(self, inputs[K])...,
                             erased<Y>(self, y));
        }
        (std::index_sequence_for<Xs...>{});
        std::vector<graph::node_id> ids;
        auto take = [&](const auto& g) {
            using G = std::remove_cvref_t<decltype(g)>;
            static_assert(symbolic_tensor<G>,
                          "xtrace::custom_gradient: backward must return one tensor per input "
                          "(a std::tuple for several), computed from its arguments");
            ids.push_back(b.import(g.builder().get(), g.id()));
        };
        if constexpr (sizeof...(Xs) == 1 && symbolic_tensor<decltype(result)>)
            take(result);
        else
            std::apply([&](const auto&... g) { (take(g), ...); }, result);
        return ids;
    }

private:
    Backward backward_;
};

} // namespace detail

/// An op with a gradient of the user's choosing (tf.custom_gradient, jax.custom_vjp):
/// `custom_gradient(forward, backward)(x...)` is forward(x...), and gradients flow to each x as
/// backward(dy, x..., y) says (one tensor per x; a std::tuple for several), not through
/// forward's own ops. For numerically stable or cheaper gradients than the forward ops'.
template <class Forward, class Backward>
auto custom_gradient(Forward forward, Backward backward) {
    return [forward = std::move(forward), backward = std::move(backward)](const auto&... xs) {
        auto y = forward(xs...);
        using Y = decltype(y);
        if constexpr (!symbolic_tensor<Y> || !(symbolic_tensor<decltype(xs)> && ...)) {
            // Eager: forward's value, which the active tape (if any) records as having the
            // rule's gradient rather than forward's ops'.
            if constexpr (eager_tensor_type<Y>) {
                if (const auto& tape = detail::active_tape()) {
                    using T = detail::value_of_t<Y>;
                    std::vector<graph::node_id> inputs{detail::on_tape(tape, xs).id()...};
                    auto rule = std::make_shared<detail::typed_gradient_rule<
                        Backward, T, detail::value_of_t<decltype(xs)>...>>(backward);
                    y.record_on(tape, tape->add_custom_gradient(
                                          detail::on_tape(tape, y).id(), std::move(inputs),
                                          std::move(rule),
                                          interp::elementwise_kernels<op::cast<T>, T, T>()));
                }
            }
            return y;
        } else {
            using T = detail::value_of_t<Y>;
            const auto b = expr::target_trace(y);
            b->check_open("custom_gradient", y.id());
            std::vector<graph::node_id> inputs{b->import(xs.builder().get(), xs.id())...};
            auto rule = std::make_shared<
                detail::typed_gradient_rule<Backward, T, detail::value_of_t<decltype(xs)>...>>(
                backward);
            return erased<T>(
                b, b->add_custom_gradient(b->import(y.builder().get(), y.id()), std::move(inputs),
                                          std::move(rule),
                                          interp::elementwise_kernels<op::cast<T>, T, T>()));
        }
    };
}

/// host_function(fn, spec, xs...) made differentiable by a gradient callback:
/// `grad_fn(dy, x...)` receives the output gradient and the inputs as xt::xarray values and
/// returns each x's gradient (a std::tuple for several), run as host functions in the backward
/// pass (tf.py_function with a gradient, through tf.custom_gradient). The inputs' dims must be
/// known when traced, as a host function's result dims are.
template <class F, class G, class R, tensor_like... Xs>
requires(!std::is_base_of_v<tensor_spec, G>) auto host_function(F fn, G grad_fn,
                                                                const typed_spec<R>& result_spec,
                                                                const Xs&... xs) {
    auto forward = [fn, result_spec](const auto&... a) {
        return xtrace::host_function(fn, result_spec, a...);
    };
    auto backward = [grad_fn](const auto& dy, const auto&... rest) { // rest: the xs, then y
        const auto all = std::forward_as_tuple(rest...);
        return [&]<std::size_t... K>(std::index_sequence<K...>) {
            auto one = [&](auto k) {
                constexpr std::size_t I = decltype(k)::value;
                using T = detail::value_of_t<
                    std::remove_cvref_t<std::tuple_element_t<I, std::tuple<Xs...>>>>;
                auto pick = [grad_fn](const auto& d, const auto&... v) -> xt::xarray<T> {
                    if constexpr (sizeof...(K) == 1)
                        return grad_fn(d, v...);
                    else
                        return std::get<I>(grad_fn(d, v...));
                };
                return xtrace::host_function(pick, xtrace::spec<T>(std::get<I>(all).shape()), dy,
                                             std::get<K>(all)...);
            };
            if constexpr (sizeof...(K) == 1)
                return one(std::integral_constant<std::size_t, 0>{});
            else
                return std::tuple(one(std::integral_constant<std::size_t, K>{})...);
        }
        (std::index_sequence_for<Xs...>{});
    };
    return custom_gradient(std::move(forward), std::move(backward))(xs...);
}

namespace detail {

// Eager arguments as deferred symbolic tensors holding their values (others as they are), so
// that fn's ops are recorded and can be differentiated; what grad and value_and_grad do when
// functions run eagerly.
template <class A>
auto deferred_arg(const A& a) {
    if constexpr (eager_tensor_type<A>) {
        if (a.tape() && a.tape() == active_tape()) // the tape's own node: gradients compose
            return erased<value_of_t<A>>(a.tape(), a.tape_node());
        return snapshot<value_of_t<A>>(a.value());
    } else {
        return a;
    }
}

// A result of the deferred computation as an eager tensor (tuples element by element).
template <class R>
auto to_eager_result(const R& r) {
    if constexpr (symbolic_tensor<R>)
        return to_eager(r);
    else
        return std::apply([](const auto&... x) { return std::tuple(to_eager_result(x)...); }, r);
}

// fn applied to args, and the transform `then(y, args...)` of its result: traced as it is, or
// (eager arguments) recorded on deferred tensors and evaluated, so that run_functions_eagerly
// gives the same gradients.
template <class F, class Then, class... A>
auto with_recorded_args(const F& fn, const Then& then, const A&... args) {
    if constexpr ((eager_tensor_type<A> || ...)) {
        const control_flow_recording recording; // loops become nodes the gradient can cross
        const auto recorded = std::tuple(deferred_arg(args)...);
        return to_eager_result(
            std::apply([&](const auto&... d) { return then(fn(d...), d...); }, recorded));
    } else {
        return then(fn(args...), args...);
    }
}

} // namespace detail

/// fn's gradient with respect to its arguments I... (jax.grad): a function of fn's arguments
/// returning what gradients(fn(args...), args[I]...) does. fn must return a 0-d float tensor.
/// Also under run_functions_eagerly(true): fn is then recorded on its arguments' values and
/// differentiated the same way.
template <class F, std::size_t... I>
auto grad(F fn, argnums_t<I...>) {
    static_assert(sizeof...(I) > 0, "xtrace::grad: name at least one argument");
    return [fn = std::move(fn)](const auto&... args) {
        return detail::with_recorded_args(
            fn,
            [](const auto& y, const auto&... a) {
                const auto all = std::forward_as_tuple(a...);
                return gradients(y, std::get<I>(all)...);
            },
            args...);
    };
}
/// fn's gradient with respect to its first argument.
template <class F>
auto grad(F fn) {
    return grad(std::move(fn), argnums<0>);
}

/// fn's value and gradients (jax.value_and_grad): a function returning std::tuple(value,
/// gradient...), one gradient per argument in I....
template <class F, std::size_t... I>
auto value_and_grad(F fn, argnums_t<I...>) {
    static_assert(sizeof...(I) > 0, "xtrace::value_and_grad: name at least one argument");
    return [fn = std::move(fn)](const auto&... args) {
        return detail::with_recorded_args(
            fn,
            [](const auto& y, const auto&... a) {
                const auto all = std::forward_as_tuple(a...);
                auto g = gradients(y, std::get<I>(all)...);
                if constexpr (sizeof...(I) == 1)
                    return std::tuple(y, g);
                else
                    return std::tuple_cat(std::tuple(y), g);
            },
            args...);
    };
}
/// fn's value and its gradient with respect to its first argument.
template <class F>
auto value_and_grad(F fn) {
    return value_and_grad(std::move(fn), argnums<0>);
}

} // namespace xtrace

#endif
