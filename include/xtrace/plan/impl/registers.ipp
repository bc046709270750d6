// The runtime section of plan/registers.hpp.

#include "../../core/error.hpp"

#include <algorithm>
#include <span>
#include <string>
#include <unistd.h>
#include <unordered_map>

namespace xtrace::plan {

XTRACE_DECL std::size_t l1_data_bytes() {
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

XTRACE_DECL void allocate_registers(region& r, const graph::graph& g,
                                    std::span<const shape_t> shapes) {
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
    // So is an input that is one value per row (its innermost dim 1, or a scalar), on rows long
    // enough: its kernels then read the value of the block's row.
    const bool long_rows = !r.shape.empty() && r.shape.back() > 1 &&
                           static_cast<std::size_t>(r.shape.back()) >= row_splat_elements();
    std::vector<char> splattable(n_in, 0), needs_register(n_in, 0);
    for (std::size_t i = 0; i < n_in; ++i) {
        const graph::node_id id = r.inputs[i];
        const shape_t& s = shapes[id];
        splattable[i] =
            g[id].op == op_kind::constant || (long_rows && (s.empty() || s.back() == 1));
        needs_register[i] = !splattable[i];
    }
    r.program.resize(r.nodes.size());
    std::vector<int> splat_operand(r.nodes.size(), -1); // per node: its operand read as one value
    r.leaf_slots.clear();
    for (std::size_t i = 0; i < r.nodes.size(); ++i) {
        const graph::node& n = g[r.nodes[i]];
        instruction& ins = r.program[i];
        ins.out = static_cast<std::uint16_t>(n_in + i);
        if (!r.piece_leaves.empty() && !r.piece_leaves[i].empty()) { // one fused piece
            ins.fn = n.piece->fn;
            ins.rows = n.piece->rows;
            ins.first_leaf = static_cast<std::uint32_t>(r.leaf_slots.size());
            ins.leaves = static_cast<std::uint16_t>(r.piece_leaves[i].size());
            for (std::size_t k = 0; k < r.piece_leaves[i].size(); ++k) {
                const graph::node_id leaf = r.piece_leaves[i][k];
                const std::uint16_t s = slot_of(leaf);
                r.leaf_slots.push_back(s);
                last_use[s] = std::max(last_use[s], i);
                // A piece's kernel knows its constants from its type, and may read a leaf
                // computed from reductions as one value; any other leaf it loads.
                if (s >= n_in || g[leaf].op == op_kind::constant)
                    continue;
                if (splattable[s] && (n.piece->one_value_leaves >> k & 1))
                    ins.one_value |= std::uint64_t(1) << k;
                else
                    needs_register[s] = 1;
            }
            continue;
        }
        int splat = -1;
        for (std::size_t k = 0; k < n.inputs.size(); ++k) {
            ins.in[k] = slot_of(n.inputs[k]);
            last_use[ins.in[k]] = std::max(last_use[ins.in[k]], i);
            if (ins.in[k] < n_in && splattable[ins.in[k]]) {
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
        ins.fn = n.kernels->plain;
        splat_operand[i] = splat;
    }
    // Splat kernels once every input's register is known: a constant's register holds its
    // value everywhere, but a per-row input with a register is read element by element.
    for (instruction& ins : r.program)
        for (std::size_t k = 0; k < ins.leaves; ++k)
            if ((ins.one_value >> k & 1) && needs_register[r.leaf_slots[ins.first_leaf + k]])
                ins.one_value &= ~(std::uint64_t(1) << k);
    for (std::size_t i = 0; i < r.nodes.size(); ++i) {
        const int k = splat_operand[i];
        if (k < 0)
            continue;
        const std::uint16_t slot = r.program[i].in[static_cast<std::size_t>(k)];
        if (needs_register[slot] && g[r.inputs[slot]].op != op_kind::constant)
            continue;
        const graph::kernel_set& kernels = *g[r.nodes[i]].kernels;
        r.program[i].fn = k == 0 ? kernels.splat_first : kernels.splat_second;
    }
    auto operands = [&](std::size_t i) -> std::span<const std::uint16_t> {
        const instruction& ins = r.program[i];
        if (ins.leaves)
            return {r.leaf_slots.data() + ins.first_leaf, ins.leaves};
        return {ins.in.data(), g[r.nodes[i]].inputs.size()};
    };
    // A piece read by one innermost tail reduction, of the op its kernel was fused with, folds
    // into it: the tail needs no pass of its own, and a piece nothing else reads (not live-out,
    // no later node's operand) needs no register either.
    std::vector<char> unstored(r.nodes.size(), 0);
    for (std::size_t t = 0; t < r.tails.size(); ++t) {
        tail_reduction& tail = r.tails[t];
        if (tail.outer || tail.slot < n_in)
            continue;
        const std::size_t i = tail.slot - n_in;
        const graph::node& n = g[r.nodes[i]];
        const bool alone = std::count_if(r.tails.begin(), r.tails.end(),
                                         [&](const auto& o) { return o.slot == tail.slot; }) == 1;
        // Rows of whole batches: the fold then computes every element in the batch the kernel
        // would (a transcendental's batch and one-element forms may round apart).
        if (!alone || r.program[i].leaves == 0 || !n.piece->fold ||
            n.piece->fold_op != g[tail.node].op || g[tail.node].type != n.type ||
            tail.count % n.piece->fold_width != 0)
            continue;
        bool read = r.live_out[i];
        for (std::size_t k = i + 1; k < r.nodes.size() && !read; ++k)
            for (std::uint16_t s : operands(k))
                read = read || s == tail.slot;
        unstored[i] = !read;
        tail.folded = true;
        r.program[i].fold = n.piece->fold;
        r.program[i].fold_rows = n.piece->fold_rows;
        r.program[i].tail = static_cast<std::uint16_t>(t);
    }
    // Inputs that need one keep a register for the whole block (gathered or splatted into it);
    // computed nodes that are not live-out share registers once their last reader has run.
    // Kernels read element i before writing it, so a result may take the register of an operand
    // whose elements are at least as wide; a wider result (bool -> float, float -> double)
    // would overwrite operand elements not read yet, so such a register is freed only after
    // the result has its own.
    r.registers.assign(slots, no_register);
    std::uint16_t count = 0;
    r.row_cut = false;
    for (std::size_t i = 0; i < n_in; ++i) {
        if (needs_register[i])
            r.registers[i] = count++;
        else if (g[r.inputs[i]].op != op_kind::constant)
            r.row_cut = true;
    }
    std::vector<std::uint16_t> free_list, freed_after;
    auto release = [](std::vector<std::uint16_t>& list, std::uint16_t reg) {
        if (std::find(list.begin(), list.end(), reg) == list.end())
            list.push_back(reg);
    };
    for (std::size_t i = 0; i < r.nodes.size(); ++i) {
        const std::size_t out_size = dtype_size(g[r.nodes[i]].type);
        freed_after.clear();
        for (std::uint16_t s : operands(i))
            if (s >= n_in && s < n_in + i && last_use[s] == i && !r.live_out[s - n_in]) {
                const bool wide = dtype_size(g[r.nodes[s - n_in]].type) >= out_size;
                release(wide ? free_list : freed_after, r.registers[s]);
            }
        if (!r.live_out[i] && !unstored[i]) {
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
        for (std::size_t k = r.program[i].leaves ? 0 : g[r.nodes[i]].inputs.size(); k < 3; ++k)
            r.program[i].in[k] = r.program[i].out;
    r.register_count = count;
    // Live registers x block <= half of L1: the block stays in cache across the whole program.
    const std::size_t budget = l1_data_bytes() / 2;
    std::size_t block = budget / (std::max<std::size_t>(count, 1) * 8);
    block = std::clamp<std::size_t>(block / 64 * 64, 64, 16384);
    r.block = std::min(block, std::max<std::size_t>(r.size, 1));
}

} // namespace xtrace::plan
