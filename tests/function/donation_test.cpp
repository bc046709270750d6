// Donated arguments (JAX's donate_argnums): an xt::xarray passed as an rvalue becomes the buffer
// of a result of its dtype and shape when nothing reads it after that result is written.

#include "support/allocation_counter.hpp"
#include "support/eager_scope.hpp"
#include "support/testing.hpp"

#include <utility>

using namespace xtrace::testing;

namespace {

template <class T>
bool same_values(const xt::xarray<T>& a, const xt::xarray<T>& b) {
    return a.shape() == b.shape() && a == b;
}

auto gelu = [](auto x) {
    return 0.5f * x * (1.f + xtrace::tanh(0.7978845608f * (x + 0.044715f * x * x * x)));
};

} // namespace

TEST_CASE("x = f(std::move(x)) writes into x's buffer and allocates nothing") {
    for (bool fusion : {true, false}) {
        auto f = xtrace::function(gelu, quiet({.static_fusion = fusion}));
        for (std::size_t n : edge_sizes()) {
            const xt::xarray<float> start = random_array<float>({n, 3});
            xt::xarray<float> x = start;
            const float* buffer = x.data();
            x = f(std::move(x));
            CHECK(close(x, f(start)));
            if (n > 0)
                CHECK(x.data() == buffer);
        }
        xt::xarray<float> x = random_array<float>({1024});
        for (int warm = 0; warm < 2; ++warm)
            x = f(std::move(x));
        const xt::xarray<float> before = x;
        CHECK(allocations_of([&] { x = f(std::move(x)); }) == 0);
        CHECK(close(x, f(before)));
    }
}

TEST_CASE("an argument read after a result is written is not donated to that result") {
    // y is written before z reads x again; z is the last to read it, so z may take x.
    auto f = xtrace::function(
        [](auto x) { return std::make_tuple(x * 2.f, xtrace::exp(x) + x, x * 3.f); }, quiet());
    const xt::xarray<float> start = random_array<float>({4, 5});
    xt::xarray<float> x = start;
    const float* buffer = x.data();
    auto [a, b, c] = f(std::move(x));
    CHECK(close(a, xt::xarray<float>(start * 2.f)));
    CHECK(close(b, xt::xarray<float>(xt::exp(start) + start)));
    CHECK(close(c, xt::xarray<float>(start * 3.f)));
    CHECK((a.data() == buffer) + (b.data() == buffer) + (c.data() == buffer) <= 1);
}

TEST_CASE("what cannot be donated is read as usual and left as it was") {
    const xt::xarray<float> m = random_array<float>({3, 3});
    // A matmul reads its operands whole: no donation.
    auto product = xtrace::function([](auto x) { return xtrace::matmul(x, x); }, quiet());
    xt::xarray<float> x = m;
    const xt::xarray<float> p = product(std::move(x));
    CHECK(close(p, product(m), 16));
    CHECK(same_values(x, m));
    // A reduction of the argument, run alongside the result that would take it.
    auto centred = xtrace::function([](auto x) { return x - xtrace::mean(x); }, quiet());
    x = m;
    CHECK(close(centred(std::move(x)), centred(m), 16, 1e-6));
    // Another shape (broadcast), or another dtype.
    auto widen = xtrace::function(
        [](auto v, auto w) { return std::make_tuple(v + w, xtrace::cast<double>(w)); }, quiet());
    xt::xarray<float> v = {1.f, 2.f, 3.f};
    const auto [sum, wide] = widen(std::move(v), m);
    CHECK(close(sum, xt::xarray<float>(xt::xarray<float>{1.f, 2.f, 3.f} + m)));
    CHECK(close(wide, xt::xarray<double>(xt::cast<double>(m))));
    CHECK(same_values(v, xt::xarray<float>{1.f, 2.f, 3.f}));
    // The same array passed twice: writing it early would change what the other reads.
    auto twice = xtrace::function(
        [](auto a, auto b) {
            auto doubled = a * 2.f; // recorded first: written before b is read
            auto shifted = xtrace::cast<double>(b) + 1.0; // so only `doubled` could take a
            return std::make_tuple(doubled, shifted);
        },
        quiet());
    x = m;
    const auto [doubled, shifted] = twice(std::move(x), x);
    CHECK(same_values(doubled, xt::xarray<float>(m * 2.f)));
    CHECK(same_values(shifted, xt::xarray<double>(xt::cast<double>(m) + 1.0)));
}

TEST_CASE("donation with several arguments, static arguments and eager mode") {
    auto f = xtrace::function([](auto a, float k, auto b) { return a * k + b; }, quiet());
    const xt::xarray<float> a0 = random_array<float>({2, 7}), b0 = random_array<float>({2, 7});
    xt::xarray<float> a = a0, b = b0;
    const float* buffer_b = b.data();
    const xt::xarray<float> r = f(a, 2.f, std::move(b));
    CHECK(close(r, xt::xarray<float>(a0 * 2.f + b0)));
    CHECK(r.data() == buffer_b);
    CHECK(same_values(a, a0));
    eager_scope eager;
    xt::xarray<float> c = a0;
    CHECK(close(f(std::move(c), 2.f, b0), xt::xarray<float>(a0 * 2.f + b0)));
}
