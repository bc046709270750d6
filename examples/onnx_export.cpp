// Deployment: a traced function exported as an ONNX model, loaded back without the lambda, and
// run; the same file runs in ONNX Runtime, Netron shows it. Needs xtrace::onnx.

#include <xtrace/onnx.hpp>
#include <xtrace/xtrace.hpp>

#include <filesystem>
#include <iostream>

int main() {
    const auto path = std::filesystem::temp_directory_path() / "xtrace_mlp.onnx";
    xt::xarray<float> x = {{0.5f, -1.f, 2.f}, {1.f, 0.f, -0.5f}};

    xtrace::variable<float> w(xt::xarray<float>{{0.1f, 0.2f}, {0.3f, 0.4f}, {0.5f, 0.6f}}, "w");
    xtrace::variable<float> b(xt::xarray<float>{0.1f, -0.1f}, "b");
    auto predict = xtrace::function(
        [&](auto x) {
            return xtrace::softmax(xtrace::tanh(xtrace::matmul(x, w.read()) + b.read()));
        },
        {.name = "predict"});

    // Export for a batch of any size: [?, 3] becomes a symbolic dim; w and b are written as
    // initializers holding their current values.
    xtrace::onnx::save(predict, path, xtrace::spec<float>({-1, 3}));

    // Later, or in another program: no lambda, no variables, only the file.
    auto model = xtrace::onnx::load(path);
    std::cout << model.signature() << "\n";
    xt::xarray<float> y = model(x)[0];

    std::cout << "traced: " << predict(x) << "\nloaded: " << y << "\n";
    std::filesystem::remove(path);
    return y == predict(x) ? 0 : 1; // the same bits
}
