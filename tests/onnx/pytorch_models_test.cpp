// Models exported by PyTorch's torch.onnx.export (opsets 13, 14 and 17: Gemm, batched MatMul,
// exact GELU through Erf, Shape/Gather/Unsqueeze/Concat/Reshape, LayerNormalization or its
// decomposition, Softmax, LogSoftmax) load
// and match PyTorch's outputs, stored with them (tests/onnx/reference/make_torch_models.py).

#include "onnx/support.hpp"

#include <cmath>

using namespace xtrace::testing;

namespace {

struct stored_array {
    const char* name;
    std::vector<std::size_t> shape;
    std::vector<double> values;
};

struct stored_case {
    const char* model;
    std::vector<stored_array> inputs;
    std::vector<stored_array> outputs;
};

const std::vector<stored_case>& cases() {
    static const std::vector<stored_case> all{
#include "data/torch_models.inc"
    };
    return all;
}

xt::xarray<float> to_float(const stored_array& a) {
    xt::xarray<float> out = xt::xarray<float>::from_shape(a.shape);
    std::copy(a.values.begin(), a.values.end(), out.begin());
    return out;
}

} // namespace

TEST_CASE("models exported by PyTorch load and match PyTorch's outputs") {
    REQUIRE(cases().size() == 10);
    for (const stored_case& c : cases()) {
        INFO("model " << c.model);
        const auto m =
            xtrace::onnx::load(std::string(XTRACE_ONNX_TEST_DATA) + "/" + c.model + ".onnx");
        const auto x = to_float(c.inputs[0]);
        INFO("input shape " << shape_text(c.inputs[0].shape));
        const auto out = m(x);
        REQUIRE(out.size() == c.outputs.size());
        for (std::size_t k = 0; k < out.size(); ++k) {
            const auto& got = out[k].as<float>();
            const auto want = to_float(c.outputs[k]);
            REQUIRE(got.shape() == want.shape());
            for (std::size_t i = 0; i < got.size(); ++i)
                CHECK(std::abs(got.data()[i] - want.data()[i]) <=
                      2e-6 + 2e-5 * std::abs(want.data()[i]));
        }
    }
}

TEST_CASE("a PyTorch model whose reshape reads the batch dim is lowered per batch size") {
    const auto m =
        xtrace::onnx::load(std::string(XTRACE_ONNX_TEST_DATA) + "/norm_softmax_opset17.onnx");
    CHECK(!m.lowered_once()); // Shape(x)[0] feeds a Reshape: needs the batch size
    CHECK(m.input_specs()[0].dims == xtrace::shape_t{-1, 2, 4});
    const auto mlp = xtrace::onnx::load(std::string(XTRACE_ONNX_TEST_DATA) + "/mlp_opset17.onnx");
    CHECK(mlp.lowered_once()); // Gemm needs no dims: one graph, a plan per batch size
    for (std::size_t batch : {3, 7, 3}) {
        const xt::xarray<float> x = random_array<float>({batch, 2, 4});
        const auto probs = m(x)[0].as<float>();
        CHECK(probs.shape()[0] == batch);
        for (std::size_t r = 0; r < batch; ++r) {
            double total = 0;
            for (std::size_t j = 0; j < 5; ++j)
                total += probs(r, j);
            CHECK(std::abs(total - 1) < 1e-5);
        }
        mlp(xt::xarray<float>(random_array<float>({batch, 4})));
    }
    CHECK(m.stats().calls == 3);
    CHECK(m.stats().cache_hits == 1);
    CHECK(m.stats().traces == 2); // lowered for batch 3 and batch 7
    CHECK(m.cache_size() == 2);
    CHECK(mlp.stats().traces == 1);
    CHECK(mlp.cache_size() == 2);
    CHECK(m.signature() == "(x: float32[?,2,4]) -> (probs: float32[?,5], logp: float32[?,5])");
}
