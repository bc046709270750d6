#ifndef XTRACE_FUNCTION_RETRACE_MONITOR_HPP
#define XTRACE_FUNCTION_RETRACE_MONITOR_HPP

// The frequent-retracing warning, as tf.function gives it: when `threshold` of a function's last
// `history` calls traced, say so with the reasons, at most `max_warnings` times per function.

#include "../config.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace xtrace::function_detail {

/// Watches one function's traces and warns when it retraces too often.
class retrace_monitor {
public:
    /// Calls looked back over.
    static constexpr std::uint64_t history = 10;
    /// Traces within `history` calls that warn.
    static constexpr std::size_t threshold = 5;
    /// Warnings per function at most.
    static constexpr int max_warnings = 2;

    /// Call number `call` traced for `reason`; warns through `on_warning` (std::cerr when
    /// empty) when it is the threshold-th trace within the last `history` calls. `name` names
    /// the function (empty: unnamed).
    void note(std::uint64_t call, const std::string& reason, const std::string& name,
              const std::function<void(std::string_view)>& on_warning);

private:
    std::mutex mutex_;
    std::array<std::uint64_t, threshold> recent_{}; // the calls of the last traces, a ring
    std::size_t traces_ = 0;
    std::vector<std::string> reasons_; // of the last `threshold` traces
    int warnings_ = 0;
};

} // namespace xtrace::function_detail

#if XTRACE_DEFINE_RUNTIME

#include <iostream>

namespace xtrace::function_detail {

XTRACE_DECL void retrace_monitor::note(std::uint64_t call, const std::string& reason,
                                       const std::string& name,
                                       const std::function<void(std::string_view)>& on_warning) {
    std::lock_guard lock(mutex_);
    recent_[traces_++ % threshold] = call;
    reasons_.push_back(reason);
    if (reasons_.size() > threshold)
        reasons_.erase(reasons_.begin());
    if (traces_ < threshold || warnings_ >= max_warnings)
        return;
    const std::uint64_t oldest = recent_[traces_ % threshold];
    if (call - oldest >= history)
        return;
    ++warnings_;
    std::string msg =
        "xtrace: " + (name.empty() ? std::string("a traced function") : "function '" + name + "'") +
        " traced " + std::to_string(threshold) + " times in its last " + std::to_string(history) +
        " calls (reasons:";
    for (const auto& r : reasons_)
        msg += " [" + r + "]";
    msg += "). Tracing is expensive; pass tensors of stable shapes, or use "
           "xtrace::options{.reduce_retracing = true} or an input_signature with -1 dims.";
    if (on_warning)
        on_warning(msg);
    else
        std::cerr << msg << '\n';
}

} // namespace xtrace::function_detail

#endif

#endif
