// Multi-core execution: fused regions, tail reductions, whole reductions and matmul panels cut
// into chunks that depend only on the work's size, so 1, 2 and 8 threads give the same bits,
// which also agree with xtensor. Chunks are made small (chunk_floor_scope) so that small
// tensors split, and the default floor is checked on tensors past it.

#include "support/testing.hpp"
#include "support/threads.hpp"

#include <cstring>
#include <thread>

using namespace xtrace;
using testing::on_threads;

namespace {

template <class A, class B>
bool same_bits(const A& a, const B& b) {
    return a.shape() == b.shape() &&
           (a.size() == 0 || // an empty array's data() may be null, which memcmp must not see
            std::memcmp(a.data(), b.data(), a.size() * sizeof(typename A::value_type)) == 0);
}

// f(args...) on 1, 2 and 8 threads: the same bits each time; returns the 1-thread result.
template <class F, class... Args>
auto on_every_count(const F& f, const Args&... args) {
    auto one = on_threads(1, [&] { return f(args...); });
    for (int threads : {2, 8}) {
        INFO(threads << " threads");
        auto many = on_threads(threads, [&] { return f(args...); });
        CHECK(same_bits(many, one));
    }
    return one;
}

} // namespace

TEST_CASE("chunks depend only on the size, never exceed max_chunks and stay whole blocks") {
    for (std::size_t size :
         {std::size_t(0), std::size_t(16), std::size_t(1) << 15, (std::size_t(1) << 15) + 1,
          std::size_t(1) << 20, std::size_t(1) << 26}) {
        const std::size_t chunk = interp::chunk_elements(size, 512);
        INFO("size " << size << ", chunk " << chunk);
        if (size <= interp::default_min_chunk_elements) {
            CHECK(interp::chunk_count(size, chunk) == (size > 0 ? 1u : 0u));
        } else {
            CHECK(chunk >= interp::default_min_chunk_elements);
            CHECK(chunk % 512 == 0);
        }
        CHECK(interp::chunk_count(size, chunk) <= interp::max_chunks);
        CHECK(interp::chunk_count(size, chunk) * chunk >= size);
    }
    // Below the threshold a step is one chunk: nothing is spawned.
    CHECK(interp::chunk_count(16, interp::chunk_elements(16, 512)) == 1);
    CHECK(interp::chunk_count(interp::default_min_chunk_elements,
                              interp::chunk_elements(interp::default_min_chunk_elements, 512)) ==
          1);
    const interp::chunk_floor_scope floor(7);
    CHECK(interp::chunk_elements(100, 512) == 7);
}

TEST_CASE("elementwise work past the threshold: same bits on any thread count, equal to xtensor") {
    const auto gelu = [](auto x) {
        return 0.5f * x * (1.f + xtrace::tanh(0.7978845608f * (x + 0.044715f * x * x * x)));
    };
    const std::size_t n = (std::size_t(1) << 17) + 333; // several chunks and a ragged last one
    const auto x = testing::random_array<float>({n});
    const xt::xarray<float> expect =
        0.5f * x * (1.f + xt::tanh(0.7978845608f * (x + 0.044715f * x * x * x)));
    for (bool fusion : {true, false}) {
        INFO((fusion ? "static fusion" : "interpreter"));
        auto f = xtrace::function(gelu, testing::quiet({.static_fusion = fusion}));
        const auto r = on_every_count(f, x);
        CHECK(xt::allclose(r, expect, 1e-5, 1e-6));
    }
}

TEST_CASE("small chunks on every dtype, rank and size, broadcast and strided inputs") {
    const interp::chunk_floor_scope floor(5);
    for (int trial = 0; trial < 30; ++trial) {
        const auto shape = testing::random_shape(4);
        const auto small = testing::broadcastable_to(shape);
        INFO(testing::shape_text(shape) << " with " << testing::shape_text(small));
        {
            const auto a = testing::random_array<float>(shape);
            const auto b = testing::random_array<float>(small);
            auto f = xtrace::function([](auto x, auto y) { return xtrace::exp(x) * y - x; },
                                      testing::quiet({.static_fusion = false}));
            const auto r = on_every_count(f, a, b);
            CHECK(xt::allclose(r, xt::xarray<float>(xt::exp(a) * b - a), 1e-5, 1e-6));
        }
        {
            const auto a = testing::random_array<double>(shape);
            auto f = xtrace::function([](auto x) { return x * x + 1.0; });
            const auto r = on_every_count(f, a);
            CHECK((r == xt::xarray<double>(a * a + 1.0)));
        }
        {
            const auto a = testing::random_array<std::int32_t>(shape, -50, 50);
            const auto b = testing::random_array<std::int64_t>(small, -50, 50);
            auto f =
                xtrace::function([](auto x, auto y) { return xtrace::cast<std::int64_t>(x) * y; });
            const auto r = on_every_count(f, a, b);
            CHECK((r == xt::xarray<std::int64_t>(xt::cast<std::int64_t>(a) * b)));
        }
        {
            const auto a = testing::random_array<bool>(shape);
            const auto b = testing::random_array<bool>(small);
            auto f = xtrace::function([](auto x, auto y) { return x & !y; });
            const auto r = on_every_count(f, a, b);
            // (xtensor 0.26's bool & under XTENSOR_USE_XSIMD does not compile: vectorised by hand)
            const auto and_not = xt::vectorize([](bool p, bool q) { return p && !q; });
            CHECK((r == xt::xarray<bool>(and_not(a, b))));
        }
        if (shape.size() >= 2) { // a transposed view: the region gathers its blocks
            const auto a = testing::random_array<float>(shape);
            const xt::xarray<float> t = xt::transpose(a);
            auto f = xtrace::function([](auto x) { return x * 3.f - 1.f; });
            const auto r = on_every_count(f, xt::transpose(a));
            CHECK(xt::allclose(r, xt::xarray<float>(t * 3.f - 1.f)));
        }
    }
}

