#ifndef XTRACE_FUNCTION_CALL_FRAME_HPP
#define XTRACE_FUNCTION_CALL_FRAME_HPP

// One call's view of its arguments: the cache key (dtype, rank, dims per tensor; a marker per
// static), the strided inputs the interpreter reads, and the static values compared in place.

#include "../interp/execute.hpp"
#include "arguments.hpp"
#include "binding_table.hpp"
#include "signature.hpp"

#include <algorithm>
#include <array>
#include <span>
#include <tuple>
#include <vector>

namespace xtrace::function_detail {

template <class... Args>
inline constexpr std::size_t tensor_count_v = (std::size_t(0) + ... +
                                               (tensor_argument<Args> ? 1 : 0));
template <class... Args>
inline constexpr std::size_t variable_count_v = (std::size_t(0) + ... +
                                                 (variable_argument<Args> ? 1 : 0));

/// A call's arguments, described once.
template <class... Args>
class call_frame {
public:
    static constexpr std::size_t tensors = tensor_count_v<Args...>;
    static constexpr std::size_t variables = variable_count_v<Args...>;

    explicit call_frame(const Args&... args) : held_(hold(args)...) {
        std::size_t t = 0;
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            (describe_one(function_detail::held_value(std::get<I>(held_)), I, t), ...);
        }
        (std::index_sequence_for<Args...>{});
    }
    call_frame(const call_frame&) = delete;
    call_frame& operator=(const call_frame&) = delete;

    std::span<const std::int64_t> key() const noexcept {
        return {key_.data(), static_cast<std::size_t>(key_end_ - key_.data())};
    }
    std::span<const static_ref> statics() const noexcept {
        return {statics_.data(), statics_count_};
    }
    std::span<const interp::strided_input> inputs() const noexcept {
        return {inputs_.data(), tensors};
    }
    /// The storages of the variable arguments, in order.
    std::span<graph::variable_storage* const> variable_storages() const noexcept {
        return {variables_.data(), variables};
    }
    /// The arguments as the lambda's callers passed them (tensors possibly evaluated).
    template <std::size_t I>
    const auto& arg() const noexcept {
        return function_detail::held_value(std::get<I>(held_));
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
            key_end_ = describe(a, position, key_end_, inputs_[t++]);
        } else if constexpr (variable_argument<A>) {
            graph::variable_storage* s = a.storage().get();
            if (s->shape.size() > XTRACE_MAX_RANK) [[unlikely]]
                throw_rank_error(position, s->shape.size());
            *key_end_++ = variable_marker;
            *key_end_++ = static_cast<std::int64_t>(s->type);
            *key_end_++ = static_cast<std::int64_t>(s->shape.size());
            key_end_ = std::copy(s->shape.begin(), s->shape.end(), key_end_);
            variables_[variables_count_++] = s;
        } else {
            *key_end_++ = static_marker;
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
        if constexpr (tensor_argument<A>) {
            tensor_spec spec{static_cast<dtype>(key_[at]), {}};
            const auto rank = static_cast<std::size_t>(key_[at + 1]);
            spec.dims.assign(key_.begin() + static_cast<std::ptrdiff_t>(at + 2),
                             key_.begin() + static_cast<std::ptrdiff_t>(at + 2 + rank));
            at += 2 + rank;
            sig.emplace_back(std::move(spec));
        } else if constexpr (variable_argument<A>) {
            const graph::variable_storage& s = *a.storage();
            at += 3 + s.shape.size();
            sig.emplace_back(variable_signature{tensor_spec{s.type, s.shape}});
        } else {
            ++at;
            values.push_back(make_static(a));
            sig.emplace_back(values.back());
        }
    }

    // The most entries the key can hold: a tensor's or a variable's signature (behind a marker
    // for a variable), one marker per static. Held in place, a call's key allocates nothing.
    static constexpr std::size_t key_capacity = tensors * tensor_key_size +
                                                variables * (1 + tensor_key_size) +
                                                (sizeof...(Args) - tensors - variables);

    std::tuple<decltype(hold(std::declval<const Args&>()))...> held_;
    std::array<std::int64_t, key_capacity + 1> key_;
    std::int64_t* key_end_ = key_.data();
    std::array<interp::strided_input, tensors + 1> inputs_;
    std::array<static_ref, sizeof...(Args) - tensors + 1> statics_;
    std::size_t statics_count_ = 0;
    std::array<graph::variable_storage*, variables + 1> variables_{};
    std::size_t variables_count_ = 0;
};

} // namespace xtrace::function_detail

#endif
