#ifndef XTRACE_CORE_NO_BOOL_HPP
#define XTRACE_CORE_NO_BOOL_HPP

#include "dtype.hpp"

namespace xtrace::detail {

/// Base of the tensor types a traced lambda sees: using one as a C++ bool fails to compile
/// with a message that says what to do instead (traced tensors have no value to test).
struct not_a_bool {
    template <class Dummy = void>
    explicit operator bool() const {
        static_assert(dependent_false<Dummy>,
                      "xtrace: a symbolic tensor cannot be used as a C++ bool (if, while, ?:, "
                      "&&, ||); use xtrace::where(c, a, b) or xtrace::cond(pred, then_fn, "
                      "else_fn), and & | ! for logic");
        return false;
    }
};

} // namespace xtrace::detail

#endif
