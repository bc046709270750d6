// Many threads calling one traced function: each signature traced once, the lambda never traced
// concurrently with itself, cached graphs run concurrently, every result right.

#include "support/testing.hpp"

#include <atomic>
#include <thread>

using namespace xtrace::testing;

TEST_CASE("8 threads, mixed shapes, thousands of calls") {
    std::atomic<int> tracing_now{0}, overlapped{0}, traces{0};
    auto f = xtrace::function(
        [&](auto x, auto y) {
            if (tracing_now.fetch_add(1) != 0)
                overlapped.fetch_add(1);
            traces.fetch_add(1);
            std::this_thread::sleep_for(std::chrono::milliseconds(2)); // widen the race window
            tracing_now.fetch_sub(1);
            return xtrace::tanh(x) * y + 1.f;
        },
        quiet());

    constexpr std::size_t shapes = 6;
    std::vector<xt::xarray<float>> xs, ys, expected;
    for (std::size_t s = 0; s < shapes; ++s) {
        xs.push_back(random_array<float>({s + 1, 5}));
        ys.push_back(random_array<float>({5}));
        expected.push_back(xt::tanh(xs.back()) * ys.back() + 1.f);
    }
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < 500; ++i) {
                const std::size_t s = static_cast<std::size_t>(t + i) % shapes;
                if (!close(f(xs[s], ys[s]), expected[s], 4, 1e-5))
                    wrong.fetch_add(1);
            }
        });
    for (auto& th : threads)
        th.join();
    CHECK(wrong == 0);
    CHECK(overlapped == 0);
    CHECK(traces == static_cast<int>(shapes));
    CHECK(f.tracing_count() == shapes);
    const auto s = f.stats();
    CHECK(s.calls == 8 * 500);
    CHECK(s.cache_hits == 8 * 500 - shapes);
}

TEST_CASE("threads missing on the same new signature trace it once") {
    std::atomic<int> traces{0};
    auto f = xtrace::function(
        [&](auto x) {
            traces.fetch_add(1);
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
            return x * 2.f;
        },
        quiet());
    const xt::xarray<float> a = random_array<float>({64});
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
        threads.emplace_back([&] { f(a); });
    for (auto& th : threads)
        th.join();
    CHECK(traces == 1);
}

TEST_CASE("concurrent calls while another thread clears the cache and relaxed traces bind") {
    auto f = xtrace::function([](auto x) { return x + 1.f; },
                              quiet({.reduce_retracing = true, .max_cache_size = 2}));
    std::atomic<bool> stop{false};
    std::atomic<int> wrong{0};
    std::thread clearer([&] {
        while (!stop) {
            f.clear_cache();
            std::this_thread::yield();
        }
    });
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < 300; ++i) {
                const std::size_t n = static_cast<std::size_t>(1 + (t * 7 + i) % 11);
                const xt::xarray<float> a = xt::zeros<float>({n});
                const xt::xarray<float> r = f(a);
                if (r.size() != n || (n > 0 && r(n - 1) != 1.f))
                    wrong.fetch_add(1);
            }
        });
    for (auto& th : threads)
        th.join();
    stop = true;
    clearer.join();
    CHECK(wrong == 0);
}
