// What runs when: plain C++ runs while tracing, xtrace::print on every call.

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
    return traced == 2 ? EXIT_SUCCESS : EXIT_FAILURE;
}
