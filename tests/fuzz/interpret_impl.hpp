#ifndef XTRACE_TESTS_FUZZ_INTERPRET_IMPL_HPP
#define XTRACE_TESTS_FUZZ_INTERPRET_IMPL_HPP

// The definition of fuzz::run (see interpret.hpp). Each step dispatches on its operands' dtypes
// at run time; combinations the generator never writes throw.

#include "interpret.hpp"

#include <algorithm>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace xtrace::fuzz::detail {

template <class T>
inline constexpr bool is_num = !std::is_same_v<T, bool>;
template <class T>
inline constexpr bool is_flt = std::is_floating_point_v<T>;
template <class T>
inline constexpr bool is_bool = std::is_same_v<T, bool>;

[[noreturn]] inline void invalid(const char* what) {
    throw std::logic_error(std::string("fuzz: the generator wrote an invalid ") + what);
}

template <template <class> class V>
struct interpreter {
    using val = value<V>;

    template <class X>
    static val wrap(const X& x) {
        return val(xtrace::erase(x));
    }

    template <class X>
    static val unary(op_kind op, const X& x) {
        using T = typename X::value_type;
        switch (op) {
#define XTRACE_FUZZ_UNARY(name, expr, when)                                                        \
    case op_kind::name:                                                                            \
        if constexpr (when)                                                                        \
            return wrap(expr);                                                                     \
        break;
            XTRACE_FUZZ_UNARY(neg, -x, is_num<T>)
            XTRACE_FUZZ_UNARY(abs, xtrace::abs(x), is_num<T>)
            XTRACE_FUZZ_UNARY(square, xtrace::square(x), is_num<T>)
            XTRACE_FUZZ_UNARY(relu, xtrace::relu(x), is_num<T>)
            XTRACE_FUZZ_UNARY(floor, xtrace::floor(x), is_num<T>)
            XTRACE_FUZZ_UNARY(ceil, xtrace::ceil(x), is_num<T>)
            XTRACE_FUZZ_UNARY(round, xtrace::round(x), is_num<T>)
            XTRACE_FUZZ_UNARY(exp, xtrace::exp(x), is_flt<T>)
            XTRACE_FUZZ_UNARY(log, xtrace::log(x), is_flt<T>)
            XTRACE_FUZZ_UNARY(sqrt, xtrace::sqrt(x), is_flt<T>)
            XTRACE_FUZZ_UNARY(rsqrt, xtrace::rsqrt(x), is_flt<T>)
            XTRACE_FUZZ_UNARY(sin, xtrace::sin(x), is_flt<T>)
            XTRACE_FUZZ_UNARY(cos, xtrace::cos(x), is_flt<T>)
            XTRACE_FUZZ_UNARY(tanh, xtrace::tanh(x), is_flt<T>)
            XTRACE_FUZZ_UNARY(sigmoid, xtrace::sigmoid(x), is_flt<T>)
            XTRACE_FUZZ_UNARY(erf, xtrace::erf(x), is_flt<T>)
            XTRACE_FUZZ_UNARY(logical_not, !x, is_bool<T>)
            XTRACE_FUZZ_UNARY(stop_gradient, xtrace::stop_gradient(x), true)
#undef XTRACE_FUZZ_UNARY
        default:
            break;
        }
        invalid("unary step");
    }

