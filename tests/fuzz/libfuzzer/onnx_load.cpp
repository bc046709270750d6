// libFuzzer target: ONNX model bytes from outside. Loading must give a model or a typed
// xtrace::error (model_error for the file), never a crash, a hang or an absurd allocation;
// a model that loads is called once on zeros of its inputs' shapes (unknown dims: 2), which
// must also end in results or a typed error. Seeded with the models in tests/onnx/data.

#include <xtrace/onnx.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    xtrace::onnx::load_options options;
    options.max_tensor_bytes = std::uint64_t(1) << 20; // hostile sizes fail fast
    options.max_plans = 2;
    try {
        const auto m = xtrace::onnx::load_bytes(
            std::string_view(reinterpret_cast<const char*>(data), size), options);
        std::vector<xtrace::onnx::value> args;
        for (const auto& spec : m.input_specs()) {
            std::vector<std::size_t> shape;
            for (auto d : spec.dims)
                shape.push_back(d < 0 ? 2 : static_cast<std::size_t>(d));
            std::size_t count = 1;
            for (auto d : shape)
                count *= d;
            if (count > (1u << 16))
                return 0; // a declared input too large to fill here
            xtrace::visit_dtype(spec.type, [&](auto tag) {
                using T = typename decltype(tag)::type;
                auto a = xt::xarray<T>::from_shape(shape);
                a.fill(T(0));
                args.emplace_back(std::move(a));
            });
        }
        m.run(args);
    } catch (const xtrace::error&) {
        // A typed refusal is the expected outcome for most inputs.
    }
    return 0;
}