TEST_CASE("reductions fed by elementwise work: partials joined in chunk order") {
    const interp::chunk_floor_scope floor(11);
    for (int trial = 0; trial < 20; ++trial) {
        const std::size_t rows = std::uniform_int_distribution<std::size_t>(0, 90)(testing::rng());
        const std::size_t cols = std::uniform_int_distribution<std::size_t>(1, 70)(testing::rng());
        INFO(rows << " x " << cols);
        const auto a = testing::random_array<float>({rows, cols});
        const auto b = testing::random_array<float>({rows, cols});
        auto whole =
            xtrace::function([](auto x, auto y) { return xtrace::sum((x - y) * (x - y)); });
        auto by_row = xtrace::function([](auto x) { return xtrace::max(xtrace::exp(x), {1}); });
        auto by_column = xtrace::function([](auto x) { return xtrace::sum(x * 2.f, {0}); });
        auto mean_int = xtrace::function([](auto x) { return xtrace::mean(x * 3, {1}); });
        // xtensor's reducers offset a null pointer on empty arrays (UBSan): the reference
        // results are summed here.
        double squares = 0;
        std::vector<double> columns(cols, 0.0);
        for (std::size_t i = 0; i < rows; ++i)
            for (std::size_t j = 0; j < cols; ++j) {
                squares += double(a(i, j) - b(i, j)) * double(a(i, j) - b(i, j));
                columns[j] += 2.0 * a(i, j);
            }
        const auto s = on_every_count(whole, a, b);
        CHECK(s() == Approx(squares).epsilon(1e-4).margin(1e-3));
        const auto by_columns = on_every_count(by_column, a);
        REQUIRE(by_columns.size() == cols);
        for (std::size_t j = 0; j < cols; ++j)
            CHECK(by_columns(j) == Approx(columns[j]).epsilon(1e-4).margin(1e-4));
        const auto maxima = on_every_count(by_row, a);
        REQUIRE(maxima.size() == rows);
        if (rows > 0)
            CHECK(xt::allclose(maxima, xt::xarray<float>(xt::amax(xt::exp(a), {1}))));
        const auto ints = testing::random_array<std::int32_t>({rows, cols}, -9, 9);
        const auto m = on_every_count(mean_int, ints);
        REQUIRE(m.size() == rows);
        for (std::size_t i = 0; i < rows; ++i) {
            std::int32_t s = 0;
            for (std::size_t j = 0; j < cols; ++j)
                s += 3 * ints(i, j);
            CHECK(m(i) == s / static_cast<std::int32_t>(cols));
        }
    }
}

TEST_CASE("softmax past the threshold splits and gives the same bits on every thread count") {
    const auto x = testing::random_array<float>({300, 257});
    auto f = xtrace::function([](auto v) { return xtrace::softmax(v, 1); },
                              testing::quiet({.static_fusion = false}));
    const auto r = on_every_count(f, x);
    const xt::xarray<float> top = xt::amax(x, {1}, xt::keep_dims);
    const xt::xarray<float> e = xt::exp(x - top);
    const xt::xarray<float> total = xt::sum(e, {1}, xt::keep_dims);
    CHECK(xt::allclose(r, xt::xarray<float>(e / total), 1e-5, 1e-7));
}

