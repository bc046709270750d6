// matmul: 2-D and batched with broadcast batch dims, every numeric dtype, strided operands,
// sizes around the register tile, against a product computed here in long double.

#include "support/eager_scope.hpp"
#include "support/testing.hpp"

#include <xtrace/interp/matmul.hpp>

#include <xtrace/ext/xtensor_extras.hpp>

using namespace xtrace::testing;

namespace {

// The product by definition, batch dims broadcast, accumulated in long double.
template <class T>
xt::xarray<T> reference(const xt::xarray<T>& a, const xt::xarray<T>& b) {
    const std::size_t ra = a.dimension(), rb = b.dimension();
    const std::size_t m = a.shape()[ra - 2], k = a.shape()[ra - 1], n = b.shape()[rb - 1];
    const std::size_t batch_rank = std::max(ra, rb) - 2;
    std::vector<std::size_t> out(batch_rank);
    for (std::size_t d = 0; d < batch_rank; ++d) {
        const std::ptrdiff_t ia = std::ptrdiff_t(d) - std::ptrdiff_t(batch_rank - (ra - 2));
        const std::ptrdiff_t ib = std::ptrdiff_t(d) - std::ptrdiff_t(batch_rank - (rb - 2));
        const std::size_t da = ia < 0 ? 1 : a.shape()[std::size_t(ia)];
        const std::size_t db = ib < 0 ? 1 : b.shape()[std::size_t(ib)];
        out[d] = std::max(da, db);
    }
    std::vector<std::size_t> full = out;
    full.push_back(m);
    full.push_back(n);
    auto r = xt::xarray<T>::from_shape(full);
    std::vector<std::size_t> idx(batch_rank, 0);
    for (std::size_t t = 0; t < r.size() / std::max<std::size_t>(m * n, 1); ++t) {
        auto at = [&](const xt::xarray<T>& x, std::size_t i, std::size_t j) {
            const std::size_t rx = x.dimension();
            std::size_t off = 0, stride = 1;
            std::vector<std::size_t> ix(rx);
            ix[rx - 2] = i;
            ix[rx - 1] = j;
            for (std::size_t d = 0; d + 2 < rx; ++d) {
                const std::size_t od = d + (batch_rank - (rx - 2));
                ix[d] = x.shape()[d] == 1 ? 0 : idx[od];
            }
            for (std::size_t d = rx; d-- > 0;) {
                off += ix[d] * stride;
                stride *= x.shape()[d];
            }
            return x.data()[off];
        };
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < n; ++j) {
                long double s = 0;
                for (std::size_t p = 0; p < k; ++p)
                    s += static_cast<long double>(at(a, i, p)) *
                         static_cast<long double>(at(b, p, j));
                r.data()[(t * m + i) * n + j] = static_cast<T>(s);
            }
        for (std::size_t d = batch_rank; d-- > 0;) {
            if (++idx[d] < out[d])
                break;
            idx[d] = 0;
        }
    }
    return r;
}

template <class T>
void products() {
    auto f = xtrace::function([](auto a, auto b) { return xtrace::matmul(a, b); }, quiet());
    const double tol = std::is_same_v<T, float> ? 1e-4 : 1e-10;
    for (std::size_t m : {1u, 3u, 5u, 17u})
        for (std::size_t n : {1u, 7u, 16u, 33u})
            for (std::size_t k : {0u, 1u, 9u}) {
                const xt::xarray<T> a = random_array<T>({m, k}, -4, 4);
                const xt::xarray<T> b = random_array<T>({k, n}, -4, 4);
                INFO("m " << m << " n " << n << " k " << k);
                auto [traced, eager] = both_paths(f, a, b);
                CHECK(close(traced, reference(a, b), 8, tol));
                CHECK(close(eager, reference(a, b), 8, tol));
            }
    // Batched, with broadcast batch dims.
    const xt::xarray<T> a = random_array<T>({2, 1, 4, 6}, -4, 4);
    const xt::xarray<T> b = random_array<T>({3, 6, 5}, -4, 4);
    auto [traced, eager] = both_paths(f, a, b);
    CHECK(traced.shape()[1] == 3);
    CHECK(close(traced, reference(a, b), 8, tol));
    CHECK(close(eager, reference(a, b), 8, tol));
}

} // namespace

