#ifndef XTRACE_BENCH_GELU_REFERENCE_HPP
#define XTRACE_BENCH_GELU_REFERENCE_HPP

// What the GELU benchmarks share: the input, the traced lambda, and the hand-written xsimd loop
// they are measured against.

#include <xtrace/xtrace.hpp>

#include <xtrace/ext/xsimd.hpp>

#include <cmath>
#include <cstddef>

namespace xtrace::bench {

/// n floats in [-3, 3).
inline xt::xarray<float> gelu_input(std::size_t n) {
    xt::xarray<float> x = xt::xarray<float>::from_shape({n});
    for (std::size_t i = 0; i < n; ++i)
        x(i) = static_cast<float>(i % 1000) * 0.006f - 3.f;
    return x;
}

/// GELU (tanh form) as a traced lambda.
inline constexpr auto gelu = [](auto x) {
    return 0.5f * x * (1.f + xtrace::tanh(0.7978845608f * (x + 0.044715f * x * x * x)));
};

/// GELU of n floats by hand: xsimd batches, then a scalar tail.
inline void hand_gelu(const float* in, float* out, std::size_t n) {
    using B = xsimd::batch<float>;
    std::size_t i = 0;
    for (; i + B::size <= n; i += B::size) {
        const B v = B::load_unaligned(in + i);
        const B r = 0.5f * v * (1.f + xsimd::tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
        r.store_unaligned(out + i);
    }
    for (; i < n; ++i) {
        const float v = in[i];
        out[i] = 0.5f * v * (1.f + std::tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
    }
}

} // namespace xtrace::bench

#endif
