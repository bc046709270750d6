#ifndef XTRACE_FUNCTION_HUGE_PAGES_HPP
#define XTRACE_FUNCTION_HUGE_PAGES_HPP

// A large result that a call allocates is fresh memory: the kernel maps it a 4 KiB page at a
// time as the kernels first write it, and at 2^24 floats those 16,385 faults cost several times
// the computation. On Linux with transparent huge pages in "madvise" mode (Debian's default),
// asking for huge pages on the buffer before it is written turns them into 32 faults of 2 MiB
// (numpy does the same for its large arrays). Elsewhere this is a no-op.
//
// A smaller block that glibc recycles from its heap is already mapped, and the hint on it
// changes nothing; when glibc hands it back to the kernel between calls (seen with
// XTENSOR_USE_XSIMD's allocator at 4 MiB), the hint halves the faults.

#include <cstddef>
#include <cstdint>

// madvise is declared here, as <sys/mman.h> declares it, because that header's macros (MAP_TYPE
// among them) would reach every file that includes xtrace and break others (ONNX's parser.h
// names an enumerator MAP_TYPE). The declaration is glibc's own (noexcept, as its __THROW), so
// the two agree in either order; other C libraries declare it differently and are left out. The
// advice's value is the same on these architectures.
#if defined(__linux__) && defined(__GLIBC__) &&                                                    \
    (defined(__x86_64__) || defined(__i386__) || defined(__aarch64__) || defined(__arm__) ||       \
     defined(__riscv) || defined(__powerpc64__))
#define XTRACE_HAS_MADVISE_HUGEPAGE 1
extern "C" int madvise(void* addr, std::size_t len, int advice) noexcept;
#endif

namespace xtrace::function_detail {

#if defined(XTRACE_HAS_MADVISE_HUGEPAGE)
/// Linux's MADV_HUGEPAGE.
inline constexpr int madvise_hugepage = 14;
#endif

/// Results at least this large ask for huge pages (numpy's threshold).
inline constexpr std::size_t huge_page_min_bytes = std::size_t(4) << 20;

/// Asks the kernel to back the 2 MiB-aligned part of [data, data + bytes) with huge pages, when
/// the buffer is at least huge_page_min_bytes; a hint, so a refusal changes nothing.
inline void advise_huge_pages(void* data, std::size_t bytes) noexcept {
#if defined(XTRACE_HAS_MADVISE_HUGEPAGE)
    if (bytes < huge_page_min_bytes || data == nullptr)
        return;
    constexpr std::uintptr_t huge = std::uintptr_t(1) << 21;
    const auto begin = (reinterpret_cast<std::uintptr_t>(data) + huge - 1) & ~(huge - 1);
    const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(huge - 1);
    if (end > begin)
        (void)::madvise(reinterpret_cast<void*>(begin), end - begin, madvise_hugepage);
#else
    (void)data;
    (void)bytes;
#endif
}

/// advise_huge_pages for an xtensor container's buffer.
template <class A>
void advise_huge_pages(A& a) noexcept {
    advise_huge_pages(static_cast<void*>(a.data()), a.size() * sizeof(typename A::value_type));
}

} // namespace xtrace::function_detail

#endif
