// A loader that takes whatever bytes it is given: every malformed model gives a model_error that
// names what is wrong, nothing crashes or allocates without bound, and bad arguments give a
// signature_error that names the input. (tests/fuzz/libfuzzer/onnx_load.cpp fuzzes the same.)

#include "onnx/support.hpp"

using namespace xtrace::testing;
using Catch::Matchers::Contains;

namespace {

// The simplest valid model: y = x + x.
model_builder doubling() {
    model_builder b;
    b.input("x", {-1, 3}).output("y", {-1, 3});
    b.node("Add", {"x", "x"}, {"y"});
    return b;
}

void refused(const std::string& bytes, const std::string& says) {
    INFO("expected a model_error saying: " << says);
    CHECK_THROWS_AS(xtrace::onnx::load_bytes(bytes), xtrace::model_error);
    CHECK_THROWS_WITH(xtrace::onnx::load_bytes(bytes), Contains(says));
}

} // namespace

TEST_CASE("the valid model loads and runs") {
    const auto m = xtrace::onnx::load_bytes(doubling().bytes());
    const xt::xarray<float> x = random_array<float>({2, 3});
    CHECK(identical(m(x)[0].as<float>(), xt::xarray<float>(x + x)));
}

TEST_CASE("every truncation of a model is refused") {
    auto f = xtrace::function([](auto x) { return xtrace::softmax(x * 2.f); }, quiet());
    const std::string bytes = xtrace::onnx::export_model(f, xtrace::spec<float>({-1, 4}));
    for (std::size_t n = 0; n < bytes.size(); n += 1 + n / 16) {
        INFO("the first " << n << " of " << bytes.size() << " bytes");
        CHECK_THROWS_AS(xtrace::onnx::load_bytes(bytes.substr(0, n)), xtrace::model_error);
    }
    CHECK_NOTHROW(xtrace::onnx::load_bytes(bytes));
}

TEST_CASE("bytes that are not a model, or fields of the wrong type") {
    refused(std::string("\xff\xff\xff\xff", 4), "not an ONNX model");
    refused("hello, I am not protobuf", "not an ONNX model");
    // Field 7 (graph) written as a varint: protobuf keeps it as an unknown field.
    refused(std::string("\x38\x05\x42\x02\x10\x11", 6), "has no graph");
    auto b = doubling();
    b.g->mutable_node(0)->set_op_type("Softmax");
    b.g->mutable_node(0)->clear_input();
    b.g->mutable_node(0)->add_input("x");
    auto* a = b.g->mutable_node(0)->add_attribute();
    a->set_name("axis");
    a->set_type(::onnx::AttributeProto::FLOAT);
    a->set_f(1.5f);
    refused(b.bytes(), "attribute 'axis' should be an INT, it is FLOAT");
    auto s = doubling();
    s.g->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
        ::onnx::TensorProto::STRING);
    refused(s.bytes(), "input 'x' has element type STRING");
}

TEST_CASE("dims that overflow, are negative, or ask for absurd memory") {
    auto b = doubling();
    b.initializer("w", {std::int64_t(1) << 40, std::int64_t(1) << 40}, {});
    refused(b.bytes(), "initializer 'w'");
    auto n = doubling();
    n.initializer("w", {-3}, {});
    refused(n.bytes(), "negative dim");
    auto c = doubling();
    c.int_initializer("shape", {1000000, 1000000});
    c.g->mutable_output(0)->set_name("z");
    c.node("ConstantOfShape", {"shape"}, {"z"});
    refused(c.bytes(), "max_tensor_bytes");
    xtrace::onnx::load_options small;
    small.max_tensor_bytes = 64;
    CHECK_NOTHROW(xtrace::onnx::load_bytes(doubling().bytes(), small)); // dims unknown
    const auto m = xtrace::onnx::load_bytes(doubling().bytes(), small);
    CHECK_THROWS_AS(m(xt::xarray<float>::from_shape({100, 3})), xtrace::model_error);
    CHECK(m(xt::xarray<float>::from_shape({2, 3}))[0].shape() == xtrace::shape_t{2, 3});
}

TEST_CASE("a ConstantOfShape of a computed length is held to max_tensor_bytes when it runs") {
    // The length is an input: the fill's size is known only when the model runs.
    model_builder b;
    b.input("n", {1}, ::onnx::TensorProto::INT64).output("z", {-1});
    b.node("ConstantOfShape", {"n"}, {"z"});
    xtrace::onnx::load_options small;
    small.max_tensor_bytes = 4096;
    const auto m = xtrace::onnx::load_bytes(b.bytes(), small);
    const auto z = m(xt::xarray<std::int64_t>{1000})[0].as<float>();
    CHECK(z.size() == 1000);
    CHECK(xt::all(xt::equal(z, 0.f)));
    CHECK(m(xt::xarray<std::int64_t>{0})[0].shape() == xtrace::shape_t{0});
    CHECK_THROWS_AS(m(xt::xarray<std::int64_t>{std::int64_t(1) << 40}), xtrace::shape_error);
    CHECK_THROWS_WITH(m(xt::xarray<std::int64_t>{1025}), Contains("more than its limit of 1024"));
    CHECK_THROWS_WITH(m(xt::xarray<std::int64_t>{-1}), Contains("cannot be negative"));
    CHECK(m(xt::xarray<std::int64_t>{3})[0].shape() == xtrace::shape_t{3}); // works after
}

