#ifndef XTRACE_TESTS_SUPPORT_EAGER_SCOPE_HPP
#define XTRACE_TESTS_SUPPORT_EAGER_SCOPE_HPP

#include <xtrace/xtrace.hpp>

namespace xtrace::testing {

/// Runs functions eagerly for its lifetime, then restores the previous setting.
class eager_scope {
public:
    explicit eager_scope(bool on = true) : was_(functions_run_eagerly()) {
        run_functions_eagerly(on);
    }
    eager_scope(const eager_scope&) = delete;
    eager_scope& operator=(const eager_scope&) = delete;
    ~eager_scope() { run_functions_eagerly(was_); }

private:
    bool was_;
};

/// Calls f traced and eagerly on the same arguments; returns {traced, eager}.
template <class F, class... Args>
auto both_paths(const F& f, const Args&... args) {
    auto traced = f(args...);
    eager_scope eager;
    auto eager_result = f(args...);
    return std::make_pair(traced, eager_result);
}

} // namespace xtrace::testing

#endif
