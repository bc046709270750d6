// The runtime of the separately compiled test programs: the one translation unit that
// includes <xtrace/src.hpp>.
#include <xtrace/src.hpp>
