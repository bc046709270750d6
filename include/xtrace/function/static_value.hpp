#ifndef XTRACE_FUNCTION_STATIC_VALUE_HPP
#define XTRACE_FUNCTION_STATIC_VALUE_HPP

// A non-tensor argument's value, kept in the cache key: it is passed to the lambda unchanged
// while tracing, so a different value means a different graph (Python values in tf.function).

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>

namespace xtrace::function_detail {

template <class T>
concept streamable = requires(std::ostream& os, const T& v) {
    os << v;
};

template <class T>
concept std_hashable = requires(const T& v) {
    { std::hash<T>{}(v) } -> std::convertible_to<std::size_t>;
};

/// Whether two static values are the same key. Floating-point values compare by their bits, as
/// Python's float keys do by identity: a NaN argument finds its own trace again (NaN != NaN would
/// add a trace per call), and -0.0 gets a trace apart from 0.0 (a lambda may tell them apart).
template <class T, class U>
bool same_key(const T& a, const U& b) {
    if constexpr (std::is_floating_point_v<T> && std::is_same_v<T, U>)
        return std::memcmp(&a, &b, sizeof a) == 0;
    else
        return a == b;
}

/// Hash of a static argument's value (0 for types std::hash does not know: == still decides).
template <class T>
std::size_t static_hash(const T& v) {
    if constexpr (std::is_floating_point_v<T>) {
        std::uint64_t bits = 0;
        std::memcpy(&bits, &v, sizeof v);
        return std::hash<std::uint64_t>{}(bits);
    } else if constexpr (std_hashable<T>)
        return std::hash<T>{}(v);
    else
        return 0;
}

/// How a static argument of type A is keyed: by its value, except C strings (literals and char
/// pointers), which are keyed by their characters, as std::string.
template <class A>
struct static_key {
    using stored = A;
    static const A& view(const A& a) { return a; }
};
template <std::size_t N>
struct static_key<char[N]> {
    using stored = std::string;
    static std::string_view view(const char (&a)[N]) { return std::string_view(a); }
};
template <>
struct static_key<const char*> {
    using stored = std::string;
    static std::string_view view(const char* a) {
        return a ? std::string_view(a) : std::string_view();
    }
};
template <>
struct static_key<char*> : static_key<const char*> {};

/// A static argument's value, type-erased.
class static_value {
public:
    template <class T>
    static static_value make(const T& v) {
        static_assert(std::equality_comparable<T>,
                      "xtrace: a non-tensor argument is part of the cache key and must be "
                      "comparable with ==; pass a tensor, or a value type with operator==");
        static_value s;
        s.value_ = std::make_shared<const T>(v);
        s.type_ = &typeid(T);
        s.equals_ = [](const void* a, const void* b) {
            return same_key(*static_cast<const T*>(a), *static_cast<const T*>(b));
        };
        s.text_ = [](const void* p) -> std::string {
            const T& x = *static_cast<const T*>(p);
            if constexpr (std::is_same_v<T, bool>)
                return x ? "true" : "false";
            else if constexpr (std::is_enum_v<T> && !streamable<T>)
                return std::to_string(static_cast<std::underlying_type_t<T>>(x));
            else if constexpr (std::is_convertible_v<const T&, std::string_view>)
                return '"' + std::string(std::string_view(x)) + '"';
            else if constexpr (streamable<T>) {
                std::ostringstream os;
                os << x;
                return os.str();
            } else
                return std::string("<") + typeid(T).name() + ">";
        };
        return s;
    }

    /// True when this holds a Stored equal to v.
    template <class Stored, class U>
    bool matches(const U& v) const {
        return *type_ == typeid(Stored) && same_key(*static_cast<const Stored*>(value_.get()), v);
    }

    /// True when both hold equal values of one type.
    friend bool operator==(const static_value& a, const static_value& b) {
        return *a.type_ == *b.type_ && a.equals_(a.value_.get(), b.value_.get());
    }

    /// The value as printed in messages.
    std::string text() const { return text_(value_.get()); }

private:
    std::shared_ptr<const void> value_;
    const std::type_info* type_ = nullptr;
    bool (*equals_)(const void*, const void*) = nullptr;
    std::string (*text_)(const void*) = nullptr;
};

/// The cache-key value of static argument a.
template <class A>
static_value make_static(const A& a) {
    using key = static_key<A>;
    return static_value::make(typename key::stored(key::view(a)));
}

} // namespace xtrace::function_detail

#endif
