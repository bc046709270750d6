// The runtime section of plan/row_tiles.hpp.

#include "../registers.hpp"

#include <algorithm>
#include <optional>
#include <type_traits>
#include <variant>

namespace xtrace::plan {

XTRACE_DECL plan build(const graph::graph& g, std::span<const shape_t> arg_shapes);

namespace detail {

// One pass of row_indexed_args with the arguments in `invariant` taken as the same for every
// row: the per-node answer, or empty with `misread` set to an argument that would have to be
// invariant (an argument of dim 0 the row count read along another dim).
inline std::vector<char> row_indexed_nodes(const graph::graph& g, std::span<const shape_t> shapes,
                                           dim_t rows, const std::vector<char>& invariant,
                                           graph::node_id& misread) {
    std::vector<char> indexed(g.nodes.size(), 0);
    for (graph::node_id id = 0; id < g.nodes.size(); ++id) {
        const graph::node& n = g[id];
        const shape_t& s = shapes[id];
        bool any = false;
        for (graph::node_id in : n.inputs)
            any = any || indexed[in];
        if (n.op == op_kind::arg) {
            indexed[id] = !invariant[id] && !s.empty() && s[0] == rows;
        } else if (n.op == op_kind::constant) {
            indexed[id] = 0;
        } else if (info(n.op).elementwise) {
            // An indexed operand's dim 0 must meet the result's; an invariant one must not
            // reach it (or be 1 there).
            for (graph::node_id in : n.inputs) {
                const shape_t& si = shapes[in];
                if (indexed[in] && si.size() != s.size()) {
                    misread = g[in].op == op_kind::arg ? in : misread;
                    return {};
                }
                if (!indexed[in] && si.size() == s.size() && !s.empty() && si[0] != 1)
                    return {};
            }
            indexed[id] = any;
        } else if (!any) {
            return {}; // an op other than elementwise on every row's values: not worth repeating
        } else if (info(n.op).reduction) {
            if ((!n.axes.empty() && n.axes[0] == 0) || s.empty() || !indexed[n.inputs[0]])
                return {};
            indexed[id] = 1;
        } else if (n.op == op_kind::matmul) {
            const graph::node_id a = n.inputs[0], b = n.inputs[1];
            if (indexed[b] && g[b].op == op_kind::arg)
                misread = b;
            if (!indexed[a] || indexed[b] || shapes[a].size() != 2 || shapes[b].size() != 2)
                return {};
            indexed[id] = 1;
        } else {
            return {};
        }
        if (indexed[id] && (s.empty() || s[0] != rows))
            return {};
    }
    return indexed;
}

// Per node of `g` (bound to `shapes`), whether its dim 0 is the row dim of a row tiling, or
// empty when `g` cannot run tile by tile (see row_indexed_args).
inline std::vector<char> row_indexed(const graph::graph& g, std::span<const shape_t> shapes) {
    if (!g.effects.empty() || g.outputs.empty() || shapes[g.outputs[0]].empty())
        return {};
    const dim_t rows = shapes[g.outputs[0]][0];
    if (rows < 2)
        return {};
    // An argument whose dim 0 happens to equal the row count may be read along another dim
    // (a [1024] bias on [1024, 1024] rows): it is then taken as invariant, and the graph read
    // again.
    std::vector<char> invariant(g.nodes.size(), 0);
    for (std::size_t pass = 0; pass <= g.args.size(); ++pass) {
        graph::node_id misread = static_cast<graph::node_id>(g.nodes.size());
        const std::vector<char> indexed =
            detail::row_indexed_nodes(g, shapes, rows, invariant, misread);
        if (indexed.empty()) {
            if (misread == g.nodes.size() || invariant[misread])
                return {};
            invariant[misread] = 1;
            continue;
        }
        for (graph::node_id o : g.outputs)
            if (!indexed[o])
                return {};
        return indexed;
    }
    return {};
}

// True when every step of `p`, a tile's plan, works on its rows alone (`indexed`: per node,
// whether its dim 0 is the row dim): a rank-2 region of row-indexed nodes, whose tail
// reductions keep the rows, or a reduction of a row-indexed node (which keeps them too).
inline bool sweeps_rows(const graph::graph& g, const plan& p, const std::vector<char>& indexed) {
    for (const step& s : p.steps) {
        if (const auto* r = std::get_if<region>(&s)) {
            if (r->shape.size() != 2 ||
                !std::all_of(r->nodes.begin(), r->nodes.end(),
                             [&](graph::node_id id) { return indexed[id] != 0; }) ||
                std::any_of(r->tails.begin(), r->tails.end(),
                            [](const tail_reduction& t) { return t.outer; }))
                return false;
        } else if (const auto* n = std::get_if<node_step>(&s)) {
            if (!info(g[n->node].op).reduction || !indexed[n->node])
                return false;
        } else {
            return false;
        }
    }
    return !p.steps.empty();
}

// `g` built for `shapes` as one tile that sweeps its rows (plan::row_sweep), or nothing when
// sweeps are off or a step of that plan does not work on rows alone (`nodes`: per node, whether
// its dim 0 is the row dim). It reads per-row values as row splats however short the rows: a
// value gathered into a register for every block would cost more than the row's work.
inline std::optional<plan> swept_plan(const graph::graph& g, std::span<const shape_t> shapes,
                                      const std::vector<char>& nodes) {
    const std::size_t sweep = row_sweep_bytes();
    if (sweep == 0)
        return std::nullopt;
    const row_tile_scope whole(0);
    const row_splat_scope any_row(1);
    plan p = build(g, shapes);
    if (!sweeps_rows(g, p, nodes))
        return std::nullopt;
    p.row_sweep = sweep;
    return p;
}

// The answers of `nodes` (per node) for the arguments of `g`, in g.args order.
inline std::vector<char> of_args(const graph::graph& g, const std::vector<char>& nodes) {
    std::vector<char> args;
    if (!nodes.empty())
        for (graph::node_id a : g.args)
            args.push_back(nodes[a]);
    return args;
}

} // namespace detail

XTRACE_DECL std::vector<char> row_indexed_args(const graph::graph& g,
                                               std::span<const shape_t> shapes) {
    return detail::of_args(g, detail::row_indexed(g, shapes));
}

namespace detail {

// Bytes that go from one step to a later one: the temps, and the row-indexed arguments (per
// argument position in `indexed`) that more than one step reads (layer norm reads x for the
// mean, the variance and the result), which a tile keeps in cache from its first read to its
// last.
inline std::size_t carried_bytes(const graph::graph& g, const plan& p,
                                 const std::vector<char>& indexed) {
    std::vector<unsigned> readers(g.nodes.size(), 0);
    std::vector<graph::node_id> reads;
    for (const step& s : p.steps) {
        const auto of_step = step_reads(g, s);
        reads.assign(of_step.begin(), of_step.end());
        std::sort(reads.begin(), reads.end());
        reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
        for (graph::node_id id : reads)
            ++readers[id];
    }
    std::size_t bytes = p.temp_bytes;
    for (std::size_t i = 0; i < g.args.size(); ++i) {
        const graph::node_id a = g.args[i];
        if (indexed[i] && readers[a] > 1)
            bytes += static_cast<std::size_t>(num_elements(p.shapes[a])) * dtype_size(g[a].type);
    }
    return bytes;
}

} // namespace detail

XTRACE_DECL std::shared_ptr<const row_tiling> plan_row_tiles(const graph::graph& g, const plan& p,
                                                             std::span<const shape_t> arg_shapes) {
    const std::size_t budget = row_tile_bytes();
    if (budget == 0 || p.bound_graph)
        return nullptr;
    const std::vector<char> nodes = detail::row_indexed(g, p.shapes);
    if (nodes.empty())
        return nullptr;
    std::vector<char> indexed = detail::of_args(g, nodes);
    const std::size_t carried = detail::carried_bytes(g, p, indexed);
    if (carried <= budget)
        return nullptr;
    const dim_t rows = p.shapes[g.outputs[0]][0];
    // Rows whose intermediates fill the budget, and enough elements per tile that running a
    // tile costs little more than its work.
    std::size_t out_elements = 0;
    for (graph::node_id o : g.outputs)
        out_elements += static_cast<std::size_t>(num_elements(p.shapes[o]));
    const std::size_t per_row_bytes = std::max<std::size_t>(carried / rows, 1);
    const std::size_t per_row_elements = std::max<std::size_t>(out_elements / rows, 1);
    std::size_t least =
        (std::min<std::size_t>(4096, budget) + per_row_elements - 1) / per_row_elements;
    // A product packs its right operand again for every tile: as many rows as its own row
    // panels take, at least (a smaller budget is a test's).
    if (budget >= default_row_tile_bytes &&
        std::any_of(g.nodes.begin(), g.nodes.end(),
                    [](const graph::node& n) { return n.op == op_kind::matmul; }))
        least = std::max<std::size_t>(least, 64);
    auto tile_rows = static_cast<dim_t>(std::max(budget / per_row_bytes, least));
    if (tile_rows >= rows)
        return nullptr;
    auto tiling = std::make_shared<row_tiling>();
    tiling->rows = tile_rows;
    tiling->total = rows;
    auto shapes_for = [&](dim_t r) {
        std::vector<shape_t> s(arg_shapes.begin(), arg_shapes.end());
        for (std::size_t i = 0; i < s.size(); ++i)
            if (indexed[i])
                s[i][0] = r;
        return s;
    };
    auto plan_for = [&](dim_t r) {
        const std::vector<shape_t> s = shapes_for(r);
        if (auto swept = detail::swept_plan(g, s, nodes))
            return std::make_shared<const plan>(std::move(*swept));
        const row_tile_scope whole(0); // a tile runs as one
        return std::make_shared<const plan>(build(g, s));
    };
    tiling->tile = plan_for(tile_rows);
    // A tile that sweeps its rows keeps each step's rows in L1 itself: of what it carries, only
    // its temporaries need the budget's cache. Longer tiles then cost less to set up (each sets
    // up every step's state), as long as the call still splits into swept_row_tiles of them.
    if (tiling->tile->row_sweep) {
        const std::size_t temp_per_row = std::max<std::size_t>(
            tiling->tile->temp_bytes / static_cast<std::size_t>(tile_rows), 1);
        const dim_t longer = std::min(static_cast<dim_t>(budget / temp_per_row),
                                      (rows + swept_row_tiles - 1) / swept_row_tiles);
        if (longer > tile_rows) {
            auto swept = plan_for(longer);
            if (swept->row_sweep) {
                tile_rows = longer;
                tiling->rows = tile_rows;
                tiling->tile = std::move(swept);
            }
        }
    }
    if (rows % tile_rows)
        tiling->rest = plan_for(rows % tile_rows);
    tiling->indexed = std::move(indexed);
    return tiling;
}

XTRACE_DECL std::optional<plan> plan_whole_sweep(const graph::graph& g, const plan& p,
                                                 std::span<const shape_t> arg_shapes) {
    // Tiles turned off (row_tile_scope(0)) turn this off too; the plans of tiles, and the plan
    // built by swept_plan, are built so, which keeps this from running again inside them.
    if (row_sweep_bytes() == 0 || row_tile_bytes() == 0 || p.bound_graph || p.tiling)
        return std::nullopt;
    bool reduces = false;
    for (const step& s : p.steps) {
        if (const auto* r = std::get_if<region>(&s)) {
            if (static_cast<std::int64_t>(r->size) > whole_sweep_elements)
                return std::nullopt;
            reduces = reduces || !r->tails.empty();
        } else if (const auto* n = std::get_if<node_step>(&s)) { // a reduction: its input's size
            if (num_elements(p.shapes[g[n->node].inputs.empty() ? n->node : g[n->node].inputs[0]]) >
                whole_sweep_elements)
                return std::nullopt;
            reduces = reduces || info(g[n->node].op).reduction;
        }
    }
    if (!reduces)
        return std::nullopt;
    const std::vector<char> nodes = detail::row_indexed(g, p.shapes);
    if (nodes.empty())
        return std::nullopt;
    return detail::swept_plan(g, arg_shapes, nodes);
}

} // namespace xtrace::plan
