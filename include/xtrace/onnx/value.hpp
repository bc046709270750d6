#ifndef XTRACE_ONNX_VALUE_HPP
#define XTRACE_ONNX_VALUE_HPP

// A tensor whose dtype is known only at run time: what a loaded model takes and returns, since
// a model file, not the program, says what its inputs and outputs are.

#include "../core/dtype.hpp"
#include "../core/error.hpp"
#include "../core/shape.hpp"

#include "../ext/xtensor.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <variant>

namespace xtrace::onnx {

/// One tensor of a loaded model's call: an xt::xarray of one of xtrace's dtypes.
class value {
public:
    /// The arrays a value may hold, in xtrace::dtype order.
    using array = std::variant<xt::xarray<float>, xt::xarray<double>, xt::xarray<std::int32_t>,
                               xt::xarray<std::int64_t>, xt::xarray<bool>>;

    value() = default;
    /// Holds `a` (float, double, int32, int64 or bool elements).
    template <class T>
    value(xt::xarray<T> a) : data_(std::move(a)) {
        static_assert(is_supported_dtype_v<T>,
                      "xtrace::onnx::value holds float, double, int32, int64 or bool arrays");
    }

    /// A tensor of `type` and `shape` whose elements are not yet written (what a model's call
    /// fills).
    value(dtype type, std::span<const dim_t> shape) {
        visit_dtype(type, [&](auto tag) {
            using T = typename decltype(tag)::type;
            data_.template emplace<xt::xarray<T>>(
                typename xt::xarray<T>::shape_type(shape.begin(), shape.end()));
        });
    }

    /// Its element type.
    dtype type() const noexcept { return static_cast<dtype>(data_.index()); }

    /// Its shape.
    shape_t shape() const {
        return std::visit([](const auto& a) { return shape_t(a.shape().begin(), a.shape().end()); },
                          data_);
    }

    /// The array, as T; throws signature_error when T is not its element type.
    template <class T>
    const xt::xarray<T>& as() const {
        if (const auto* a = std::get_if<xt::xarray<T>>(&data_))
            return *a;
        throw signature_error("xtrace::onnx::value: asked for " +
                              std::string(dtype_name(dtype_of_v<T>)) + ", it holds " +
                              std::string(dtype_name(type())));
    }

    /// The array as T (signature_error when T is not its element type).
    template <class T>
    operator xt::xarray<T>() const {
        return as<T>();
    }

    /// The variant itself.
    const array& data() const noexcept { return data_; }
    /// The variant itself, writable.
    array& data() noexcept { return data_; }

private:
    array data_;
};

} // namespace xtrace::onnx

#endif
