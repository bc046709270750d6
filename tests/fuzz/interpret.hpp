#ifndef XTRACE_TESTS_FUZZ_INTERPRET_HPP
#define XTRACE_TESTS_FUZZ_INTERPRET_HPP

// Runs a random program on xtrace tensors: symbolic ones (xtrace::erased<T>) while a traced
// function records it, eager ones (xtrace::eager_tensor<T>) when functions run eagerly. One
// interpreter serves both, so the two paths are fed the same calls. Declared here, defined in
// interpret_impl.hpp and compiled once per kind of tensor (run_symbolic.cpp, run_eager.cpp).

#include "program.hpp"

#include <xtrace/xtrace.hpp>

#include <array>
#include <cstdint>
#include <tuple>
#include <variant>

namespace xtrace::fuzz {

/// A value of any dtype, as tensors of kind V.
template <template <class> class V>
using value = std::variant<V<float>, V<double>, V<std::int32_t>, V<std::int64_t>, V<bool>>;

/// What the traced lambda returns: output_slots tensors of each dtype of output_types.
template <template <class> class V>
using outputs = std::tuple<V<float>, V<float>, V<float>, V<double>, V<double>, V<double>,
                           V<std::int32_t>, V<std::int32_t>, V<std::int32_t>, V<std::int64_t>,
                           V<std::int64_t>, V<std::int64_t>, V<bool>, V<bool>, V<bool>>;

/// Runs `p` on its inputs (in input_types order) and returns its outputs.
template <template <class> class V>
outputs<V> run(const program& p, const std::array<value<V>, input_types.size()>& inputs);

extern template outputs<erased> run<erased>(const program&,
                                            const std::array<value<erased>, input_types.size()>&);
extern template outputs<eager_tensor>
run<eager_tensor>(const program&, const std::array<value<eager_tensor>, input_types.size()>&);

/// The traced function's lambda for `p`: six tensors in, the outputs tuple out.
inline auto lambda_of(const program& p) {
    return [&p](auto x0, auto x1, auto x2, auto x3, auto x4, auto x5) {
        if constexpr (symbolic_tensor<decltype(x0)>)
            return run<erased>(p,
                               {erase(x0), erase(x1), erase(x2), erase(x3), erase(x4), erase(x5)});
        else
            return run<eager_tensor>(p, {x0, x1, x2, x3, x4, x5});
    };
}

} // namespace xtrace::fuzz

#endif
