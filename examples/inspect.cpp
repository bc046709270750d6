// Compile-time inspection: the graph a traced function builds is a type, so its shape can be
// checked by static_assert before the program runs.

#include <xtrace/xtrace.hpp>

#include <boost/hana/contains.hpp>

#include <iostream>

namespace hana = boost::hana;

// A layer: scale, shift, activation. Plain C++: it is inlined into whatever traces it.
auto layer = [](auto x, auto scale, auto shift) { return xtrace::relu(x * scale + shift); };

auto predict = xtrace::function([](auto x, auto scale, auto shift) {
    auto h = layer(x, scale, shift);
    return xtrace::sigmoid(h * 0.5f);
});

using tensor = xt::xarray<float>;
using graph = xtrace::graph_t<decltype(predict), tensor, tensor, tensor>;

// What this model promises, checked at compile time:
static_assert(xtrace::inspect::count_op<graph, xtrace::op::relu> == 1, "one activation");
static_assert(xtrace::inspect::count_op<graph, xtrace::op::cast<>> == 0, "no dtype conversions");
static_assert(!hana::contains(xtrace::inspect::ops<graph>, xtrace::op::exp{}), "no raw exp");
static_assert(xtrace::inspect::depth<graph> == 6);
static_assert(xtrace::inspect::to_string<graph>() == "sigmoid(mul(relu(add(mul(x0, x1), x2)), c))");

int main() {
    std::cout << xtrace::inspect::to_string<graph>() << "\n\n" << xtrace::inspect::to_dot<graph>();
    const tensor x = {-1.f, 0.f, 2.f};
    const tensor y = predict(x, tensor{2.f}, tensor{1.f});
    return y.size() == 3 ? 0 : 1;
}
