// interp::gather, which reads a strided or broadcast tensor into a block, against the element at
// each index computed one by one: every element size, random shapes (rank 0 and dims of 1
// included), strides, starts and counts, and tensors of one value (every stride 0).

#include "support/testing.hpp"

#include <xtrace/interp/gather.hpp>

using namespace xtrace::testing;

namespace {

template <class E>
void check_gather(bool one_value) {
    const std::vector<std::size_t> s = random_shape(4);
    std::vector<xtrace::dim_t> shape(s.begin(), s.end());
    std::size_t total = 1;
    for (auto d : s)
        total *= d;
    // Source strides: 0 (broadcast) or a random step; the source is big enough for any of them.
    std::vector<std::int64_t> strides(s.size());
    for (auto& st : strides)
        st = one_value ? 0 : std::uniform_int_distribution<std::int64_t>(0, 3)(rng());
    std::size_t reach = 1;
    for (std::size_t d = 0; d < s.size(); ++d)
        reach += static_cast<std::size_t>(strides[d]) * (s[d] - 1);
    std::vector<E> src(reach);
    for (std::size_t i = 0; i < reach; ++i)
        src[i] = static_cast<E>(i * 7 + 1);
    const std::size_t start = std::uniform_int_distribution<std::size_t>(0, total)(rng());
    const std::size_t n = std::uniform_int_distribution<std::size_t>(0, total - start)(rng());
    std::vector<E> out(n + 1, E(0));
    xtrace::interp::gather(reinterpret_cast<const std::byte*>(src.data()), sizeof(E),
                           strides.data(), shape.data(), shape.size(), start, n,
                           reinterpret_cast<std::byte*>(out.data()));
    INFO("shape " << shape_text(s) << ", start " << start << ", n " << n);
    for (std::size_t k = 0; k < n; ++k) {
        std::size_t rest = start + k;
        std::int64_t offset = 0;
        for (std::size_t d = s.size(); d-- > 0;) {
            offset += static_cast<std::int64_t>(rest % s[d]) * strides[d];
            rest /= s[d];
        }
        REQUIRE(out[k] == src[static_cast<std::size_t>(offset)]);
    }
    CHECK(out[n] == E(0)); // nothing written past the count
}

} // namespace

TEST_CASE("gather reads each element where its strides put it, and one value as a fill") {
    for (int round = 0; round < 200; ++round) {
        const bool one_value = round % 4 == 0;
        check_gather<std::uint8_t>(one_value);
        check_gather<std::uint32_t>(one_value);
        check_gather<std::uint64_t>(one_value);
    }
}
