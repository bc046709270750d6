#ifndef XTRACE_INSPECT_FIXED_STRING_HPP
#define XTRACE_INSPECT_FIXED_STRING_HPP

// Strings built at compile time, so that a graph's printed form is a constant expression.

#include <cstddef>
#include <string_view>

namespace xtrace::inspect::detail {

/// N characters, usable as a constant.
template <std::size_t N>
struct fixed_string {
    char data[N + 1] = {};

    constexpr std::string_view view() const { return {data, N}; }

    template <std::size_t M>
    constexpr fixed_string<N + M> operator+(const fixed_string<M>& o) const {
        fixed_string<N + M> out;
        for (std::size_t i = 0; i < N; ++i)
            out.data[i] = data[i];
        for (std::size_t i = 0; i < M; ++i)
            out.data[N + i] = o.data[i];
        return out;
    }
};

/// The fixed_string of a string literal.
template <std::size_t N>
constexpr fixed_string<N - 1> lit(const char (&s)[N]) {
    fixed_string<N - 1> out;
    for (std::size_t i = 0; i + 1 < N; ++i)
        out.data[i] = s[i];
    return out;
}

/// The fixed_string of a constant string_view (a variable template, so its length is known).
template <const std::string_view& S>
constexpr fixed_string<S.size()> from_view() {
    fixed_string<S.size()> out;
    for (std::size_t i = 0; i < S.size(); ++i)
        out.data[i] = S[i];
    return out;
}

constexpr std::size_t digits(std::size_t n) {
    return n < 10 ? 1 : 1 + digits(n / 10);
}

/// The decimal digits of N.
template <std::size_t N>
constexpr fixed_string<digits(N)> number() {
    fixed_string<digits(N)> out;
    std::size_t n = N;
    for (std::size_t i = digits(N); i-- > 0; n /= 10)
        out.data[i] = static_cast<char>('0' + n % 10);
    return out;
}

} // namespace xtrace::inspect::detail

#endif
