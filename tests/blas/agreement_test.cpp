// The CBLAS backend of matmul against the built-in kernel, on every layout gemm can address
// (row-major and transposed operands, leading dimensions wider than the matrix) and some it
// cannot (inner strides, broadcast rows: the built-in kernel then runs), sizes 0 to 130 around
// the register tile, float and double; both against a product accumulated in long double.

#include "support/testing.hpp"

#include <xtrace/interp/blas.hpp>

#include <vector>

using namespace xtrace::testing;

namespace {

// A rows x cols operand in a buffer, addressed at element strides (rs, cs).
template <class T>
struct operand {
    std::vector<T> data;
    std::int64_t rs, cs;
    T at(std::int64_t i, std::int64_t j) const {
        return data[static_cast<std::size_t>(i * rs + j * cs)];
    }
};

// Random values laid out as `layout` says: 0 row-major, 1 transposed, 2 row-major with a wider
// leading dimension, 3 every other column (no gemm layout), 4 one row repeated (stride 0).
template <class T>
operand<T> make(std::int64_t rows, std::int64_t cols, int layout) {
    operand<T> o;
    const std::int64_t pad = 3;
    switch (layout) {
    case 0:
        o.rs = cols, o.cs = 1;
        break;
    case 1:
        o.rs = 1, o.cs = rows;
        break;
    case 2:
        o.rs = cols + pad, o.cs = 1;
        break;
    case 3:
        o.rs = 2 * cols, o.cs = 2;
        break;
    default:
        o.rs = 0, o.cs = 1;
        break;
    }
    const std::int64_t span =
        (rows > 0 ? (rows - 1) * o.rs : 0) + (cols > 0 ? (cols - 1) * o.cs : 0) + 1;
    const auto values = random_array<T>({static_cast<std::size_t>(span)}, -2, 2);
    o.data.assign(values.begin(), values.end());
    return o;
}

template <class T>
void check(std::int64_t m, std::int64_t n, std::int64_t k, int la, int lb) {
    const operand<T> a = make<T>(m, k, la), b = make<T>(k, n, lb);
    std::vector<T> built_in(static_cast<std::size_t>(m * n) + 1, T(-7)),
        blas(static_cast<std::size_t>(m * n) + 1, T(-7));
    auto bytes = [](const std::vector<T>& v) {
        return reinterpret_cast<const std::byte*>(v.data());
    };
    xtrace::interp::matmul_kernel<T>(bytes(a.data), a.rs, a.cs, bytes(b.data), b.rs, b.cs, m, n, k,
                                     reinterpret_cast<std::byte*>(built_in.data()));
    xtrace::interp::blas_matmul<T>(bytes(a.data), a.rs, a.cs, bytes(b.data), b.rs, b.cs, m, n, k,
                                   reinterpret_cast<std::byte*>(blas.data()));
    const double eps = std::numeric_limits<T>::epsilon() * 4 * static_cast<double>(k + 1);
    bool ok = blas[static_cast<std::size_t>(m * n)] == T(-7); // nothing past C written
    for (std::int64_t i = 0; i < m && ok; ++i)
        for (std::int64_t j = 0; j < n && ok; ++j) {
            long double exact = 0, scale = 0;
            for (std::int64_t p = 0; p < k; ++p) {
                exact += static_cast<long double>(a.at(i, p)) * b.at(p, j);
                scale += std::abs(static_cast<long double>(a.at(i, p)) * b.at(p, j));
            }
            const auto tol = static_cast<long double>(eps) * (scale + 1e-30L);
            const std::size_t c = static_cast<std::size_t>(i * n + j);
            ok = std::abs(blas[c] - exact) <= tol && std::abs(built_in[c] - exact) <= tol;
        }
    INFO(m << "x" << k << " * " << k << "x" << n << ", layouts " << la << ", " << lb);
    CHECK(ok);
}

} // namespace

TEST_CASE("the CBLAS backend and the built-in kernel agree with long double, every layout") {
    const std::int64_t sizes[] = {0, 1, 2, 5, 16, 33, 130};
    for (int la = 0; la < 5; ++la)
        for (int lb = 0; lb < 5; ++lb)
            for (int trial = 0; trial < 6; ++trial) {
                auto pick = [&] { return sizes[std::uniform_int_distribution<int>(0, 6)(rng())]; };
                const std::int64_t m = pick(), n = pick(), k = pick();
                check<float>(m, n, k, la, lb);
                check<double>(m, n, k, la, lb);
            }
}

TEST_CASE("gemm layouts: which strides gemm can address") {
    using xtrace::interp::detail::gemm_layout_of;
    CHECK(gemm_layout_of(3, 4, 4, 1)->trans == CblasNoTrans);
    CHECK(gemm_layout_of(3, 4, 4, 1)->ld == 4);
    CHECK(gemm_layout_of(3, 4, 1, 3)->trans == CblasTrans);
    CHECK(gemm_layout_of(3, 4, 1, 5)->ld == 5);
    CHECK(gemm_layout_of(1, 4, 0, 1)->ld == 4); // one row: its stride is never followed
    CHECK_FALSE(gemm_layout_of(3, 4, 8, 2));    // every other column
    CHECK_FALSE(gemm_layout_of(3, 4, 0, 1));    // a broadcast row
    CHECK_FALSE(gemm_layout_of(3, 4, 3, 1));    // rows overlapping
}
