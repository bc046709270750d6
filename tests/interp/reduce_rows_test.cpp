// reduce_kernels::rows, which a row sweep calls for a reduction of whole rows, against the
// reduction of the same rows as a strided tensor (reduce_kernels::whole: the same bits) and a
// loop over the elements: every reduction and dtype, random rows, lengths (0 and 1 included) and
// gaps between rows, a NaN planted in some float rows.

#include "support/testing.hpp"

#include <xtrace/interp/reduce.hpp>

#include <cmath>
#include <cstring>
#include <limits>

using namespace xtrace::testing;

namespace {

template <class Op, class T>
T by_hand(const T* p, std::size_t n) {
    if constexpr (std::is_same_v<Op, xtrace::op::sum> || std::is_same_v<Op, xtrace::op::mean>) {
        double s = 0;
        for (std::size_t i = 0; i < n; ++i)
            s += static_cast<double>(p[i]);
        if constexpr (std::is_same_v<Op, xtrace::op::mean>) // of no elements: NaN, or 0
            return std::is_integral_v<T> && n == 0 ? T(0)
                                                   : static_cast<T>(s / static_cast<double>(n));
        else
            return static_cast<T>(s);
    } else if constexpr (std::is_same_v<Op, xtrace::op::prod>) {
        double s = 1;
        for (std::size_t i = 0; i < n; ++i)
            s *= static_cast<double>(p[i]);
        return static_cast<T>(s);
    } else {
        constexpr bool is_max = std::is_same_v<Op, xtrace::op::max>;
        T m = is_max ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
        if constexpr (std::is_floating_point_v<T>)
            m = is_max ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
        for (std::size_t i = 0; i < n; ++i) {
            if constexpr (std::is_floating_point_v<T>)
                if (std::isnan(p[i]))
                    return p[i];
            m = is_max ? std::max(m, p[i]) : std::min(m, p[i]);
        }
        return m;
    }
}

template <class Op, class T>
void check_rows() {
    constexpr bool product = std::is_same_v<Op, xtrace::op::prod>;
    const auto pick = [](std::size_t lo, std::size_t hi) {
        return std::uniform_int_distribution<std::size_t>(lo, hi)(rng());
    };
    const std::size_t rows = pick(0, 6), count = pick(0, 1) ? pick(0, 3) : pick(4, 300);
    const std::size_t step = count + pick(0, 5); // elements from one row's start to the next
    // Products stay finite and, for integers, without overflow: factors in [-1, 1].
    xt::xarray<T> data = random_array<T>({rows * step + 1}, product ? -1 : -3, product ? 1 : 3);
    if constexpr (std::is_floating_point_v<T>)
        if (rows > 0 && count > 0 && pick(0, 2) == 0)
            data(pick(0, rows - 1) * step + pick(0, count - 1)) =
                std::numeric_limits<T>::quiet_NaN();
    const xtrace::graph::reduce_kernels& k = xtrace::interp::reduce_kernels_of<Op, T>;
    std::vector<T> got(rows + 1, T(7)), whole(rows + 1, T(7));
    const auto* in = reinterpret_cast<const std::byte*>(data.data());
    k.rows(in, static_cast<std::ptrdiff_t>(step * sizeof(T)), count, rows,
           reinterpret_cast<std::byte*>(got.data()));
    const std::int64_t shape[2] = {static_cast<std::int64_t>(rows),
                                   static_cast<std::int64_t>(count)},
                       strides[2] = {static_cast<std::int64_t>(step), 1};
    if (rows > 0)
        k.whole(in, strides, shape, 2, 2, reinterpret_cast<std::byte*>(whole.data()));
    INFO(rows << " rows of " << count << " elements, " << step << " apart, "
              << xtrace::dtype_name(xtrace::dtype_of_v<T>));
    CHECK(got[rows] == T(7)); // nothing written past the rows
    for (std::size_t r = 0; r < rows; ++r) {
        INFO("row " << r);
        CHECK(std::memcmp(&got[r], &whole[r], sizeof(T)) == 0);
        const xt::xarray<T> a{got[r]}, b{by_hand<Op>(data.data() + r * step, count)};
        CHECK(close(a, b, 1e3, std::is_floating_point_v<T> ? 1e-3 : 0));
    }
}

template <class Op>
void check_types() {
    check_rows<Op, float>();
    check_rows<Op, double>();
    check_rows<Op, std::int32_t>();
    check_rows<Op, std::int64_t>();
}

} // namespace

TEST_CASE("a reduction of whole rows gives what the strided reduction gives, row by row") {
    for (int round = 0; round < 60; ++round) {
        check_types<xtrace::op::sum>();
        check_types<xtrace::op::mean>();
        check_types<xtrace::op::max>();
        check_types<xtrace::op::min>();
        check_types<xtrace::op::prod>();
    }
}
