#ifndef XTRACE_PLAN_PLAN_HPP
#define XTRACE_PLAN_PLAN_HPP

// What a plan is: a graph bound to concrete shapes, as the steps that run it (fused elementwise
// regions, nodes run alone, cond and while_loop steps with their bodies' plans) and the home of
// every value. plan/build.hpp makes one, phase by phase; plan/text.hpp prints one. Built once
// per concrete shape and cached, so a call only walks it.

#include "../config.hpp"
#include "../core/shape.hpp"
#include "../graph/graph.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <variant>
#include <vector>

namespace xtrace::plan {

/// Where a node's value is while a plan runs.
enum class location : std::uint8_t {
    none,     ///< nowhere: it lives in a region's block registers only
    arg,      ///< the caller's argument `index`, read in place
    constant, ///< the plan's copy of the constant (`bits`)
    temp,     ///< the call's scratch, at byte `offset`
    output,   ///< the caller's output `index`, written in place
    view      ///< its input's memory read with other strides (a shape op)
};

/// Where one node's value is, and the position or offset that locates it.
struct home {
    location where = location::none;
    std::uint32_t index = 0; ///< arg or output position
    std::size_t offset = 0;  ///< temp byte offset
    std::uint64_t bits = 0;  ///< constant value
};

/// The leaves a statically fused kernel reads, laid out so that a call fills its table without
/// looking at nodes: a cache hit on a small tensor pays for every lookup.
struct fused_leaf_table {
    /// An argument leaf: its position in the kernel's table and among the arguments.
    struct arg_leaf {
        std::uint32_t leaf = 0;
        std::uint32_t arg = 0;
    };
    std::vector<std::uint64_t> bits; ///< per leaf: a constant's value (unused for arguments)
    std::vector<arg_leaf> args;      ///< the leaves that are arguments
    std::vector<std::uint32_t> read; ///< each argument read, once (its layout is checked)
    std::size_t element_bytes = 0;   ///< of every leaf and the output

