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
    /// Spent executing graphs. A traced function samples it: one call in timing_period (its
    /// first call included) is timed and counted that many times, since reading the clock twice
    /// costs more than running a small graph.
    std::chrono::nanoseconds running_time{};

    /// The sampling period of running_time.
    static constexpr std::uint32_t timing_period = 64;
};

} // namespace xtrace

#endif