TEST_CASE("matmul by row panels: every element the bits of the unsplit product") {
    for (int trial = 0; trial < 12; ++trial) {
        auto dim = [](int lo, int hi) {
            return static_cast<std::size_t>(
                std::uniform_int_distribution<int>(lo, hi)(testing::rng()));
        };
        const std::size_t batch = dim(1, 3), m = dim(1, 70), k = dim(0, 40), n = dim(1, 45);
        INFO(batch << " x " << m << " x " << k << " x " << n);
        const auto a = testing::random_array<float>({batch, m, k});
        const auto b = testing::random_array<float>({k, n});
        auto f = xtrace::function([](auto x, auto y) { return xtrace::matmul(x, y); });
        const auto whole = on_threads(1, [&] { return f(a, b); });
        const interp::chunk_floor_scope floor(7);
        const auto split = on_every_count(f, a, b);
#if !defined(XTRACE_USE_BLAS)
        CHECK(same_bits(split, whole));
#endif
        xt::xarray<float> expect = xt::zeros<float>({batch, m, n});
        for (std::size_t t = 0; t < batch; ++t)
            for (std::size_t i = 0; i < m; ++i)
                for (std::size_t j = 0; j < n; ++j)
                    for (std::size_t p = 0; p < k; ++p)
                        expect(t, i, j) += a(t, i, p) * b(p, j);
        CHECK(xt::allclose(split, expect, 1e-4, 1e-4));
        const auto ints = testing::random_array<std::int64_t>({batch, m, k}, -5, 5);
        const auto ib = testing::random_array<std::int64_t>({k, n}, -5, 5);
        const auto ir = on_every_count(f, ints, ib);
        for (std::size_t t = 0; t < batch; ++t)
            for (std::size_t i = 0; i < m; ++i)
                for (std::size_t j = 0; j < n; ++j) {
                    std::int64_t s = 0;
                    for (std::size_t p = 0; p < k; ++p)
                        s += ints(t, i, p) * ib(p, j);
                    CHECK(ir(t, i, j) == s);
                }
    }
}

TEST_CASE("reductions run as steps of their own split along the outermost kept dim") {
    const interp::chunk_floor_scope floor(3);
    for (int trial = 0; trial < 20; ++trial) {
        const auto shape = testing::random_shape(4);
        if (shape.size() < 2)
            continue;
        INFO(testing::shape_text(shape));
        const auto a = testing::random_array<double>(shape);
        // A reduction of a transposed argument reads it strided: no region feeds it.
        auto f = xtrace::function([](auto x) { return xtrace::sum(xtrace::transpose(x), {0}); });
        const auto r = on_every_count(f, a);
        const xt::xarray<double> t = xt::transpose(a);
        CHECK(xt::allclose(r, xt::xarray<double>(xt::sum(t, {0}))));
        auto g = xtrace::function([](auto x) { return xtrace::min(xtrace::transpose(x), {-1}); });
        CHECK((on_every_count(g, a) == xt::xarray<double>(xt::amin(t, {shape.size() - 1}))));
    }
}

// The README's example of a capped function.
auto serial = xtrace::function([](auto x) { return xtrace::exp(x) * 2.f; },
                               xtrace::options{.max_threads = 1});

TEST_CASE("max_threads caps a function; every cap gives the same bits") {
    const auto big = testing::random_array<float>({(std::size_t(1) << 17) + 5});
    auto uncapped = xtrace::function([](auto x) { return xtrace::exp(x) * 2.f; });
    CHECK(same_bits(serial(big), uncapped(big)));
    CHECK(xt::allclose(serial(big), xt::xarray<float>(xt::exp(big) * 2.f)));

    const auto x = testing::random_array<float>({(std::size_t(1) << 16) + 7});
    auto body = [](auto v) { return xtrace::sum(xtrace::exp(v) - v); };
    auto free = xtrace::function(body);
    const auto expect = free(x);
    for (int cap : {1, 2, 3}) {
        INFO("max_threads " << cap);
        auto capped = xtrace::function(body, testing::quiet({.max_threads = cap}));
        CHECK(same_bits(capped(x), expect));
        auto concrete = capped.get_concrete_function(xtrace::spec<float>({-1}));
        CHECK(same_bits(concrete(x), expect));
        CHECK(interp::thread_cap() == 0); // the call's cap ends with the call
    }
}

TEST_CASE("concurrent callers share a function and get the serial bits") {
    const auto x = testing::random_array<float>({100000});
    const auto y = testing::random_array<float>({1024, 64});
    auto f = xtrace::function([](auto v) { return xtrace::tanh(v) * v + 1.f; });
    auto g = xtrace::function([](auto v) { return xtrace::softmax(v, 1); });
    const auto ef = on_threads(1, [&] { return f(x); });
    const auto eg = on_threads(1, [&] { return g(y); });
    std::vector<std::thread> callers;
    std::atomic<int> wrong{0};
    for (int t = 0; t < 8; ++t)
        callers.emplace_back([&] {
            for (int i = 0; i < 2; ++i)
                if (!same_bits(f(x), ef) || !same_bits(g(y), eg))
                    ++wrong;
        });
    for (auto& c : callers)
        c.join();
    CHECK(wrong == 0);
}
