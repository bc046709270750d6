// Arguments of every layout: containers, fixed shapes, adapted pointers, transposed, sliced,
// reversed and column views, unevaluated expressions; rank 0 and zero-size dims.

#include "support/eager_scope.hpp"
#include "support/testing.hpp"

#include <xtrace/ext/xtensor_extras.hpp>

using namespace xtrace::testing;

namespace {
auto model(bool static_fusion = true) {
    xtrace::options o = quiet();
    o.static_fusion = static_fusion;
    return xtrace::function([](auto x, auto y) { return xtrace::tanh(x) * y + 0.5f * x; }, o);
}
xt::xarray<float> reference(const xt::xarray<float>& x, const xt::xarray<float>& y) {
    return xt::tanh(x) * y + 0.5f * x;
}
// tanh(x) * y + x / 2 cancels: compare with an absolute tolerance.
bool near(const xt::xarray<float>& a, const xt::xarray<float>& b) {
    return close(a, b, 4, 1e-5);
}
} // namespace

TEST_CASE("strided views are read in place and give the same result as copies") {
    auto f = model();
    for (std::size_t n : {1u, 3u, 17u, 40u}) {
        const xt::xarray<float> a = random_array<float>({n, 9});
        const xt::xarray<float> b = random_array<float>({9, n});
        const auto t = xt::transpose(b);
        CHECK(near(f(a, t), reference(a, xt::xarray<float>(t))));
        const auto col = xt::view(a, xt::all(), 4);
        const auto col2 = xt::view(a, xt::all(), 7);
        CHECK(near(f(col, col2), reference(xt::xarray<float>(col), xt::xarray<float>(col2))));
        const auto every_other = xt::view(a, xt::all(), xt::range(0, 9, 2));
        const xt::xarray<float> c = random_array<float>({n, 5});
        CHECK(near(f(every_other, c), reference(xt::xarray<float>(every_other), c)));
        const auto reversed = xt::view(a, xt::range(n - 1, xt::placeholders::_, -1), xt::all());
        CHECK(near(f(reversed, a), reference(xt::xarray<float>(reversed), a)));
    }
}

TEST_CASE("xtensor, xtensor_fixed, adapted buffers and lazy expressions are accepted") {
    auto f = model();
    const xt::xtensor<float, 2> a = random_array<float>({4, 3});
    const xt::xtensor_fixed<float, xt::xshape<3>> b = {1.f, -2.f, 3.f};
    std::vector<float> buffer(12);
    for (std::size_t i = 0; i < buffer.size(); ++i)
        buffer[i] = 0.25f * static_cast<float>(i);
    const auto adapted = xt::adapt(buffer, std::vector<std::size_t>{4, 3});
    CHECK(near(f(a, b), reference(a, b)));
    CHECK(near(f(adapted, b), reference(adapted, b)));
    CHECK(near(f(a + adapted, b), reference(a + adapted, b))); // evaluated first
    CHECK(f.tracing_count() == 1);                             // same signature every time
}

TEST_CASE("rank 0 and zero-size arguments") {
    auto f = model();
    const xt::xarray<float> s = 2.f;
    const xt::xarray<float> t = -1.f;
    xt::xarray<float> r = f(s, t);
    CHECK(r.dimension() == 0);
    CHECK(r() == Approx(std::tanh(2.f) * -1.f + 1.f));
    for (auto shape : {std::vector<std::size_t>{0}, {0, 3}, {4, 0, 2}}) {
        const xt::xarray<float> e = xt::xarray<float>::from_shape(shape);
        xt::xarray<float> z = f(e, e);
        CHECK(z.size() == 0);
        CHECK(std::equal(z.shape().begin(), z.shape().end(), shape.begin(), shape.end()));
        eager_scope eager;
        CHECK(f(e, e).size() == 0);
    }
    const xt::xarray<float> zero_rows = xt::xarray<float>::from_shape({0, 3});
    const xt::xarray<float> row = {1.f, 2.f, 3.f};
    CHECK(f(zero_rows, row).shape()[0] == 0);
}

TEST_CASE("sizes around SIMD widths and block edges") {
    const bool fused = GENERATE(true, false);
    auto f = model(fused);
    for (std::size_t n : {1u, 3u, 7u, 8u, 9u, 15u, 16u, 17u, 1023u, 1024u, 1025u, 5000u, 70001u}) {
        const xt::xarray<float> a = random_array<float>({n});
        const xt::xarray<float> b = random_array<float>({n});
        INFO("n = " << n);
        CHECK(near(f(a, b), reference(a, b)));
        const xt::xarray<float> one = random_array<float>({1});
        CHECK(near(f(a, one), reference(a, one)));
    }
}

TEST_CASE("broadcast along inner and outer axes over many blocks") {
    const bool fused = GENERATE(true, false);
    auto f = model(fused);
    const xt::xarray<float> big = random_array<float>({300, 70});
    const xt::xarray<float> row = random_array<float>({70});
    const xt::xarray<float> col = random_array<float>({300, 1});
    CHECK(near(f(big, row), reference(big, row)));
    CHECK(near(f(big, col), reference(big, col)));
    CHECK(near(f(row, col), reference(row, col))); // both broadcast: [300, 70]
}
