#ifndef XTRACE_INTERP_MATMUL_HPP
#define XTRACE_INTERP_MATMUL_HPP

// Matrix product of one m x k by k x n pair. Floating types: B is packed into panels of 2 SIMD
// widths by kc rows (a panel fits in half of L1), and an mr x (2 widths) register tile of C
// accumulates over those rows with fused multiply-adds; mr is 8 where there are 32 vector
// registers (AVX-512) and 6 otherwise, so that enough independent accumulators hide the FMA
// latency. A tile carries its accumulators from one kc block to the next through C, so every
// element of C is one chain of FMAs over k in order: the same bits whatever kc, mr or the row
// panels a caller splits m into. Edges are padded in the panel and trimmed when stored.
// Integers: a plain loop.

#include "../core/scalar_ops.hpp"
#include "../ext/xsimd.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace xtrace::interp {

/// Rows of C in one register tile of the floating-point kernel.
#if XSIMD_WITH_AVX512F
inline constexpr std::int64_t matmul_tile_rows = 8;
#else
inline constexpr std::int64_t matmul_tile_rows = 6;
#endif

/// Columns of C in one register tile (and one packed panel of B): two SIMD widths of T.
template <class T>
inline constexpr std::int64_t matmul_tile_cols = 2 *
                                                 static_cast<std::int64_t>(simd::batch<T>::size);

/// Rows of B packed at a time: a panel of 16 KiB, half of a usual L1 data cache.
template <class T>
inline constexpr std::int64_t matmul_k_block =
    std::max<std::int64_t>(16, 16384 / static_cast<std::int64_t>(matmul_tile_cols<T> * sizeof(T)));

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
        constexpr std::int64_t mr_max = matmul_tile_rows, nr_max = matmul_tile_cols<T>,
                               w = nr_max / 2, kc_max = matmul_k_block<T>;
        // The packed panel of B: kept per thread, so that a warm call allocates nothing (every
        // entry read below is written first).
        thread_local std::vector<T> panel;
        panel.resize(static_cast<std::size_t>(std::clamp<std::int64_t>(k, 1, kc_max) * nr_max));
        alignas(64) T tile[2 * B::size];
        for (std::int64_t j0 = 0; j0 < n; j0 += nr_max) {
            const std::int64_t nr = std::min(nr_max, n - j0);
            // k == 0 still runs one (empty) block, which stores the zeros.
            for (std::int64_t p0 = 0; p0 < std::max<std::int64_t>(k, 1); p0 += kc_max) {
                const std::int64_t kc = std::min(kc_max, k - p0);
                for (std::int64_t p = 0; p < kc; ++p)
                    for (std::int64_t j = 0; j < nr_max; ++j)
                        panel[static_cast<std::size_t>(p * nr_max + j)] =
                            j < nr ? b[(p0 + p) * br + (j0 + j) * bc] : T(0);
                for (std::int64_t i0 = 0; i0 < m; i0 += mr_max) {
                    const std::int64_t mr = std::min(mr_max, m - i0);
                    B acc[mr_max][2];
                    for (std::int64_t r = 0; r < mr_max; ++r) {
                        if (p0 == 0 || r >= mr) {
                            acc[r][0] = acc[r][1] = B(T(0));
                        } else if (nr == nr_max) {
                            const T* row = c + (i0 + r) * n + j0;
                            acc[r][0] = B::load_unaligned(row);
                            acc[r][1] = B::load_unaligned(row + w);
                        } else {
                            const T* row = c + (i0 + r) * n + j0;
                            std::copy(row, row + nr, tile);
                            std::fill(tile + nr, tile + nr_max, T(0));
                            acc[r][0] = B::load_aligned(tile);
                            acc[r][1] = B::load_aligned(tile + w);
                        }
                    }
                    const T* a_rows = a + i0 * ar + p0 * ac;
                    // `rows` is a constant for a full tile, so that its loop unrolls.
                    auto accumulate = [&](auto rows) {
                        for (std::int64_t p = 0; p < kc; ++p) {
                            const B b0 = B::load_unaligned(panel.data() + p * nr_max);
                            const B b1 = B::load_unaligned(panel.data() + p * nr_max + w);
                            for (std::int64_t r = 0; r < rows; ++r) {
                                const B av(a_rows[r * ar + p * ac]);
                                acc[r][0] = xsimd::fma(av, b0, acc[r][0]);
                                acc[r][1] = xsimd::fma(av, b1, acc[r][1]);
                            }
                        }
                    };
                    if (mr == mr_max)
                        accumulate(std::integral_constant<std::int64_t, mr_max>{});
                    else
                        accumulate(mr);
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
