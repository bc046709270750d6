#ifndef XTRACE_EAGER_EVALUATE_HPP
#define XTRACE_EAGER_EVALUATE_HPP

// Symbolic tensors outside any trace. A variable read while no trace is recorded (a function
// running eagerly, or plain code) gives a symbolic tensor of a *deferred* builder: a snapshot of
// the value, and whatever ops are applied to it, computed when a value is needed (beside an
// eager tensor, in print, assign, cond, or as a result). Each thread has one deferred builder,
// alive while tensors refer to it.

#include "../expr/node.hpp"
#include "../interp/execute.hpp"
#include "../plan/build.hpp"
#include "tensor.hpp"

#include <cstring>
#include <memory>
#include <type_traits>

namespace xtrace::detail {

/// This thread's deferred builder: the active tape while a function runs eagerly (see
/// eager/tape.hpp), else one shared by the thread's variable reads.
XTRACE_DECL std::shared_ptr<trace::builder> deferred_trace();

/// This thread's tape while a function runs eagerly, else null.
XTRACE_DECL std::shared_ptr<trace::builder>& active_tape() noexcept;

/// True on this thread while xtrace::grad or value_and_grad records a function on deferred
/// tensors (under run_functions_eagerly): a while_loop or scan on them is then recorded as a
/// node, as a trace records it, so that the gradient flows through it, instead of being
/// computed at once into values that no longer say where they came from.
XTRACE_DECL bool& recording_control_flow() noexcept;

/// Sets recording_control_flow() for its lifetime.
class control_flow_recording {
public:
    control_flow_recording() : was_(recording_control_flow()) { recording_control_flow() = true; }
    control_flow_recording(const control_flow_recording&) = delete;
    control_flow_recording& operator=(const control_flow_recording&) = delete;
    ~control_flow_recording() { recording_control_flow() = was_; }

private:
    bool was_;
};

/// Computes node `id` of deferred builder `b` into the buffer `allocate(context, shape)` returns.
XTRACE_DECL void evaluate_deferred(const trace::builder& b, graph::node_id id,
                                   void* (*allocate)(void* context, const shape_t& shape),
                                   void* context);

/// A deferred symbolic tensor of builder `b` holding a copy of `storage`'s value now; `origin`
/// names the variable the copy is a read of, for gradients (none for a plain value).
template <class T>
erased<T> snapshot(const graph::variable_storage& storage, const std::shared_ptr<trace::builder>& b,
                   std::weak_ptr<const graph::variable_storage> origin = {}) {
    auto copy = std::make_shared<graph::variable_storage>();
    copy->name = storage.name;
    copy->type = storage.type;
    copy->shape = storage.shape;
    copy->copy_of = std::move(origin);
    {
        const std::lock_guard lock(storage.mutex);
        copy->bytes = storage.bytes;
    }
    return erased<T>(b, b->add_read_variable(std::move(copy)));
}

/// A deferred symbolic tensor holding a copy of variable `var`'s value now (a read of it, to
/// gradients).
template <class T>
erased<T> snapshot(const std::shared_ptr<graph::variable_storage>& var) {
    return snapshot<T>(*var, deferred_trace(), var);
}

/// A deferred symbolic tensor of builder `b` (the thread's deferred builder by default)
/// holding `value`.
template <class T>
erased<T> snapshot(const xt::xarray<T>& value,
                   const std::shared_ptr<trace::builder>& b = deferred_trace()) {
    graph::variable_storage s;
    s.type = dtype_of_v<T>;
    s.shape.assign(value.shape().begin(), value.shape().end());
    s.bytes.resize(value.size() * sizeof(T));
    if (value.size() > 0)
        std::memcpy(s.bytes.data(), value.data(), s.bytes.size());
    return snapshot<T>(s, b);
}

/// The value of a deferred symbolic tensor, computed now; a tensor of a trace being recorded has
/// no value yet (tracing_error).
template <class T>
xt::xarray<T> evaluate(const symbolic<T>& x) {
    if (!x.builder()->deferred())
        throw tracing_error("xtrace: a symbolic tensor's value was needed while tracing (combined "
                            "with an eager tensor, or used as a C++ value); symbolic tensors have "
                            "values only when the function runs");
    xt::xarray<T> out;
    evaluate_deferred(
        *x.builder(), x.id(),
        [](void* context, const shape_t& s) -> void* {
            auto& o = *static_cast<xt::xarray<T>*>(context);
            o = xt::xarray<T>::from_shape(std::vector<std::size_t>(s.begin(), s.end()));
            return o.data();
        },
        &out);
    return out;
}

/// x as an eager tensor (symbolic ones evaluated, and kept as the same node when they are the
/// active tape's); scalars unchanged.
template <class X>
decltype(auto) to_eager(const X& x) {
    if constexpr (symbolic_tensor<X>) {
        eager_tensor<typename X::value_type> r(evaluate(x));
        if (x.builder() == active_tape())
            r.record_on(x.builder(), x.id());
        return r;
    } else {
        return (x);
    }
}

/// True when x is a symbolic tensor outside any trace (a variable read in eager code).
template <class X>
bool is_deferred(const X& x) {
    if constexpr (symbolic_tensor<X>)
        return x.builder()->deferred();
    else
        return false;
}

} // namespace xtrace::detail

#if XTRACE_DEFINE_RUNTIME

namespace xtrace::detail {

XTRACE_DECL std::shared_ptr<trace::builder>& active_tape() noexcept {
    thread_local std::shared_ptr<trace::builder> tape;
    return tape;
}

XTRACE_DECL std::shared_ptr<trace::builder> deferred_trace() {
    if (const auto& tape = active_tape())
        return tape;
    thread_local std::weak_ptr<trace::builder> current;
    auto b = current.lock();
    if (!b) {
        b = std::make_shared<trace::builder>(trace::builder::deferred_t{});
        current = b;
    }
    return b;
}

XTRACE_DECL bool& recording_control_flow() noexcept {
    thread_local bool on = false;
    return on;
}

XTRACE_DECL void evaluate_deferred(const trace::builder& b, graph::node_id id,
                                   void* (*allocate)(void* context, const shape_t& shape),
                                   void* context) {
    const graph::graph g = b.extract(id);
    const plan::plan p = plan::build(g, {});
    void* outputs[1] = {allocate(context, p.shapes[g.outputs[0]])};
    interp::execute(g, p, {}, outputs);
}

} // namespace xtrace::detail

#endif

#endif
