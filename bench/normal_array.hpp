#ifndef XTRACE_BENCH_NORMAL_ARRAY_HPP
#define XTRACE_BENCH_NORMAL_ARRAY_HPP

// Benchmark inputs: arrays of normally distributed floats.

#include <xtrace/ext/xtensor.hpp>

#include <random>
#include <vector>

namespace xtrace::bench {

/// An array of `shape` drawn from N(0, scale^2) with `gen`.
inline xt::xarray<float> normal_array(std::vector<std::size_t> shape, float scale,
                                      std::mt19937& gen) {
    std::normal_distribution<float> normal(0.f, scale);
    auto m = xt::xarray<float>::from_shape(shape);
    for (auto& v : m)
        v = normal(gen);
    return m;
}

} // namespace xtrace::bench

#endif