    // a and b: tensors of T, or one of them a T scalar.
    template <class T, class A, class B>
    static val binary(op_kind op, const A& a, const B& b) {
        switch (op) {
#define XTRACE_FUZZ_BINARY(name, expr, when)                                                       \
    case op_kind::name:                                                                            \
        if constexpr (when)                                                                        \
            return wrap(expr);                                                                     \
        break;
            XTRACE_FUZZ_BINARY(add, a + b, is_num<T>)
            XTRACE_FUZZ_BINARY(sub, a - b, is_num<T>)
            XTRACE_FUZZ_BINARY(mul, a * b, is_num<T>)
            XTRACE_FUZZ_BINARY(div, a / b, is_num<T>)
            XTRACE_FUZZ_BINARY(pow, xtrace::pow(a, b), is_num<T>)
            XTRACE_FUZZ_BINARY(minimum, xtrace::minimum(a, b), is_num<T>)
            XTRACE_FUZZ_BINARY(maximum, xtrace::maximum(a, b), is_num<T>)
            XTRACE_FUZZ_BINARY(less, a < b, is_num<T>)
            XTRACE_FUZZ_BINARY(less_equal, a <= b, is_num<T>)
            XTRACE_FUZZ_BINARY(greater, a > b, is_num<T>)
            XTRACE_FUZZ_BINARY(greater_equal, a >= b, is_num<T>)
            XTRACE_FUZZ_BINARY(equal, a == b, true)
            XTRACE_FUZZ_BINARY(not_equal, a != b, true)
            XTRACE_FUZZ_BINARY(logical_and, a & b, is_bool<T>)
            XTRACE_FUZZ_BINARY(logical_or, a | b, is_bool<T>)
            XTRACE_FUZZ_BINARY(logical_xor, a ^ b, is_bool<T>)
#undef XTRACE_FUZZ_BINARY
        default:
            break;
        }
        invalid("binary step");
    }

    template <class T>
    static const V<T>& as(const val& v) {
        if (const auto* x = std::get_if<V<T>>(&v))
            return *x;
        invalid("operand dtype");
    }

    static val reduce(const step& s, const val& in) {
        return std::visit(
            [&](const auto& x) -> val {
                using T = typename std::decay_t<decltype(x)>::value_type;
                if constexpr (is_num<T>) {
                    auto r = [&](auto f) {
                        return s.keep ? wrap(f(x, s.attrs, xtrace::keep_dims))
                                      : wrap(f(x, s.attrs));
                    };
                    switch (s.op) {
#define XTRACE_FUZZ_REDUCE(name)                                                                   \
    case op_kind::name:                                                                            \
        return r([](const auto& v, const auto& axes, auto... keep) {                               \
            return xtrace::name(v, axes, keep...);                                                 \
        });
                        XTRACE_FUZZ_REDUCE(sum)
                        XTRACE_FUZZ_REDUCE(mean)
                        XTRACE_FUZZ_REDUCE(max)
                        XTRACE_FUZZ_REDUCE(min)
                        XTRACE_FUZZ_REDUCE(prod)
#undef XTRACE_FUZZ_REDUCE
                    default:
                        break;
                    }
                }
                invalid("reduction");
            },
            in);
    }

    static val shape_op(const step& s, const val& in) {
        return std::visit(
            [&](const auto& x) -> val {
                switch (s.op) {
                case op_kind::reshape:
                    return wrap(xtrace::reshape(x, s.attrs));
                case op_kind::transpose:
                    return wrap(xtrace::transpose(x, s.attrs));
                case op_kind::expand_dims:
                    return wrap(xtrace::expand_dims(x, s.attrs[0]));
                case op_kind::squeeze:
                    return wrap(xtrace::squeeze(x, s.attrs[0]));
                case op_kind::broadcast_to:
                    return wrap(xtrace::broadcast_to(x, s.attrs));
                default:
                    invalid("shape op");
                }
            },
            in);
    }

    static val cast(dtype to, const val& in) {
        return std::visit(
            [&](const auto& x) -> val {
                return visit_dtype(to, [&](auto tag) -> val {
                    return wrap(xtrace::cast<typename decltype(tag)::type>(x));
                });
            },
            in);
    }

