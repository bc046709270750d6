#ifndef XTRACE_PLAN_STAGES_HPP
#define XTRACE_PLAN_STAGES_HPP

// A graph whose shapes are not all known before it runs: a host_function whose spec has unknown
// dims (tf.py_function's case: a filter, a sort that drops duplicates) tells its result's shape
// only when its callback returns. Such a graph runs in stages: the nodes recorded before the
// first such host node (every effect before it included, so program order holds), then the
// callback, then the nodes up to the next one, and so on. Each stage is a graph of its own,
// planned once its arguments' shapes are known and cached per shape; values crossing a stage
// boundary become outputs of the stage that computes them and arguments of the stages that read
// them. interp/run_stages.hpp runs the chain.

#include "../config.hpp"
#include "../graph/graph.hpp"
#include "plan.hpp"

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <utility>
#include <vector>

namespace xtrace::plan {

/// One stage: a graph whose args are the call's tensor arguments (in order), then `carried`.
struct stage {
    graph::graph g;
    std::vector<graph::node_id> carried;  ///< original ids of the values it reads from before it
    std::vector<graph::node_id> produced; ///< original ids of g's outputs (the last stage: none,
                                          ///< its outputs are the function's)
    graph::node_id host_id = no_node;     ///< the host_function run after it (not the last)
    graph::node host;                     ///< that node, its inputs original ids
};

/// A graph split at its host functions of unknown result dims, with the plans of its later
/// stages (the first stage is planned like any graph, per call shape).
class staged_graph {
public:
    /// `g` in stages, or nullptr when every shape is known before it runs.
    XTRACE_DECL static std::shared_ptr<const staged_graph> split(const graph::graph& g);

    /// The stages, in order; at least two.
    const std::vector<stage>& stages() const noexcept { return stages_; }

    /// The original graph's arg nodes, in call order (what a host's input may name).
    const std::vector<graph::node_id>& args() const noexcept { return args_; }

    /// The plan of stage `k` for args of `arg_shapes`, made on first use and cached.
    XTRACE_DECL std::shared_ptr<const plan> plan_for(std::size_t k,
                                                     std::span<const shape_t> arg_shapes) const;

private:
    /// Plans kept before the cache starts over (each distinct result length adds one).
    static constexpr std::size_t max_plans = 256;

    std::vector<stage> stages_;
    std::vector<graph::node_id> args_;
    mutable std::mutex mutex_;
    mutable std::map<std::pair<std::size_t, std::vector<shape_t>>, std::shared_ptr<const plan>>
        plans_;
};

/// True for a host_function node whose result dims are known only when it runs.
inline bool is_dynamic_host(const graph::node& n) {
    return n.op == op_kind::host_function && !is_fully_known(n.shape);
}

} // namespace xtrace::plan

#if XTRACE_DEFINE_RUNTIME
#include "impl/stages.ipp"
#endif

#endif
