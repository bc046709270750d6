#ifndef XTRACE_PLAN_PLAN_HPP
#define XTRACE_PLAN_PLAN_HPP

// A graph bound to concrete shapes: which nodes fuse into which elementwise region, where every
// materialised value lives, and each region's block program. Built once per concrete shape and
// cached, so a call only walks it.

#include "../config.hpp"
#include "../core/error.hpp"
#include "../graph/graph.hpp"
#include "arena.hpp"
#include "bind_shapes.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <unistd.h>
#include <unordered_map>
#include <vector>

namespace xtrace::plan {

/// Where a node's value lives while a plan runs.
enum class home : std::uint8_t {
    none,     ///< never materialised (lives in a region's block registers only)
    arg,      ///< the caller's argument `index`
    constant, ///< the plan's constant bytes
    temp,     ///< scratch at byte `offset`
    output,   ///< the caller's output `index`
    view      ///< its input's memory with other strides (a shape op)
};

/// A node's home.
struct storage {
    plan::home home = home::none;
    std::uint32_t index = 0; ///< arg or output position
    std::size_t offset = 0;  ///< temp byte offset
    std::uint64_t bits = 0;  ///< constant value
};

/// Sentinel for "no register".
inline constexpr std::uint16_t no_register = std::numeric_limits<std::uint16_t>::max();

/// Most nodes one region fuses. Slots (inputs, at most 3 per node, and nodes) are 16-bit
/// numbers: a larger elementwise graph is split into several regions.
inline constexpr std::size_t max_region_nodes = 8192;

/// One kernel call of a region's block program; operands and result are slot numbers.
struct instruction {
    graph::kernel_fn fn;
    std::array<std::uint16_t, 3> in{};
    std::uint16_t out = 0;
};

/// A reduction of a region's node over its innermost or outermost dims, computed block by block as
/// the region runs (so its input is never materialised for it).
struct tail_reduction {
    graph::node_id node;     ///< the reduction
    std::uint16_t slot = 0;  ///< its input's slot in the region
    std::size_t count = 1;   ///< input elements per result
    std::size_t results = 0; ///< result elements
    bool outer = false;      ///< the outermost dims are reduced (else the innermost)
};

/// A maximal set of elementwise nodes of one shape, run together block by block.
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
};

/// A graph output that is not written by a region (an argument, a constant, a repeated node).
struct output_copy {
    std::uint32_t output; ///< output position
    graph::node_id node;  ///< whose value to copy
};

struct plan;

/// A cond or while_loop step: its bodies bound to this call's shapes, and where its results go.
struct control {
    graph::node_id node;                             ///< the cond or while_loop node
    std::vector<std::shared_ptr<const plan>> bodies; ///< one per subgraph of the node
    /// Per result: its node, or no_node when nothing reads it.
    std::vector<graph::node_id> results;
};

/// Sentinel for "no node".
inline constexpr graph::node_id no_node = std::numeric_limits<graph::node_id>::max();

/// What a step of a plan runs.
enum class step_kind : std::uint8_t {
    region, ///< a fused elementwise region
    single  ///< one node: a reduction, a matmul, a copying shape op, an effect, a cond...
};

/// One step, in execution order: which kind, and its index in plan::regions or singles.
struct step {
    step_kind kind;
    std::uint32_t index;
};

/// Everything needed to run a graph on arguments of one concrete shape.
struct plan {
    std::vector<shape_t> shapes;         ///< concrete shape per node
    std::vector<storage> homes;          ///< per node
    std::vector<region> regions;         ///< fused regions, in execution order
    std::vector<graph::node_id> singles; ///< nodes run as steps of their own, in order
    std::vector<step> order;             ///< every step, in execution order
    std::vector<control> controls;       ///< the cond and while_loop steps, in node order
    std::vector<output_copy> copies;     ///< run after the regions
    std::size_t temp_bytes = 0;          ///< scratch for intermediate tensors
    std::size_t register_bytes = 0;      ///< scratch for the largest region's registers
    /// For a statically fused kernel: the leaves (args, constants) reached depth-first from the
    /// single output, in the order of the expression type; empty when they cannot be used
    /// (several outputs, too many leaves, or an argument of another shape than the output).
    std::vector<graph::node_id> fused_leaves;
};

