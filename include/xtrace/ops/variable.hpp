#ifndef XTRACE_OPS_VARIABLE_HPP
#define XTRACE_OPS_VARIABLE_HPP

// xtrace::variable<T>: tf.Variable. State that outlives calls: traced code reads it when the
// graph runs (read()) and updates it on every call, in program order (assign, assign_add,
// assign_sub); plain code reads value() and assigns immediately.

#include "../eager/dry_run.hpp"
#include "../eager/evaluate.hpp"
#include "elementwise.hpp"
#include "shape.hpp"

#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

namespace xtrace {

/// Mutable tensor state of element type T and a fixed shape, shared by its copies.
template <class T>
class variable {
    static_assert(is_supported_dtype_v<T>, "xtrace::variable<T>: T must be float, double, "
                                           "std::int32_t, std::int64_t or bool");

public:
    /// A variable holding `initial`, optionally named for messages and graph dumps. Created
    /// while a function is traced, it is allowed on the function's first trace only
    /// (tracing_error otherwise) and lives as long as the graph that uses it.
    explicit variable(const xt::xarray<T>& initial, std::string name = {})
        : s_(std::make_shared<graph::variable_storage>()) {
        if (const trace::builder* b = trace::current())
            b->check_variable_creation(name.empty() ? "a variable" : "variable '" + name + "'");
        s_->name = std::move(name);
        s_->type = dtype_of_v<T>;
        s_->shape.assign(initial.shape().begin(), initial.shape().end());
        s_->bytes.resize(initial.size() * sizeof(T));
        store(initial);
    }
    /// A 0-d variable holding `initial`.
    explicit variable(T initial, std::string name = {})
        : variable(xt::xarray<T>(initial), std::move(name)) {}

    /// A variable initialised from a tensor (TensorFlow's non-constant initializer): created
    /// while tracing (first trace only), its initial value is computed by the graph on the first
    /// call, and its shape must be known when traced; eagerly, it is the tensor's value now.
    template <class X>
    requires(tensor_like<X>) explicit variable(const X& initial, std::string name = {})
        : s_(std::make_shared<graph::variable_storage>()) {
        static_assert(std::is_same_v<detail::value_of_t<X>, T>,
                      "xtrace::variable<T>(x): x's dtype must be T; convert it with "
                      "xtrace::cast<T>(x)");
        s_->name = std::move(name);
        s_->type = dtype_of_v<T>;
        if (const trace::builder* b = trace::current())
            b->check_variable_creation(s_->describe());
        if constexpr (symbolic_tensor<X>) {
            if (!detail::is_deferred(initial)) {
                const shape_t shape = initial.shape();
                if (!is_fully_known(shape))
                    throw tracing_error("xtrace::variable: " + s_->describe() +
                                        " is initialised from a tensor of shape " +
                                        shape_string(shape) +
                                        "; a variable's shape must be known when it is traced");
                s_->shape = shape;
                s_->bytes.assign(static_cast<std::size_t>(num_elements(shape)) * sizeof(T),
                                 std::byte{0});
                s_->initialized = false;
                const auto t = expr::target_trace(initial);
                t->add_assign_variable(s_, t->import(initial.builder().get(), initial.id()),
                                       nullptr, true);
                return;
            }
        }
        const xt::xarray<T> value = detail::to_eager(initial).value();
        s_->shape.assign(value.shape().begin(), value.shape().end());
        s_->bytes.resize(value.size() * sizeof(T));
        store(value);
    }

    /// A handle to existing storage `s` (a traced function's stand-in for a variable argument).
    static variable bound_to(std::shared_ptr<graph::variable_storage> s) {
        return variable(std::move(s), bound{});
    }

    /// Its storage, shared with the graphs that read or assign it.
    const std::shared_ptr<graph::variable_storage>& storage() const noexcept { return s_; }

    /// The value now (from plain code; inside a traced function use read()).
    xt::xarray<T> value() const {
        const std::lock_guard lock(s_->mutex);
        return value_locked();
    }

    /// The value when this point of the function runs, as a tensor: while tracing, a graph
    /// node (later assignments in the same call are not seen by it); outside a trace, the
    /// current value.
    erased<T> read() const {
        if (trace::builder* b = trace::current())
            return erased<T>(b->shared_from_this(), b->add_read_variable(s_));
        return detail::snapshot<T>(s_);
    }

