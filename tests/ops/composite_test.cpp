// softmax and logsumexp: right on random data, finite on inputs of +-1000, both paths.

#include "support/eager_scope.hpp"
#include "support/testing.hpp"

#include <xtrace/ext/xtensor_extras.hpp>

using namespace xtrace::testing;

TEST_CASE("softmax and logsumexp along the last and the first axis") {
    auto f = xtrace::function(
        [](auto x) {
            return std::make_tuple(xtrace::softmax(x), xtrace::logsumexp(x), xtrace::softmax(x, 0),
                                   xtrace::logsumexp(x, 0));
        },
        quiet());
    for (double scale : {1.0, 1000.0}) {
        const xt::xarray<double> a = random_array<double>({4, 6}, -scale, scale);
        // Reference in long double, straight from the definitions.
        xt::xarray<double> sm_last = xt::zeros<double>({4, 6}),
                           sm_first = xt::zeros<double>({4, 6});
        xt::xarray<double> lse_last = xt::zeros<double>({4}), lse_first = xt::zeros<double>({6});
        for (std::size_t i = 0; i < 4; ++i) {
            long double total = 0;
            for (std::size_t j = 0; j < 6; ++j)
                total += std::exp(static_cast<long double>(a(i, j)));
            lse_last(i) = static_cast<double>(std::log(total));
            for (std::size_t j = 0; j < 6; ++j)
                sm_last(i, j) =
                    static_cast<double>(std::exp(static_cast<long double>(a(i, j))) / total);
        }
        for (std::size_t j = 0; j < 6; ++j) {
            long double total = 0;
            for (std::size_t i = 0; i < 4; ++i)
                total += std::exp(static_cast<long double>(a(i, j)));
            lse_first(j) = static_cast<double>(std::log(total));
            for (std::size_t i = 0; i < 4; ++i)
                sm_first(i, j) =
                    static_cast<double>(std::exp(static_cast<long double>(a(i, j))) / total);
        }
        auto [traced, eager] = both_paths(f, a);
        for (const auto& r : {traced, eager}) {
            INFO("scale " << scale);
            CHECK(close(std::get<0>(r), sm_last, 64, 1e-12));
            CHECK(close(std::get<1>(r), lse_last, 64, 1e-9));
            CHECK(close(std::get<2>(r), sm_first, 64, 1e-12));
            CHECK(close(std::get<3>(r), lse_first, 64, 1e-9));
        }
    }
}

TEST_CASE("rows of -inf stay defined") {
    auto f = xtrace::function(
        [](auto x) { return std::make_pair(xtrace::softmax(x), xtrace::logsumexp(x)); }, quiet());
    const float inf = std::numeric_limits<float>::infinity();
    const xt::xarray<float> a = {{-inf, -inf}, {0.f, -inf}};
    auto [traced, eager] = both_paths(f, a);
    for (const auto& r : {traced, eager}) {
        CHECK(std::get<1>(r)(0) == -inf);
        CHECK(std::get<1>(r)(1) == 0.f);
        CHECK(std::get<0>(r)(1, 0) == 1.f);
        CHECK(std::get<0>(r)(1, 1) == 0.f);
    }
}

// A row holding +inf: its finite entries are 0 whatever their size (the limit as that entry
// grows), its infinite ones NaN (inf / inf), its logsumexp +inf. A row of NaN stays NaN. Once a
// finite entry above log(max) overflowed its exponential and became NaN too.
TEMPLATE_TEST_CASE("rows holding +inf or NaN", "", float, double) {
    using T = TestType;
    auto f = xtrace::function(
        [](auto x) { return std::make_pair(xtrace::softmax(x), xtrace::logsumexp(x)); }, quiet());
    const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
    const T big = std::log(std::numeric_limits<T>::max()) + T(1); // exp(big) overflows
    const xt::xarray<T> a = {{inf, big, T(1), -inf}, {T(2), nan, T(0), T(1)}};
    auto [traced, eager] = both_paths(f, a);
    for (const auto& r : {traced, eager}) {
        const xt::xarray<T>& sm = std::get<0>(r);
        const xt::xarray<T>& lse = std::get<1>(r);
        CHECK(std::isnan(sm(0, 0)));
        CHECK(sm(0, 1) == T(0));
        CHECK(sm(0, 2) == T(0));
        CHECK(sm(0, 3) == T(0));
        CHECK(lse(0) == inf);
        for (std::size_t j = 0; j < 4; ++j)
            CHECK(std::isnan(sm(1, j)));
        CHECK(std::isnan(lse(1)));
    }
}
