// Variables and control flow under concurrent calls: each read and each assignment is atomic
// with respect to the others, and cond / while_loop graphs run concurrently.

#include "support/testing.hpp"

#include <atomic>
#include <thread>

using namespace xtrace::testing;

TEST_CASE("concurrent calls read whole values while another thread assigns") {
    // Every value assigned has all elements equal; a read that saw half of an assignment would
    // not.
    xtrace::variable<double> v(xt::xarray<double>(xt::zeros<double>({4096})));
    auto spread = xtrace::function(
        [&](auto x) {
            auto r = v.read();
            return xtrace::max(r) - xtrace::min(r) + x * 0.0;
        },
        quiet());
    auto set = xtrace::function(
        [&](auto x) {
            v.assign(xtrace::broadcast_to(x, {4096}));
            return x;
        },
        quiet());
    std::atomic<bool> done{false};
    std::atomic<int> torn{0};
    std::vector<std::thread> readers;
    for (int t = 0; t < 3; ++t)
        readers.emplace_back([&] {
            const xt::xarray<double> zero = 0.0;
            while (!done.load())
                if (spread(zero)() != 0.0)
                    torn.fetch_add(1);
        });
    for (int i = 0; i < 2000; ++i)
        set(xt::xarray<double>(static_cast<double>(i)));
    done = true;
    for (auto& t : readers)
        t.join();
    CHECK(torn.load() == 0);
    CHECK(v.value()(17) == 1999.0);
}

TEST_CASE("cond and while_loop graphs run concurrently with right results") {
    auto collatz_steps = xtrace::function(
        [](auto n) {
            auto steps = xtrace::cast<std::int64_t>(n * 0);
            auto [last, count] = xtrace::while_loop(
                [](auto k, auto) { return k > 1; },
                [](auto k, auto c) {
                    auto next = xtrace::cond(
                        k - (k / 2) * 2 == 0, [&] { return k / 2; }, [&] { return k * 3 + 1; });
                    return std::tuple(next, c + 1);
                },
                n, steps);
            return count + last * 0;
        },
        quiet());
    auto reference = [](std::int64_t n) {
        std::int64_t c = 0;
        for (; n > 1; ++c)
            n = n % 2 == 0 ? n / 2 : 3 * n + 1;
        return c;
    };
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            for (std::int64_t i = 1; i < 300; ++i) {
                const std::int64_t n = i * 4 + t;
                if (collatz_steps(xt::xarray<std::int64_t>(n))() != reference(n))
                    wrong.fetch_add(1);
            }
        });
    for (auto& t : threads)
        t.join();
    CHECK(wrong.load() == 0);
    CHECK(collatz_steps.tracing_count() == 1);
}
