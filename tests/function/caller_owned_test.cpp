// Results written into memory the caller owns (call_into): the same values as a call, resized
// only when the shape changes, no heap allocation on a warm call, arguments that are also
// outputs, several results, eager mode.

#include "support/allocation_counter.hpp"
#include "support/eager_scope.hpp"
#include "support/testing.hpp"
#include <xtrace/plan/row_tiles.hpp>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

// xtrace's headers keep system macros out of the files that include them: <sys/mman.h>'s
// MAP_TYPE broke ONNX's parser.h, which names an enumerator so.
#if defined(MAP_TYPE) || defined(MADV_HUGEPAGE)
#error "an xtrace header included <sys/mman.h>"
#endif

using namespace xtrace::testing;

namespace {

template <class T>
bool same(const xt::xarray<T>& a, const xt::xarray<T>& b) {
    return a.shape() == b.shape() && a == b;
}

auto gelu = [](auto x) {
    return 0.5f * x * (1.f + xtrace::tanh(0.7978845608f * (x + 0.044715f * x * x * x)));
};

} // namespace

TEST_CASE("call_into writes what a call returns, into the caller's array") {
    for (bool fusion : {true, false}) {
        auto f = xtrace::function(gelu, quiet({.static_fusion = fusion}));
        for (std::size_t n : edge_sizes()) {
            const xt::xarray<float> x = random_array<float>({n});
            xt::xarray<float> out;
            f.call_into(out, x);
            CHECK(same(out, f(x)));
        }
        const xt::xarray<float> x = random_array<float>({3, 17});
        xt::xarray<float> out = xt::xarray<float>::from_shape({3, 17});
        const float* buffer = out.data();
        f.call_into(out, x);
        CHECK(out.data() == buffer); // the right shape: written in place
        CHECK(same(out, f(x)));
    }
}

TEST_CASE("a warm call_into makes no heap allocation") {
    auto fused = xtrace::function(gelu, quiet());
    auto interpreted = xtrace::function(gelu, quiet({.static_fusion = false}));
    auto reduced = xtrace::function(
        [](auto x, auto y) { return xtrace::softmax(xtrace::matmul(x, y)) + xtrace::sum(x); },
        quiet());
    const xt::xarray<float> x = random_array<float>({1024});
    const xt::xarray<float> a = random_array<float>({4, 3}), b = random_array<float>({3, 5});
    xt::xarray<float> y = xt::xarray<float>::from_shape({1024});
    xt::xarray<float> z = xt::xarray<float>::from_shape({4, 5});
    for (int warm = 0; warm < 2; ++warm) {
        fused.call_into(y, x);
        interpreted.call_into(y, x);
        reduced.call_into(z, a, b);
    }
    CHECK(allocations_of([&] { fused.call_into(y, x); }) == 0);
    CHECK(allocations_of([&] { interpreted.call_into(y, x); }) == 0);
    CHECK(allocations_of([&] { reduced.call_into(z, a, b); }) == 0);
#ifdef XTENSOR_USE_XSIMD
    const int result_buffers = 0; // xsimd's aligned allocator does not call operator new
#else
    const int result_buffers = 1;
#endif
    CHECK(allocations_of([&] { auto r = fused(x); }) == result_buffers);
    CHECK(same(z, reduced(a, b)));
}

TEST_CASE("a warm call_into of a plan run in row tiles makes no heap allocation") {
    // Softmax over rows of a tile budget's worth of rows and more: the plan runs in row tiles,
    // each tile's arguments and outputs moved to its first row.
    const xtrace::plan::row_tile_scope tiles(4096);
    auto f = xtrace::function([](auto x) { return xtrace::softmax(x, 1); }, quiet());
    const xt::xarray<float> x = random_array<float>({64, 100});
    xt::xarray<float> y = xt::xarray<float>::from_shape({64, 100});
    for (int warm = 0; warm < 2; ++warm)
        f.call_into(y, x);
    const std::string plan = f.get_concrete_function(xtrace::spec<float>({64, 100})).plan_text();
    INFO(plan);
    CHECK(plan.find("runs in tiles of") != std::string::npos);
    CHECK(allocations_of([&] { f.call_into(y, x); }) == 0);
    xt::xarray<float> eagerly;
    {
        const eager_scope eager;
        eagerly = f(x);
    }
    CHECK(close(y, eagerly, 8, 1e-6));
}

