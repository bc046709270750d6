#ifndef XTRACE_CORE_DTYPE_HPP
#define XTRACE_CORE_DTYPE_HPP

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace xtrace {

namespace detail {
/// False, but only once T is known: lets a static_assert fire where a template is used.
template <class T>
inline constexpr bool dependent_false = false;
} // namespace detail

/// Element types a traced tensor may hold.
enum class dtype : std::uint8_t { float32, float64, int32, int64, boolean };

/// True for the element types xtrace supports: float, double, std::int32_t, std::int64_t, bool.
template <class T>
inline constexpr bool is_supported_dtype_v =
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, std::int32_t> ||
    std::is_same_v<T, std::int64_t> || std::is_same_v<T, bool>;

/// An element type xtrace supports.
template <class T>
concept supported_element = is_supported_dtype_v<std::remove_cv_t<T>>;

namespace detail {
template <class T>
constexpr dtype dtype_of_impl() {
    static_assert(is_supported_dtype_v<T>,
                  "xtrace: unsupported element type; tensors must hold float, double, "
                  "std::int32_t, std::int64_t or bool");
    if constexpr (std::is_same_v<T, float>)
        return dtype::float32;
    else if constexpr (std::is_same_v<T, double>)
        return dtype::float64;
    else if constexpr (std::is_same_v<T, std::int32_t>)
        return dtype::int32;
    else if constexpr (std::is_same_v<T, std::int64_t>)
        return dtype::int64;
    else
        return dtype::boolean;
}
} // namespace detail

/// The dtype of element type T.
template <class T>
inline constexpr dtype dtype_of_v = detail::dtype_of_impl<std::remove_cv_t<T>>();

/// TensorFlow's name of a dtype: "float32", "float64", "int32", "int64", "bool".
constexpr std::string_view dtype_name(dtype d) noexcept {
    switch (d) {
    case dtype::float32:
        return "float32";
    case dtype::float64:
        return "float64";
    case dtype::int32:
        return "int32";
    case dtype::int64:
        return "int64";
    case dtype::boolean:
        return "bool";
    }
    return "?";
}

/// Bytes per element.
constexpr std::size_t dtype_size(dtype d) noexcept {
    switch (d) {
    case dtype::float32:
    case dtype::int32:
        return 4;
    case dtype::float64:
    case dtype::int64:
        return 8;
    case dtype::boolean:
        return sizeof(bool);
    }
    return 0;
}

/// float32 or float64.
constexpr bool is_floating(dtype d) noexcept {
    return d == dtype::float32 || d == dtype::float64;
}

/// int32 or int64.
constexpr bool is_integer(dtype d) noexcept {
    return d == dtype::int32 || d == dtype::int64;
}

/// Calls f(std::type_identity<T>{}) with the element type of d.
template <class F>
constexpr decltype(auto) visit_dtype(dtype d, F&& f) {
    switch (d) {
    case dtype::float32:
        return f(std::type_identity<float>{});
    case dtype::float64:
        return f(std::type_identity<double>{});
    case dtype::int32:
        return f(std::type_identity<std::int32_t>{});
    case dtype::int64:
        return f(std::type_identity<std::int64_t>{});
    case dtype::boolean:
        break;
    }
    return f(std::type_identity<bool>{});
}

} // namespace xtrace

#endif