namespace detail {

/// L1 data cache size in bytes (32 KiB where the system does not say).
inline std::size_t l1_data_bytes() {
    static const std::size_t bytes = [] {
#ifdef _SC_LEVEL1_DCACHE_SIZE
        const long v = ::sysconf(_SC_LEVEL1_DCACHE_SIZE);
        if (v > 4096)
            return static_cast<std::size_t>(v);
#endif
        return std::size_t(32768);
    }();
    return bytes;
}

inline std::size_t round_up(std::size_t n, std::size_t to) {
    return (n + to - 1) / to * to;
}

// True when region `from` depends, directly or not, on region `to`.
inline bool reaches(const std::vector<std::vector<int>>& deps, int from, int to) {
    std::vector<int> stack{from};
    std::vector<char> seen(deps.size(), 0);
    while (!stack.empty()) {
        const int r = stack.back();
        stack.pop_back();
        if (r == to)
            return true;
        if (seen[r])
            continue;
        seen[r] = 1;
        stack.insert(stack.end(), deps[r].begin(), deps[r].end());
    }
    return false;
}

inline std::uint64_t constant_bits(const graph::node& n) {
    std::uint64_t bits = 0;
    visit_dtype(n.type, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T v =
            std::is_floating_point_v<T> ? static_cast<T>(n.fvalue) : static_cast<T>(n.ivalue);
        std::memcpy(&bits, &v, sizeof v);
    });
    return bits;
}

// Register allocation and block size of a region whose nodes and inputs are known.
inline void lay_out(region& r, const graph::graph& g) {
    const std::size_t n_in = r.inputs.size();
    std::unordered_map<graph::node_id, std::uint16_t> slots_of;
    for (std::size_t i = 0; i < n_in; ++i)
        slots_of.emplace(r.inputs[i], static_cast<std::uint16_t>(i));
    for (std::size_t i = 0; i < r.nodes.size(); ++i)
        slots_of.emplace(r.nodes[i], static_cast<std::uint16_t>(n_in + i));
    auto slot_of = [&](graph::node_id id) { return slots_of.at(id); };
    const std::size_t slots = n_in + r.nodes.size();
    std::vector<std::size_t> last_use(slots, 0);
    // A tail reduction reads its input after the whole block program: never freed before.
    for (const tail_reduction& t : r.tails)
        last_use[t.slot] = std::numeric_limits<std::size_t>::max();
    // A constant read only by binary ops is splatted inside their kernels: it needs no register.
    std::vector<char> needs_register(n_in, 0);
    for (std::size_t i = 0; i < n_in; ++i)
        needs_register[i] = g[r.inputs[i]].op != op_kind::constant;
    r.program.resize(r.nodes.size());
    for (std::size_t i = 0; i < r.nodes.size(); ++i) {
        const graph::node& n = g[r.nodes[i]];
        instruction& ins = r.program[i];
        int splat = -1;
        for (std::size_t k = 0; k < n.inputs.size(); ++k) {
            ins.in[k] = slot_of(n.inputs[k]);
            last_use[ins.in[k]] = std::max(last_use[ins.in[k]], i);
            if (ins.in[k] < n_in && g[n.inputs[k]].op == op_kind::constant) {
                if (n.inputs.size() == 2 && splat < 0)
                    splat = static_cast<int>(k);
                else
                    needs_register[ins.in[k]] = 1;
            }
        }
        // Traced nodes carry their kernels; a graph from elsewhere picks them with
        // interp::kernel_for before planning.
        if (!n.kernels)
            throw error("xtrace: graph node " + std::to_string(r.nodes[i]) + " (" +
                        std::string(info(n.op).name) + ") has no kernels");
        ins.fn = splat == 0   ? n.kernels->splat_first
                 : splat == 1 ? n.kernels->splat_second
                              : n.kernels->plain;
        ins.out = static_cast<std::uint16_t>(n_in + i);
    }
    // Inputs that need one keep a register for the whole block (gathered or splatted into it);
    // computed nodes that are not live-out share registers once their last reader has run.
    // Kernels read element i before writing it, so a result may take the register of an operand
    // whose elements are at least as wide; a wider result (bool -> float, float -> double)
    // would overwrite operand elements not read yet, so such a register is freed only after
    // the result has its own.
    r.registers.assign(slots, no_register);
    std::uint16_t count = 0;
    for (std::size_t i = 0; i < n_in; ++i)
        if (needs_register[i])
            r.registers[i] = count++;
    std::vector<std::uint16_t> free_list, freed_after;
    auto release = [](std::vector<std::uint16_t>& list, std::uint16_t reg) {
        if (std::find(list.begin(), list.end(), reg) == list.end())
            list.push_back(reg);
    };
    for (std::size_t i = 0; i < r.nodes.size(); ++i) {
        const std::size_t out_size = dtype_size(g[r.nodes[i]].type);
        freed_after.clear();
        for (std::uint16_t s : r.program[i].in)
            if (s >= n_in && s < n_in + i && last_use[s] == i && !r.live_out[s - n_in]) {
                const bool wide = dtype_size(g[r.nodes[s - n_in]].type) >= out_size;
                release(wide ? free_list : freed_after, r.registers[s]);
            }
        if (!r.live_out[i]) {
            if (free_list.empty()) {
                r.registers[n_in + i] = count++;
            } else {
                r.registers[n_in + i] = free_list.back();
                free_list.pop_back();
            }
        }
        for (std::uint16_t reg : freed_after)
            release(free_list, reg);
    }
    // Only the operand slots of the instructions are meaningful for arity < 3.
    for (std::size_t i = 0; i < r.nodes.size(); ++i)
        for (std::size_t k = g[r.nodes[i]].inputs.size(); k < 3; ++k)
            r.program[i].in[k] = r.program[i].out;
    r.register_count = count;
    // Live registers x block <= half of L1: the block stays in cache across the whole program.
    const std::size_t budget = l1_data_bytes() / 2;
    std::size_t block = budget / (std::max<std::size_t>(count, 1) * 8);
    block = std::clamp<std::size_t>(block / 64 * 64, 64, 16384);
    r.block = std::min(block, std::max<std::size_t>(r.size, 1));
}

