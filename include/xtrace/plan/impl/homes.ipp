// The runtime section of plan/homes.hpp.

#include "../arena.hpp"

#include <cstring>
#include <type_traits>
#include <variant>

namespace xtrace::plan {

namespace detail {

inline std::size_t round_up(std::size_t n, std::size_t to) {
    return (n + to - 1) / to * to;
}

// The bits of a constant node's value in its dtype.
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

} // namespace detail

XTRACE_DECL home_assignment assign_homes(const graph::graph& g, std::span<const shape_t> shapes,
                                         const view_choice& views, const partitioning& parts,
                                         const std::vector<bool>& unread) {
    const std::size_t count = g.nodes.size();
    home_assignment out;
    out.homes.assign(count, home{});
    for (std::size_t i = 0; i < g.args.size(); ++i)
        out.homes[g.args[i]] = {location::arg, static_cast<std::uint32_t>(i), 0, 0};
    for (graph::node_id id = 0; id < count; ++id)
        if (g[id].op == op_kind::constant)
            out.homes[id] = {location::constant, 0, 0, detail::constant_bits(g[id])};

    // Values read by another step, and (through views) the sources of views read elsewhere.
    std::vector<bool> needed_outside(count, false);
    for (graph::node_id id = count; id-- > 0;)
        for (auto in : g[id].inputs)
            if ((parts.computed_by[in] && parts.computed_by[in] != parts.computed_by[id]) ||
                (views(id) && needed_outside[id]))
                needed_outside[in] = true;

    for (std::uint32_t k = 0; k < g.outputs.size(); ++k) {
        const auto id = g.outputs[k];
        if (views(id)) { // copied out of its source, which must exist
            for (auto v = id; views(v); v = g[v].inputs[0])
                needed_outside[g[v].inputs[0]] = true;
            out.copies.push_back({k, id});
        } else if (parts.computed_by[id] && out.homes[id].where == location::none) {
            out.homes[id] = {location::output, k, 0, 0};
        } else {
            out.copies.push_back({k, id});
        }
    }
    for (graph::node_id id = 0; id < count; ++id) {
        if (views(id)) {
            out.homes[id] = {location::view, 0, 0, 0};
        } else if (needed_outside[id] && out.homes[id].where == location::none &&
                   !(id < unread.size() && unread[id])) {
            out.homes[id] = {location::temp, 0, out.temp_bytes, 0};
            out.temp_bytes += detail::round_up(static_cast<std::size_t>(num_elements(shapes[id])) *
                                                   dtype_size(g[id].type),
                                               scratch_alignment);
        }
    }
    return out;
}

XTRACE_DECL std::vector<bool> read_by_steps(const graph::graph& g, std::span<const step> steps,
                                            const std::vector<home>& homes,
                                            std::span<const output_copy> copies) {
    std::vector<bool> read(g.nodes.size(), false);
    auto reads = [&](graph::node_id id) {
        // A view reads its source, in place: what it reads is read too.
        for (;;) {
            read[id] = true;
            if (homes[id].where != location::view)
                break;
            id = g[id].inputs[0];
        }
    };
    for (const step& s : steps)
        for (graph::node_id id : step_reads(g, s))
            reads(id);
    for (const output_copy& c : copies)
        reads(c.node);
    return read;
}

} // namespace xtrace::plan
