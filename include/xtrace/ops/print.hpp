#ifndef XTRACE_OPS_PRINT_HPP
#define XTRACE_OPS_PRINT_HPP

// xtrace::print: tf.print for traced code. A std::cout in a traced lambda runs once, while
// tracing; xtrace::print is recorded in the graph and writes on every call, in program order.

#include "../eager/dry_run.hpp"
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
    if constexpr (!(eager_tensor_type<Xs> || ...)) {
        trace::builder* b = trace::current();
        if (b && !(detail::is_deferred(xs) || ...)) {
            const std::array<graph::node_id, sizeof...(Xs)> ids{
                b->import(xs.builder().get(), xs.id())...};
            b->add_print(std::string(label), ids,
                         {&interp::print_tensor<typename Xs::value_type>...});
            return;
        }
    }
    if (detail::dry_run())
        return;
    std::ostringstream line;
    line << label;
    ((line << ' ' << detail::to_eager(xs).value()), ...);
    line << '\n';
    interp::print_line(line.str());
}

} // namespace xtrace

#endif
