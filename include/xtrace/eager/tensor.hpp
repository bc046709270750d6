#ifndef XTRACE_EAGER_TENSOR_HPP
#define XTRACE_EAGER_TENSOR_HPP

#include "../core/dtype.hpp"
#include "../core/no_bool.hpp"
#include "../ext/xtensor.hpp"

#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

namespace xtrace {

/// A tensor with a value, what a lambda's parameters are when functions run eagerly.
template <class T>
class eager_tensor : public detail::not_a_bool {
public:
    using value_type = T; ///< element type

    /// Wraps a value (shared, so copies are cheap, as symbolic tensors are).
    explicit eager_tensor(xt::xarray<T> v)
        : v_(std::make_shared<const xt::xarray<T>>(std::move(v))) {}

    /// The value.
    const xt::xarray<T>& value() const noexcept { return *v_; }
    /// Shape.
    std::vector<std::int64_t> shape() const {
        return std::vector<std::int64_t>(v_->shape().begin(), v_->shape().end());
    }
    /// Number of dims.
    std::size_t rank() const noexcept { return v_->dimension(); }
    /// Element type.
    xtrace::dtype dtype() const noexcept { return dtype_of_v<T>; }

private:
    std::shared_ptr<const xt::xarray<T>> v_;
};

/// True for eager tensors.
template <class X>
concept eager_tensor_type = requires {
    typename std::remove_cvref_t<X>::value_type;
}
&&std::is_same_v<std::remove_cvref_t<X>, eager_tensor<typename std::remove_cvref_t<X>::value_type>>;

} // namespace xtrace

#endif
