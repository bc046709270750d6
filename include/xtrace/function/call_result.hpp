#ifndef XTRACE_FUNCTION_CALL_RESULT_HPP
#define XTRACE_FUNCTION_CALL_RESULT_HPP

// What a traced function without tensor arguments returns. With no argument to tell, C++ gives
// `f()` one result type whether it is called from plain code or from inside another trace, and
// TensorFlow inlines such a call there (it may read variables, whose values change between
// calls). So the result is both: a symbolic tensor (inside a trace, a node of the calling
// trace; outside, one holding the value) that converts to the xt::xarray it holds outside.

#include "../core/error.hpp"
#include "../eager/evaluate.hpp"
#include "../expr/node.hpp"

#include <memory>
#include <ostream>
#include <utility>

namespace xtrace {

/// A result of a traced function called without tensor arguments: inside another trace, the
/// inlined function's symbolic tensor (the caller's graph reads what it reads on every call);
/// outside, its value, as an xt::xarray (implicit conversion, value(), element access) and as
/// a symbolic tensor holding it (for xtrace ops, as a variable read outside a trace).
template <class T>
class call_result : public erased<T> {
public:
    /// The inlined result `x`, a tensor of the trace being recorded.
    explicit call_result(const symbolic<T>& x) : erased<T>(x) {}
    /// The computed result `v`.
    explicit call_result(xt::xarray<T> v)
        : erased<T>(detail::snapshot(v)),
          value_(std::make_shared<const xt::xarray<T>>(std::move(v))) {}

    /// True when it holds a value (it was computed outside a trace).
    bool has_value() const noexcept { return value_ != nullptr; }
    /// The value; inside a trace there is none yet (tracing_error).
    const xt::xarray<T>& value() const {
        if (!value_)
            throw tracing_error("xtrace: the result of a traced function called inside another "
                                "trace is symbolic: it has a value only when the graph runs");
        return *value_;
    }
    /// The value, as an xt::xarray.
    operator xt::xarray<T>() const { return value(); }
    /// Element access into the value.
    template <class... I>
    T operator()(I... i) const {
        return value()(i...);
    }

    /// Writes the value.
    friend std::ostream& operator<<(std::ostream& os, const call_result& r) {
        return os << r.value();
    }

private:
    std::shared_ptr<const xt::xarray<T>> value_;
};

} // namespace xtrace

#endif
