// The runtime section of plan/pieces.hpp.

#include <algorithm>
#include <unordered_map>

namespace xtrace::plan {

namespace detail {

// Whether computing op `k` twice costs more than the store and load a piece saves: the
// transcendentals and the divisions.
inline bool costly(op_kind k) {
    return info(k).domain == op_domain::floating || k == op_kind::div || k == op_kind::pow;
}

// The region positions of the ops of `piece`, rooted at `root`, each once, in the order its
// kernel reads them (root first); empty unless the leaves come in the kernel's order, every leaf
// is a value of the region or has a home (added to `fresh` when not yet an input), every op is a
// node of the region or a cheap op computed elsewhere (at most as many as there are of the
// first: each costs an op per element where one of the region's saves a pass), and no costly op
// is met twice (the kernel would compute it twice).
inline std::vector<std::size_t>
piece_ops(const graph::graph& g, graph::node_id root, const graph::fused_piece& piece,
          const std::unordered_map<graph::node_id, std::size_t>& position, const region& r,
          const std::vector<home>& homes, std::vector<graph::node_id>& fresh) {
    std::vector<std::size_t> ops;
    std::vector<graph::node_id> stack{root}, elsewhere, leaves_outside;
    std::size_t visits = 0, leaves = 0;
    auto is_input = [&](graph::node_id id) {
        return std::find(r.inputs.begin(), r.inputs.end(), id) != r.inputs.end();
    };
    while (!stack.empty()) {
        const graph::node_id id = stack.back();
        stack.pop_back();
        if (leaves < piece.leaves.size() && piece.leaves[leaves] == id) {
            ++leaves;
            if (!position.count(id) && !is_input(id)) {
                if (homes[id].where == location::none)
                    return {};
                leaves_outside.push_back(id);
            }
            continue;
        }
        if (visits++ == piece.ops)
            return {};
        if (const auto it = position.find(id); it == position.end()) {
            if (costly(g[id].op))
                return {};
            if (std::find(elsewhere.begin(), elsewhere.end(), id) == elsewhere.end())
                elsewhere.push_back(id);
        } else if (std::find(ops.begin(), ops.end(), it->second) == ops.end()) {
            ops.push_back(it->second);
        } else if (costly(g[id].op)) {
            return {};
        }
        const auto& in = g[id].inputs;
        stack.insert(stack.end(), in.rbegin(), in.rend());
    }
    if (visits != piece.ops || leaves != piece.leaves.size() || ops.empty() ||
        elsewhere.size() > ops.size())
        return {};
    for (graph::node_id id : leaves_outside)
        if (std::find(fresh.begin(), fresh.end(), id) == fresh.end())
            fresh.push_back(id);
    return ops;
}

} // namespace detail

XTRACE_DECL void use_pieces(region& r, const graph::graph& g, const std::vector<home>& homes,
                            std::span<const graph::node_id> tails) {
    const std::size_t count = r.nodes.size();
    std::unordered_map<graph::node_id, std::size_t> position;
    for (std::size_t i = 0; i < count; ++i)
        position.emplace(r.nodes[i], i);
    std::vector<std::vector<std::size_t>> ops(count); // per node: its piece's ops, root first
    std::vector<graph::node_id> fresh;                // leaves computed by earlier steps
    bool any = false;
    for (std::size_t i = 0; i < count; ++i)
        if (const auto& piece = g[r.nodes[i]].piece) {
            ops[i] = detail::piece_ops(g, r.nodes[i], *piece, position, r, homes, fresh);
            any = any || !ops[i].empty();
        }
    if (!any)
        return;
    // What is read: live results, the tails' inputs, and what the nodes that stay read (a
    // piece's leaves, not its ops' operands). A piece one of whose ops is read elsewhere would
    // compute it again from its operands where the others read it from a register: it is given
    // up, until none is.
    std::vector<char> needed;
    for (bool changed = true; changed;) {
        needed.assign(r.live_out.begin(), r.live_out.end());
        for (graph::node_id t : tails)
            needed[position.at(g[t].inputs[0])] = 1;
        for (std::size_t i = count; i-- > 0;) {
            if (!needed[i])
                continue;
            const auto& reads = ops[i].empty() ? g[r.nodes[i]].inputs : g[r.nodes[i]].piece->leaves;
            for (graph::node_id in : reads)
                if (auto it = position.find(in); it != position.end())
                    needed[it->second] = 1;
        }
        changed = false;
        for (std::size_t i = 0; i < count; ++i)
            if (needed[i] && !ops[i].empty() &&
                std::any_of(ops[i].begin() + 1, ops[i].end(),
                            [&](std::size_t k) { return needed[k] != 0; })) {
                ops[i].clear();
                changed = true;
            }
    }
    std::vector<std::vector<graph::node_id>> leaves;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < count; ++i)
        if (needed[i]) {
            r.nodes[kept] = r.nodes[i];
            r.live_out[kept] = r.live_out[i];
            leaves.push_back(ops[i].empty() ? std::vector<graph::node_id>{}
                                            : g[r.nodes[i]].piece->leaves);
            ++kept;
        }
    r.nodes.resize(kept);
    r.live_out.resize(kept);
    // Inputs: those a node that stays reads (given-up pieces may have brought leaves no one
    // reads), in their order, then the fresh leaves that are read.
    std::vector<graph::node_id> read;
    for (std::size_t i = 0; i < kept; ++i) {
        const auto& reads = leaves[i].empty() ? g[r.nodes[i]].inputs : leaves[i];
        read.insert(read.end(), reads.begin(), reads.end());
    }
    auto is_read = [&](graph::node_id id) {
        return std::find(read.begin(), read.end(), id) != read.end();
    };
    std::erase_if(r.inputs, [&](graph::node_id id) { return !is_read(id); });
    for (graph::node_id id : fresh)
        if (is_read(id))
            r.inputs.push_back(id);
    r.piece_leaves = std::move(leaves);
}

} // namespace xtrace::plan
