#ifndef XTRACE_CONFIG_HPP
#define XTRACE_CONFIG_HPP

/// Library version; CMake parses these three lines.
#define XTRACE_VERSION_MAJOR 0
#define XTRACE_VERSION_MINOR 1
#define XTRACE_VERSION_PATCH 0

/// Highest tensor rank the interpreter accepts (argument and intermediate tensors).
#ifndef XTRACE_MAX_RANK
#define XTRACE_MAX_RANK 16
#endif

/// Batches a statically compiled kernel computes side by side, so that the core overlaps their
/// chains of ops.
#ifndef XTRACE_STATIC_FUSION_UNROLL
#define XTRACE_STATIC_FUSION_UNROLL 4
#endif

/// Largest expression (in nodes) compiled into one SIMD loop from its type (static fusion);
/// larger ones run on the block interpreter. Each node of a compiled kernel costs compile time.
#ifndef XTRACE_STATIC_FUSION_MAX_NODES
#define XTRACE_STATIC_FUSION_MAX_NODES 32
#endif

/// Separate compilation: define XTRACE_SEPARATE_COMPILATION in every translation unit and
/// include <xtrace/src.hpp> in exactly one; the runtime (signature cache, planner, interpreter,
/// trace recording) is then compiled there once instead of in every translation unit that calls
/// a traced function. Without it xtrace is header-only.
#if defined(XTRACE_SEPARATE_COMPILATION)
#define XTRACE_DECL
#else
#define XTRACE_DECL inline
#endif

/// Keeps a function out of its callers: an eager op stays one call in the lambda that uses it,
/// so that a long lambda compiles in time proportional to its length.
#if defined(_MSC_VER)
#define XTRACE_NOINLINE __declspec(noinline)
#else
#define XTRACE_NOINLINE [[gnu::noinline]]
#endif

/// Puts a function into its caller: a loop over a fused piece's batches stays in the kernel whose
/// leaf table it reads, so the compiler can tell that stores into the output leave the table be.
#if defined(_MSC_VER)
#define XTRACE_INLINE __forceinline
#else
#define XTRACE_INLINE [[gnu::always_inline]] inline
#endif

/// Puts an expression tree's evaluation into the kernel that runs it, so that the trees of the
/// batches a kernel computes side by side are scheduled together. Unoptimised builds (the
/// sanitizer runs) leave the calls be: inlining there only costs compile time.
#if defined(__GNUC__) && defined(__OPTIMIZE__)
#define XTRACE_TREE_INLINE [[gnu::always_inline]] inline
#define XTRACE_LAMBDA_INLINE __attribute__((always_inline))
#else
#define XTRACE_TREE_INLINE inline
#define XTRACE_LAMBDA_INLINE
#endif

// Whether this translation unit compiles the runtime's out-of-line functions: always when
// header-only, else only in the one that includes <xtrace/src.hpp>.
#if !defined(XTRACE_SEPARATE_COMPILATION) || defined(XTRACE_COMPILING_RUNTIME)
#define XTRACE_DEFINE_RUNTIME 1
#else
#define XTRACE_DEFINE_RUNTIME 0
#endif

#endif