TEST_CASE("call_into resizes an output of another shape, and handles outputs that are arguments") {
    auto f = xtrace::function([](auto x) { return xtrace::transpose(x) * 2.f; }, quiet());
    const xt::xarray<float> x = random_array<float>({2, 3});
    xt::xarray<float> out = xt::xarray<float>::from_shape({5});
    f.call_into(out, x);
    CHECK(same(out, xt::xarray<float>(xt::transpose(x) * 2.f)));
    // x = f(x): the transpose reads elements the result would overwrite.
    xt::xarray<float> y = random_array<float>({3, 3});
    const xt::xarray<float> expected = xt::transpose(y) * 2.f;
    f.call_into(y, y);
    CHECK(same(y, expected));
}

TEST_CASE("several results, through std::tie; and eager mode") {
    auto f =
        xtrace::function([](auto x) { return std::make_tuple(x + 1.0, xtrace::sum(x)); }, quiet());
    const xt::xarray<double> x = random_array<double>({4});
    xt::xarray<double> a, s;
    f.call_into(std::tie(a, s), x);
    const auto [ea, es] = f(x);
    CHECK(same(a, ea));
    CHECK(same(s, es));
    eager_scope eager;
    xt::xarray<double> b, t;
    f.call_into(std::tie(b, t), x);
    CHECK(same(b, ea));
    CHECK(same(t, es));
}

#if defined(__linux__)
namespace {

// The VmFlags line of the mapping in /proc/self/smaps that holds `p`: "hg" marks a range the
// process asked to back with huge pages.
std::string vm_flags_at(const void* p) {
    std::ifstream smaps("/proc/self/smaps");
    const auto at = reinterpret_cast<std::uintptr_t>(p);
    bool inside = false;
    for (std::string line; std::getline(smaps, line);) {
        unsigned long begin = 0, end = 0;
        if (std::sscanf(line.c_str(), "%lx-%lx ", &begin, &end) == 2 &&
            line.find(':') > line.find(' '))
            inside = begin <= at && at < end;
        else if (inside && line.rfind("VmFlags:", 0) == 0)
            return line;
    }
    return {};
}

// An address in a's buffer past its first 2 MiB boundary: inside the part that can be huge.
template <class T>
const void* inside_huge_part(const xt::xarray<T>& a) {
    const auto p = reinterpret_cast<std::uintptr_t>(a.data());
    return reinterpret_cast<const void*>(((p >> 21) + 1) << 21);
}

} // namespace

TEST_CASE("a result of 4 MiB or more asks for huge pages, and its values do not change") {
    if (!std::filesystem::exists("/sys/kernel/mm/transparent_hugepage")) {
        WARN("this kernel has no transparent huge pages: not checked");
        return;
    }
    const std::size_t n = std::size_t(3) << 20; // 12 MiB of floats
    const xt::xarray<float> x = random_array<float>({n});
    for (bool fusion : {true, false}) {
        auto f = xtrace::function([](auto v) { return v * 2.f + 1.f; },
                                  quiet({.static_fusion = fusion}));
        const xt::xarray<float> fresh = f(x);
        xt::xarray<float> into;
        f.call_into(into, x); // resized from empty: fresh memory too
        for (const xt::xarray<float>* r : {&fresh, static_cast<const xt::xarray<float>*>(&into)}) {
            REQUIRE(r->size() == n);
            CHECK(vm_flags_at(inside_huge_part(*r)).find(" hg") != std::string::npos);
            std::size_t wrong = 0;
            for (std::size_t i = 0; i < n; ++i)
                wrong += (*r)(i) != x(i) * 2.f + 1.f;
            CHECK(wrong == 0);
        }
    }
}
#endif
