#ifndef XTRACE_PLAN_ARENA_HPP
#define XTRACE_PLAN_ARENA_HPP

// Scratch memory for one call: blocks of the fused regions and intermediate tensors. Each thread
// keeps its chunks, so a warm cache-hit call allocates nothing here; nested calls (a traced
// function run from inside another's host callback) stack on top.

#include <cstddef>
#include <limits>
#include <memory>
#include <new>
#include <vector>

namespace xtrace::plan {

/// Alignment of every scratch allocation (one cache line, enough for any SIMD width).
inline constexpr std::size_t scratch_alignment = 64;

/// A thread's scratch chunks and how much of them is in use.
class arena {
public:
    /// Where a later release() returns to.
    struct mark {
        std::size_t chunk, top;
    };

    /// The calling thread's arena.
    static arena& local() {
        thread_local arena a;
        return a;
    }

    mark position() const noexcept { return {current_, top_}; }

    /// `bytes` of scratch memory aligned to scratch_alignment, valid until release.
    std::byte* allocate(std::size_t bytes) {
        // Past half the address space no chunk size (a power of two) can hold it, and rounding
        // up would wrap: such a request is no allocation that could succeed.
        if (bytes > std::numeric_limits<std::size_t>::max() / 2)
            throw std::bad_alloc();
        bytes = (bytes + scratch_alignment - 1) / scratch_alignment * scratch_alignment;
        while (current_ < chunks_.size() && top_ + bytes > chunks_[current_].size) {
            ++current_;
            top_ = 0;
        }
        if (current_ == chunks_.size()) {
            std::size_t size = chunks_.empty() ? std::size_t(1) << 16 : chunks_.back().size * 2;
            while (size < bytes)
                size *= 2;
            chunks_.push_back(chunk{size});
        }
        std::byte* p = chunks_[current_].data.get() + top_;
        top_ += bytes;
        return p;
    }

    /// Frees everything allocated since `m`.
    void release(mark m) noexcept {
        current_ = m.chunk;
        top_ = m.top;
    }

private:
    struct aligned_delete {
        void operator()(std::byte* p) const noexcept {
            ::operator delete[](p, std::align_val_t(scratch_alignment));
        }
    };
    struct chunk {
        explicit chunk(std::size_t n)
            : size(n), data(static_cast<std::byte*>(
                           ::operator new[](n, std::align_val_t(scratch_alignment)))) {}
        std::size_t size;
        std::unique_ptr<std::byte[], aligned_delete> data;
    };

    std::vector<chunk> chunks_;
    std::size_t current_ = 0, top_ = 0;
};

/// Scratch for one scope: what it allocates is released when it ends.
class scratch_scope {
public:
    scratch_scope() : a_(arena::local()), m_(a_.position()) {}
    scratch_scope(const scratch_scope&) = delete;
    scratch_scope& operator=(const scratch_scope&) = delete;
    ~scratch_scope() { a_.release(m_); }

    /// Aligned scratch bytes.
    std::byte* allocate(std::size_t bytes) { return a_.allocate(bytes); }

private:
    arena& a_;
    arena::mark m_;
};

} // namespace xtrace::plan

#endif
