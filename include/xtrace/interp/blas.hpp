#ifndef XTRACE_INTERP_BLAS_HPP
#define XTRACE_INTERP_BLAS_HPP

// The optional CBLAS backend of matmul (XTRACE_USE_BLAS, CMake option of the same name): float
// and double products whose operands a gemm can address (each a row-major or a transposed
// matrix: one stride 1, the other at least the matrix's width) go to cblas_sgemm/cblas_dgemm;
// other strides (broadcast batch rows, strided views) and integer types use the built-in kernel.

#include "matmul.hpp"

#if defined(XTRACE_USE_BLAS)

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <optional>
#include <type_traits>

namespace xtrace::interp {

namespace detail {

/// How gemm reads a rows x cols matrix at element strides (rs, cs): transposed or not, and its
/// leading dimension; nullopt when no layout fits.
struct gemm_layout {
    CBLAS_TRANSPOSE trans;
    std::int64_t ld;
};

inline std::optional<gemm_layout> gemm_layout_of(std::int64_t rows, std::int64_t cols,
                                                 std::int64_t rs, std::int64_t cs) {
    // A stride along a dim of size 1 is never followed: any value serves.
    if ((cs == 1 || cols <= 1) && (rows <= 1 || rs >= std::max<std::int64_t>(cols, 1)))
        return gemm_layout{CblasNoTrans, rows <= 1 ? std::max<std::int64_t>(cols, 1) : rs};
    if ((rs == 1 || rows <= 1) && (cols <= 1 || cs >= std::max<std::int64_t>(rows, 1)))
        return gemm_layout{CblasTrans, cols <= 1 ? std::max<std::int64_t>(rows, 1) : cs};
    return std::nullopt;
}

} // namespace detail

/// C = A B (see graph::matmul_fn) through CBLAS where it can address the operands, else the
/// built-in kernel.
template <class T>
void blas_matmul(const std::byte* a, std::int64_t ar, std::int64_t ac, const std::byte* b,
                 std::int64_t br, std::int64_t bc, std::int64_t m, std::int64_t n, std::int64_t k,
                 std::byte* c) {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        const auto la = detail::gemm_layout_of(m, k, ar, ac);
        const auto lb = detail::gemm_layout_of(k, n, br, bc);
        if (la && lb && m > 0 && n > 0 && k > 0 &&
            std::max({m, n, k, la->ld, lb->ld}) <= std::int64_t(INT_MAX)) {
            const auto mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
            if constexpr (std::is_same_v<T, float>)
                cblas_sgemm(CblasRowMajor, la->trans, lb->trans, mi, ni, ki, 1.f,
                            reinterpret_cast<const float*>(a), static_cast<int>(la->ld),
                            reinterpret_cast<const float*>(b), static_cast<int>(lb->ld), 0.f,
                            reinterpret_cast<float*>(c), ni);
            else
                cblas_dgemm(CblasRowMajor, la->trans, lb->trans, mi, ni, ki, 1.0,
                            reinterpret_cast<const double*>(a), static_cast<int>(la->ld),
                            reinterpret_cast<const double*>(b), static_cast<int>(lb->ld), 0.0,
                            reinterpret_cast<double*>(c), ni);
            return;
        }
    }
    matmul_kernel<T>(a, ar, ac, b, br, bc, m, n, k, c);
}

} // namespace xtrace::interp

#endif // XTRACE_USE_BLAS

#endif