    /// Sets the value (same shape): while tracing, on every call at this point of the program;
    /// outside a trace, now.
    template <class X>
    void assign(const X& x) {
        if constexpr (weak_scalar<X>) {
            const T v = detail::scalar_as<T>(x, "variable::assign");
            if (trace::builder* b = trace::current()) {
                const auto id =
                    std::is_floating_point_v<T>
                        ? b->add_constant(dtype_of_v<T>, static_cast<double>(v), 0)
                        : b->add_constant(dtype_of_v<T>, 0.0, static_cast<std::int64_t>(v));
                assign(broadcast_to(constant<T>(b->shared_from_this(), id), s_->shape));
            } else {
                auto filled = xt::xarray<T>::from_shape(
                    std::vector<std::size_t>(s_->shape.begin(), s_->shape.end()));
                filled.fill(v);
                assign_now(filled);
            }
        } else if constexpr (xt::is_xexpression<X>::value) {
            if (trace::current())
                throw tracing_error(
                    "xtrace::variable::assign: a concrete xtensor value inside a traced function "
                    "would be assigned once, while tracing; assign a tensor computed from the "
                    "function's arguments, or a scalar");
            assign_now(xt::xarray<T>(x));
        } else {
            static_assert(tensor_like<X>,
                          "xtrace::variable::assign: pass a tensor, an xtensor value or a scalar");
            static_assert(std::is_same_v<detail::value_of_t<X>, T>,
                          "xtrace::variable::assign: the value's dtype must be the variable's; "
                          "convert it with xtrace::cast<T>(x)");
            if constexpr (symbolic_tensor<X>) {
                if (!x.builder()->deferred()) {
                    const auto b = expr::target_trace(x);
                    b->add_assign_variable(s_, b->import(x.builder().get(), x.id()));
                    return;
                }
            }
            assign_now(detail::to_eager(x).value());
        }
    }
    /// The value becomes value + x (x broadcast to its shape), read and written as one step:
    /// concurrent calls lose no update, as tf.Variable.assign_add.
    template <class X>
    void assign_add(const X& x) {
        update<op::add>(x);
    }
    /// The value becomes value - x, as one step (see assign_add).
    template <class X>
    void assign_sub(const X& x) {
        update<op::sub>(x);
    }

    /// Shape, fixed at creation.
    std::vector<std::int64_t> shape() const { return s_->shape; }
    /// Element type.
    xtrace::dtype dtype() const noexcept { return dtype_of_v<T>; }
    /// The name given at creation.
    const std::string& name() const noexcept { return s_->name; }

private:
    struct bound {};
    variable(std::shared_ptr<graph::variable_storage> s, bound) : s_(std::move(s)) {}

    template <class Op, class X>
    void update(const X& x) {
        static_assert(!std::is_same_v<T, bool>,
                      "xtrace::variable: assign_add and assign_sub need a numeric variable");
        bool traced = trace::current() != nullptr;
        if constexpr (symbolic_tensor<X>)
            traced = traced && !detail::is_deferred(x);
        else
            traced = traced && weak_scalar<X>;
        if constexpr (symbolic_tensor<X> || weak_scalar<X>) {
            if (traced) {
                auto delta = broadcast_to(detail::lift<T, Op>(read(), x), s_->shape);
                const graph::kernel_set* kernels = interp::elementwise_kernels<Op, T, T>();
                const auto t = expr::target_trace(delta);
                t->add_assign_variable(s_, t->import(delta.builder().get(), delta.id()), kernels);
                return;
            }
        }
        if (detail::dry_run())
            return;
        xt::xarray<T> delta;
        if constexpr (weak_scalar<X>)
            delta = xt::xarray<T>(detail::scalar_as<T>(x, "variable::assign_add"));
        else if constexpr (xt::is_xexpression<X>::value)
            delta = xt::xarray<T>(x);
        else
            delta = detail::to_eager(x).value();
        const std::lock_guard lock(s_->mutex);
        xt::xarray<T> now = value_locked();
        xt::xarray<T> next = xt::broadcast(delta, now.shape());
        next = xt::vectorize([](T a, T d) {
            return Op::kind == op_kind::add ? scalar::add(a, d) : scalar::sub(a, d);
        })(now, next);
        if (next.size() > 0)
            std::memcpy(s_->bytes.data(), next.data(), s_->bytes.size());
    }

    xt::xarray<T> value_locked() const { // the caller holds s_->mutex
        auto v =
            xt::xarray<T>::from_shape(std::vector<std::size_t>(s_->shape.begin(), s_->shape.end()));
        if (v.size() > 0)
            std::memcpy(v.data(), s_->bytes.data(), s_->bytes.size());
        return v;
    }

    void assign_now(const xt::xarray<T>& v) {
        const shape_t got(v.shape().begin(), v.shape().end());
        graph::check_assign_shape(*s_, got);
        if (!detail::dry_run())
            store(v);
    }

    void store(const xt::xarray<T>& v) { // xt::xarray is row-major: its bytes are the value
        const std::lock_guard lock(s_->mutex);
        if (v.size() > 0)
            std::memcpy(s_->bytes.data(), v.data(), s_->bytes.size());
    }

    std::shared_ptr<graph::variable_storage> s_;
};

} // namespace xtrace

#endif
