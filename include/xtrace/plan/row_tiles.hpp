#ifndef XTRACE_PLAN_ROW_TILES_HPP
#define XTRACE_PLAN_ROW_TILES_HPP

// Row tiling: when every row of every result depends only on the same row of the arguments
// (elementwise work, reductions and products along the other dims, as in softmax, layer norm or
// a dense layer), the plan also runs tile by tile of rows, so that a tile's intermediates, and
// the argument rows that several steps read, stay in cache between the steps that write and read
// them instead of going to memory whole.

#include "../config.hpp"
#include "../core/setting_scope.hpp"
#include "../graph/graph.hpp"
#include "plan.hpp"

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace xtrace::plan {

/// Bytes a tile carries between its steps that row tiling aims at by default (its temporaries,
/// and the argument rows that several steps read): they fit in a core's L2 cache.
inline constexpr std::size_t default_row_tile_bytes = std::size_t(128) << 10;

/// The calling thread's tile budget (tests lower it, to tile small tensors).
inline std::size_t& row_tile_bytes() noexcept {
    thread_local std::size_t bytes = default_row_tile_bytes;
    return bytes;
}

/// Sets the calling thread's tile budget for the scope's lifetime; 0 turns row tiling off.
using row_tile_scope = setting_scope<&row_tile_bytes>;

/// Bytes of a step's rows that a tile's plan reads at a time when it sweeps its rows through
/// its steps (plan::row_sweep) by default: they stay in a core's L1 cache from step to step.
inline constexpr std::size_t default_row_sweep_bytes = std::size_t(16) << 10;

/// The calling thread's sweep budget (0 turns sweeping off, as tests do to compare).
inline std::size_t& row_sweep_bytes() noexcept {
    thread_local std::size_t bytes = default_row_sweep_bytes;
    return bytes;
}

/// Sets the calling thread's sweep budget for the scope's lifetime.
using row_sweep_scope = setting_scope<&row_sweep_bytes>;

/// Fewest tiles a call whose tiles sweep their rows is split into when its temporaries would
/// allow longer ones: enough to share between threads evenly.
inline constexpr std::int64_t swept_row_tiles = 16;

/// How plan `p` runs tile by tile: `tile` runs rows [r, r + rows) for each r, `rest` the last
/// rows when they are fewer (else null). Indexed arguments and every output are read and
/// written at the tile's rows; the other arguments whole.
struct row_tiling {
    std::int64_t rows = 0;            ///< rows per tile
    std::int64_t total = 0;           ///< rows of the call
    std::vector<char> indexed;        ///< per argument (g.args order): its dim 0 is the row
    std::shared_ptr<const plan> tile; ///< the plan of a full tile
    std::shared_ptr<const plan> rest; ///< the plan of the last, shorter tile, if any
};

/// Per argument of `g` (bound to `shapes`), whether its dim 0 is the row dim of a row tiling,
/// or empty when `g` cannot run tile by tile: an effect, a result that is not rows, or an op
/// that mixes rows (a reduction over dim 0, a shape op, control flow, a product whose right
/// operand depends on the rows).
XTRACE_DECL std::vector<char> row_indexed_args(const graph::graph& g,
                                               std::span<const shape_t> shapes);

/// The row tiling of `p`, a plan of `g` for `arg_shapes`, or null when `g` cannot run tile by
/// tile or its intermediates fit the tile budget anyway.
XTRACE_DECL std::shared_ptr<const row_tiling> plan_row_tiles(const graph::graph& g, const plan& p,
                                                             std::span<const shape_t> arg_shapes);

/// Most elements a step of a call that runs whole (in no row tiles) may have for its rows to be
/// swept: a sweep runs on one thread, and larger steps are split between threads.
inline constexpr std::int64_t whole_sweep_elements = std::int64_t(1) << 15;

/// The plan of a call too small for row tiles, built again to sweep its rows as one tile does
/// (plan::row_sweep), or nothing: when its steps do not all work on rows alone, none reduces
/// rows, or a step has more than whole_sweep_elements elements.
XTRACE_DECL std::optional<plan> plan_whole_sweep(const graph::graph& g, const plan& p,
                                                 std::span<const shape_t> arg_shapes);

} // namespace xtrace::plan

#if XTRACE_DEFINE_RUNTIME
#include "impl/row_tiles.ipp"
// The runtime section calls plan::build, defined with build.hpp, which includes this header
// first: brought in last, so that either header alone gives a whole runtime.
#include "build.hpp"
#endif

#endif