// Leaves depth-first from the output, as the expression type lists them (a tree walk of the
// DAG, so capped: a larger tree runs through the interpreter).
inline void find_fused_leaves(const graph::graph& g, plan& p) {
    constexpr std::size_t cap = 64;
    if (g.outputs.size() != 1 || !g.effects.empty())
        return;
    const shape_t& out = p.shapes[g.outputs[0]];
    std::vector<graph::node_id> leaves, stack{g.outputs[0]};
    while (!stack.empty()) {
        const graph::node_id id = stack.back();
        stack.pop_back();
        const graph::node& n = g[id];
        if (n.op == op_kind::arg || n.op == op_kind::constant) {
            if ((n.op == op_kind::arg && p.shapes[id] != out) || leaves.size() == cap)
                return;
            leaves.push_back(id);
            continue;
        }
        if (!info(n.op).elementwise || p.shapes[id] != out)
            return;
        for (auto it = n.inputs.rbegin(); it != n.inputs.rend(); ++it)
            stack.push_back(*it);
    }
    p.fused_leaves = std::move(leaves);
}

// True when sorted `axes` are the innermost dims of a rank-`rank` tensor (or none).
inline bool innermost(const std::vector<std::int64_t>& axes, std::size_t rank) {
    for (std::size_t k = 0; k < axes.size(); ++k)
        if (axes[k] != static_cast<std::int64_t>(rank - axes.size() + k))
            return false;
    return true;
}

// True when sorted `axes` are the outermost dims.
inline bool outermost(const std::vector<std::int64_t>& axes) {
    for (std::size_t k = 0; k < axes.size(); ++k)
        if (axes[k] != static_cast<std::int64_t>(k))
            return false;
    return true;
}
} // namespace detail

/// Binds `g` to its arguments' concrete shapes: fused regions, homes and block programs.
XTRACE_DECL plan build(const graph::graph& g, std::span<const shape_t> arg_shapes);

} // namespace xtrace::plan

#if XTRACE_DEFINE_RUNTIME

