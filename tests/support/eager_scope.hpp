#ifndef XTRACE_TESTS_SUPPORT_EAGER_SCOPE_HPP
#define XTRACE_TESTS_SUPPORT_EAGER_SCOPE_HPP

#include "testing.hpp"

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

/// f's results traced, then run eagerly (run_functions_eagerly(true)), as a std::pair.
template <class F, class... A>
auto traced_and_eager(const F& f, const A&... args) {
    auto traced = f(args...);
    eager_scope eager;
    auto eagerly = f(args...);
    return std::pair(traced, eagerly);
}

/// Calls f traced and eagerly on the same arguments and returns {traced, eager}. On the way it
/// checks that the block interpreter (static fusion off) agrees with the traced result, so that
/// both execution paths are covered wherever this helper is used.
template <class F, class... Args>
auto both_paths(const F& f, const Args&... args) {
    auto traced = f(args...);
    options o = f.opts();
    o.static_fusion = false;
    auto interpreted = xtrace::function(f.lambda(), o)(args...);
    auto agree = [](const auto& a, const auto& b) { CHECK(close(a, b, 4, 1e-5)); };
    if constexpr (requires { traced.dimension(); })
        agree(interpreted, traced);
    else
        [&]<std::size_t... K>(std::index_sequence<K...>) {
            (agree(std::get<K>(interpreted), std::get<K>(traced)), ...);
        }
    (std::make_index_sequence<std::tuple_size_v<decltype(traced)>>{});
    eager_scope eager;
    auto eager_result = f(args...);
    return std::make_pair(traced, eager_result);
}

} // namespace xtrace::testing

#endif
