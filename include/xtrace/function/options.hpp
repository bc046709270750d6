#ifndef XTRACE_FUNCTION_OPTIONS_HPP
#define XTRACE_FUNCTION_OPTIONS_HPP

#include "../core/spec.hpp"

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace xtrace {

/// How a traced function caches its traces (fields in this order, for designated initialisers).
struct options {
    /// On a new signature, trace a relaxed one (differing dims unknown) that later shapes reuse.
    bool reduce_retracing = false;
    /// Trace once for these specs (-1 = any size); calls that do not fit throw signature_error.
    std::optional<std::vector<tensor_spec>> input_signature{};
    /// Most traces kept; the least recently used goes first. 0 = unbounded.
    std::size_t max_cache_size = 0;
    /// Name used in messages.
    std::string name{};
    /// Where retracing warnings go; empty = one line on std::cerr.
    std::function<void(std::string_view)> on_warning{};
    /// Compile a purely elementwise graph into one SIMD loop from its expression type; false
    /// runs every graph through the block interpreter (to compare, or to debug).
    bool static_fusion = true;
    /// Most threads one call may use: 0 = as many as the caller's tbb::task_arena allows, 1 =
    /// serial. Results are the same bits for any value (without oneTBB every call is serial).
    int max_threads = 0;
};

} // namespace xtrace

#endif