namespace xtrace::plan {

XTRACE_DECL plan build(const graph::graph& g, std::span<const shape_t> arg_shapes) {
    plan p;
    p.shapes = bind_shapes(g, arg_shapes);
    const std::size_t count = g.nodes.size();
    p.homes.assign(count, storage{});
    for (std::size_t i = 0; i < g.args.size(); ++i)
        p.homes[g.args[i]] = {home::arg, static_cast<std::uint32_t>(i), 0, 0};
    for (graph::node_id id = 0; id < count; ++id)
        if (g[id].op == op_kind::constant)
            p.homes[id] = {home::constant, 0, 0, detail::constant_bits(g[id])};

    // Shape ops are views of their input when the input's strides are known to allow it; a
    // reshape of an argument or of another view copies (its strides are the caller's).
    std::vector<char> is_view(count, 0);
    for (graph::node_id id = 0; id < count; ++id) {
        const graph::node& n = g[id];
        if (!is_shape_op(n.op))
            continue;
        const graph::node& src = g[n.inputs[0]];
        const bool strided_source = src.op == op_kind::arg || is_view[n.inputs[0]] != 0;
        is_view[id] = n.op != op_kind::reshape || !strided_source;
    }

    // Partition: a node joins a region of its shape (its operand's first, else the latest one)
    // unless that would make the region depend on itself. Reductions and copying shape ops are
    // steps of their own. avail_of: the step after which a node's value can be read (a view's
    // is its source's).
    std::vector<int> region_of(count, -1), avail_of(count, -1);
    std::vector<char> tail(count, 0); // a reduction run inside its input's region
    std::vector<region> regions;
    std::vector<graph::node_id> single; // per step: its node if not a region, else count
    std::vector<std::vector<int>> deps;
    int last_effect = -1;
    std::vector<char> is_effect(count, 0);
    for (auto id : g.effects)
        is_effect[id] = 1;
    auto add_deps = [&](int target, const graph::node& n) {
        for (auto in : n.inputs)
            if (avail_of[in] >= 0 && avail_of[in] != target &&
                std::find(deps[target].begin(), deps[target].end(), avail_of[in]) ==
                    deps[target].end())
                deps[target].push_back(avail_of[in]);
    };
    for (graph::node_id id = 0; id < count; ++id) {
        const graph::node& n = g[id];
        if (is_view[id]) {
            avail_of[id] = avail_of[n.inputs[0]];
            continue;
        }
        if (info(n.op).reduction && n.reduce && n.reduce->accumulate) {
            const graph::node_id in = n.inputs[0];
            const int r = region_of[in];
            if (r >= 0 && single[r] == count && !tail[in] && !is_view[in] &&
                (detail::innermost(n.axes, p.shapes[in].size()) || detail::outermost(n.axes))) {
                region_of[id] = avail_of[id] = r;
                tail[id] = 1;
                continue;
            }
        }
        if (n.op == op_kind::result) { // written by its cond or while_loop step
            region_of[id] = avail_of[id] = region_of[n.inputs[0]];
            continue;
        }
        const bool effect = is_effect[id] != 0;
        if (!info(n.op).elementwise && n.op != op_kind::arg && n.op != op_kind::constant) {
            region_of[id] = avail_of[id] = static_cast<int>(regions.size());
            regions.emplace_back();
            single.push_back(id);
            deps.emplace_back();
            add_deps(region_of[id], n);
            if (effect) { // side effects keep program order
                if (last_effect >= 0)
                    deps.back().push_back(last_effect);
                last_effect = region_of[id];
            }
            continue;
        }
        if (!info(n.op).elementwise)
            continue;
        auto can_join = [&](int r) {
            if (single[r] != count || regions[r].shape != p.shapes[id] ||
                regions[r].nodes.size() >= max_region_nodes)
                return false;
            for (auto in : n.inputs) {
                if (region_of[in] == r && !tail[in])
                    continue;
                if (avail_of[in] == r) // a view or a reduction of this region: needs it whole
                    return false;
                if (avail_of[in] >= 0 && detail::reaches(deps, avail_of[in], r))
                    return false;
            }
            return true;
        };
        int target = -1;
        for (auto in : n.inputs)
            if (region_of[in] >= 0 && can_join(region_of[in])) {
                target = region_of[in];
                break;
            }
        for (int r = static_cast<int>(regions.size()) - 1; target < 0 && r >= 0; --r)
            if (can_join(r))
                target = r;
        if (target < 0) {
            target = static_cast<int>(regions.size());
            regions.push_back(region{});
            regions.back().shape = p.shapes[id];
            regions.back().size = static_cast<std::size_t>(num_elements(p.shapes[id]));
            single.push_back(static_cast<graph::node_id>(count));
            deps.emplace_back();
        }
        region_of[id] = avail_of[id] = target;
        regions[target].nodes.push_back(id);
        add_deps(target, n);
    }

    // Homes of computed nodes: the first output that names a node is written in place; nodes
    // read by other steps, and the sources of views, live in scratch.
    std::vector<char> needed_outside(count, 0);
    for (graph::node_id id = count; id-- > 0;) {
        for (auto in : g[id].inputs)
            if ((region_of[in] >= 0 && region_of[in] != region_of[id]) ||
                (is_view[id] && needed_outside[id]))
                needed_outside[in] = 1;
    }
    for (std::uint32_t k = 0; k < g.outputs.size(); ++k) {
        const auto id = g.outputs[k];
        if (is_view[id]) { // copied out of its source, which must exist
            for (auto v = id; is_view[v]; v = g[v].inputs[0])
                needed_outside[g[v].inputs[0]] = 1;
            p.copies.push_back({k, id});
        } else if (region_of[id] >= 0 && p.homes[id].home == home::none) {
            p.homes[id] = {home::output, k, 0, 0};
        } else {
            p.copies.push_back({k, id});
        }
    }
    for (graph::node_id id = 0; id < count; ++id) {
        if (is_view[id]) {
            p.homes[id] = {home::view, 0, 0, 0};
        } else if (needed_outside[id] && p.homes[id].home == home::none) {
            p.homes[id] = {home::temp, 0, p.temp_bytes, 0};
            p.temp_bytes += detail::round_up(static_cast<std::size_t>(num_elements(p.shapes[id])) *
                                                 dtype_size(g[id].type),
                                             scratch_alignment);
        }
    }

    // Steps run in dependency order (creation order among the ready ones).
    std::vector<char> done(regions.size(), 0);
    for (std::size_t placed = 0; placed < regions.size();) {
        for (std::size_t r = 0; r < regions.size(); ++r) {
            if (done[r] ||
                !std::all_of(deps[r].begin(), deps[r].end(), [&](int d) { return done[d] != 0; }))
                continue;
            done[r] = 1;
            ++placed;
            if (single[r] != count) {
                p.order.push_back(
                    {step_kind::single, static_cast<std::uint32_t>(p.singles.size())});
                p.singles.push_back(single[r]);
                continue;
            }
            region& reg = regions[r];
            for (auto id : reg.nodes)
                for (auto in : g[id].inputs)
                    if (region_of[in] != static_cast<int>(r) &&
                        std::find(reg.inputs.begin(), reg.inputs.end(), in) == reg.inputs.end())
                        reg.inputs.push_back(in);
            for (auto id : reg.nodes)
                reg.live_out.push_back(p.homes[id].home != home::none);
            for (graph::node_id id = 0; id < count; ++id) {
                if (!tail[id] || region_of[id] != static_cast<int>(r))
                    continue;
                const graph::node_id in = g[id].inputs[0];
                tail_reduction t{id, 0, 1, static_cast<std::size_t>(num_elements(p.shapes[id])),
                                 !detail::innermost(g[id].axes, p.shapes[in].size())};
                t.slot = static_cast<std::uint16_t>(
                    reg.inputs.size() +
                    (std::find(reg.nodes.begin(), reg.nodes.end(), in) - reg.nodes.begin()));
                for (auto a : g[id].axes)
                    t.count *= static_cast<std::size_t>(p.shapes[in][a]);
                reg.tails.push_back(t);
            }
            detail::lay_out(reg, g);
            p.register_bytes =
                std::max(p.register_bytes, std::size_t(reg.register_count) * reg.block * 8);
            p.order.push_back({step_kind::region, static_cast<std::uint32_t>(p.regions.size())});
            p.regions.push_back(std::move(reg));
        }
    }
    for (graph::node_id id = 0; id < count; ++id) {
        const graph::node& n = g[id];
        if (n.op != op_kind::cond && n.op != op_kind::while_loop)
            continue;
        control c{id, {}, std::vector<graph::node_id>(n.bodies.back()->outputs.size(), no_node)};
        for (const auto& body : n.bodies)
            c.bodies.push_back(
                std::make_shared<const plan>(build(*body, body_arg_shapes(*body, n, p.shapes))));
        p.controls.push_back(std::move(c));
    }
    for (graph::node_id id = 0; id < count; ++id)
        if (g[id].op == op_kind::result) {
            for (control& c : p.controls)
                if (c.node == g[id].inputs[0])
                    c.results[g[id].index] = id;
        }
    detail::find_fused_leaves(g, p);
    return p;
}

} // namespace xtrace::plan

#endif

#endif
