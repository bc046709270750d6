// fuzz::run over symbolic tensors, as a traced function records a program.

#include "interpret_impl.hpp"

namespace xtrace::fuzz {
template outputs<erased> run<erased>(const program&,
                                     const std::array<value<erased>, input_types.size()>&);
} // namespace xtrace::fuzz
