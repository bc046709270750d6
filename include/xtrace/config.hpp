#ifndef XTRACE_CONFIG_HPP
#define XTRACE_CONFIG_HPP

/// Library version; CMake parses these three lines.
#define XTRACE_VERSION_MAJOR 0
#define XTRACE_VERSION_MINOR 1
#define XTRACE_VERSION_PATCH 0

/// Highest tensor rank the interpreter accepts (argument and intermediate tensors).
#ifndef XTRACE_MAX_RANK
#define XTRACE_MAX_RANK 16
#endif

#endif
