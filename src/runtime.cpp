// xtrace::runtime: the runtime compiled once (see <xtrace/src.hpp>). Programs that link it
// compile with XTRACE_SEPARATE_COMPILATION, which the target passes on.
#include <xtrace/src.hpp>
