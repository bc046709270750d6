// What a traced function runs, printed: the graph (graph_text) and, for concrete shapes, the
// plan (plan_text): fused regions, block size, registers, where each value lives, step order.
// Run with XTRACE_LOG_PLANS=1 to have every plan written to std::clog as it is made.

#include <xtrace/xtrace.hpp>

#include <iostream>

int main() {
    auto f = xtrace::function([](auto x, auto y) {
        auto e = xtrace::exp(x);
        auto p = e * y;
        auto total = xtrace::sum(x);
        return p + total;
    });
    auto cf = f.get_concrete_function(xtrace::spec<float>({-1}), xtrace::spec<float>({-1}));
    std::cout << cf.graph_text() << '\n' << cf.plan_text({{4}, {4}});
    // plan: 2 steps, temps 64 bytes, registers 128 bytes
    // step 0: %4 = sum(%0, axes=[0]) : float32[] -> temp @0
    // step 1: region [4], 3 nodes, block 4, 4 registers
    //   in s0: %0 arg 0, r0
    //   ...
    //   s5: %5 = add(s4, s2) : float32 -> output 0

    const xt::xarray<float> x = {0.f, 1.f, 2.f, 3.f}, y = {1.f, 1.f, 1.f, 1.f};
    const xt::xarray<float> r = cf(x, y); // planned for [4] once, as printed above
    return r.size() == 4 ? 0 : 1;
}
