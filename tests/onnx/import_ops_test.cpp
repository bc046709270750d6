// ONNX ops that xtrace's export never writes but PyTorch models use, on hand-built models with
// hand-computed results: Slice folding (a negative step included), Flatten, Gemm's transposes
// and scales, LeakyRelu, Clip with bound inputs, Scan.

#include "onnx/support.hpp"

#include <string_view>

using namespace xtrace::testing;

namespace {

::onnx::TensorProto* ints(model_builder& b, const std::string& name, std::vector<std::int64_t> v) {
    return b.int_initializer(name, std::move(v));
}

} // namespace

TEST_CASE("Slice of a known shape folds, a negative step starting before the first element") {
    // ONNX clamps a negative step's start to [0, n-1]: start -100 -> 0, end -1000 -> -1, so
    // slice([2, 3, 4]) is [2], and x (2 elements) is reshaped to [2].
    model_builder b;
    b.input("x", {1, 2}).output("y", {2});
    ints(b, "dims", {2, 3, 4});
    ints(b, "starts", {-100});
    ints(b, "ends", {-1000});
    ints(b, "axes", {0});
    ints(b, "steps", {-1});
    b.node("Slice", {"dims", "starts", "ends", "axes", "steps"}, {"picked"});
    b.node("Reshape", {"x", "picked"}, {"y"});
    const auto m = xtrace::onnx::load_bytes(b.bytes());
    const xt::xarray<float> x = {{1.f, 2.f}};
    CHECK(identical(m(x)[0].as<float>(), xt::xarray<float>{1.f, 2.f}));

    model_builder r; // slice [1:3] of [5, 2, 3] = [2, 3]
    r.input("x", {6}).output("y", {2, 3});
    ints(r, "dims", {5, 2, 3});
    ints(r, "starts", {1});
    ints(r, "ends", {3});
    r.node("Slice", {"dims", "starts", "ends"}, {"picked"});
    r.node("Reshape", {"x", "picked"}, {"y"});
    const auto m2 = xtrace::onnx::load_bytes(r.bytes());
    CHECK(m2(xt::xarray<float>{1.f, 2.f, 3.f, 4.f, 5.f, 6.f})[0].shape() == xtrace::shape_t{2, 3});
}

TEST_CASE("Flatten, Gemm with transposes and scales, LeakyRelu, Clip with bound inputs") {
    model_builder b;
    b.input("a", {2, 1, 3}).input("bt", {2, 3}).output("y", {2, 2}).output("z", {2, 2});
    b.initializer("c", {2}, {10.f, 20.f});
    b.initializer("lo", {}, {-1.f});
    b.initializer("hi", {}, {15.f});
    auto* f = b.node("Flatten", {"a"}, {"flat"}); // [2, 3]
    model_builder::attribute(f, "axis", 1);
    auto* g = b.node("Gemm", {"flat", "bt", "c"}, {"gemm"}); // 2 * flat @ bt^T + 0.5 * c
    model_builder::attribute(g, "transB", 1);
    for (auto [name, value] : {std::pair{"alpha", 2.f}, std::pair{"beta", 0.5f}}) {
        auto* at = g->add_attribute();
        at->set_name(name);
        at->set_type(::onnx::AttributeProto::FLOAT);
        at->set_f(value);
    }
    auto* l = b.node("LeakyRelu", {"gemm"}, {"y"});
    auto* alpha = l->add_attribute();
    alpha->set_name("alpha");
    alpha->set_type(::onnx::AttributeProto::FLOAT);
    alpha->set_f(0.25f);
    b.node("Clip", {"gemm", "lo", "hi"}, {"z"});
    const auto m = xtrace::onnx::load_bytes(b.bytes());
    const xt::xarray<float> a = {{{1.f, 2.f, 3.f}}, {{-1.f, -2.f, -3.f}}};
    const xt::xarray<float> bt = {{1.f, 0.f, 1.f}, {0.f, 1.f, 0.f}};
    // flat @ bt^T = [[4, 2], [-4, -2]]; * 2 + [5, 10] = [[13, 14], [-3, 6]]
    const auto out = m(a, bt);
    CHECK(identical(out[0].as<float>(), xt::xarray<float>{{13.f, 14.f}, {-0.75f, 6.f}}));
    CHECK(identical(out[1].as<float>(), xt::xarray<float>{{13.f, 14.f}, {-1.f, 6.f}}));
}

