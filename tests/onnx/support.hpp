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
        check_identical(expected, m(args...));
    }
}

} // namespace xtrace::testing

#endif
