// cast<T> between every pair of dtypes; floating to integer saturates and maps NaN to 0.

#include "support/eager_scope.hpp"
#include "support/testing.hpp"

using namespace xtrace::testing;

namespace {

template <class From, class To>
void check_cast() {
    auto f = xtrace::function([](auto x) { return xtrace::cast<To>(x); }, quiet());
    for (std::size_t n : edge_sizes()) {
        const xt::xarray<From> a = random_array<From>({n}, -100, 100);
        auto [traced, eager] = both_paths(f, a);
        xt::xarray<To> expected = xt::xarray<To>::from_shape({n});
        for (std::size_t i = 0; i < n; ++i)
            expected(i) = std::is_same_v<To, bool> ? a(i) != From(0) : static_cast<To>(a(i));
        CHECK((traced == expected));
        CHECK((eager == expected));
    }
}

template <class From>
void from() {
    check_cast<From, float>();
    check_cast<From, double>();
    check_cast<From, std::int32_t>();
    check_cast<From, std::int64_t>();
    check_cast<From, bool>();
}

} // namespace

TEST_CASE("cast between every pair of dtypes") {
    from<float>();
    from<double>();
    from<std::int32_t>();
    from<std::int64_t>();
    from<bool>();
}

TEST_CASE("floating to integer casts saturate and map NaN to 0") {
    auto f = xtrace::function([](auto x) { return xtrace::cast<std::int32_t>(x); });
    const xt::xarray<double> a = {std::numeric_limits<double>::quiet_NaN(), 1e20, -1e20,
                                  std::numeric_limits<double>::infinity(),  -2.7, 2.7};
    auto [traced, eager] = both_paths(f, a);
    const xt::xarray<std::int32_t> want = {0,
                                           std::numeric_limits<std::int32_t>::max(),
                                           std::numeric_limits<std::int32_t>::min(),
                                           std::numeric_limits<std::int32_t>::max(),
                                           -2,
                                           2};
    CHECK((traced == want));
    CHECK((eager == want));
}

TEST_CASE("casting to the same dtype is the identity") {
    auto f = xtrace::function([](auto x) { return xtrace::cast<float>(x) + 1.f; });
    using G = xtrace::graph_t<decltype(f), xt::xarray<float>>;
    static_assert(
        std::is_same_v<
            G, xtrace::node<xtrace::op::add, xtrace::arg<0, float>, xtrace::constant<float>>>);
    const xt::xarray<float> a = {1.f};
    CHECK(f(a)(0) == 2.f);
}
