// The runtime section of plan/concurrency.hpp.

#include <algorithm>
#include <cstdint>
#include <variant>
#include <vector>

namespace xtrace::plan {

namespace detail {

// A stretch of memory a step reads or writes: a temp's bytes, or a whole argument or output.
struct memory_use {
    location where;
    std::uint32_t index;
    std::size_t begin, end; // temp bytes [begin, end)

    bool overlaps(const memory_use& o) const {
        if (where != o.where || index != o.index)
            return false;
        return where != location::temp || (begin < o.end && o.begin < end);
    }
};

// What one step reads and writes, and how much work it is.
struct step_uses {
    bool movable = false; // a region, a reduction or a product
    std::vector<memory_use> reads, writes;
    std::size_t work = 0;

    bool conflicts(const step_uses& o) const {
        auto any = [](const std::vector<memory_use>& a, const std::vector<memory_use>& b) {
            for (const memory_use& x : a)
                for (const memory_use& y : b)
                    if (x.overlaps(y))
                        return true;
            return false;
        };
        return any(writes, o.reads) || any(writes, o.writes) || any(reads, o.writes);
    }
};

class use_finder {
public:
    use_finder(const graph::graph& g, const plan& p) : g_(g), p_(p) {}

    // The memory node `id` lives in: a view's is its source's; a copy of an argument may read
    // the argument in place of its temp (the executor's alias), so both count.
    void memory_of(graph::node_id id, std::vector<memory_use>& out, bool written) const {
        const home& h = p_.homes[id];
        switch (h.where) {
        case location::view:
            return memory_of(g_[id].inputs[0], out, written);
        case location::temp: {
            const std::size_t bytes =
                static_cast<std::size_t>(num_elements(p_.shapes[id])) * dtype_size(g_[id].type);
            out.push_back({location::temp, 0, h.offset, h.offset + bytes});
            if (!written && is_shape_op(g_[id].op))
                memory_of(g_[id].inputs[0], out, false);
            return;
        }
        case location::arg:
            out.push_back({location::arg, h.index, 0, 0});
            return;
        case location::output:
            out.push_back({location::output, h.index, 0, 0});
            if (written && h.index < p_.donations.size()) // perhaps a donated argument's buffer
                for (std::uint32_t a : p_.donations[h.index])
                    out.push_back({location::arg, a, 0, 0});
            return;
        case location::constant:
        case location::none:
            return;
        }
    }

    step_uses operator()(const step& s) const {
        step_uses u;
        if (const auto* r = std::get_if<region>(&s)) {
            u.movable = true;
            for (graph::node_id in : r->inputs)
                memory_of(in, u.reads, false);
            for (std::size_t k = 0; k < r->nodes.size(); ++k)
                if (r->live_out[k])
                    memory_of(r->nodes[k], u.writes, true);
            for (const tail_reduction& t : r->tails)
                memory_of(t.node, u.writes, true);
            u.work = r->size * (r->program.size() + r->tails.size());
            return u;
        }
        const auto* ns = std::get_if<node_step>(&s);
        if (!ns)
            return u; // a control step
        const graph::node& n = g_[ns->node];
        const bool product = n.op == op_kind::matmul && !blas_product(n);
        u.movable = info(n.op).reduction || n.op == op_kind::sum_to || product;
        if (!u.movable)
            return u;
        for (graph::node_id in : n.inputs)
            memory_of(in, u.reads, false);
        memory_of(ns->node, u.writes, true);
        const shape_t& a = p_.shapes[n.inputs[0]];
        u.work = static_cast<std::size_t>(num_elements(a));
        if (product) // multiply-adds (the left operand's elements times the result's columns),
                     // of which a SIMD kernel does some 32 in an elementwise op's time
            u.work = u.work * static_cast<std::size_t>(p_.shapes[ns->node].back()) / 32;
        return u;
    }

private:
    // A float product handed to a BLAS, which threads on its own: left in its place.
    static bool blas_product([[maybe_unused]] const graph::node& n) {
#if defined(XTRACE_USE_BLAS)
        return n.type == dtype::float32 || n.type == dtype::float64;
#else
        return false;
#endif
    }

    const graph::graph& g_;
    const plan& p_;
};

} // namespace detail

XTRACE_DECL void group_concurrent_steps(const graph::graph& g, plan& p) {
    p.concurrent.clear();
    const std::size_t count = p.steps.size();
    if (count < 2)
        return;
    const detail::use_finder find(g, p);
    std::vector<detail::step_uses> uses;
    uses.reserve(count);
    for (const step& s : p.steps)
        uses.push_back(find(s));
    // Greedy, in step order: a group starts at the first step left and takes each later movable
    // step that conflicts with none of the steps it would pass or join; a step that cannot move
    // (or the end of a short look-ahead) ends the search.
    constexpr std::size_t look_ahead = 64;
    std::vector<std::size_t> order;
    order.reserve(count);
    std::vector<bool> placed(count, false);
    for (std::size_t first = 0; first < count; ++first) {
        if (placed[first])
            continue;
        placed[first] = true;
        const std::size_t start = order.size();
        order.push_back(first);
        if (!uses[first].movable)
            continue;
        std::size_t work = uses[first].work, largest = work;
        std::vector<std::size_t> passed; // steps left behind, which a later member must not touch
        for (std::size_t j = first + 1; j < count && j <= first + look_ahead; ++j) {
            if (placed[j])
                continue;
            if (!uses[j].movable)
                break;
            bool free = true;
            for (std::size_t k = start; k < order.size() && free; ++k)
                free = !uses[j].conflicts(uses[order[k]]);
            for (std::size_t k : passed)
                if (free)
                    free = !uses[j].conflicts(uses[k]);
            if (free) {
                placed[j] = true;
                order.push_back(j);
                work += uses[j].work;
                largest = std::max(largest, uses[j].work);
            } else {
                passed.push_back(j);
            }
        }
        if (order.size() - start >= 2)
            p.concurrent.push_back({static_cast<std::uint32_t>(start),
                                    static_cast<std::uint32_t>(order.size() - start),
                                    work - largest});
    }
    std::vector<step> steps;
    steps.reserve(count);
    for (std::size_t k : order)
        steps.push_back(std::move(p.steps[k]));
    p.steps = std::move(steps);
}

} // namespace xtrace::plan
