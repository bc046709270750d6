#ifndef XTRACE_OPS_SWITCH_CASE_HPP
#define XTRACE_OPS_SWITCH_CASE_HPP

// switch_case(index, fn0, fn1, ...): tf.switch_case, an N-way cond. Traced, it is a chain of
// conds (index == 0, else index == 1, ...), so every branch is traced once and only the taken
// one runs, with print, variables and host_function inside as in cond.

#include "cond.hpp"

#include <type_traits>

namespace xtrace {
namespace detail {

template <int K, class I, class Fn, class... Fns>
auto switch_from(const I& index, Fn& fn, Fns&... fns) {
    if constexpr (sizeof...(Fns) == 0)
        return run_branch(fn); // the last branch: also every index out of range
    else
        return cond(
            index == K, [&] { return fn(); }, [&] { return switch_from<K + 1>(index, fns...); });
}

} // namespace detail

/// Runs branch_fns[index]() (tf.switch_case): `index` is a 0-d int32 or int64 tensor, or a C++
/// integer; an index outside [0, N) runs the last branch, as TensorFlow's default branch does.
/// Every branch must return the same dtypes and shapes (or nothing); traced, all are traced
/// and only the taken one runs.
template <class I, class Fn, class... Fns>
auto switch_case(const I& index, Fn fn, Fns... fns) {
    if constexpr (tensor_like<I>)
        static_assert(std::is_integral_v<detail::value_of_t<I>> &&
                          !std::is_same_v<detail::value_of_t<I>, bool>,
                      "xtrace::switch_case: the index must be an int32 or int64 tensor; convert "
                      "with xtrace::cast<std::int32_t>(x)");
    else
        static_assert(
            std::is_integral_v<I>,
            "xtrace::switch_case: the index must be a 0-d integer tensor or a C++ integer");
    return detail::switch_from<0>(index, fn, fns...);
}

} // namespace xtrace

#endif
