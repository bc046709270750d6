#ifndef XTRACE_INTERP_KERNELS_HPP
#define XTRACE_INTERP_KERNELS_HPP

// Loops over one block: every elementwise instruction of a fused region is one call of a
// kernel_fn, chosen when the plan is built so that running it takes no dispatch.

#include "../core/op.hpp"
#include "../graph/graph.hpp"
#include "functors.hpp"

#include <cstddef>

namespace xtrace::interp {

using graph::kernel_fn;

/// The interpreter functor of op tag Op.
template <class Op>
struct functor_of {};
#define XTRACE_X(name, arity, domain, result)                                                      \
    template <>                                                                                    \
    struct functor_of<op::name> {                                                                  \
        using type = fn::name;                                                                     \
    };
XTRACE_ELEMENTWISE_OPS(XTRACE_X)
#undef XTRACE_X

namespace detail {

template <class F, class T>
struct first_operand {
    using type = T;
};
template <class F, class T>
requires requires {
    typename F::template first_operand<T>;
}
struct first_operand<F, T> {
    using type = typename F::template first_operand<T>;
};

// Splat: which operand (0 or 1) of a binary op is one value read once, or -1 for none.
template <class F, class T, class R, int Arity, int Splat = -1>
void elementwise_kernel(const void* const* in, void* out, std::size_t n) {
    using T0 = typename first_operand<F, T>::type;
    const auto* a = static_cast<const T0*>(in[0]);
    const T* b = Arity > 1 ? static_cast<const T*>(in[1]) : nullptr;
    const T* c = Arity > 2 ? static_cast<const T*>(in[2]) : nullptr;
    R* o = static_cast<R*>(out);
    std::size_t i = 0;
    if constexpr (F::template simd<T> && std::is_same_v<T, R> && std::is_same_v<T0, T>) {
        using B = simd::batch<T>;
        constexpr std::size_t w = B::size;
        if constexpr (Splat == 0) {
            const B sa(a[0]);
            for (; i + w <= n; i += w)
                F{}(sa, B::load_unaligned(b + i)).store_unaligned(o + i);
        } else if constexpr (Splat == 1) {
            const B sb(b[0]);
            for (; i + w <= n; i += w)
                F{}(B::load_unaligned(a + i), sb).store_unaligned(o + i);
        } else {
            for (; i + w <= n; i += w) {
                if constexpr (Arity == 1)
                    F{}(B::load_unaligned(a + i)).store_unaligned(o + i);
                else if constexpr (Arity == 2)
                    F{}(B::load_unaligned(a + i), B::load_unaligned(b + i)).store_unaligned(o + i);
                else
                    F{}(B::load_unaligned(a + i), B::load_unaligned(b + i),
                        B::load_unaligned(c + i))
                        .store_unaligned(o + i);
            }
        }
    }
    for (; i < n; ++i) {
        if constexpr (Arity == 1)
            o[i] = static_cast<R>(F{}(a[i]));
        else if constexpr (Arity == 2)
            o[i] = static_cast<R>(F{}(a[Splat == 0 ? 0 : i], b[Splat == 1 ? 0 : i]));
        else
            o[i] = static_cast<R>(F{}(a[i], b[i], c[i]));
    }
}

template <class From, class To>
void cast_kernel(const void* const* in, void* out, std::size_t n) {
    const auto* a = static_cast<const From*>(in[0]);
    auto* o = static_cast<To*>(out);
    for (std::size_t i = 0; i < n; ++i)
        o[i] = scalar::convert<To>(a[i]);
}

} // namespace detail

/// The kernels of op tag Op on operands of element type T (for where: the branches') with
/// result R: what a node records when it is traced.
template <class Op, class T, class R>
inline constexpr graph::kernel_set kernels_of = [] {
    constexpr int arity = info(Op::kind).arity;
    using F = typename functor_of<Op>::type;
    if constexpr (arity == 2)
        return graph::kernel_set{&detail::elementwise_kernel<F, T, R, 2>,
                                 &detail::elementwise_kernel<F, T, R, 2, 0>,
                                 &detail::elementwise_kernel<F, T, R, 2, 1>};
    else
        return graph::kernel_set{&detail::elementwise_kernel<F, T, R, arity>, nullptr, nullptr};
}();
template <class To, class T, class R>
inline constexpr graph::kernel_set kernels_of<op::cast<To>, T, R> = {&detail::cast_kernel<T, R>,
                                                                     nullptr, nullptr};

/// The kernels of elementwise op `op` on operands of dtype `operand` (for where: the branches')
/// producing `result`, or nullptr for a combination the front end never builds. What the runtime
/// records when it is compiled separately (the front end then leaves kernels to it); a template,
/// so that only a program that uses it compiles every op's kernels.
template <class = void>
const graph::kernel_set* kernels_for(op_kind op, dtype operand, dtype result) {
    return visit_elementwise<const graph::kernel_set*>(
        op, operand, result, nullptr, [](auto tag, auto t, auto r) {
            return &kernels_of<decltype(tag), typename decltype(t)::type,
                               typename decltype(r)::type>;
        });
}

/// The kernel of elementwise op `op` on operands of dtype `operand` (for where: the branches'),
/// producing `result`; for binary ops, operand `splat` (0 or 1) may be a single value read once.
/// nullptr for a combination the front end never builds. For graphs that carry no kernels
/// (built without expression types); a template, so that only programs that use it compile
/// every op's kernels.
template <class = void>
kernel_fn kernel_for(op_kind op, dtype operand, dtype result, int splat = -1) {
    const graph::kernel_set* k = kernels_for(op, operand, result);
    if (!k)
        return nullptr;
    if (splat == 0 && k->splat_first)
        return k->splat_first;
    if (splat == 1 && k->splat_second)
        return k->splat_second;
    return k->plain;
}

} // namespace xtrace::interp

#endif
