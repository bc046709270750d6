#ifndef XTRACE_INTERP_GATHER_HPP
#define XTRACE_INTERP_GATHER_HPP

// Reading a strided (transposed, sliced or broadcast) tensor into a contiguous block: runs along
// the innermost dim are copied (stride 1), filled (stride 0, a broadcast) or stepped.

#include "../config.hpp"
#include "../core/shape.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace xtrace::interp {

/// Row-major element strides of `shape`.
inline void contiguous_strides(const dim_t* shape, std::size_t rank, std::int64_t* strides) {
    std::int64_t s = 1;
    for (std::size_t d = rank; d-- > 0;) {
        strides[d] = s;
        s *= shape[d];
    }
}

namespace detail {
template <class E>
void gather_typed(const std::byte* data, const std::int64_t* strides, const dim_t* shape,
                  std::size_t rank, std::size_t start, std::size_t n, std::byte* out_bytes) {
    const E* src = reinterpret_cast<const E*>(data);
    E* out = reinterpret_cast<E*>(out_bytes);
    // One value (a scalar, or broadcast along every dim, as a constant is): a fill, where the
    // walk below would take a run per element of a shape whose innermost dim is 1.
    if (std::all_of(strides, strides + rank, [](std::int64_t s) { return s == 0; })) {
        std::fill_n(out, n, src[0]);
        return;
    }
    std::int64_t idx[XTRACE_MAX_RANK];
    std::int64_t offset = 0;
    std::size_t rest = start;
    for (std::size_t d = rank; d-- > 0;) {
        idx[d] = static_cast<std::int64_t>(rest % static_cast<std::size_t>(shape[d]));
        rest /= static_cast<std::size_t>(shape[d]);
        offset += idx[d] * strides[d];
    }
    const std::size_t last = rank - 1;
    const std::int64_t step = strides[last];
    while (n > 0) {
        const std::size_t run =
            std::min<std::size_t>(n, static_cast<std::size_t>(shape[last] - idx[last]));
        const E* p = src + offset;
        if (step == 1)
            std::memcpy(out, p, run * sizeof(E));
        else if (step == 0)
            std::fill_n(out, run, *p);
        else
            for (std::size_t i = 0; i < run; ++i)
                out[i] = p[static_cast<std::int64_t>(i) * step];
        out += run;
        n -= run;
        offset += static_cast<std::int64_t>(run) * step;
        idx[last] += static_cast<std::int64_t>(run);
        // Carry into the outer dims.
        for (std::size_t d = last; d > 0 && idx[d] == shape[d]; --d) {
            offset -= idx[d] * strides[d];
            idx[d] = 0;
            ++idx[d - 1];
            offset += strides[d - 1];
        }
    }
}
} // namespace detail

/// Copies elements [start, start + n) of the row-major walk over `shape` of the tensor at `data`
/// with element `strides` (0 where broadcast) into `out`, elements of `elem_size` bytes.
inline void gather(const std::byte* data, std::size_t elem_size, const std::int64_t* strides,
                   const dim_t* shape, std::size_t rank, std::size_t start, std::size_t n,
                   std::byte* out) {
    switch (elem_size) {
    case 1:
        detail::gather_typed<std::uint8_t>(data, strides, shape, rank, start, n, out);
        break;
    case 4:
        detail::gather_typed<std::uint32_t>(data, strides, shape, rank, start, n, out);
        break;
    default:
        detail::gather_typed<std::uint64_t>(data, strides, shape, rank, start, n, out);
        break;
    }
}

} // namespace xtrace::interp

#endif
