#include <xtrace/onnx.hpp>
#include <xtrace/xtrace.hpp>

int main() {
    auto f = xtrace::function([](auto x) { return xtrace::exp(x) * 2.f; });
    const xt::xarray<float> a = {0.f, 0.f};
    const auto m = xtrace::onnx::load_bytes(xtrace::onnx::export_model(f, a));
    const xt::xarray<float> r = m(a)[0];
    return (r(0) == 2.f && r(1) == 2.f) ? 0 : 1;
}
