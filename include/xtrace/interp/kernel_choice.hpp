#ifndef XTRACE_INTERP_KERNEL_CHOICE_HPP
#define XTRACE_INTERP_KERNEL_CHOICE_HPP

// The kernels an op records in its node when traced. Header-only, they are compiled from the
// op's type where it is used, so a program compiles only the kernels its graphs use. With
// XTRACE_SEPARATE_COMPILATION they are looked up in the runtime, which compiles every op's
// kernels once, so user translation units compile none. One naming scheme: `*_kernels<...>()`
// is what typed code calls; `*_kernels_for(op, dtype...)` is the runtime's lookup.

#include "../config.hpp"
#include "../core/dtype.hpp"
#include "../core/op.hpp"
#include "../graph/graph.hpp"

#if !defined(XTRACE_SEPARATE_COMPILATION) || XTRACE_DEFINE_RUNTIME
#include "blas.hpp"
#include "kernels.hpp"
#include "matmul.hpp"
#include "reduce.hpp"
#endif

namespace xtrace::interp {

/// The matmul kernel a build uses on T: the CBLAS backend with XTRACE_USE_BLAS (float and
/// double through gemm where it can), else the built-in one.
#if !defined(XTRACE_SEPARATE_COMPILATION) || XTRACE_DEFINE_RUNTIME
template <class T>
inline constexpr graph::matmul_fn matmul_kernel_used =
#if defined(XTRACE_USE_BLAS)
    &blas_matmul<T>;
#else
    &matmul_kernel<T>;
#endif
#endif

/// The runtime's kernels of elementwise `op` on operands of dtype `operand` (for where: the
/// branches') producing `result`; nullptr for a combination no op builds.
XTRACE_DECL const graph::kernel_set* elementwise_kernels_for(op_kind op, dtype operand,
                                                             dtype result);

/// The runtime's kernels of reduction `op` on dtype `type`; nullptr for bool.
XTRACE_DECL const graph::reduce_kernels* reduction_kernels_for(op_kind op, dtype type);

/// The runtime's matmul kernel on dtype `type`; nullptr for bool.
XTRACE_DECL graph::matmul_fn matmul_kernels_for(dtype type);

/// The kernels of elementwise Op on operands of T producing R.
template <class Op, class T, class R>
const graph::kernel_set* elementwise_kernels() {
#if defined(XTRACE_SEPARATE_COMPILATION)
    return elementwise_kernels_for(Op::kind, dtype_of_v<T>, dtype_of_v<R>);
#else
    return &kernels_of<Op, T, R>;
#endif
}

/// The kernels of reduction Op on T.
template <class Op, class T>
const graph::reduce_kernels* reduction_kernels() {
#if defined(XTRACE_SEPARATE_COMPILATION)
    return reduction_kernels_for(Op::kind, dtype_of_v<T>);
#else
    return &reduce_kernels_of<Op, T>;
#endif
}

/// The matmul kernel on T.
template <class T>
graph::matmul_fn matmul_kernels() {
#if defined(XTRACE_SEPARATE_COMPILATION)
    return matmul_kernels_for(dtype_of_v<T>);
#else
    return matmul_kernel_used<T>;
#endif
}

#if !defined(XTRACE_SEPARATE_COMPILATION) || XTRACE_DEFINE_RUNTIME

/// The kernels of reduction `op` on dtype `type` by a dispatch over every reduction and dtype
/// (nullptr for bool): what the runtime's lookup and the gradient recorder use. A template, so
/// that only code that calls it compiles every reduction's kernels.
template <class Tag = void>
const graph::reduce_kernels* reduction_kernels_of_kind(op_kind op, dtype type) {
    return visit_dtype(type, [&](auto tag) -> const graph::reduce_kernels* {
        using T = typename decltype(tag)::type;
        if constexpr (!std::is_same_v<T, bool>) {
            switch (op) {
#define XTRACE_X(name, domain)                                                                     \
    case op_kind::name:                                                                            \
        return &reduce_kernels_of<op::name, T>;
                XTRACE_REDUCTION_OPS(XTRACE_X)
#undef XTRACE_X
            default:
                break;
            }
        }
        return nullptr;
    });
}

/// The matmul kernel on dtype `type` by a dispatch over every dtype (nullptr for bool).
template <class Tag = void>
graph::matmul_fn matmul_kernel_of_type(dtype type) {
    return visit_dtype(type, [](auto tag) -> graph::matmul_fn {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, bool>)
            return nullptr;
        else
            return matmul_kernel_used<T>;
    });
}

#endif

} // namespace xtrace::interp

#if XTRACE_DEFINE_RUNTIME && defined(XTRACE_SEPARATE_COMPILATION)

namespace xtrace::interp {

XTRACE_DECL const graph::kernel_set* elementwise_kernels_for(op_kind op, dtype operand,
                                                             dtype result) {
    return kernels_for(op, operand, result);
}

XTRACE_DECL const graph::reduce_kernels* reduction_kernels_for(op_kind op, dtype type) {
    return reduction_kernels_of_kind(op, type);
}

XTRACE_DECL graph::matmul_fn matmul_kernels_for(dtype type) {
    return matmul_kernel_of_type(type);
}

} // namespace xtrace::interp

#endif

#endif
