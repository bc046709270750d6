// Floating-point unary ops, traced and eager, against xtensor's own functions on random shapes.

#include "support/eager_scope.hpp"
#include "support/testing.hpp"

using namespace xtrace::testing;

namespace {

template <class T, class Op, class Ref>
void check(Op op, Ref ref, double lo, double hi, double ulps = 4, double abs = 0) {
    auto f = xtrace::function([op](auto x) { return op(x); }, quiet());
    for (int trial = 0; trial < 12; ++trial) {
        const auto shape = random_shape();
        const xt::xarray<T> a = random_array<T>(shape, lo, hi);
        const xt::xarray<T> expected = ref(a);
        auto [traced, eager] = both_paths(f, a);
        INFO("shape " << shape_text(shape));
        CHECK(close(traced, expected, ulps, abs));
        CHECK(close(eager, expected, ulps, abs));
    }
    for (std::size_t n : edge_sizes()) {
        const xt::xarray<T> a = random_array<T>({n}, lo, hi);
        INFO("size " << n);
        CHECK(close(f(a), xt::xarray<T>(ref(a)), ulps, abs));
    }
}

template <class T>
void all_float_unary() {
    const T eps = std::numeric_limits<T>::epsilon();
    check<T>([](auto x) { return xtrace::exp(x); }, [](const auto& a) { return xt::exp(a); }, -20,
             20);
    check<T>([](auto x) { return xtrace::log(x); }, [](const auto& a) { return xt::log(a); }, 0.01,
             100, 4, 4 * eps);
    check<T>([](auto x) { return xtrace::sqrt(x); }, [](const auto& a) { return xt::sqrt(a); }, 0,
             100);
    check<T>([](auto x) { return xtrace::rsqrt(x); }, [](const auto& a) { return 1 / xt::sqrt(a); },
             0.01, 100);
    check<T>([](auto x) { return xtrace::sin(x); }, [](const auto& a) { return xt::sin(a); }, -10,
             10, 4, 4 * eps);
    check<T>([](auto x) { return xtrace::cos(x); }, [](const auto& a) { return xt::cos(a); }, -10,
             10, 4, 4 * eps);
    check<T>([](auto x) { return xtrace::tanh(x); }, [](const auto& a) { return xt::tanh(a); }, -10,
             10, 4, 4 * eps);
    // <cmath>'s erf: xt::erf goes through xsimd's under XTENSOR_USE_XSIMD, 34 ulps off in double.
    check<T>([](auto x) { return xtrace::erf(x); },
             [](const auto& a) {
                 xt::xarray<T> e = a;
                 for (auto& v : e)
                     v = std::erf(v);
                 return e;
             },
             -6, 6, 4, 4 * eps);
    check<T>([](auto x) { return xtrace::sigmoid(x); },
             [](const auto& a) { return 1 / (1 + xt::exp(-a)); }, -30, 30);
    check<T>([](auto x) { return xtrace::abs(x); }, [](const auto& a) { return xt::abs(a); }, -5, 5,
             0);
    check<T>([](auto x) { return -x; }, [](const auto& a) { return -a; }, -5, 5, 0);
    check<T>([](auto x) { return xtrace::square(x); }, [](const auto& a) { return a * a; }, -5, 5,
             0);
    check<T>([](auto x) { return xtrace::relu(x); },
             [](const auto& a) { return xt::maximum(a, xt::zeros_like(a)); }, -5, 5, 0);
    check<T>([](auto x) { return xtrace::floor(x); }, [](const auto& a) { return xt::floor(a); },
             -5, 5, 0);
    check<T>([](auto x) { return xtrace::ceil(x); }, [](const auto& a) { return xt::ceil(a); }, -5,
             5, 0);
}

} // namespace

TEST_CASE("floating unary ops match xtensor, float32") {
    all_float_unary<float>();
}
TEST_CASE("floating unary ops match xtensor, float64") {
    all_float_unary<double>();
}

TEST_CASE("round halves to even, as numpy and TensorFlow") {
    auto f = xtrace::function([](auto x) { return xtrace::round(x); });
    const xt::xarray<float> a = {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 2.4f, 2.6f};
    const xt::xarray<float> want = {-2, -2, -0, 0, 2, 2, 2, 3};
    auto [traced, eager] = both_paths(f, a);
    CHECK((traced == want));
    CHECK((eager == want));
}

TEST_CASE("NaN and infinities pass through unary ops on both paths") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    const xt::xarray<float> a = {nan, inf, -inf, 0.f};
    auto f = xtrace::function([](auto x) {
        return std::make_tuple(xtrace::relu(x), xtrace::exp(x), xtrace::sigmoid(x));
    });
    auto [traced, eager] = both_paths(f, a);
    for (const auto& r : {traced, eager}) {
        const auto& [relu, exp, sig] = r;
        CHECK(std::isnan(relu(0)));
        CHECK(relu(1) == inf);
        CHECK(relu(2) == 0.f);
        CHECK(std::isnan(exp(0)));
        CHECK(exp(1) == inf);
        CHECK(exp(2) == 0.f);
        CHECK(sig(1) == 1.f);
        CHECK(sig(2) == 0.f);
        CHECK(sig(3) == 0.5f);
    }
}
