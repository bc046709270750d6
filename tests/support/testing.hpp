#ifndef XTRACE_TESTS_SUPPORT_TESTING_HPP
#define XTRACE_TESTS_SUPPORT_TESTING_HPP

// Random shapes and values, and comparisons against reference results, for the tests.

#include "catch.hpp"

#include <xtrace/xtrace.hpp>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace xtrace::testing {

/// The generator every test draws from; seeded so failures reproduce.
inline std::mt19937_64& rng() {
    static std::mt19937_64 g(20261202);
    return g;
}

/// Options that keep the retracing warning out of test output (tests retrace on purpose).
inline xtrace::options quiet(xtrace::options o = {}) {
    o.on_warning = [](std::string_view) {};
    return o;
}

/// Sizes that exercise SIMD tails and block edges.
inline const std::vector<std::size_t>& edge_sizes() {
    static const std::vector<std::size_t> s{0, 1, 3, 17, 1023, 1025};
    return s;
}

/// A random shape of rank 0..max_rank with dims from {1, 2, 3, 5, 17}.
inline std::vector<std::size_t> random_shape(std::size_t max_rank = 4) {
    static const std::size_t dims[] = {1, 2, 3, 5, 17};
    const std::size_t rank = std::uniform_int_distribution<std::size_t>(0, max_rank)(rng());
    std::vector<std::size_t> s(rank);
    for (auto& d : s)
        d = dims[std::uniform_int_distribution<int>(0, 4)(rng())];
    return s;
}

/// A shape that broadcasts against `s`: some leading dims dropped, some dims set to 1.
inline std::vector<std::size_t> broadcastable_to(const std::vector<std::size_t>& s) {
    const std::size_t drop = std::uniform_int_distribution<std::size_t>(0, s.size())(rng());
    std::vector<std::size_t> out(s.begin() + static_cast<std::ptrdiff_t>(drop), s.end());
    for (auto& d : out)
        if (std::uniform_int_distribution<int>(0, 2)(rng()) == 0)
            d = 1;
    return out;
}

/// Random values of T with the given shape: floats in [lo, hi], integers in [lo, hi], bools.
template <class T>
xt::xarray<T> random_array(const std::vector<std::size_t>& shape, double lo = -3, double hi = 3) {
    auto a = xt::xarray<T>::from_shape(shape);
    for (auto& v : a) {
        if constexpr (std::is_same_v<T, bool>)
            v = std::uniform_int_distribution<int>(0, 1)(rng()) == 1;
        else if constexpr (std::is_integral_v<T>)
            v = static_cast<T>(std::uniform_int_distribution<std::int64_t>(
                static_cast<std::int64_t>(lo), static_cast<std::int64_t>(hi))(rng()));
        else
            v = static_cast<T>(std::uniform_real_distribution<double>(lo, hi)(rng()));
    }
    return a;
}

/// "[2,3]".
inline std::string shape_text(const auto& shape) {
    std::ostringstream os;
    os << '[';
    for (std::size_t i = 0; i < shape.size(); ++i)
        os << (i ? "," : "") << shape[i];
    return os.str() + "]";
}

/// Captures what std::cout receives while it lives.
class cout_capture {
public:
    cout_capture() : old_(std::cout.rdbuf(out_.rdbuf())) {}
    cout_capture(const cout_capture&) = delete;
    cout_capture& operator=(const cout_capture&) = delete;
    ~cout_capture() { std::cout.rdbuf(old_); }
    /// Everything written so far.
    std::string text() const { return out_.str(); }

private:
    std::ostringstream out_;
    std::streambuf* old_;
};

/// The message of the xtrace::shape_error that `call()` throws, or "no shape_error".
template <class F>
std::string shape_error_message(F&& call) {
    try {
        call();
    } catch (const xtrace::shape_error& e) {
        return e.what();
    }
    return "no shape_error";
}

/// True when a and b have the same shape and values equal within `ulps` units in the last
/// place or `abs` (NaNs compare equal to NaNs, infinities to infinities of the same sign).
template <class A, class B>
bool close(const A& a, const B& b, double ulps = 4, double abs = 0) {
    if (a.dimension() != b.dimension())
        return false;
    for (std::size_t d = 0; d < a.dimension(); ++d)
        if (a.shape()[d] != b.shape()[d])
            return false;
    auto ia = a.begin();
    for (auto ib = b.begin(); ib != b.end(); ++ia, ++ib) {
        using T = std::decay_t<decltype(*ia)>;
        const T x = *ia, y = static_cast<T>(*ib);
        if constexpr (std::is_floating_point_v<T>) {
            if (std::isnan(x) || std::isnan(y)) {
                if (!(std::isnan(x) && std::isnan(y)))
                    return false;
                continue;
            }
            if (x == y)
                continue;
            const double tol =
                std::max(abs, ulps * std::numeric_limits<T>::epsilon() *
                                  std::max(std::abs(double(x)), std::abs(double(y))));
            if (!(std::abs(double(x) - double(y)) <= tol))
                return false;
        } else if (x != y) {
            return false;
        }
    }
    return true;
}

} // namespace xtrace::testing

#endif
