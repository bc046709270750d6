#ifndef XTRACE_EAGER_TENSOR_HPP
#define XTRACE_EAGER_TENSOR_HPP

#include "../config.hpp"
#include "../core/dtype.hpp"
#include "../core/no_bool.hpp"
#include "../ext/xtensor.hpp"

#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

namespace xtrace {

namespace trace {
class builder;
}

namespace detail {
/// What every eager tensor holds, whatever its element type: its shared value and, while a
/// function runs eagerly, where its tape recorded how it was computed (see eager/tape.hpp).
/// Copies and destruction are out of line when the runtime is compiled separately (see
/// symbolic_base).
class eager_base {
public:
    explicit eager_base(std::shared_ptr<const void> v) noexcept : v_(std::move(v)) {}
    eager_base(const eager_base& other) noexcept;
    eager_base(eager_base&& other) noexcept;
    eager_base& operator=(const eager_base& other) noexcept;
    eager_base& operator=(eager_base&& other) noexcept;
    ~eager_base();

    /// The tape that recorded this value, or null: a deferred builder (see eager/tape.hpp).
    const std::shared_ptr<trace::builder>& tape() const noexcept { return tape_; }
    /// The tape's node for this value (meaningful when tape() is set).
    std::uint32_t tape_node() const noexcept { return node_; }
    /// Marks this value as node `node` of `tape`.
    void record_on(std::shared_ptr<trace::builder> tape, std::uint32_t node) noexcept {
        tape_ = std::move(tape);
        node_ = node;
    }

protected:
    const void* get() const noexcept { return v_.get(); }

private:
    std::shared_ptr<const void> v_;
    std::shared_ptr<trace::builder> tape_;
    std::uint32_t node_ = 0;
};
} // namespace detail

/// A tensor with a value, what a lambda's parameters are when functions run eagerly.
template <class T>
class eager_tensor : public detail::not_a_bool, public detail::eager_base {
public:
    using value_type = T; ///< element type

    /// Wraps a value (shared, so copies are cheap, as symbolic tensors are).
    explicit eager_tensor(xt::xarray<T> v)
        : eager_base(std::make_shared<const xt::xarray<T>>(std::move(v))) {}

    /// The value.
    const xt::xarray<T>& value() const noexcept {
        return *static_cast<const xt::xarray<T>*>(get());
    }
    /// Shape.
    std::vector<std::int64_t> shape() const {
        return std::vector<std::int64_t>(value().shape().begin(), value().shape().end());
    }
    /// Number of dims.
    std::size_t rank() const noexcept { return value().dimension(); }
    /// Element type.
    xtrace::dtype dtype() const noexcept { return dtype_of_v<T>; }
};

/// True for eager tensors.
template <class X>
concept eager_tensor_type = requires {
    typename std::remove_cvref_t<X>::value_type;
}
&&std::is_same_v<std::remove_cvref_t<X>, eager_tensor<typename std::remove_cvref_t<X>::value_type>>;

} // namespace xtrace

#if XTRACE_DEFINE_RUNTIME

namespace xtrace::detail {

XTRACE_DECL eager_base::eager_base(const eager_base& other) noexcept = default;
XTRACE_DECL eager_base::eager_base(eager_base&& other) noexcept = default;
XTRACE_DECL eager_base& eager_base::operator=(const eager_base& other) noexcept = default;
XTRACE_DECL eager_base& eager_base::operator=(eager_base&& other) noexcept = default;
XTRACE_DECL eager_base::~eager_base() = default;

} // namespace xtrace::detail

#endif

#endif
