// One loaded model called from several threads at once, on shapes that share plans and shapes
// that need new ones (lowered per shape): every result right, the plan cache consistent.
// Also run under ThreadSanitizer (scripts/test.sh).

#include "onnx/support.hpp"

#include <atomic>
#include <thread>

using namespace xtrace::testing;

TEST_CASE("a loaded model runs concurrently, planning and lowering as calls come") {
    const auto m = xtrace::onnx::load(std::string(XTRACE_ONNX_TEST_DATA) +
                                      "/norm_softmax_opset17.onnx"); // lowered per batch size
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < 20; ++i) {
                const std::size_t batch = 1 + static_cast<std::size_t>((t + i) % 3);
                const xt::xarray<float> x =
                    xt::ones<float>({batch, std::size_t(2), std::size_t(4)});
                const auto out = m(x);
                const auto& probs = out[0].as<float>();
                double total = 0;
                for (float p : probs)
                    total += p;
                if (probs.shape()[0] != batch || std::abs(total - double(batch)) > 1e-4)
                    ++wrong;
            }
        });
    for (auto& th : threads)
        th.join();
    CHECK(wrong == 0);
    CHECK(m.stats().calls == 80);
    CHECK(m.cache_size() == 3);
}
