#ifndef XTRACE_OPS_PRINT_HPP
#define XTRACE_OPS_PRINT_HPP

// xtrace::print: tf.print for traced code. A std::cout in a traced lambda runs once, while
// tracing; xtrace::print is recorded in the graph and writes on every call, in program order.

#include "../interp/print.hpp"
#include "tensor_like.hpp"

#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace xtrace {

/// Writes `label` and the values of `xs` as one line to std::cout: on every call when traced,
/// now when eager or outside any trace.
template <tensor_like... Xs>
void print(std::string_view label, const Xs&... xs) {
    static_assert(!((symbolic_tensor<Xs> || ...) && (eager_tensor_type<Xs> || ...)),
                  "xtrace::print: symbolic and eager tensors cannot be printed together");
    trace::builder* b = trace::current();
    if constexpr ((eager_tensor_type<Xs> || ...)) {
        b = nullptr;
    }
    if (b) {
        if constexpr ((symbolic_tensor<Xs> && ...)) {
            if (((xs.builder().get() != b) || ...))
                throw tracing_error("xtrace::print: a tensor comes from another trace");
            const std::array<graph::node_id, sizeof...(Xs)> ids{xs.id()...};
            b->add_print(std::string(label), ids,
                         {&interp::print_tensor<typename Xs::value_type>...});
        }
        return;
    }
    if constexpr ((eager_tensor_type<Xs> && ...)) {
        std::ostringstream line;
        line << label;
        ((line << ' ' << xs.value()), ...);
        line << '\n';
        interp::print_line(line.str());
    }
}

} // namespace xtrace

#endif
