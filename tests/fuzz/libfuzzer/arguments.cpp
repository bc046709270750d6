// libFuzzer target: argument shapes and strides from outside. The bytes choose each argument's
// rank, dims and element strides (negative, zero and gaps included), over memory that holds
// every element those strides reach; the traced result must match the eager one, and a bad
// signature must be a typed error.

#include <xtrace/xtrace.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

namespace {

// Bytes read one at a time; zeros once they run out.
struct reader {
    const std::uint8_t* p;
    std::size_t n;
    std::uint8_t next() {
        if (n == 0)
            return 0;
        --n;
        return *p++;
    }
};

// A strided argument over its own memory.
struct strided {
    std::vector<float> memory;
    std::vector<std::size_t> shape;
    std::vector<std::ptrdiff_t> strides;
    std::ptrdiff_t origin = 0; // where element 0 sits in `memory`

    explicit strided(reader& r) {
        const std::size_t rank = r.next() % 5;
        std::ptrdiff_t lo = 0, hi = 0;
        for (std::size_t d = 0; d < rank; ++d) {
            shape.push_back(r.next() % 5);
            strides.push_back(static_cast<std::int8_t>(r.next()) % 7);
        }
        for (std::size_t d = 0; d < rank; ++d) {
            const std::ptrdiff_t reach =
                static_cast<std::ptrdiff_t>(shape[d] ? shape[d] - 1 : 0) * strides[d];
            (reach < 0 ? lo : hi) += reach;
        }
        origin = -lo;
        memory.resize(static_cast<std::size_t>(hi - lo + 1));
        for (std::size_t i = 0; i < memory.size(); ++i)
            memory[i] = static_cast<float>(static_cast<std::int8_t>(r.next())) / 8.f;
    }

    auto view() {
        std::size_t count = 1;
        for (auto d : shape)
            count *= d;
        return xt::adapt(memory.data() + origin, count, xt::no_ownership(), shape, strides);
    }
};

bool same(const xt::xarray<float>& a, const xt::xarray<float>& b) {
    if (a.shape() != b.shape())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const float x = a.data()[i], y = b.data()[i];
        if (!(x == y || (x != x && y != y) || std::abs(x - y) <= 1e-4f * (1 + std::abs(x))))
            return false;
    }
    return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    reader r{data, size};
    strided a(r), b(r);
    static auto f = xtrace::function(
        [](auto x, auto y) {
            auto z = xtrace::exp(xtrace::minimum(x, 3.f)) * y - xtrace::abs(y);
            return std::make_tuple(z, xtrace::sum(z * z), xtrace::transpose(x));
        },
        xtrace::options{.on_warning = [](std::string_view) {}});
    std::tuple<xt::xarray<float>, xt::xarray<float>, xt::xarray<float>> traced, eager;
    bool traced_failed = false, eager_failed = false;
    try {
        traced = f(a.view(), b.view());
    } catch (const xtrace::shape_error&) {
        traced_failed = true;
    }
    xtrace::run_functions_eagerly(true);
    try {
        eager = f(a.view(), b.view());
    } catch (const xtrace::shape_error&) {
        eager_failed = true;
    }
    xtrace::run_functions_eagerly(false);
    if (traced_failed != eager_failed)
        std::abort();
    if (!traced_failed && !(same(std::get<0>(traced), std::get<0>(eager)) &&
                            std::get<1>(traced).shape() == std::get<1>(eager).shape() &&
                            same(std::get<2>(traced), std::get<2>(eager))))
        std::abort();
    return 0;
}
