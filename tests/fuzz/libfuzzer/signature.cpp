// libFuzzer target: input_signature specs and call shapes from outside. Any spec the bytes
// describe is accepted or rejected with a signature_error; any call either runs or throws a
// typed xtrace::error; nothing crashes, and a later good call still works.

#include <xtrace/xtrace.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::size_t at = 0;
    auto next = [&]() -> std::uint8_t { return at < size ? data[at++] : 0; };
    std::vector<std::int64_t> spec_dims;
    const std::size_t spec_rank = next() % 20;
    for (std::size_t d = 0; d < spec_rank; ++d)
        spec_dims.push_back(static_cast<std::int8_t>(next()) % 6);
    std::vector<std::size_t> call_shape;
    const std::size_t call_rank = next() % 6;
    for (std::size_t d = 0; d < call_rank; ++d)
        call_shape.push_back(next() % 4);
    const bool relax = next() & 1;

    xtrace::options o;
    o.on_warning = [](std::string_view) {};
    o.reduce_retracing = relax;
    try {
        o.input_signature = {{xtrace::spec<float>(spec_dims)}};
    } catch (const xtrace::signature_error&) {
        o.input_signature.reset();
    }
    try {
        auto f = xtrace::function([](auto x) { return xtrace::sum(x * 2.f, {}) + 1.f; }, o);
        const xt::xarray<float> x = xt::ones<float>(call_shape);
        try {
            const xt::xarray<float> r = f(x);
            if (r.shape() != x.shape() || (r.size() > 0 && r.data()[0] != 3.f))
                std::abort();
        } catch (const xtrace::signature_error&) {
        }
        // Ones fit any valid spec of that rank whose fixed dims are 1 (and any call without a
        // signature).
        const xt::xarray<float> good = xt::ones<float>(
            std::vector<std::size_t>(o.input_signature ? spec_dims.size() : std::size_t(1), 1));
        try {
            f(good);
        } catch (const xtrace::signature_error&) {
            if (!o.input_signature)
                std::abort();
            for (auto d : spec_dims)
                if (d == -1 || d == 1)
                    continue;
                else
                    return 0; // a spec with other fixed dims rejects ones: fine
            std::abort();
        }
    } catch (const xtrace::signature_error&) {
        // an input_signature rejected at construction
    }
    return 0;
}
