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
// kernel reads them (root first); empty unless every op is a node of the region, the leaves come
// in the kernel's order, and no costly op is met twice (the kernel would compute it twice).
inline std::vector<std::size_t>
piece_ops(const graph::graph& g, graph::node_id root, const graph::fused_piece& piece,
          const std::unordered_map<graph::node_id, std::size_t>& position) {
    std::vector<std::size_t> ops;
    std::vector<graph::node_id> stack{root};
    std::size_t visits = 0, leaves = 0;
    while (!stack.empty()) {
        const graph::node_id id = stack.back();
        stack.pop_back();
        if (leaves < piece.leaves.size() && piece.leaves[leaves] == id) {
            ++leaves;
            continue;
        }
        const auto it = position.find(id);
        if (it == position.end() || visits++ == piece.ops)
            return {};
        if (std::find(ops.begin(), ops.end(), it->second) == ops.end())
            ops.push_back(it->second);
        else if (costly(g[id].op))
            return {};
        const auto& in = g[id].inputs;
        stack.insert(stack.end(), in.rbegin(), in.rend());
    }
    if (visits != piece.ops || leaves != piece.leaves.size())
        return {};
    return ops;
}

} // namespace detail

XTRACE_DECL void use_pieces(region& r, const graph::graph& g,
                            std::span<const graph::node_id> tails) {
    const std::size_t count = r.nodes.size();
    std::unordered_map<graph::node_id, std::size_t> position;
    for (std::size_t i = 0; i < count; ++i)
        position.emplace(r.nodes[i], i);
    std::vector<std::vector<std::size_t>> ops(count); // per node: its piece's ops, root first
    bool any = false;
    for (std::size_t i = 0; i < count; ++i)
        if (const auto& piece = g[r.nodes[i]].piece) {
            ops[i] = detail::piece_ops(g, r.nodes[i], *piece, position);
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
    r.piece_leaves = std::move(leaves);
}

} // namespace xtrace::plan
