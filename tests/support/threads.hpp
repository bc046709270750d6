#ifndef XTRACE_TESTS_SUPPORT_THREADS_HPP
#define XTRACE_TESTS_SUPPORT_THREADS_HPP

// Runs test code on a given number of threads: 1 caps the calls (options::max_threads'
// mechanism); more runs it inside a oneTBB arena of that many threads, even on a machine with
// fewer cores. Without oneTBB every count runs serially.

#include <xtrace/interp/parallel.hpp>

#if defined(XTRACE_USE_TBB)
#include <oneapi/tbb/global_control.h>
#endif

namespace xtrace::testing {

/// f() run on `threads` threads; returns what f returns.
template <class F>
decltype(auto) on_threads(int threads, F&& f) {
    if (threads == 1) {
        const interp::thread_cap_scope cap(1);
        return f();
    }
#if defined(XTRACE_USE_TBB)
    // oneTBB caps its workers at the core count unless told otherwise.
    static const oneapi::tbb::global_control allow(
        oneapi::tbb::global_control::max_allowed_parallelism, 8);
    oneapi::tbb::task_arena* arena = &interp::detail::arena_of(threads);
    // The arena may run f on one of its own threads: the caller's chunk floor goes along.
    const std::size_t floor = interp::min_chunk_elements();
    return arena->execute([&]() -> decltype(auto) {
        const interp::chunk_floor_scope keep(floor);
        return f();
    });
#else
    return f();
#endif
}

} // namespace xtrace::testing

#endif
