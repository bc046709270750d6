#ifndef XTRACE_TESTS_SUPPORT_ALLOCATION_COUNTER_HPP
#define XTRACE_TESTS_SUPPORT_ALLOCATION_COUNTER_HPP

// Counts heap allocations: replaces the global operator new and delete, so include it in one
// translation unit of a test program only.

#include <cstdlib>
#include <new>

// The replacements below pair malloc with free, which GCC cannot see through once it inlines
// operator new into a caller.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace {
// Allocations made on this thread while `counting` is set.
thread_local bool counting = false;
thread_local long allocations = 0;
} // namespace

// Every form of operator new and delete is replaced, so that all of them pair malloc with free
// (Catch allocates with the nothrow form; a sanitizer's own forms would not match ours).
namespace {
void* counted_malloc(std::size_t n) noexcept {
    if (counting)
        ++allocations;
    return std::malloc(n ? n : 1);
}
} // namespace

void* operator new(std::size_t n) {
    if (void* p = counted_malloc(n))
        return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
    return ::operator new(n);
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    return counted_malloc(n);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
    return counted_malloc(n);
}
void operator delete(void* p) noexcept {
    std::free(p);
}
void operator delete[](void* p) noexcept {
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
    std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
    std::free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
    std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
    std::free(p);
}

namespace {
/// Heap allocations made on this thread while `f` runs.
template <class F>
long allocations_of(F&& f) {
    allocations = 0;
    counting = true;
    f();
    counting = false;
    return allocations;
}
} // namespace

#endif
