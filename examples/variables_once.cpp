// Variables are created once. A variable created inside a traced function is allowed on its
// first trace only: a later trace (a new shape) would create another, so it throws, as
// tf.function does. Create variables outside, or guard their creation.

#include <xtrace/xtrace.hpp>

#include <cstdlib>
#include <iostream>
#include <optional>

// The fix for state that belongs to a model: a member created on first use, reused afterwards.
struct scaler {
    std::optional<xtrace::variable<float>> scale;
    auto operator()(const auto& x) {
        if (!scale)
            scale.emplace(2.f, "scale");
        return x * scale->read();
    }
};

int main() {
    // Wrong: every trace runs the constructor again.
    std::optional<xtrace::variable<float>> made_inside;
    auto unguarded = xtrace::function([&](auto x) {
        made_inside.emplace(2.f, "scale");
        return x * made_inside->read();
    });
    unguarded(xt::xarray<float>{1.f, 2.f}); // first trace: allowed
    try {
        unguarded(xt::xarray<float>{1.f, 2.f, 3.f}); // a new shape traces again
        return EXIT_FAILURE;
    } catch (const xtrace::tracing_error& e) {
        std::cout << e.what() << '\n';
    }

    // Right: created outside, read inside. Assigning from plain code needs no retrace.
    xtrace::variable<float> scale(2.f, "scale");
    auto outside = xtrace::function([&](auto x) { return x * scale.read(); });
    outside(xt::xarray<float>{1.f, 2.f});
    scale.assign(10.f);
    const xt::xarray<float> r = outside(xt::xarray<float>{1.f, 2.f}); // {10, 20}

    // Right: guarded creation; both shapes trace, one variable.
    scaler model;
    auto guarded = xtrace::function([&](auto x) { return model(x); });
    guarded(xt::xarray<float>{1.f, 2.f});
    guarded(xt::xarray<float>{1.f, 2.f, 3.f});
    std::cout << "outside: " << r << ", guarded traces: " << guarded.tracing_count() << '\n';
    return r(1) == 20.f && guarded.tracing_count() == 2 ? EXIT_SUCCESS : EXIT_FAILURE;
}
