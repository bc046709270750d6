#ifndef XTRACE_EXT_XSIMD_HPP
#define XTRACE_EXT_XSIMD_HPP

// The one place that knows how xsimd versions differ. xtrace uses the batch API common to
// xsimd 8 and later; names that moved between versions get an alias here.

#include <xsimd/xsimd.hpp>

namespace xtrace::simd {

/// The SIMD batch of T for the architecture the code is compiled for.
template <class T>
using batch = xsimd::batch<T>;

} // namespace xtrace::simd

#endif
