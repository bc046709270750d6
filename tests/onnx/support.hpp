#ifndef XTRACE_TESTS_ONNX_SUPPORT_HPP
#define XTRACE_TESTS_ONNX_SUPPORT_HPP

// Round trips through ONNX: a traced function exported, checked by ONNX's own checker and shape
// inference, loaded back and run; its results compared bit for bit with the traced function's.

#include "support/testing.hpp"

#include <xtrace/onnx.hpp>

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <cstring>
#include <tuple>

namespace xtrace::testing {

/// Throws unless ONNX's checker and strict shape inference accept the model `bytes`.
inline void validate_with_onnx(const std::string& bytes) {
    ::onnx::ModelProto m;
    REQUIRE(m.ParseFromString(bytes));
    ::onnx::checker::check_model(m);
    ::onnx::shape_inference::InferShapes(m, ::onnx::OpSchemaRegistry::Instance(),
                                         ::onnx::ShapeInferenceOptions(true, 1, false));
}

/// True when a and b have the same shape and the same bits (any NaN matching any NaN).
template <class T>
bool identical(const xt::xarray<T>& a, const xt::xarray<T>& b) {
    if (a.shape() != b.shape())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const T x = a.data()[i], y = b.data()[i];
        if constexpr (std::is_floating_point_v<T>)
            if (std::isnan(x) && std::isnan(y))
                continue;
        if (std::memcmp(&x, &y, sizeof(T)) != 0)
            return false;
    }
    return true;
}

/// The outputs of a traced call as a tuple, whether it returned one array or several.
template <class R>
auto as_tuple(R r) {
    if constexpr (requires { std::tuple_size<R>::value; })
        return r;
    else
        return std::tuple<R>(std::move(r));
}

/// Checks that `got` (a loaded model's outputs) holds exactly `expected` (a traced call's).
template <class R>
void check_identical(const R& expected, const std::vector<xtrace::onnx::value>& got) {
    const auto want = as_tuple(expected);
    REQUIRE(got.size() == std::tuple_size_v<decltype(want)>);
    [&]<std::size_t... K>(std::index_sequence<K...>) {
        (
            [&] {
                using T = typename std::tuple_element_t<K, decltype(want)>::value_type;
                INFO("output " << K);
                REQUIRE(got[K].type() == xtrace::dtype_of_v<T>);
                CHECK(identical(std::get<K>(want), got[K].as<T>()));
            }(),
            ...);
    }
    (std::make_index_sequence<std::tuple_size_v<decltype(want)>>{});
}

/// A spec of `a`'s dtype and rank with every dim unknown.
template <class T>
auto unknown_dims(const xt::xarray<T>& a) {
    return xtrace::spec<T>(xtrace::shape_t(a.dimension(), -1));
}

/// f exported for its arguments' exact shapes and again with every dim unknown; both models
/// validated by ONNX, loaded and run on the arguments: the same bits as f.
template <class F, class... A>
void round_trip(const F& f, const A&... args) {
    const auto expected = f(args...);
    for (bool symbolic : {false, true}) {
        INFO((symbolic ? "every dim unknown" : "exact shapes"));
        const std::string bytes = symbolic ? xtrace::onnx::export_model(f, unknown_dims(args)...)
                                           : xtrace::onnx::export_model(f, args...);
        validate_with_onnx(bytes);
        const auto m = xtrace::onnx::load_bytes(bytes);
        CHECK(m.lowered_once()); // what xtrace exports needs no shape arithmetic at run time
        check_identical(expected, m(args...));
    }
}

/// A model written field by field, for the loader's tests.
struct model_builder {
    ::onnx::ModelProto m;
    ::onnx::GraphProto* g = m.mutable_graph();

    explicit model_builder(std::int64_t opset = 17) {
        m.set_ir_version(8);
        auto* o = m.add_opset_import();
        o->set_domain("");
        o->set_version(opset);
        g->set_name("test");
    }
    static void describe(::onnx::ValueInfoProto* v, const std::string& name, int elem,
                         const std::vector<std::int64_t>& dims) {
        v->set_name(name);
        auto* t = v->mutable_type()->mutable_tensor_type();
        t->set_elem_type(elem);
        auto* s = t->mutable_shape();
        for (auto d : dims)
            if (d >= 0)
                s->add_dim()->set_dim_value(d);
            else
                s->add_dim()->set_dim_param("n");
    }
    model_builder& input(const std::string& name, std::vector<std::int64_t> dims,
                         int elem = ::onnx::TensorProto::FLOAT) {
        describe(g->add_input(), name, elem, dims);
        return *this;
    }
    model_builder& output(const std::string& name, std::vector<std::int64_t> dims = {},
                          int elem = ::onnx::TensorProto::FLOAT) {
        describe(g->add_output(), name, elem, dims);
        return *this;
    }
    ::onnx::NodeProto* node(const std::string& op, std::vector<std::string> in,
                            std::vector<std::string> out) {
        auto* n = g->add_node();
        n->set_op_type(op);
        for (auto& i : in)
            n->add_input(i);
        for (auto& o : out)
            n->add_output(o);
        return n;
    }
    ::onnx::TensorProto* initializer(const std::string& name, std::vector<std::int64_t> dims,
                                     std::vector<float> values) {
        auto* t = g->add_initializer();
        t->set_name(name);
        t->set_data_type(::onnx::TensorProto::FLOAT);
        for (auto d : dims)
            t->add_dims(d);
        for (float v : values)
            t->add_float_data(v);
        return t;
    }
    ::onnx::TensorProto* int_initializer(const std::string& name,
                                         std::vector<std::int64_t> values) {
        auto* t = g->add_initializer();
        t->set_name(name);
        t->set_data_type(::onnx::TensorProto::INT64);
        t->add_dims(static_cast<std::int64_t>(values.size()));
        for (auto v : values)
            t->add_int64_data(v);
        return t;
    }
    static void attribute(::onnx::NodeProto* n, const std::string& name, std::int64_t v) {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(::onnx::AttributeProto::INT);
        a->set_i(v);
    }
    std::string bytes() const { return m.SerializeAsString(); }
};

} // namespace xtrace::testing

#endif
