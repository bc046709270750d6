#ifndef XTRACE_TESTS_SUPPORT_PLANS_HPP
#define XTRACE_TESTS_SUPPORT_PLANS_HPP

// Comparing plans made under different tuning settings: a function traced afresh under a
// setting, its result and its plan's text, what that text says how often, and whether two
// results have the same bits; and graphs built op by op, to plan by hand.

#include "testing.hpp"

#include <cstring>
#include <string>
#include <vector>

namespace xtrace::testing {

/// A graph under construction: float arguments made with input<I>(shape), ops applied to them as
/// in a traced lambda, outputs added with `b->add_output`, then `b->finish()`.
struct traced_graph {
    std::shared_ptr<trace::builder> b = std::make_shared<trace::builder>();
    /// Argument I, a float tensor of `shape`.
    template <std::size_t I>
    arg<I, float> input(shape_t shape) {
        return arg<I, float>(b, b->add_arg(I, dtype::float32, std::move(shape)));
    }
};

/// How many times `what` occurs in `text` (a plan's text, say).
inline std::size_t count_of(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
    return n;
}

/// True when a and b have one shape and the same bytes.
template <class T>
bool same_bits(const xt::xarray<T>& a, const xt::xarray<T>& b) {
    return a.shape() == b.shape() &&
           (a.size() == 0 || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

/// `lambda`'s result on `args`, traced afresh with `opts` under `Scope(setting)`, and (in
/// `plan`) the text of the plan its call ran.
template <class Scope, class L, class... A>
auto traced_under(typename Scope::value_type setting, const L& lambda, const options& opts,
                  std::string& plan, const A&... args) {
    const Scope scope(setting);
    auto f = xtrace::function(lambda, opts);
    auto r = f(args...);
    plan = f.get_concrete_function(xtrace::spec<typename A::value_type>(std::vector<std::int64_t>(
                                       args.shape().begin(), args.shape().end()))...)
               .plan_text();
    return r;
}

} // namespace xtrace::testing

#endif
