#ifndef XTRACE_OPS_MATMUL_HPP
#define XTRACE_OPS_MATMUL_HPP

#include "../config.hpp"
#include "../eager/apply.hpp"
#include "../interp/kernel_choice.hpp"
#include "elementwise.hpp"

namespace xtrace {

/// Matrix product over the last two dims ([.., m, k] x [.., k, n] -> [.., m, n]); leading
/// (batch) dims broadcast.
template <tensor_like A, tensor_like B>
auto matmul(const A& a, const B& b) {
    using T = detail::value_of_t<A>;
    detail::check_operands<T, A, B>();
    detail::check_domain<op::matmul, T>();
    if constexpr (detail::records_v<A, B>)
        return expr::make_matmul(a, b, interp::matmul_kernels<T>());
    else
        return detail::taped(
            eager::matmul(detail::to_eager(a), detail::to_eager(b)),
            [](const auto& x, const auto& y) { return erased<T>(matmul(x, y)); }, a, b);
}

} // namespace xtrace

#endif