    // cond(pred, op(b) [+ c], op2(b)) and the counted loop over b.
    static val control(const step& s, const std::vector<val>& v) {
        const val& b = v[static_cast<std::size_t>(s.in[1])];
        const val* c = s.in[2] >= 0 ? &v[static_cast<std::size_t>(s.in[2])] : nullptr;
        return std::visit(
            [&](const auto& x) -> val {
                using T = typename std::decay_t<decltype(x)>::value_type;
                if (s.kind == step_kind::switch_case) {
                    const auto& index = as<std::int32_t>(v[static_cast<std::size_t>(s.in[0])]);
                    return wrap(xtrace::switch_case(
                        index, [&] { return as<T>(unary(s.op, x)); },
                        [&] { return as<T>(unary(s.op2, x)); }, [&] { return V<T>(x); }));
                }
                if (s.kind == step_kind::cond) {
                    const auto& pred = as<bool>(v[static_cast<std::size_t>(s.in[0])]);
                    auto then_fn = [&] {
                        V<T> r = as<T>(unary(s.op, x));
                        if (c)
                            r = as<T>(binary<T>(op_kind::add, r, as<T>(*c)));
                        return r;
                    };
                    auto else_fn = [&] { return as<T>(unary(s.op2, x)); };
                    return wrap(xtrace::cond(pred, then_fn, else_fn));
                }
                if constexpr (is_num<T>) {
                    if (s.kind == step_kind::scan) {
                        const auto& start = as<std::int32_t>(v[static_cast<std::size_t>(s.in[0])]);
                        auto fn = [&](const auto& carry, const auto& row) {
                            return std::make_tuple(
                                xtrace::erase(carry + T(1)),
                                as<T>(binary<T>(s.op2, as<T>(unary(s.op, row)), V<T>(carry))));
                        };
                        auto r = xtrace::scan(fn, xtrace::erase(xtrace::cast<T>(start)), x);
                        return s.attrs[0] == 1 ? wrap(std::get<0>(r)) : wrap(std::get<1>(r));
                    }
                    const auto& counter = as<std::int32_t>(v[static_cast<std::size_t>(s.in[0])]);
                    const std::int32_t n = static_cast<std::int32_t>(s.attrs[0]);
                    auto test = [n](const auto& i, const auto&) { return i < n; };
                    auto body = [&](const auto& i, const auto& y) {
                        V<T> r = as<T>(unary(s.op, y));
                        if (c)
                            r = as<T>(binary<T>(s.op2, r, as<T>(*c)));
                        return std::make_tuple(xtrace::erase(i + 1), r);
                    };
                    const auto start = xtrace::erase(counter * 0);
                    if (s.attrs.size() > 1) // bounded below the count: stops early
                        return wrap(std::get<1>(xtrace::while_loop(
                            test, body, start, x, xtrace::maximum_iterations(s.attrs[1]))));
                    return wrap(std::get<1>(xtrace::while_loop(test, body, start, x)));
                }
                invalid("loop");
            },
            b);
    }