TEST_CASE("Scan from a hand-built model: a running sum, forward and reversed; mixed directions "
          "are refused") {
    // Scan(s0, xs) with body (s, x) -> (s + x, s + x): the final sum and every partial sum.
    // `reversed`: 0 forward, 1 input and output reversed, 2 only the input reversed.
    auto build = [](int reversed) {
        model_builder b;
        b.input("s0", {2}).input("xs", {-1, 2}).output("last", {2}).output("sums", {-1, 2});
        auto* scan = b.node("Scan", {"s0", "xs"}, {"last", "sums"});
        model_builder::attribute(scan, "num_scan_inputs", 1);
        for (const char* name : {"scan_input_directions", "scan_output_directions"}) {
            const bool output = std::string_view(name) == "scan_output_directions";
            if (reversed == 0 || (reversed == 2 && output))
                continue;
            auto* a = scan->add_attribute();
            a->set_name(name);
            a->set_type(::onnx::AttributeProto::INTS);
            a->add_ints(1);
        }
        auto* body = scan->add_attribute();
        body->set_name("body");
        body->set_type(::onnx::AttributeProto::GRAPH);
        auto* g = body->mutable_g();
        g->set_name("step");
        model_builder::describe(g->add_input(), "s", ::onnx::TensorProto::FLOAT, {2});
        model_builder::describe(g->add_input(), "x", ::onnx::TensorProto::FLOAT, {2});
        auto* add = g->add_node();
        add->set_op_type("Add");
        add->add_input("s");
        add->add_input("x");
        add->add_output("next");
        auto* copy = g->add_node();
        copy->set_op_type("Identity");
        copy->add_input("next");
        copy->add_output("out");
        model_builder::describe(g->add_output(), "next", ::onnx::TensorProto::FLOAT, {2});
        model_builder::describe(g->add_output(), "out", ::onnx::TensorProto::FLOAT, {2});
        return b.bytes();
    };
    const auto m = xtrace::onnx::load_bytes(build(0));
    const auto r = m(xt::xarray<float>{1.f, -1.f}, xt::xarray<float>{{1.f, 2.f}, {3.f, 4.f}});
    CHECK(identical(r[0].as<float>(), xt::xarray<float>{5.f, 5.f}));
    CHECK(identical(r[1].as<float>(), xt::xarray<float>{{2.f, 1.f}, {5.f, 5.f}}));
    const auto none = m(xt::xarray<float>{1.f, -1.f}, xt::xarray<float>::from_shape({0, 2}));
    CHECK(identical(none[0].as<float>(), xt::xarray<float>{1.f, -1.f}));
    CHECK(none[1].shape() == xtrace::shape_t{0, 2});
    // Reversed: the last row first, each partial sum in its row.
    const auto back = xtrace::onnx::load_bytes(build(1))(xt::xarray<float>{1.f, -1.f},
                                                         xt::xarray<float>{{1.f, 2.f}, {3.f, 4.f}});
    CHECK(identical(back[0].as<float>(), xt::xarray<float>{5.f, 5.f}));
    CHECK(identical(back[1].as<float>(), xt::xarray<float>{{5.f, 5.f}, {4.f, 3.f}}));
    try {
        xtrace::onnx::load_bytes(build(2))(xt::xarray<float>{0.f, 0.f},
                                           xt::xarray<float>{{1.f, 2.f}});
        FAIL("no model_error");
    } catch (const xtrace::model_error& e) {
        CHECK(std::string(e.what()).find("mixes directions") != std::string::npos);
    }
}
