#ifndef XTRACE_GRAPH_GRAPH_HPP
#define XTRACE_GRAPH_GRAPH_HPP

#include "../core/dtype.hpp"
#include "../core/op.hpp"
#include "../core/shape.hpp"
#include "variable_storage.hpp"

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace xtrace::graph {

/// Computes n elements of an elementwise op from operand pointers (one per operand).
using kernel_fn = void (*)(const void* const* in, void* out, std::size_t n);

/// Computes n elements of a fused piece from its leaf table (element i at offset i), stores them
/// at `out` unless it is null, and folds them into the results of the reduction reading them, as
/// reduce_kernels::accumulate does with a stored block: element i joins result (start + i) /
/// inner of `acc`.
using fold_fn = void (*)(const void* const* in, void* out, std::size_t start, std::size_t n,
                         std::size_t inner, std::byte* acc);

/// kernel_fn over `rows` rows of n elements: row r reads each operand moved on by r times its
/// step (bytes) and writes out + r * out_step (bytes).
using rows_fn = void (*)(const void* const* in, const std::ptrdiff_t* steps, void* out,
                         std::ptrdiff_t out_step, std::size_t n, std::size_t rows);

/// fold_fn over `rows` rows of n elements, as rows_fn moves them: row r's elements are
/// start + r * n on.
using fold_rows_fn = void (*)(const void* const* in, const std::ptrdiff_t* steps, void* out,
                              std::ptrdiff_t out_step, std::size_t start, std::size_t n,
                              std::size_t inner, std::byte* acc, std::size_t rows);

/// The compiled kernels of one elementwise op on one dtype: plain, and for binary ops with
/// operand 0 or 1 a single value read once (a splatted constant).
struct kernel_set {
    kernel_fn plain = nullptr;
    kernel_fn splat_first = nullptr;
    kernel_fn splat_second = nullptr;
};

/// Reduces a strided tensor (element strides, shape, rank) over the dims set in `axes_mask`
/// into a contiguous result.
using reduce_fn = void (*)(const std::byte* in, const std::int64_t* strides,
                           const std::int64_t* shape, std::size_t rank, std::uint64_t axes_mask,
                           std::byte* out);

/// The kernels of one reduction on one dtype: the whole reduction of a materialised tensor, and
/// the pieces that compute it block by block inside the region producing its input (when it
/// reduces the innermost or the outermost dims).
struct reduce_kernels {
    reduce_fn whole = nullptr;
    /// Sets n results to the reduction's identity.
    void (*init)(std::byte* acc, std::size_t n) = nullptr;
    /// Folds elements [start, start + n) of the row-major input, given in `block`, into `acc`
    /// when the innermost dims are reduced: element i belongs to result i / inner.
    void (*accumulate)(const std::byte* block, std::size_t start, std::size_t n, std::size_t inner,
                       std::byte* acc) = nullptr;
    /// The same when the outermost dims are reduced: element i belongs to result i % results.
    void (*accumulate_outer)(const std::byte* block, std::size_t start, std::size_t n,
                             std::size_t results, std::byte* acc) = nullptr;
    /// Finishes n results, each over `count` elements (mean divides).
    void (*finish)(std::byte* acc, std::size_t n, std::size_t count) = nullptr;
    /// Folds n partial results (of one chunk of the input) into `acc`, element by element.
    void (*combine)(std::byte* acc, const std::byte* part, std::size_t n) = nullptr;
    /// Reduces `rows` contiguous runs of `count` elements, the first at `in` and each next one
    /// `step` bytes on, into `rows` results at `out`: what `whole` gives when every dim but the
    /// outermost is reduced and they are row-major, without working out that it is so.
    void (*rows)(const std::byte* in, std::ptrdiff_t step, std::size_t count, std::size_t rows,
                 std::byte* out) = nullptr;
};

/// C = A B for one m x k by k x n pair: element strides of A's and B's rows and columns; C is
/// contiguous m x n.
using matmul_fn = void (*)(const std::byte* a, std::int64_t a_row, std::int64_t a_col,
                           const std::byte* b, std::int64_t b_row, std::int64_t b_col,
                           std::int64_t m, std::int64_t n, std::int64_t k, std::byte* c);

/// Writes a strided tensor (element strides, shape, rank) to a stream.
using print_fn = void (*)(std::ostream& os, const std::byte* data, const std::int64_t* strides,
                          const std::int64_t* shape, std::size_t rank);

/// Memory for a host callback's result, asked for once the callback has returned its shape.
struct result_allocator {
    virtual std::byte* allocate(const std::vector<std::int64_t>& shape) = 0;

protected:
    ~result_allocator() = default;
};

/// A host callback as the interpreter calls it: operand data, element strides and shapes in,
/// the result written row-major to `out`, whose shape the node declares.
struct host_call {
    virtual ~host_call() = default;
    virtual void run(const std::byte* const* data, const std::int64_t* const* strides,
                     const std::vector<std::int64_t>* shapes,
                     const std::vector<std::int64_t>& out_shape, std::byte* out) const = 0;
    /// The same for a result whose dims the node leaves unknown: written row-major to the
    /// memory `out` gives for the shape the callback returned.
    virtual void run_dynamic(const std::byte* const* data, const std::int64_t* const* strides,
                             const std::vector<std::int64_t>* shapes,
                             result_allocator& out) const = 0;
};

struct graph;

/// Index of a node in its graph; inputs always have smaller ids (the graph is topologically
/// sorted).
using node_id = std::uint32_t;

/// A subtree of elementwise ops compiled into one kernel when it was traced
/// (interp/static_fusion.hpp): the interpreter may run it in place of the subtree's ops, keeping
/// every intermediate in registers.
struct fused_piece {
    kernel_fn fn = nullptr; ///< computes the root from a table of pointers, one per leaf
    std::size_t ops = 0;    ///< op nodes in the subtree, counted with repetition (a tree walk)
    /// What the kernel reads, in its order: constants as one value, anything else element by
    /// element, or as one value when its bit is set in the mask passed after the leaves.
    std::vector<node_id> leaves;
    /// Leaves the kernel can read as one value (bit k: leaf k): those computed from reductions.
    /// Its table then holds, after the leaves, a pointer to the mask of those read so.
    std::uint64_t one_value_leaves = 0;
    /// The kernel fused with the reduction `fold_op` that reads the root over its innermost
    /// dims, or null: the reduction then needs no pass of its own over the root's elements.
    fold_fn fold = nullptr;
    rows_fn rows = nullptr;           ///< fn over several rows, each reading its own row splats
    fold_rows_fn fold_rows = nullptr; ///< fold over several rows, as `rows`
    op_kind fold_op = op_kind::sum;
    /// Elements per SIMD batch of the kernels: fold computes a reduction's rows batch by batch
    /// as the kernel would compute the block only when rows are a whole number of batches.
    std::size_t fold_width = 1;
};

/// One operation of the runtime graph IR.
struct node {
    op_kind op = op_kind::constant;   ///< what it computes
    dtype type = dtype::float32;      ///< element type of its result
    std::vector<node_id> inputs;      ///< operands, in order
    shape_t shape;                    ///< result shape as known at trace time (-1 unknown)
    std::int64_t arg_position = 0;    ///< arg: position of the argument in the call (in a
                                      ///< subgraph: of the input of its cond or while_loop node)
    std::int64_t result_index = 0;    ///< result: which result of its cond or while_loop node
    double fvalue = 0;                ///< constant of a floating dtype
    std::int64_t ivalue = 0;          ///< constant of an integer or bool dtype
    std::int64_t max_iterations = -1; ///< while_loop: the most iterations (-1: no bound)
    std::int64_t carried = 0;     ///< scan: how many inputs (first) are carried state; the body's
                                  ///< first `carried` outputs are the next state, the rest stacked
    std::int64_t scanned = 0;     ///< scan: how many inputs (after the carried ones) are sliced
                                  ///< along their leading dim, one slice per step
    bool reverse = false;         ///< scan: the steps take the slices from last to first (each
                                  ///< per-step output still lands in its slice's row)
    bool initializer = false;     ///< assign_variable: runs until the variable is initialised
    bool custom_gradient = false; ///< stop_gradient made by xtrace::custom_gradient (its
                                  ///< rule lives with the trace that recorded it)
    /// Elementwise ops: the kernels chosen from the expression type when traced, so that a
    /// program compiles only the kernels its graphs use. assign_variable: when set, the update
    /// (add or sub) applied to the variable and the value under the variable's lock.
    const kernel_set* kernels = nullptr;
    /// Elementwise ops: the compiled kernel of the subtree of elementwise ops this node roots, if
    /// its expression type had one (null for graphs not traced from typed expressions).
    std::shared_ptr<const fused_piece> piece;
    /// Reductions: the reduced dims, sorted. transpose: the permutation. expand_dims, squeeze:
    /// the axis.
    std::vector<std::int64_t> axes;
    /// reshape, broadcast_to: the requested dims.
    shape_t dims;

    /// A shape op's attributes: `dims` for reshape and broadcast_to, else `axes`.
    const std::vector<std::int64_t>& shape_attributes() const {
        return op == op_kind::reshape || op == op_kind::broadcast_to ? dims : axes;
    }
    bool keep_dims = false; ///< reductions: reduced dims kept with size 1
    /// Reductions, transpose, expand_dims, squeeze traced on an input of unknown rank: `axes`
    /// as written (negative, empty for transpose's reversal, every_axis), normalised when the
    /// graph is planned for a concrete rank (plan/bind_ranks.hpp).
    bool rank_pending = false;
    const reduce_kernels* reduce = nullptr; ///< reductions: kernels chosen from the expression type
    matmul_fn matmul = nullptr;             ///< matmul: the kernel chosen from the expression type
    std::string text;                       ///< print: the label
    std::vector<print_fn> printers;         ///< print: one writer per input, chosen from its type
    std::shared_ptr<const host_call> host;  ///< host_function: the callback
    /// cond: the then and else graphs; while_loop: the condition and body graphs. An arg of
    /// theirs reads `inputs[arg_position]`; in a while_loop, the first `body.outputs.size()` inputs
    /// are the loop variables' initial values, and those args read the current values. scan:
    /// the body; its args below `carried` read the current state, the next `scanned` args the
    /// current slices.
    std::vector<std::shared_ptr<const graph>> bodies;
    std::shared_ptr<variable_storage> var; ///< read_variable, assign_variable: the variable
};

/// A traced function's graph: nodes in topological order, the tensor arguments and the outputs.
struct graph {
    std::vector<node> nodes;      ///< every node, operands first
    std::vector<node_id> args;    ///< the arg nodes, in call order
    std::vector<node_id> outputs; ///< what the function returns, in order
    std::vector<node_id> effects; ///< side-effect nodes (print, host_function, assign), in order

    const node& operator[](node_id id) const { return nodes[id]; }
};

} // namespace xtrace::graph

#endif