TEST_CASE("cycles, missing and duplicate names") {
    model_builder cycle;
    cycle.input("x", {3}).output("b", {3});
    cycle.node("Add", {"x", "b"}, {"a"});
    cycle.node("Neg", {"a"}, {"b"});
    refused(cycle.bytes(), "reads 'b', which no input, initializer or earlier node defines");
    model_builder missing;
    missing.input("x", {3}).output("y", {3});
    missing.node("Add", {"x", "nope"}, {"y"});
    refused(missing.bytes(), "reads 'nope'");
    model_builder undefined_output = doubling();
    undefined_output.output("ghost", {3});
    refused(undefined_output.bytes(), "output 'ghost' is never defined");
    model_builder twice = doubling();
    twice.node("Neg", {"x"}, {"y"});
    refused(twice.bytes(), "'y', which is already defined");
    model_builder init_twice = doubling();
    init_twice.initializer("w", {1}, {1.f});
    init_twice.initializer("w", {1}, {2.f});
    refused(init_twice.bytes(), "'w' is defined twice");
    model_builder unnamed = doubling();
    unnamed.g->mutable_node(0)->set_output(0, "");
    refused(unnamed.bytes(), "output 'y' is never defined");
}

TEST_CASE("unknown ops, other domains, opsets too new or missing") {
    auto b = doubling();
    b.g->mutable_node(0)->set_op_type("FancyAdd");
    refused(b.bytes(), "no lowering for op 'FancyAdd'");
    auto d = doubling();
    d.g->mutable_node(0)->set_domain("com.example");
    refused(d.bytes(), "domain 'com.example'");
    auto o = doubling();
    o.m.mutable_opset_import(0)->set_version(99);
    refused(o.bytes(), "opset 99");
    auto none = doubling();
    none.m.clear_opset_import();
    refused(none.bytes(), "imports no opset");
}

TEST_CASE("initializers whose data does not fit their shape") {
    auto b = doubling();
    b.initializer("w", {2, 2}, {1.f, 2.f, 3.f});
    refused(b.bytes(), "needs 4 elements, its float_data holds 3");
    auto r = doubling();
    auto* t = r.initializer("w", {2}, {});
    t->set_raw_data(std::string(7, '\0'));
    refused(r.bytes(), "raw_data");
    auto e = doubling();
    auto* x = e.initializer("w", {2}, {});
    x->set_data_location(::onnx::TensorProto::EXTERNAL);
    refused(e.bytes(), "external file");
    auto h = doubling();
    auto* f16 = h.initializer("w", {2}, {});
    f16->set_data_type(::onnx::TensorProto::FLOAT16);
    refused(h.bytes(), "FLOAT16");
}

TEST_CASE("what xtrace cannot lower is named") {
    model_builder concat;
    concat.input("x", {3}).output("y", {6});
    auto* n = concat.node("Concat", {"x", "x"}, {"y"});
    model_builder::attribute(n, "axis", 0);
    refused(concat.bytes(), "Concat of values the graph computes");
    model_builder reshape;
    reshape.input("x", {6}).input("s", {2}, ::onnx::TensorProto::INT64).output("y", {-1, -1});
    reshape.node("Reshape", {"x", "s"}, {"y"});
    refused(reshape.bytes(), "its shape must be known when the model is loaded");
}

TEST_CASE("arguments that do not fit the model's inputs are a signature_error naming the input") {
    const auto m = xtrace::onnx::load_bytes(doubling().bytes());
    CHECK_THROWS_WITH(m(xt::xarray<float>::from_shape({2, 4})),
                      Contains("input 0 ('x') must be float32[?,3]") &&
                          Contains("the argument is float32[2,4]"));
    CHECK_THROWS_AS(m(xt::xarray<double>::from_shape({2, 3})), xtrace::signature_error);
    CHECK_THROWS_AS(m(xt::xarray<float>::from_shape({3})), xtrace::signature_error);
    CHECK_THROWS_AS(m(), xtrace::signature_error);
    const xt::xarray<float> x = random_array<float>({4, 3});
    CHECK(identical(m(x)[0].as<float>(), xt::xarray<float>(x + x))); // still works
    CHECK_THROWS_AS(m(x)[0].as<double>(), xtrace::signature_error);
}
