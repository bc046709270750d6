#ifndef XTRACE_SRC_HPP
#define XTRACE_SRC_HPP

/// The runtime, compiled: include this header in exactly one translation unit of a program built
/// with XTRACE_SEPARATE_COMPILATION defined (see config.hpp).

#if !defined(XTRACE_SEPARATE_COMPILATION)
#error                                                                                             \
    "<xtrace/src.hpp> compiles xtrace's runtime once for a program built with XTRACE_SEPARATE_COMPILATION; define it in every translation unit, or drop this include to use xtrace header-only"
#endif
#if defined(XTRACE_CONFIG_HPP)
#error "<xtrace/src.hpp> must be included before any other xtrace header in its translation unit"
#endif

#define XTRACE_COMPILING_RUNTIME
#include "xtrace.hpp"

#endif
