#ifndef XTRACE_OPS_MATMUL_HPP
#define XTRACE_OPS_MATMUL_HPP

#include "../config.hpp"
#include "../eager/apply.hpp"
#include "../interp/matmul.hpp"
#include "elementwise.hpp"

namespace xtrace {

namespace detail {
/// The matmul kernel for dtype `type`, compiled with the runtime (separate compilation;
/// header-only programs take it from the operands' type).
XTRACE_DECL graph::matmul_fn matmul_kernel_for(dtype type);
} // namespace detail

/// Matrix product over the last two dims ([.., m, k] x [.., k, n] -> [.., m, n]); leading
/// (batch) dims broadcast.
template <tensor_like A, tensor_like B>
auto matmul(const A& a, const B& b) {
    using T = detail::value_of_t<A>;
    detail::check_operands<T, A, B>();
    detail::check_domain<op::matmul, T>();
    if constexpr (detail::records_v<A, B>)
#if defined(XTRACE_SEPARATE_COMPILATION)
        return expr::make_matmul(a, b, detail::matmul_kernel_for(dtype_of_v<T>));
#else
        return expr::make_matmul(a, b, &interp::matmul_kernel<T>);
#endif
    else
        return eager::matmul(detail::to_eager(a), detail::to_eager(b));
}

} // namespace xtrace

#if XTRACE_DEFINE_RUNTIME && defined(XTRACE_SEPARATE_COMPILATION)

namespace xtrace::detail {

XTRACE_DECL graph::matmul_fn matmul_kernel_for(dtype type) {
    return visit_dtype(type, [](auto tag) -> graph::matmul_fn {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, bool>)
            return nullptr;
        else
            return &interp::matmul_kernel<T>;
    });
}

} // namespace xtrace::detail

#endif

#endif
