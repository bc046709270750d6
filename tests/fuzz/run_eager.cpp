// fuzz::run over eager tensors, as functions run eagerly.

#include "interpret_impl.hpp"

namespace xtrace::fuzz {
template outputs<eager_tensor>
run<eager_tensor>(const program&, const std::array<value<eager_tensor>, input_types.size()>&);
} // namespace xtrace::fuzz
