#ifndef XTRACE_FUNCTION_STATS_HPP
#define XTRACE_FUNCTION_STATS_HPP

#include <chrono>
#include <cstdint>

namespace xtrace {

/// Counters of one traced function (or loaded model: a trace is then a lowering of its graph).
struct function_stats {
    std::uint64_t calls = 0;                 ///< calls through the traced path
    std::uint64_t cache_hits = 0;            ///< calls that found a trace
    std::uint64_t traces = 0;                ///< traces performed
    std::uint64_t evictions = 0;             ///< traces dropped by max_cache_size
    std::chrono::nanoseconds tracing_time{}; ///< spent running lambdas symbolically and planning
    std::chrono::nanoseconds running_time{}; ///< spent executing graphs
};

} // namespace xtrace

#endif