TEST_CASE("matmul, every numeric dtype, sizes around the register tile, batched") {
    products<float>();
    products<double>();
    products<std::int32_t>();
    products<std::int64_t>();
}

TEST_CASE("matmul of transposed and sliced operands, and of intermediates") {
    auto f = xtrace::function(
        [](auto a, auto b) {
            return xtrace::matmul(xtrace::transpose(a) * 2.f, b) -
                   xtrace::matmul(xtrace::transpose(a), xtrace::transpose(xtrace::transpose(b)));
        },
        quiet());
    const xt::xarray<float> big = random_array<float>({9, 20});
    const auto a = xt::view(big, xt::range(0, 9), xt::range(0, 20, 2)); // 9 x 10, strided
    const xt::xarray<float> b = random_array<float>({9, 4});
    const xt::xarray<float> at = xt::transpose(xt::xarray<float>(a));
    const xt::xarray<float> expected = reference<float>(at, b);
    auto [traced, eager] = both_paths(f, a, b);
    CHECK(close(traced, expected, 8, 1e-4));
    CHECK(close(eager, expected, 8, 1e-4));
}

TEST_CASE("matmul shape errors name both shapes") {
    auto f = xtrace::function([](auto a, auto b) { return xtrace::matmul(a, b); }, quiet());
    try {
        f(xt::xarray<float>::from_shape({2, 3}), xt::xarray<float>::from_shape({4, 5}));
        FAIL("no shape_error");
    } catch (const xtrace::shape_error& e) {
        CHECK(std::string(e.what()) ==
              "xtrace::matmul: cannot multiply [2,3] by [4,5]: inner dims 3 and 4 differ");
    }
    CHECK_THROWS_AS(f(xt::xarray<float>::from_shape({3}), xt::xarray<float>::from_shape({3, 1})),
                    xtrace::shape_error);
    CHECK_THROWS_AS(
        f(xt::xarray<float>::from_shape({2, 2, 3}), xt::xarray<float>::from_shape({3, 3, 1})),
        xtrace::shape_error);
}

TEST_CASE("matmul over k longer than the kernel's block of B, rows and columns around its tile") {
    // The kernel packs B kc rows at a time and carries each tile of C from one block to the
    // next: k on both sides of one and two blocks, m and n on both sides of the tile.
    auto check = [](auto type) {
        using T = typename decltype(type)::type;
        using namespace xtrace::interp;
        auto f = xtrace::function([](auto a, auto b) { return xtrace::matmul(a, b); }, quiet());
        const std::int64_t kc = matmul_k_block<T>, rows = matmul_tile_rows,
                           cols = matmul_tile_cols<T>;
        const double tol = std::is_same_v<T, float> ? 1e-3 : 1e-12;
        for (std::int64_t k : {kc - 1, kc, kc + 1, 2 * kc + 5})
            for (std::int64_t m : {std::int64_t(1), rows, 2 * rows + 3})
                for (std::int64_t n : {cols - 1, cols + 3}) {
                    const auto dims = [](std::int64_t r, std::int64_t c) {
                        return std::vector<std::size_t>{static_cast<std::size_t>(r),
                                                        static_cast<std::size_t>(c)};
                    };
                    const xt::xarray<T> a = random_array<T>(dims(m, k), -1, 1);
                    const xt::xarray<T> b = random_array<T>(dims(k, n), -1, 1);
                    INFO("m " << m << " n " << n << " k " << k);
                    CHECK(close(f(a, b), reference(a, b), 8, tol));
                }
    };
    check(std::type_identity<float>{});
    check(std::type_identity<double>{});
}
