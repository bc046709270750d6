#ifndef XTRACE_FUNCTION_RUN_EAGERLY_HPP
#define XTRACE_FUNCTION_RUN_EAGERLY_HPP

#include <atomic>

namespace xtrace {

namespace function_detail {
inline std::atomic<bool>& run_eagerly_flag() noexcept {
    static std::atomic<bool> flag{false};
    return flag;
}
} // namespace function_detail

/// When on, every traced function runs its lambda eagerly on xtensor values (for debugging),
/// each call keeping a tape of its ops so that gradients work there too (eager/tape.hpp).
inline void run_functions_eagerly(bool on) noexcept {
    function_detail::run_eagerly_flag().store(on, std::memory_order_relaxed);
}

/// Whether traced functions currently run eagerly.
inline bool functions_run_eagerly() noexcept {
    return function_detail::run_eagerly_flag().load(std::memory_order_relaxed);
}

} // namespace xtrace

#endif
