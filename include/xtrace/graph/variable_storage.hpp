#ifndef XTRACE_GRAPH_VARIABLE_STORAGE_HPP
#define XTRACE_GRAPH_VARIABLE_STORAGE_HPP

// What a variable is to a graph: a dtype, a fixed shape and row-major bytes behind a lock, shared
// between the variable object and every graph that reads or assigns it (so a variable created
// while tracing lives as long as the graph that uses it).

#include "../core/dtype.hpp"
#include "../core/shape.hpp"

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace xtrace::graph {

/// The state behind one xtrace::variable.
struct variable_storage {
    std::string name;             ///< as given at creation, for messages ("" if none)
    dtype type = dtype::float32;  ///< element type
    shape_t shape;                ///< fixed at creation
    std::vector<std::byte> bytes; ///< the value, row-major; guarded by `mutex`
    /// False for a variable initialised from a traced value until the first call that runs
    /// its initializer (the bytes are zeros until then); guarded by `mutex`.
    bool initialized = true;
    mutable std::mutex mutex; ///< held while a step reads or writes `bytes`
    /// -1 for a variable. A stand-in, while tracing, for the variable passed as variable
    /// argument number `argument` of a traced call: graphs read and assign that call's variable
    /// where they name this storage.
    std::int64_t argument = -1;
    /// For a copy read while no trace is recorded (see eager/evaluate.hpp): the variable it
    /// copies, so that gradients with respect to that variable find the read.
    std::weak_ptr<const variable_storage> copy_of;

    /// "variable 'w'" or "a variable", for messages.
    std::string describe() const { return name.empty() ? "a variable" : "variable '" + name + "'"; }
};

} // namespace xtrace::graph

#endif
