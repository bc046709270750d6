// What runs when: plain C++ runs while tracing, xtrace::print and variable assignments on every
// call.

#include <xtrace/xtrace.hpp>

#include <cstdlib>
#include <iostream>

int main() {
    int traced = 0;
    auto step = xtrace::function([&traced](auto x) {
        ++traced;                      // plain C++: once per trace
        std::cout << "tracing step\n"; // likewise, like a Python print in tf.function
        xtrace::print("x =", x);       // recorded in the graph: every call
        auto y = xtrace::softmax(x * 2.f);
        xtrace::print("softmax =", y);
        return y;
    });
    const xt::xarray<float> x = {{1.f, 2.f, 3.f}};
    step(x); // prints "tracing step", then both xtrace::print lines
    step(x); // prints only the two xtrace::print lines
    if (traced != 1)
        return EXIT_FAILURE;

    // Under run_functions_eagerly(true) the lambda runs every call: both kinds print.
    xtrace::run_functions_eagerly(true);
    step(x);
    xtrace::run_functions_eagerly(false);

    // State. A C++ counter bumped inside the lambda, or hidden in a helper it calls, changes
    // while tracing only; an xtrace::variable assigned in the lambda changes on every call.
    int plain_count = 0;
    auto helper = [&plain_count](const auto& t) {
        ++plain_count; // hidden state: runs while tracing only
        return t * 2.f;
    };
    xtrace::variable<int> calls(0, "calls");
    auto counted = xtrace::function([&](auto t) {
        calls.assign_add(1); // in plain sight, in the graph: every call
        return helper(t);
    });
    for (int i = 0; i < 3; ++i)
        counted(x);
    std::cout << "helper ran " << plain_count << " time(s), calls = " << calls.value() << '\n';
    return traced == 2 && plain_count == 1 && calls.value()() == 3 ? EXIT_SUCCESS : EXIT_FAILURE;
}
