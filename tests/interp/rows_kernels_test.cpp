// A compiled kernel over several rows (rows_kernel, fold_rows_kernel) computes the same bits as
// one call per row with each row's leaf table: leaves that move on by their own steps, row
// splats read again for every row, rows apart by more than their length, and twin operands that
// read the same leaves in the first row but not in the next (their kernel must then compute both).

#include "support/testing.hpp"

#include <xtrace/interp/static_fusion.hpp>

#include <cstring>
#include <vector>

using namespace xtrace;
using namespace xtrace::testing;
namespace sf = xtrace::interp::static_fusion;

namespace {

// A row's maximum: a leaf a piece may read as one value (a row splat).
template <class T>
using row_value = node<op::max, arg<1, T>>;
// A product, or a sum for integers (whose product has no batch form, and no compiled kernel).
template <class T>
using times = std::conditional_t<std::is_integral_v<T>, op::add, op::mul>;
template <class T>
T apply_times(T a, T b) {
    return std::is_integral_v<T> ? a + b : a * b;
}
// (x - m) * (x - m): twin operands, each reading x and a row splat m.
template <class T>
using squares =
    node<times<T>, node<op::sub, arg<0, T>, row_value<T>>, node<op::sub, arg<0, T>, row_value<T>>>;
// (x - m) * 3 + y: a constant among the leaves.
template <class T>
using affine =
    node<op::add, node<times<T>, node<op::sub, arg<0, T>, row_value<T>>, constant<T>>, arg<2, T>>;

// Kernels of four leaves (an integer product would be one leaf: no kernel), whose row values
// may be one value.
static_assert(sf::leaf_count<squares<std::int32_t>> == 4 && sf::leaf_count<affine<double>> == 4);
static_assert(sf::one_value_leaves<squares<float>> == 0b1010 &&
              sf::one_value_leaves<affine<std::int64_t>> == 0b0010);

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

template <class T>
std::vector<T> random_values(std::size_t n) {
    const xt::xarray<T> a = random_array<T>({n}, -20, 20);
    return std::vector<T>(a.begin(), a.end());
}

// The leaves of one call: pointers, then the one-value mask; each leaf's step between rows.
struct leaf_rows {
    std::vector<const void*> at;
    std::vector<std::ptrdiff_t> steps;
    std::uint64_t one = 0;
    const void* const* table() {
        at.back() = &one;
        return at.data();
    }
    std::vector<const void*> row(std::size_t r) const {
        std::vector<const void*> t = at;
        for (std::size_t k = 0; k < steps.size(); ++k)
            t[k] = static_cast<const std::byte*>(at[k]) + static_cast<std::ptrdiff_t>(r) * steps[k];
        return t;
    }
};

} // namespace

TEMPLATE_TEST_CASE("a kernel over several rows computes what a call per row does", "", float,
                   double, std::int32_t, std::int64_t) {
    using T = TestType;
    const auto size = static_cast<std::ptrdiff_t>(sizeof(T));
    const T three = 3;
    for (std::size_t rows : {1, 2, 5})
        for (std::size_t n : {0, 1, 7, 16, 17, 64, 259}) {
            const std::size_t pitch = n + 3; // rows apart by more than their length
            const std::vector<T> x = random_values<T>(rows * pitch + 1),
                                 y = random_values<T>(rows * pitch + 1),
                                 m = random_values<T>(rows * pitch + 1);
            for (int splat = 0; splat < 2; ++splat) {
                INFO(rows << " rows of " << n << (splat ? ", row splats" : ", rows of m"));
                // m: one value per row (its step one element), or a row of its own.
                const std::ptrdiff_t m_step =
                    splat ? size : static_cast<std::ptrdiff_t>(pitch) * size;
                const std::ptrdiff_t step = static_cast<std::ptrdiff_t>(pitch) * size;
                const std::uint64_t one = splat ? sf::one_value_leaves<squares<T>> : 0;
                // Twins in every row; twins in the first row only (the second x stays on row 0).
                for (std::ptrdiff_t second_x : {step, std::ptrdiff_t(0)}) {
                    INFO("second x moves on by " << second_x);
                    leaf_rows sq{{x.data(), m.data(), x.data(), m.data(), nullptr},
                                 {step, m_step, second_x, m_step},
                                 one};
                    std::vector<T> want(rows * pitch, T(7)), got = want;
                    for (std::size_t r = 0; r < rows; ++r) {
                        std::vector<const void*> t = sq.row(r);
                        t.back() = &sq.one;
                        sf::kernel<squares<T>>(t.data(), want.data() + r * pitch, n);
                    }
                    sf::rows_kernel<squares<T>>(sq.table(), sq.steps.data(), got.data(), step, n,
                                                rows);
                    CHECK(same_bits(got, want));
                    // Against the values themselves, where they are exact.
                    if constexpr (std::is_integral_v<T>)
                        for (std::size_t r = 0; r < rows; ++r)
                            for (std::size_t i = 0; i < n; ++i) {
                                const T mv = splat ? m[r] : m[r * pitch + i];
                                const T a = x[r * pitch + i] - mv;
                                const T b = (second_x ? x[r * pitch + i] : x[i]) - mv;
                                REQUIRE(got[r * pitch + i] == apply_times(a, b));
                            }
                }
                leaf_rows af{{x.data(), m.data(), &three, y.data(), nullptr},
                             {step, m_step, 0, step},
                             splat ? sf::one_value_leaves<affine<T>> : 0};
                std::vector<T> want(rows * pitch, T(7)), got = want;
                for (std::size_t r = 0; r < rows; ++r) {
                    std::vector<const void*> t = af.row(r);
                    t.back() = &af.one;
                    sf::kernel<affine<T>>(t.data(), want.data() + r * pitch, n);
                }
                sf::rows_kernel<affine<T>>(af.table(), af.steps.data(), got.data(), step, n, rows);
                CHECK(same_bits(got, want));
            }
        }
}

