// The runtime section of plan/stages.hpp.

#include "../build.hpp"

#include <algorithm>

namespace xtrace::plan {

XTRACE_DECL std::shared_ptr<const staged_graph> staged_graph::split(const graph::graph& g) {
    std::vector<graph::node_id> hosts;
    for (graph::node_id id = 0; id < g.nodes.size(); ++id)
        if (is_dynamic_host(g[id]))
            hosts.push_back(id);
    if (hosts.empty())
        return nullptr;
    // Segment k holds the nodes between hosts[k-1] and hosts[k]; a host belongs to none.
    constexpr std::size_t no_segment = std::size_t(-1);
    std::vector<std::size_t> segment(g.nodes.size());
    std::size_t k = 0;
    for (graph::node_id id = 0; id < g.nodes.size(); ++id) {
        const bool host = k < hosts.size() && hosts[k] == id;
        segment[id] = host ? no_segment : k;
        k += host;
    }
    std::vector<bool> is_arg(g.nodes.size());
    for (graph::node_id a : g.args)
        is_arg[a] = true;
    auto out = std::make_shared<staged_graph>();
    out->args_ = g.args;
    out->stages_.resize(hosts.size() + 1);
    // What each segment reads from outside itself (the call's arguments aside), in first-use
    // order: its nodes' inputs, and for the last one the function's outputs.
    std::vector<bool> crosses(g.nodes.size());
    for (std::size_t s = 0; s < out->stages_.size(); ++s) {
        stage& st = out->stages_[s];
        std::vector<bool> seen(g.nodes.size());
        auto read = [&](graph::node_id v) {
            if (is_arg[v] || segment[v] == s || seen[v])
                return;
            seen[v] = true;
            crosses[v] = true;
            st.carried.push_back(v);
        };
        for (graph::node_id id = 0; id < g.nodes.size(); ++id)
            if (segment[id] == s && !is_arg[id])
                for (graph::node_id in : g[id].inputs)
                    read(in);
        if (s + 1 == out->stages_.size())
            for (graph::node_id o : g.outputs)
                read(o);
        else {
            st.host_id = hosts[s];
            st.host = g[hosts[s]];
        }
    }
    for (graph::node_id h : hosts)
        for (graph::node_id in : g[h].inputs)
            if (!is_arg[in])
                crosses[in] = true;
    // Each stage's graph: the call's arguments, the carried values as further args, its nodes.
    for (std::size_t s = 0; s < out->stages_.size(); ++s) {
        stage& st = out->stages_[s];
        std::vector<graph::node_id> to(g.nodes.size(), no_node);
        auto add_arg = [&](graph::node_id v, std::size_t position) {
            graph::node a;
            a.op = op_kind::arg;
            a.type = g[v].type;
            a.shape = g[v].shape;
            a.arg_position = static_cast<std::int64_t>(position);
            to[v] = static_cast<graph::node_id>(st.g.nodes.size());
            st.g.args.push_back(to[v]);
            st.g.nodes.push_back(std::move(a));
        };
        for (graph::node_id a : g.args)
            add_arg(a, st.g.args.size());
        for (graph::node_id v : st.carried)
            add_arg(v, st.g.args.size());
        for (graph::node_id id = 0; id < g.nodes.size(); ++id) {
            if (segment[id] != s || is_arg[id])
                continue;
            graph::node n = g[id];
            for (graph::node_id& in : n.inputs)
                in = to[in];
            n.piece = nullptr; // its leaves are numbered in g
            to[id] = static_cast<graph::node_id>(st.g.nodes.size());
            st.g.nodes.push_back(std::move(n));
            if (crosses[id] && s + 1 < out->stages_.size()) {
                st.produced.push_back(id);
                st.g.outputs.push_back(to[id]);
            }
        }
        for (graph::node_id e : g.effects)
            if (segment[e] == s)
                st.g.effects.push_back(to[e]);
        if (s + 1 == out->stages_.size())
            for (graph::node_id o : g.outputs)
                st.g.outputs.push_back(to[o]);
    }
    return out;
}

XTRACE_DECL std::shared_ptr<const plan>
staged_graph::plan_for(std::size_t k, std::span<const shape_t> arg_shapes) const {
    auto key = std::make_pair(k, std::vector<shape_t>(arg_shapes.begin(), arg_shapes.end()));
    {
        std::lock_guard lock(mutex_);
        if (auto it = plans_.find(key); it != plans_.end())
            return it->second;
    }
    auto p = make_plan(stages_[k].g, arg_shapes); // outside the lock: planning may be slow
    std::lock_guard lock(mutex_);
    if (plans_.size() >= max_plans)
        plans_.clear();
    plans_.emplace(std::move(key), p);
    return p;
}

} // namespace xtrace::plan