    static val step_value(const step& s, const std::vector<val>& v) {
        const val& a = v[static_cast<std::size_t>(s.in[0])];
        auto operand = [&](int k) -> const val& { return v[static_cast<std::size_t>(s.in[k])]; };
        switch (s.kind) {
        case step_kind::unary:
            return std::visit([&](const auto& x) { return unary(s.op, x); }, a);
        case step_kind::binary:
            return std::visit(
                [&](const auto& x) {
                    using T = typename std::decay_t<decltype(x)>::value_type;
                    return binary<T>(s.op, x, as<T>(operand(1)));
                },
                a);
        case step_kind::scalar_right:
        case step_kind::scalar_left:
            return std::visit(
                [&](const auto& x) -> val {
                    using T = typename std::decay_t<decltype(x)>::value_type;
                    if constexpr (is_num<T>) {
                        const T k = static_cast<T>(s.scalar);
                        return s.kind == step_kind::scalar_right ? binary<T>(s.op, x, k)
                                                                 : binary<T>(s.op, k, x);
                    }
                    invalid("scalar step");
                },
                a);
        case step_kind::where:
            return std::visit(
                [&](const auto& x) {
                    using T = typename std::decay_t<decltype(x)>::value_type;
                    return wrap(xtrace::where(as<bool>(a), x, as<T>(operand(2))));
                },
                operand(1));
        case step_kind::clip:
            return std::visit(
                [&](const auto& x) -> val {
                    using T = typename std::decay_t<decltype(x)>::value_type;
                    if constexpr (is_num<T>)
                        return wrap(xtrace::clip(x, as<T>(operand(1)), as<T>(operand(2))));
                    invalid("clip");
                },
                a);
        case step_kind::cast:
            return cast(s.to, a);
        case step_kind::host_flatten:
            return std::visit(
                [&](const auto& x) {
                    using T = typename std::decay_t<decltype(x)>::value_type;
                    return wrap(xtrace::host_function(
                        [](const xt::xarray<T>& h) {
                            auto out = xt::xarray<T>::from_shape({h.size()});
                            std::copy(h.begin(), h.end(), out.begin());
                            return out;
                        },
                        xtrace::spec<T>({-1}), x));
                },
                a);
        case step_kind::reduce:
            return reduce(s, a);
        case step_kind::shape:
            return shape_op(s, a);
        case step_kind::matmul:
            return std::visit(
                [&](const auto& x) -> val {
                    using T = typename std::decay_t<decltype(x)>::value_type;
                    if constexpr (is_num<T>)
                        return wrap(xtrace::matmul(x, as<T>(operand(1))));
                    invalid("matmul");
                },
                a);
        case step_kind::gradient:
            return std::visit(
                [&](const auto& x) -> val {
                    using T = typename std::decay_t<decltype(x)>::value_type;
                    if constexpr (is_flt<T>)
                        return wrap(xtrace::gradients(xtrace::sum(x), as<T>(operand(1))));
                    invalid("gradient");
                },
                a);
        case step_kind::softmax:
        case step_kind::logsumexp:
            return std::visit(
                [&](const auto& x) -> val {
                    using T = typename std::decay_t<decltype(x)>::value_type;
                    if constexpr (is_flt<T>) {
                        if (s.kind == step_kind::softmax)
                            return wrap(xtrace::softmax(x, s.attrs[0]));
                        return wrap(xtrace::logsumexp(x, s.attrs[0]));
                    }
                    invalid("softmax");
                },
                a);
        case step_kind::cond:
        case step_kind::loop:
        case step_kind::switch_case:
        case step_kind::scan:
            return control(s, v);
        }
        invalid("step kind");
    }
};

} // namespace xtrace::fuzz::detail

namespace xtrace::fuzz {

template <template <class> class V>
outputs<V> run(const program& p, const std::array<value<V>, input_types.size()>& inputs) {
    using I = detail::interpreter<V>;
    std::vector<value<V>> v(inputs.begin(), inputs.end());
    for (const step& s : p.steps)
        v.push_back(I::step_value(s, v));
    std::vector<value_info> shapes = *infer(p);
    const std::vector<int> slots = returned_values(p, shapes);
    auto slot = [&]<class T>(std::size_t k, std::type_identity<T>) {
        return I::template as<T>(v[static_cast<std::size_t>(slots[k])]);
    };
    using f = std::type_identity<float>;
    using d = std::type_identity<double>;
    using i = std::type_identity<std::int32_t>;
    using l = std::type_identity<std::int64_t>;
    using b = std::type_identity<bool>;
    return outputs<V>{slot(0, f{}),  slot(1, f{}),  slot(2, f{}),  slot(3, d{}),  slot(4, d{}),
                      slot(5, d{}),  slot(6, i{}),  slot(7, i{}),  slot(8, i{}),  slot(9, l{}),
                      slot(10, l{}), slot(11, l{}), slot(12, b{}), slot(13, b{}), slot(14, b{})};
}

} // namespace xtrace::fuzz

#endif
