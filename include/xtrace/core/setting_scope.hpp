#ifndef XTRACE_CORE_SETTING_SCOPE_HPP
#define XTRACE_CORE_SETTING_SCOPE_HPP

// A thread-local tuning setting (a function returning a reference to the calling thread's
// value) changed for a scope's lifetime: how tests plan small tensors the way large ones are.

#include <type_traits>

namespace xtrace {

/// Sets `Setting()` (the calling thread's value) for the scope's lifetime, then restores it.
template <auto Setting>
class setting_scope {
public:
    using value_type = std::remove_reference_t<decltype(Setting())>;

    explicit setting_scope(value_type value) noexcept : saved_(Setting()) { Setting() = value; }
    ~setting_scope() { Setting() = saved_; }
    setting_scope(const setting_scope&) = delete;
    setting_scope& operator=(const setting_scope&) = delete;

private:
    value_type saved_;
};

} // namespace xtrace

#endif
