#ifndef XTRACE_OPS_ERASE_HPP
#define XTRACE_OPS_ERASE_HPP

#include "tensor_like.hpp"

namespace xtrace {

/// x with its expression type forgotten (xtrace::erased<T> while tracing; eager tensors as they
/// are), so that branches on static values and loops that rebind a variable compile:
/// `auto y = xtrace::erase(x); for (int i = 0; i < n; ++i) y = y * 2.f;`
template <tensor_like X>
auto erase(const X& x) {
    if constexpr (symbolic_tensor<X>)
        return erased<typename X::value_type>(x);
    else
        return x;
}

} // namespace xtrace

#endif
