#ifndef XTRACE_FUNCTION_CALL_FRAME_HPP
#define XTRACE_FUNCTION_CALL_FRAME_HPP

// One call's view of its arguments: the cache key (dtype, rank, dims per tensor; a marker per
// static), the strided inputs the interpreter reads, and the static values compared in place.
// Also what runs a trace's graph and returns its outputs as xt::xarray.

#include "../interp/execute.hpp"
#include "arguments.hpp"
#include "cache.hpp"
#include "outputs.hpp"

#include <array>
#include <chrono>
#include <span>
#include <tuple>
#include <vector>

namespace xtrace::detail {

template <class... Args>
inline constexpr std::size_t tensor_count_v = (std::size_t(0) + ... +
                                               (tensor_argument<Args> ? 1 : 0));

/// A call's arguments, described once.
template <class... Args>
class call_frame {
public:
    static constexpr std::size_t tensors = tensor_count_v<Args...>;

    explicit call_frame(const Args&... args) : held_(hold(args)...) {
        thread_local std::vector<std::int64_t> spare; // a warm call allocates no key
        key_ = std::move(spare);
        key_.clear();
        std::size_t t = 0;
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            (describe_one(detail::held_value(std::get<I>(held_)), I, t), ...);
        }
        (std::index_sequence_for<Args...>{});
        spare_ = &spare;
    }
    call_frame(const call_frame&) = delete;
    call_frame& operator=(const call_frame&) = delete;
    ~call_frame() { *spare_ = std::move(key_); }

    std::span<const std::int64_t> key() const noexcept { return key_; }
    std::span<const static_ref> statics() const noexcept {
        return {statics_.data(), statics_count_};
    }
    std::span<const interp::strided_input> inputs() const noexcept {
        return {inputs_.data(), tensors};
    }
    /// The arguments as the lambda's callers passed them (tensors possibly evaluated).
    template <std::size_t I>
    const auto& arg() const noexcept {
        return detail::held_value(std::get<I>(held_));
    }

    /// The call's full signature and its static values (the miss path only).
    signature make_signature(std::vector<static_value>& values) const {
        signature sig;
        std::size_t at = 0;
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            (sign_one(arg<I>(), sig, values, at), ...);
        }
        (std::index_sequence_for<Args...>{});
        return sig;
    }

private:
    template <class A>
    void describe_one(const A& a, std::size_t position, std::size_t& t) {
        if constexpr (tensor_argument<A>) {
            describe(a, position, key_, inputs_[t++]);
        } else {
            key_.push_back(static_marker);
            using key = static_key<A>;
            statics_[statics_count_++] =
                static_ref{&a, &typeid(A), static_hash(key::view(a)),
                           [](const static_value& v, const void* p) {
                               return v.template matches<typename key::stored>(
                                   key::view(*static_cast<const A*>(p)));
                           }};
        }
    }

    template <class A>
    void sign_one(const A& a, signature& sig, std::vector<static_value>& values,
                  std::size_t& at) const {
        arg_signature as;
        if constexpr (tensor_argument<A>) {
            tensor_spec spec{static_cast<dtype>(key_[at]), {}};
            const auto rank = static_cast<std::size_t>(key_[at + 1]);
            spec.dims.assign(key_.begin() + static_cast<std::ptrdiff_t>(at + 2),
                             key_.begin() + static_cast<std::ptrdiff_t>(at + 2 + rank));
            at += 2 + rank;
            as.tensor = std::move(spec);
        } else {
            ++at;
            as.value = make_static(a);
            values.push_back(*as.value);
        }
        sig.push_back(std::move(as));
    }

    std::tuple<decltype(hold(std::declval<const Args&>()))...> held_;
    std::vector<std::int64_t> key_;
    std::vector<std::int64_t>* spare_ = nullptr;
    std::array<interp::strided_input, tensors + 1> inputs_;
    std::array<static_ref, sizeof...(Args) - tensors + 1> statics_;
    std::size_t statics_count_ = 0;
};

/// Runs a trace's graph bound by `plan` on `inputs`; returns the outputs as Traced's result type.
template <class Traced>
auto run_graph(const trace_entry& trace, const plan::plan& p,
               std::span<const interp::strided_input> inputs) {
    using outs = outputs_of<Traced>;
    using result = typename outs::result;
    constexpr std::size_t n_out = std::tuple_size_v<typename outs::types>;
    const graph::graph& g = trace.g;
    auto make = [&](auto tag, std::size_t k) {
        using T = typename decltype(tag)::type;
        const shape_t& s = p.shapes[g.outputs[k]];
        typename xt::xarray<T>::shape_type shape(s.begin(), s.end());
        return xt::xarray<T>::from_shape(shape);
    };
    result out = [&]<std::size_t... K>(std::index_sequence<K...>) {
        if constexpr (outs::single)
            return make(std::type_identity<std::tuple_element_t<0, typename outs::types>>{}, 0);
        else
            return result(
                make(std::type_identity<std::tuple_element_t<K, typename outs::types>>{}, K)...);
    }
    (std::make_index_sequence<n_out>{});
    std::array<void*, n_out> ptrs;
    if constexpr (outs::single)
        ptrs[0] = out.data();
    else
        std::apply(
            [&](auto&... xs) {
                std::size_t k = 0;
                ((ptrs[k++] = xs.data()), ...);
            },
            out);
    if (!interp::execute_fused(trace.fused, g, p, inputs, ptrs[0]))
        interp::execute(g, p, inputs, ptrs);
    return out;
}

} // namespace xtrace::detail

#endif
