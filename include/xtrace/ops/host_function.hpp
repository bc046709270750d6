#ifndef XTRACE_OPS_HOST_FUNCTION_HPP
#define XTRACE_OPS_HOST_FUNCTION_HPP

// host_function: plain C++ on concrete values inside a traced function (tf.numpy_function's
// role). The callback runs at run time, on every call, in program order; its result must match
// the spec.

#include "../core/error.hpp"
#include "../core/spec.hpp"
#include "../eager/dry_run.hpp"
#include "../eager/tape.hpp"
#include "../interp/gather.hpp"
#include "tensor_like.hpp"

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace xtrace {

namespace detail {

template <class T>
xt::xarray<T> host_value(const std::byte* data, const std::int64_t* strides, const shape_t& shape) {
    auto v = xt::xarray<T>::from_shape(std::vector<std::size_t>(shape.begin(), shape.end()));
    if (v.size() > 0)
        interp::gather(data, sizeof(T), strides, shape.data(), shape.size(), 0, v.size(),
                       reinterpret_cast<std::byte*>(v.data()));
    return v;
}

template <class R>
void check_host_result(const xt::xarray<R>& r, const tensor_spec& spec) {
    bool ok = r.dimension() == spec.dims.size();
    for (std::size_t d = 0; ok && d < spec.dims.size(); ++d)
        ok = spec.dims[d] < 0 || static_cast<dim_t>(r.shape()[d]) == spec.dims[d];
    if (!ok) {
        shape_t got(r.shape().begin(), r.shape().end());
        throw signature_error("xtrace::host_function: the callback returned " +
                              std::string(dtype_name(dtype_of_v<R>)) + shape_string(got) +
                              ", its spec says " + spec.to_string());
    }
}

template <class F, class R, class... Ts>
struct host_call_impl final : graph::host_call {
    host_call_impl(F f, tensor_spec s) : fn(std::move(f)), spec(std::move(s)) {}
    void run(const std::byte* const* data, const std::int64_t* const* strides,
             const shape_t* shapes, const shape_t& out_shape, std::byte* out) const override {
        const xt::xarray<R> r = call(data, strides, shapes);
        std::copy(r.begin(), r.end(), reinterpret_cast<R*>(out));
        (void)out_shape;
    }
    void run_dynamic(const std::byte* const* data, const std::int64_t* const* strides,
                     const shape_t* shapes, graph::result_allocator& out) const override {
        const xt::xarray<R> r = call(data, strides, shapes);
        std::byte* to = out.allocate(shape_t(r.shape().begin(), r.shape().end()));
        std::copy(r.begin(), r.end(), reinterpret_cast<R*>(to));
    }
    // fn on the operands as arrays, its result checked against the spec.
    xt::xarray<R> call(const std::byte* const* data, const std::int64_t* const* strides,
                       const shape_t* shapes) const {
        auto values = [&]<std::size_t... I>(std::index_sequence<I...>) {
            return std::tuple<xt::xarray<Ts>...>(host_value<Ts>(data[I], strides[I], shapes[I])...);
        }
        (std::index_sequence_for<Ts...>{});
        xt::xarray<R> r = std::apply(fn, values);
        check_host_result(r, spec);
        return r;
    }
    F fn;
    tensor_spec spec;
};

/// fn's result on the values of xs now, checked against `spec`; in a dry run, zeros of the
/// spec's shape, without calling fn.
template <class R, class F, class... Xs>
xt::xarray<R> call_host_now(F& fn, const typed_spec<R>& spec, const Xs&... xs) {
    if (dry_run()) { // an unknown dim (known only when fn returns) is taken as 0
        std::vector<std::size_t> shape;
        for (dim_t d : spec.dims)
            shape.push_back(d < 0 ? 0 : static_cast<std::size_t>(d));
        return xt::xarray<R>::from_shape(shape);
    }
    xt::xarray<R> r = fn(to_eager(xs).value()...);
    check_host_result(r, spec);
    return r;
}

/// A host function node of trace `b` over `xs` that calls fn when it runs.
template <class R, class... Ts, class F, class... Xs>
erased<R> record_host_call(const std::shared_ptr<trace::builder>& b, F fn,
                           const typed_spec<R>& spec, const Xs&... xs) {
    const std::array<graph::node_id, sizeof...(Xs)> ids{b->import(xs.builder().get(), xs.id())...};
    auto call = std::make_shared<const host_call_impl<F, R, Ts...>>(std::move(fn), spec);
    return erased<R>(b, b->add_host_function(dtype_of_v<R>, spec.dims, ids, call));
}

/// `value`, which a host function computed from xs (symbolic tensors of the active tape), as a
/// host function node of the tape that gives it again: the node stands where the call was
/// (the tape's gradients refuse it, as a trace's do), and never calls the function twice.
template <class... Ts, class R, class... Xs>
erased<R> replay_on_tape(const xt::xarray<R>& value, const Xs&... xs) {
    const auto replay = [value](const auto&...) { return value; };
    return record_host_call<R, Ts...>(
        active_tape(), replay, xtrace::spec<R>(shape_t(value.shape().begin(), value.shape().end())),
        xs...);
}

} // namespace detail

/// Runs `fn(const xt::xarray<T>&...)` on the concrete values of `xs` when the graph runs, and
/// gives its result, which must match `spec` (xtrace::spec<R>(dims); a dim of -1 is whatever
/// fn returns, which the rest of the graph is planned for once fn has run), as a tensor; a
/// mismatch throws signature_error, and exceptions from fn reach the caller.
template <class F, class R, tensor_like... Xs>
auto host_function(F fn, const typed_spec<R>& spec, const Xs&... xs) {
    using result = std::invoke_result_t<F&, const xt::xarray<typename Xs::value_type>&...>;
    static_assert(std::is_convertible_v<result, xt::xarray<R>>,
                  "xtrace::host_function: fn must return xt::xarray<R> for a spec<R>");
    static_assert(sizeof...(Xs) > 0, "xtrace::host_function: pass at least one tensor");
    if constexpr (detail::records_v<Xs...>) {
        if (!(detail::is_deferred(xs) || ...))
            return detail::record_host_call<R, typename Xs::value_type...>(
                expr::target_trace(xs...), std::move(fn), spec, xs...);
        // Variable reads outside a trace: the callback runs now.
        const auto& tape = detail::active_tape();
        if (tape && ((xs.builder() == tape) && ...))
            return detail::replay_on_tape<typename Xs::value_type...>(
                detail::call_host_now<R>(fn, spec, xs...), xs...);
        return detail::snapshot<R>(detail::call_host_now<R>(fn, spec, xs...));
    } else {
        eager_tensor<R> r(detail::call_host_now<R>(fn, spec, xs...));
        return detail::taped(
            r,
            [&](const auto&... s) {
                return detail::replay_on_tape<typename Xs::value_type...>(r.value(), s...);
            },
            xs...);
    }
}

} // namespace xtrace

#endif