TEMPLATE_TEST_CASE("a fold over several rows computes what a call per row does", "", float, double,
                   std::int32_t, std::int64_t) {
    using T = TestType;
    const auto size = static_cast<std::ptrdiff_t>(sizeof(T));
    for (std::size_t rows : {1, 2, 5})
        for (std::size_t n : {1, 16, 64, 96, 259}) {
            const std::size_t pitch = n + 5;
            const std::vector<T> x = random_values<T>(rows * pitch), m = random_values<T>(rows);
            const std::ptrdiff_t step = static_cast<std::ptrdiff_t>(pitch) * size;
            // One result per row, or several when a row's length allows.
            for (std::size_t inner : {n, n % 2 == 0 ? n / 2 : n})
                for (bool stores : {true, false}) {
                    INFO(rows << " rows of " << n << ", " << inner << " per result"
                              << (stores ? ", stored" : ""));
                    leaf_rows sq{{x.data(), m.data(), x.data(), m.data(), nullptr},
                                 {step, size, step, size},
                                 sf::one_value_leaves<squares<T>>};
                    const std::size_t results = rows * n / inner;
                    std::vector<T> want(rows * pitch, T(7)), got = want;
                    std::vector<T> want_sum(results, T(1)), got_sum = want_sum;
                    std::vector<T> want_max(results, T(-1000)), got_max = want_max;
                    for (std::size_t r = 0; r < rows; ++r) {
                        std::vector<const void*> t = sq.row(r);
                        t.back() = &sq.one;
                        void* out = stores ? want.data() + r * pitch : nullptr;
                        sf::fold_kernel<squares<T>, op::sum>(
                            t.data(), out, r * n, n, inner,
                            reinterpret_cast<std::byte*>(want_sum.data()));
                        sf::fold_kernel<squares<T>, op::max>(
                            t.data(), out, r * n, n, inner,
                            reinterpret_cast<std::byte*>(want_max.data()));
                    }
                    void* out = stores ? got.data() : nullptr;
                    sf::fold_rows_kernel<squares<T>, op::sum>(
                        sq.table(), sq.steps.data(), out, step, 0, n, inner,
                        reinterpret_cast<std::byte*>(got_sum.data()), rows);
                    sf::fold_rows_kernel<squares<T>, op::max>(
                        sq.table(), sq.steps.data(), out, step, 0, n, inner,
                        reinterpret_cast<std::byte*>(got_max.data()), rows);
                    CHECK(same_bits(got, want));
                    CHECK(same_bits(got_sum, want_sum));
                    CHECK(same_bits(got_max, want_max));
                    if constexpr (std::is_integral_v<T>) // exact: against the sums themselves
                        for (std::size_t k = 0; k < results; ++k) {
                            T s = 1;
                            for (std::size_t e = k * inner; e < (k + 1) * inner; ++e) {
                                const std::size_t r = e / n, i = e % n;
                                s += apply_times(x[r * pitch + i] - m[r], x[r * pitch + i] - m[r]);
                            }
                            REQUIRE(got_sum[k] == s);
                        }
                }
        }
}
