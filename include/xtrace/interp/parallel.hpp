#ifndef XTRACE_INTERP_PARALLEL_HPP
#define XTRACE_INTERP_PARALLEL_HPP

// How the interpreter splits work across threads. Work is cut into chunks whose boundaries
// depend only on its size (never on the thread count), and whatever the chunks produce is
// combined in chunk order: results are bit-identical on 1, 2 or 8 threads, and with or
// without oneTBB. Below min_chunk_elements() elements a step is one chunk and nothing is
// spawned (the threshold is measured in the README's "Threads" section).

#include "thread_cap.hpp"

#include <algorithm>
#include <cstddef>

#if defined(XTRACE_USE_TBB)
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>
#include <oneapi/tbb/task_arena.h>

#include <map>
#include <memory>
#include <mutex>
#endif

namespace xtrace::interp {

/// Fewest elements of a chunk by default: at 2^15 floats a chunk is ~10 µs of GELU, well over
/// the cost of handing it to another thread.
inline constexpr std::size_t default_min_chunk_elements = std::size_t(1) << 15;

/// Most chunks a step is cut into (bounds the partial results a reduction combines).
inline constexpr std::size_t max_chunks = 64;

/// The calling thread's chunk floor: default_min_chunk_elements unless a chunk_floor_scope
/// lowers it (tests do, to split small tensors).
inline std::size_t& min_chunk_elements() noexcept {
    thread_local std::size_t floor = default_min_chunk_elements;
    return floor;
}

/// Sets the calling thread's chunk floor for the scope's lifetime.
class chunk_floor_scope {
public:
    explicit chunk_floor_scope(std::size_t elements) noexcept : saved_(min_chunk_elements()) {
        min_chunk_elements() = std::max<std::size_t>(1, elements);
    }
    ~chunk_floor_scope() { min_chunk_elements() = saved_; }
    chunk_floor_scope(const chunk_floor_scope&) = delete;
    chunk_floor_scope& operator=(const chunk_floor_scope&) = delete;

private:
    std::size_t saved_;
};

/// Elements per chunk for `size` elements processed in blocks of `block`: at least the floor,
/// at most max_chunks chunks, and whole blocks (so block boundaries stay where one chunk would
/// put them) unless the floor is below a block.
inline std::size_t chunk_elements(std::size_t size, std::size_t block) noexcept {
    const std::size_t floor = min_chunk_elements();
    if (size <= floor) // one chunk: the common small call pays no division
        return std::max<std::size_t>(size, 1);
    std::size_t chunk = std::max(floor, (size + max_chunks - 1) / max_chunks);
    if (block > 0 && floor >= block)
        chunk = (chunk + block - 1) / block * block;
    return std::max<std::size_t>(chunk, 1);
}

/// Chunks of `chunk` elements covering `size`.
inline std::size_t chunk_count(std::size_t size, std::size_t chunk) noexcept {
    return size <= chunk ? (size > 0 ? 1 : 0) : (size + chunk - 1) / chunk;
}

namespace detail {

#if defined(XTRACE_USE_TBB)
// One arena per capped thread count, shared by every function with that cap.
inline oneapi::tbb::task_arena& arena_of(int threads) {
    static std::mutex mutex;
    static std::map<int, std::unique_ptr<oneapi::tbb::task_arena>> arenas;
    const std::lock_guard lock(mutex);
    auto& a = arenas[threads];
    if (!a)
        a = std::make_unique<oneapi::tbb::task_arena>(threads);
    return *a;
}

// Whether the cap asks for an arena of its own (fewer threads than the caller's arena).
inline bool capped_arena() {
    const int cap = thread_cap();
    return cap > 1 && cap < oneapi::tbb::this_task_arena::max_concurrency();
}
#endif

} // namespace detail

/// How many worker slots for_chunks may hand its body: each slot is used by one thread at a
/// time, so per-slot scratch needs no lock.
inline std::size_t worker_slots() {
#if defined(XTRACE_USE_TBB)
    const int cap = thread_cap();
    if (cap == 1)
        return 1;
    if (detail::capped_arena())
        return static_cast<std::size_t>(cap);
    return static_cast<std::size_t>(oneapi::tbb::this_task_arena::max_concurrency());
#else
    return 1;
#endif
}

/// Runs body(chunk, slot) for every chunk in [0, count), slot < worker_slots(): on the
/// caller's task arena (within its limits and any tbb::global_control), on an arena of
/// thread_cap() threads when the cap is below that, or serially (cap 1, one chunk, no TBB).
template <class Body>
void for_chunks(std::size_t count, Body&& body) {
#if defined(XTRACE_USE_TBB)
    if (count > 1 && thread_cap() != 1) {
        auto loop = [&] {
            // One task per chunk: chunks are already coarse, and at most max_chunks.
            oneapi::tbb::parallel_for(
                oneapi::tbb::blocked_range<std::size_t>(0, count, 1),
                [&](const oneapi::tbb::blocked_range<std::size_t>& range) {
                    const int slot = oneapi::tbb::this_task_arena::current_thread_index();
                    for (std::size_t c = range.begin(); c != range.end(); ++c)
                        body(c, static_cast<std::size_t>(slot < 0 ? 0 : slot));
                },
                oneapi::tbb::simple_partitioner());
        };
        if (detail::capped_arena())
            detail::arena_of(thread_cap()).execute(loop);
        else
            loop();
        return;
    }
#endif
    for (std::size_t c = 0; c < count; ++c)
        body(c, std::size_t(0));
}

} // namespace xtrace::interp

#endif