    bool empty() const noexcept { return bits.empty(); }
    std::size_t size() const noexcept { return bits.size(); }
};

/// Sentinel for "no register".
inline constexpr std::uint16_t no_register = std::numeric_limits<std::uint16_t>::max();

/// Most nodes one region fuses. Slots (inputs, at most 3 per node, and nodes) are 16-bit
/// numbers: a larger elementwise graph is split into several regions.
inline constexpr std::size_t max_region_nodes = 8192;

/// Most leaves (arguments and constants, with repetition) a statically fused kernel takes:
/// larger expressions run on the interpreter.
inline constexpr std::size_t max_fused_leaves = 64;

/// One kernel call of a region's block program; operands and result are slot numbers.
struct instruction {
    graph::kernel_fn fn;
    std::array<std::uint16_t, 3> in{};
    std::uint16_t out = 0;
    /// A fused piece's kernel: how many operands it reads, from `region::leaf_slots[first_leaf]`
    /// on (0 for one op's kernel, whose operands are `in`).
    std::uint16_t leaves = 0;
    std::uint32_t first_leaf = 0;
    /// A fused piece's leaves read as one value per block (bit k: leaf k), each the value of the
    /// block's row (a row splat): the kernel reads this mask after its leaf pointers.
    std::uint64_t one_value = 0;
    /// A fused piece whose only reader is tail reduction `tail`: `fold` computes its block and
    /// folds it into that reduction's results, in place of `fn` and the tail's own pass.
    graph::fold_fn fold = nullptr;
    std::uint16_t tail = 0;
    /// A fused piece's `fn` and `fold` over several rows (graph::fused_piece::rows, fold_rows).
    graph::rows_fn rows = nullptr;
    graph::fold_rows_fn fold_rows = nullptr;
};

/// A reduction of a region's node over its innermost or outermost dims, computed block by block
/// as the region runs (so its input is never materialised for it).
struct tail_reduction {
    graph::node_id node;     ///< the reduction
    std::uint16_t slot = 0;  ///< its input's slot in the region
    std::size_t count = 1;   ///< input elements per result
    std::size_t results = 0; ///< result elements
    bool outer = false;      ///< the outermost dims are reduced (else the innermost)
    bool folded = false;     ///< its input's piece folds into it (instruction::fold)
};

/// A maximal set of elementwise nodes of one shape, run together block by block. Slots number
/// the region's values: its inputs first, then its nodes.
struct region {
    shape_t shape;                        ///< every node's shape
    std::size_t size = 0;                 ///< elements
    std::vector<graph::node_id> inputs;   ///< materialised operands: slots [0, inputs.size())
    std::vector<graph::node_id> nodes;    ///< computed nodes: slots after the inputs
    std::vector<instruction> program;     ///< one per node, in order
    std::vector<std::uint16_t> registers; ///< per slot: block register, or no_register
    std::vector<std::uint8_t> live_out;   ///< per node: written to its home
    std::uint16_t register_count = 0;     ///< distinct registers
    std::size_t block = 0;                ///< elements per block
    std::vector<tail_reduction> tails;    ///< reductions fed by the region, run with it
    /// Per node: the leaves of the fused piece that computes it (graph::node::piece), or empty
    /// when its own op's kernel does. Empty when no node runs a piece.
    std::vector<std::vector<graph::node_id>> piece_leaves;
    std::vector<std::uint16_t> leaf_slots; ///< the pieces' operands, as slots
    /// Some input is a row splat (plan/registers.hpp): no block crosses a row end.
    bool row_cut = false;
};

/// A step that runs one node alone: a reduction or shape op that needs its input whole, a
/// matmul, a print, a host function, a variable read or assignment.
struct node_step {
    graph::node_id node;
};

struct plan;

/// Sentinel for "no node".
inline constexpr graph::node_id no_node = std::numeric_limits<graph::node_id>::max();

/// A cond or while_loop step: its bodies bound to this call's shapes, and where its results go.
struct control_step {
    graph::node_id node;                             ///< the cond or while_loop node
    std::vector<std::shared_ptr<const plan>> bodies; ///< one per subgraph of the node
    /// Per result: its node, or no_node when nothing reads it.
    std::vector<graph::node_id> results;
};

/// One step of a plan.
using step = std::variant<region, node_step, control_step>;

/// The values step `s` of graph `g` reads: a region's inputs, or its node's operands.
inline std::span<const graph::node_id> step_reads(const graph::graph& g, const step& s) {
    if (const auto* r = std::get_if<region>(&s))
        return r->inputs;
    const graph::node_id node = std::holds_alternative<node_step>(s)
                                    ? std::get<node_step>(s).node
                                    : std::get<control_step>(s).node;
    return g[node].inputs;
}

/// A graph output that no step writes in place (an argument, a constant, a view, a node that is
/// also an earlier output): copied after the last step.
struct output_copy {
    std::uint32_t output; ///< output position
    graph::node_id node;  ///< whose value to copy
};

struct row_tiling;

/// Consecutive steps that may run at once (plan/concurrency.hpp): none reads memory another
/// writes, and none writes memory another uses.
struct concurrent_steps {
    std::uint32_t first = 0; ///< the first step's position
    std::uint32_t count = 0; ///< how many steps, at least 2
    /// Their work but the largest step's, in elements (what other threads could take): they
    /// run at once when it reaches the chunk floor.
    std::size_t work = 0;
};

/// Everything needed to run a graph on arguments of one concrete shape.
struct plan {
    std::vector<shape_t> shapes;     ///< concrete shape per node
    std::vector<home> homes;         ///< per node
    std::vector<step> steps;         ///< in execution order
    std::vector<output_copy> copies; ///< run after the steps
    std::size_t temp_bytes = 0;      ///< scratch for intermediate tensors
    std::size_t register_bytes = 0;  ///< scratch for the largest region's registers
    /// For a statically fused kernel: the leaves (args, constants) reached depth-first from the
    /// single output, in the order of the expression type; empty when they cannot be used
    /// (several outputs, too many leaves, or an argument of another shape than the output).
    fused_leaf_table fused_leaves;
    /// The graph this plan binds when it is not the one given to plan::build: a copy whose
    /// rank-pending nodes have their axes normalised for these shapes (plan/bind_ranks.hpp);
    /// same node ids. Null when the given graph is bound as it is.
    std::shared_ptr<const graph::graph> bound_graph;
    /// Per output: the argument positions whose buffers it may be written into when the
    /// caller donates them (plan/donation.hpp); each argument goes to one output at most.
    std::vector<std::vector<std::uint32_t>> donations;
    /// When set, the call runs tile by tile of rows with these plans instead of `steps`
    /// (plan/row_tiles.hpp); `steps` still run the whole call where tiles are not used.
    std::shared_ptr<const row_tiling> tiling;
    /// The groups of steps that may run at once, in step order.
    std::vector<concurrent_steps> concurrent;
    /// A tile's plan whose every step works on its rows alone (plan/row_tiles.hpp) may run a
    /// few rows at a time, each group through all the steps before the next: the bytes of a
    /// step's rows in a group, or 0 when it runs step by step.
    std::size_t row_sweep = 0;

    /// The graph to run this plan with, given the graph it was built from.
    const graph::graph& graph_for(const graph::graph& g) const noexcept {
        return bound_graph ? *bound_graph : g;
    }
};

} // namespace xtrace::plan

#endif
