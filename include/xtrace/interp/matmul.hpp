#ifndef XTRACE_INTERP_MATMUL_HPP
#define XTRACE_INTERP_MATMUL_HPP

// Matrix product of one m x k by k x n pair. Floating types: B is packed into panels of 2 SIMD
// widths, and a 4 x (2 widths) register tile of C accumulates over k with fused multiply-adds;
// edges are padded in the panel and trimmed when stored. Integers: a plain loop.

#include "../core/scalar_ops.hpp"
#include "../ext/xsimd.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace xtrace::interp {

/// C = A B; see graph::matmul_fn.
template <class T>
void matmul_kernel(const std::byte* a_bytes, std::int64_t ar, std::int64_t ac,
                   const std::byte* b_bytes, std::int64_t br, std::int64_t bc, std::int64_t m,
                   std::int64_t n, std::int64_t k, std::byte* c_bytes) {
    const T* a = reinterpret_cast<const T*>(a_bytes);
    const T* b = reinterpret_cast<const T*>(b_bytes);
    T* c = reinterpret_cast<T*>(c_bytes);
    if constexpr (std::is_floating_point_v<T>) {
        using B = simd::batch<T>;
        constexpr std::int64_t w = static_cast<std::int64_t>(B::size), nr_max = 2 * w, mr_max = 4;
        // The packed panel of B: kept per thread, so that a warm call allocates nothing (every
        // entry read below is written first).
        thread_local std::vector<T> panel;
        panel.resize(static_cast<std::size_t>(std::max<std::int64_t>(k, 1) * nr_max));
        alignas(64) T tile[2 * B::size];
        for (std::int64_t j0 = 0; j0 < n; j0 += nr_max) {
            const std::int64_t nr = std::min(nr_max, n - j0);
            for (std::int64_t p = 0; p < k; ++p)
                for (std::int64_t j = 0; j < nr_max; ++j)
                    panel[static_cast<std::size_t>(p * nr_max + j)] =
                        j < nr ? b[p * br + (j0 + j) * bc] : T(0);
            for (std::int64_t i0 = 0; i0 < m; i0 += mr_max) {
                const std::int64_t mr = std::min(mr_max, m - i0);
                B acc[mr_max][2];
                for (auto& row : acc)
                    row[0] = row[1] = B(T(0));
                for (std::int64_t p = 0; p < k; ++p) {
                    const B b0 = B::load_unaligned(panel.data() + p * nr_max);
                    const B b1 = B::load_unaligned(panel.data() + p * nr_max + w);
                    for (std::int64_t r = 0; r < mr_max; ++r) {
                        if (r >= mr)
                            break;
                        const B av(a[(i0 + r) * ar + p * ac]);
                        acc[r][0] = xsimd::fma(av, b0, acc[r][0]);
                        acc[r][1] = xsimd::fma(av, b1, acc[r][1]);
                    }
                }
                for (std::int64_t r = 0; r < mr; ++r) {
                    T* row = c + (i0 + r) * n + j0;
                    if (nr == nr_max) {
                        acc[r][0].store_unaligned(row);
                        acc[r][1].store_unaligned(row + w);
                    } else {
                        acc[r][0].store_aligned(tile);
                        acc[r][1].store_aligned(tile + w);
                        std::copy(tile, tile + nr, row);
                    }
                }
            }
        }
    } else {
        for (std::int64_t i = 0; i < m; ++i)
            for (std::int64_t j = 0; j < n; ++j) {
                T sum = 0;
                for (std::int64_t p = 0; p < k; ++p)
                    sum = scalar::add(sum, scalar::mul(a[i * ar + p * ac], b[p * br + j * bc]));
                c[i * n + j] = sum;
            }
    }
}

} // namespace xtrace::interp

#endif
