// The runtime section of interp/execute.hpp: the executor that walks a plan.

#include "../../plan/arena.hpp"
#include "../../plan/row_tiles.hpp"
#include "../gather.hpp"
#include "../parallel.hpp"
#include "../print.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <new>
#include <sstream>
#include <variant>
#include <vector>

namespace xtrace::interp {

namespace detail {

// True when a tensor of `shape` with element `strides` is laid out row-major (dims of size 1
// may have any stride).
inline bool is_row_major(const std::int64_t* strides, const shape_t& shape) {
    std::int64_t expect = 1;
    for (std::size_t d = shape.size(); d-- > 0;) {
        if (shape[d] != 1 && strides[d] != expect)
            return false;
        expect *= shape[d];
    }
    return true;
}

class executor {
public:
    executor(const graph::graph& g, const plan::plan& p, std::span<const strided_input> args,
             std::span<void* const> outputs,
             std::span<graph::variable_storage* const> variables = {})
        : g_(p.graph_for(g)), p_(p), args_(args), outputs_(outputs), variables_(variables) {}

    void run() {
        plan::scratch_scope scratch;
        scratch_ = &scratch;
        temps_ = scratch.allocate(p_.temp_bytes + 1);
        registers_ = scratch.allocate(p_.register_bytes + 1);
        if (p_.row_sweep && sweep_rows(scratch)) {
            for (const auto& c : p_.copies)
                copy_out(c);
            return;
        }
        auto group = p_.concurrent.begin();
        for (std::size_t k = 0; k < p_.steps.size(); ++k) {
            if (group != p_.concurrent.end() && group->first == k) {
                const plan::concurrent_steps& c = *group++;
                if (run_at_once(c)) {
                    k += c.count - 1;
                    continue;
                }
            }
            run_step(p_.steps[k], scratch, registers_);
        }
        for (const auto& c : p_.copies)
            copy_out(c);
    }

private:
    void run_step(const plan::step& s, plan::scratch_scope& scratch, std::byte* registers) {
        if (const auto* r = std::get_if<plan::region>(&s))
            run_region_step(*r, scratch, registers);
        else if (const auto* c = std::get_if<plan::control_step>(&s))
            run_control(*c);
        else
            run_node(std::get<plan::node_step>(s).node);
    }

    // Steps that may run at once, each a task (its own chunks nest inside it), when they are
    // worth a thread together and there is one: each gets its own registers and scratch, and
    // the caller's chunk floor and thread cap, so it runs, and rounds, exactly as it would
    // alone. False when they should run one after another instead.
    bool run_at_once(const plan::concurrent_steps& c) {
        if (c.work < min_chunk_elements() || worker_slots() < 2)
            return false;
        const std::size_t stride = (p_.register_bytes + plan::scratch_alignment) /
                                   plan::scratch_alignment * plan::scratch_alignment;
        std::byte* registers = scratch_->allocate(c.count * stride);
        const std::size_t floor = min_chunk_elements();
        const int cap = thread_cap();
        for_chunks(c.count, [&](std::size_t m, std::size_t) {
            const chunk_floor_scope same_floor(floor);
            const thread_cap_scope same_cap(cap);
            plan::scratch_scope scratch;
            run_step(p_.steps[c.first + m], scratch, registers + m * stride);
        });
        return true;
    }

    // A step running one node: what it does follows from the op (no default, so that a new op
    // kind is a compiler warning here until it is handled).
    void run_node(graph::node_id id) {
        switch (g_[id].op) {
#define XTRACE_X(name, domain) case op_kind::name:
            XTRACE_REDUCTION_OPS(XTRACE_X)
#undef XTRACE_X
            return run_reduction(id);
#define XTRACE_X(name) case op_kind::name:
            XTRACE_SHAPE_OPS(XTRACE_X)
#undef XTRACE_X
            return run_copy(id);
        case op_kind::matmul:
            return run_matmul(id);
        case op_kind::print:
            return run_print(id);
        case op_kind::host_function:
            return run_host(id);
        case op_kind::read_variable:
            return run_read(id);
        case op_kind::assign_variable:
            return run_assign(id);
        case op_kind::sum_to:
            return run_sum_to(id);
        case op_kind::arg:
        case op_kind::constant:
        case op_kind::cast:
        case op_kind::stop_gradient:
        case op_kind::ensure_shape:
#define XTRACE_X(name, arity, domain, result) case op_kind::name:
            XTRACE_ELEMENTWISE_OPS(XTRACE_X)
#undef XTRACE_X
        case op_kind::cond:
        case op_kind::while_loop:
        case op_kind::scan:
        case op_kind::result:
            break; // never a node step: the planner puts these in regions or control steps
        }
        throw error("xtrace: the plan runs node " + std::to_string(id) + " (" +
                    std::string(info(g_[id].op).name) + ") as a step of its own, which it cannot");
    }

    void run_control(const plan::control_step& c) {
        if (g_[c.node].op == op_kind::cond)
            run_cond(c);
        else if (g_[c.node].op == op_kind::scan)
            run_scan(c);
        else
            run_while(c);
    }

    void run_region_step(const plan::region& r, plan::scratch_scope& scratch,
                         std::byte* registers) {
        for (const plan::tail_reduction& t : r.tails)
            g_[t.node].reduce->init(home_data(t.node), t.results);
        if (r.size > 0)
            run_region(r, scratch, registers);
        for (const plan::tail_reduction& t : r.tails)
            g_[t.node].reduce->finish(home_data(t.node), t.results, t.count);
    }

    std::byte* home_data(graph::node_id id) const {
        const plan::home& h = p_.homes[id];
        switch (h.where) {
        case plan::location::arg:
            return static_cast<std::byte*>(const_cast<void*>(args_[h.index].data));
        case plan::location::constant:
            return reinterpret_cast<std::byte*>(const_cast<std::uint64_t*>(&h.bits));
        case plan::location::temp:
            return aliases_ && aliases_[id] ? aliases_[id] : temps_ + h.offset;
        case plan::location::output:
            return static_cast<std::byte*>(outputs_[h.index]);
        case plan::location::view:
            return home_data(g_[id].inputs[0]);
        case plan::location::none:
            break;
        }
        return nullptr;
    }

    // Element strides of a materialised node (arguments: the caller's; views: their source's,
    // rearranged; others: row-major).
    const std::int64_t* home_strides(graph::node_id id, std::int64_t* buffer) const {
        const plan::home& h = p_.homes[id];
        if (h.where == plan::location::arg)
            return args_[h.index].strides.data();
        if (h.where == plan::location::view) {
            view_strides(id, buffer);
            return buffer;
        }
        const shape_t& shape = p_.shapes[id];
        contiguous_strides(shape.data(), shape.size(), buffer);
        return buffer;
    }

    // How a block reads an input: one value filled once per chunk, in place, gathered into its
    // register, or (a row splat) the value of the block's row, which its kernels read as one.
    enum class access : std::uint8_t { fixed, in_place, gather, row_splat };

    // Per input, decided once per call: where it is and how a block reads it.
    struct input_state {
        access mode;
        bool splat;                            // a constant its kernels read as one value
        bool rows;                             // gather: contiguous along the innermost dim, so
                                               // a block within one row is read in place
        std::size_t size;                      // element bytes
        const std::byte* base;                 // its data
        const std::int64_t* broadcast_strides; // strides broadcast to the region's shape
    };

    // What every chunk of a region reads: the inputs, where live results go, and each tail
    // reduction's partial results per chunk (when the region runs in several chunks).
    struct region_state {
        const plan::region* r;
        input_state* inputs;
        std::byte** outs;                // per node: its home when live, else null
        std::size_t* out_sizes;          // per node: its element bytes (read for every block)
        std::byte* registers;            // one register set per worker slot
        std::size_t register_stride;     // bytes between two slots' sets (apart by a cache line)
        std::byte** slot_ptrs;           // per worker slot: one pointer per register slot
        std::size_t ptr_stride;          // pointers between two slots' (apart by a cache line, as
                                         // every block rewrites them)
        std::size_t chunk, chunks;       // elements per chunk, chunk count
        std::byte** partials;            // [tail * chunks + chunk]: that chunk's partial results
        std::size_t* first_results;      // [tail * chunks + chunk]: the first result it covers
        std::size_t* result_counts;      // [tail * chunks + chunk]: how many it covers
        const std::ptrdiff_t* row_steps; // per input, then per node: bytes its pointer moves on
                                         // from one row to the next (see row_steps_of), or null
    };

    // `registers`: the block registers of a region run as one chunk (several chunks take a set
    // per worker slot from `scratch`).
    void run_region(const plan::region& r, plan::scratch_scope& scratch, std::byte* registers) {
        region_state st = prepare_region(r, scratch, registers, false);
        st.row_steps = r.row_cut ? row_steps_of(st, scratch) : nullptr;
        for_chunks(st.chunks, [&](std::size_t c, std::size_t slot) { run_chunk(st, c, slot); });
        if (st.chunks > 1)
            fold_partials(st);
    }

    // One step of a row sweep: a region, run row by row or a few rows per block, or a stored
    // reduction of rows, a few rows' results reduced per call.
    struct sweep_step {
        region_state st{}; // a region's (st.r set), else unused
        std::byte** ptrs = nullptr;
        std::size_t inner = 0; // the region's elements per row
        bool by_row = false;   // a block per row (a row splat, or a bias row read in place)
        bool fills = false;    // some input is one value for the tile, filled for each group
        const plan::instruction* one = nullptr; // the region's one op, when it is only that
        // A region of one fused piece, with no tail reduction but the one it folds into: its
        // rows call the piece's kernel straight from `leaves` (and the mask of those that are
        // one value), which move on by `leaf_steps` from row to row.
        const plan::instruction* piece = nullptr;
        const void** leaves = nullptr;
        std::ptrdiff_t* leaf_steps = nullptr;
        std::byte* folded = nullptr; // the results the piece folds into
        const graph::node* reduction = nullptr;
        const std::byte* in = nullptr; // the reduction's rows
        std::byte* out = nullptr;      // their results
        std::ptrdiff_t in_step = 0, out_step = 0;
        std::int64_t* shape = nullptr;         // its input's, with the row dim first
        const std::int64_t* strides = nullptr; // the same
        std::size_t rank = 0;
        std::uint64_t mask = 0; // its reduced dims
        std::size_t count = 0;  // elements per result when each row is one run reduced whole
    };

    // A tile whose steps all work on rows alone (plan::plan::row_sweep) runs a few rows at a
    // time (as many as keep a step's rows in L1), each group through every step before the
    // next: what a step writes for the rows and the next one reads is still in L1, as in a
    // loop written by hand. The regions' states are set up once for the tile, each with
    // registers of its own, and each region finishes its tail reductions' results of the rows
    // for the steps after it. False, having run nothing, when some region cannot (an input it
    // gathers block by block, a row longer than its block).
    bool sweep_rows(plan::scratch_scope& scratch) {
        const std::size_t count = p_.steps.size();
        auto* steps = reinterpret_cast<sweep_step*>(scratch.allocate(count * sizeof(sweep_step)));
        std::size_t rows = 0, widest = 1; // the tile's rows; the most bytes a step reads per row
        for (std::size_t k = 0; k < count; ++k) {
            sweep_step& s = *new (steps + k) sweep_step{};
            std::size_t step_rows = 0;
            if (const auto* r = std::get_if<plan::region>(&p_.steps[k])) {
                s.st = prepare_region(*r, scratch, scratch.allocate(register_set_bytes()), true);
                s.st.row_steps = row_steps_of(s.st, scratch);
                if (!s.st.row_steps)
                    return false;
                s.inner = static_cast<std::size_t>(r->shape[1]);
                for (const plan::tail_reduction& t : r->tails)
                    if (t.outer || t.count == 0 || s.inner % t.count != 0)
                        return false;
                s.by_row = r->row_cut;
                for (std::size_t i = 0; i < r->inputs.size(); ++i) {
                    const input_state& in = s.st.inputs[i];
                    s.by_row = s.by_row || in.mode == access::gather;
                    s.fills = s.fills || (in.mode == access::fixed && !in.splat);
                    widest = std::max(widest, s.inner * in.size);
                }
                for (std::size_t j = 0; j < r->nodes.size(); ++j)
                    if (s.st.outs[j])
                        widest = std::max(widest, s.inner * s.st.out_sizes[j]);
                s.ptrs = chunk_pointers(s.st, 0, false); // one values: filled as the rows run
                seek_row(s.st, s.ptrs, 0);
                direct_piece(s, scratch);
                if (r->program.size() == 1 && !r->program[0].leaves && r->tails.empty())
                    s.one = &r->program[0];
                step_rows = static_cast<std::size_t>(r->shape[0]);
            } else {
                const graph::node_id id = std::get<plan::node_step>(p_.steps[k]).node;
                const graph::node& n = g_[id];
                const shape_t& in = p_.shapes[n.inputs[0]];
                if (in.empty())
                    return false;
                auto* dims = reinterpret_cast<std::int64_t*>(
                    scratch.allocate(2 * XTRACE_MAX_RANK * sizeof(std::int64_t)));
                std::int64_t* strides = dims + XTRACE_MAX_RANK;
                std::copy_n(home_strides(n.inputs[0], strides), in.size(), strides);
                std::copy(in.begin(), in.end(), dims);
                const std::size_t bytes = dtype_size(g_[n.inputs[0]].type);
                s.reduction = &n;
                s.in = home_data(n.inputs[0]);
                s.out = home_data(id);
                s.in_step = strides[0] * static_cast<std::ptrdiff_t>(bytes);
                s.out_step = in[0] == 0 ? 0
                                        : static_cast<std::ptrdiff_t>(
                                              num_elements(p_.shapes[id]) / in[0] *
                                              static_cast<std::int64_t>(dtype_size(n.type)));
                s.shape = dims;
                s.strides = strides;
                s.rank = in.size();
                for (auto a : n.axes)
                    s.mask |= std::uint64_t(1) << a;
                s.count = whole_rows(in, strides, s.mask, p_.shapes[id]);
                step_rows = static_cast<std::size_t>(in[0]);
                widest = std::max<std::size_t>(
                    widest,
                    static_cast<std::size_t>(num_elements(in) / std::max<dim_t>(in[0], 1)) * bytes);
            }
            if (k > 0 && step_rows != rows)
                return false;
            rows = step_rows;
        }
        for (std::size_t k = 0; k < count; ++k)
            if (steps[k].st.r)
                for (const plan::tail_reduction& t : steps[k].st.r->tails)
                    g_[t.node].reduce->init(home_data(t.node), t.results);
        const std::size_t group = std::max<std::size_t>(1, p_.row_sweep / widest);
        for (std::size_t first = 0; first < rows; first += group) {
            const std::size_t n = std::min(group, rows - first);
            for (std::size_t k = 0; k < count; ++k)
                sweep(steps[k], first, n);
        }
        return true;
    }

    // Elements per row when a swept reduction of `in` (its strides, in elements) reduces each row
    // whole, as one run (every dim but the outermost, row-major), to one result; else 0.
    static std::size_t whole_rows(const shape_t& in, const std::int64_t* strides,
                                  std::uint64_t mask, const shape_t& out) {
        const std::size_t rank = in.size();
        if (rank < 2 || mask != ((std::uint64_t(1) << rank) - 2) || num_elements(out) != in[0])
            return 0;
        std::int64_t expect = 1;
        for (std::size_t d = rank; d-- > 1;) {
            if (in[d] != 1 && strides[d] != expect)
                return 0;
            expect *= in[d];
        }
        return expect > 0 ? static_cast<std::size_t>(expect) : 0;
    }

    // Sets up a swept region's piece for calls a group of rows at a time, without the block
    // program, when the region is one piece (and what it folds into): for a small step (a
    // row's rsqrt(v + eps)), the block program's set-up costs more than a group's rows.
    void direct_piece(sweep_step& s, plan::scratch_scope& scratch) const {
        const plan::region& r = *s.st.r;
        if (r.program.size() != 1 || r.program[0].leaves == 0)
            return;
        const plan::instruction& ins = r.program[0];
        if (!(r.tails.empty() || (r.tails.size() == 1 && ins.fold && r.tails[0].folded)))
            return;
        if (ins.fold ? !ins.fold_rows : !ins.rows) // a piece built without its rows kernels
            return;
        s.piece = &ins;
        s.leaves = reinterpret_cast<const void**>(
            scratch.allocate((ins.leaves + 1) * sizeof(const void*)));
        s.leaf_steps = reinterpret_cast<std::ptrdiff_t*>(
            scratch.allocate(ins.leaves * sizeof(std::ptrdiff_t)));
        const std::uint16_t* leaf = r.leaf_slots.data() + ins.first_leaf;
        for (std::size_t j = 0; j < ins.leaves; ++j) {
            s.leaves[j] = s.ptrs[leaf[j]];
            s.leaf_steps[j] = s.st.row_steps[leaf[j]];
        }
        s.leaves[ins.leaves] = &ins.one_value;
        if (ins.fold)
            s.folded = home_data(r.tails[0].node);
    }

    // Rows [first, first + n) of a step of a row sweep.
    void sweep(sweep_step& s, std::size_t first, std::size_t n) const {
        const auto rows = static_cast<std::ptrdiff_t>(n);
        if (!s.st.r) {
            s.shape[0] = static_cast<std::int64_t>(n);
            if (s.count)
                s.reduction->reduce->rows(s.in, s.in_step, s.count, n, s.out);
            else
                s.reduction->reduce->whole(s.in, s.strides, s.shape, s.rank, s.mask, s.out);
            s.in += rows * s.in_step;
            s.out += rows * s.out_step;
            return;
        }
        const plan::region& r = *s.st.r;
        const bool by_row = s.by_row || n * s.inner > r.block;
        if (s.fills)
            fill_fixed(s.st, by_row ? s.inner : n * s.inner, s.ptrs);
        if (s.piece) {
            // The group's rows in one call, which moves the leaves on from row to row; or, when
            // nothing is read a row at a time, as one stretch, since every leaf's rows and the
            // result's follow each other (a value for the tile is filled for all of them).
            const plan::instruction& ins = *s.piece;
            std::byte*& out = s.ptrs[ins.out];
            const std::ptrdiff_t out_step = s.st.row_steps[ins.out];
            const std::size_t length = by_row ? s.inner : n * s.inner, calls = by_row ? n : 1;
            if (ins.fold)
                ins.fold_rows(s.leaves, s.leaf_steps, out, out_step, first * s.inner, length,
                              r.tails[0].count, s.folded, calls);
            else
                ins.rows(s.leaves, s.leaf_steps, out, out_step, length, calls);
            for (std::size_t j = 0; j < ins.leaves; ++j)
                s.leaves[j] = static_cast<const std::byte*>(s.leaves[j]) + rows * s.leaf_steps[j];
            out += rows * out_step;
        } else {
            sweep_blocks(s, first, n, by_row);
        }
        for (const plan::tail_reduction& t : r.tails) {
            const std::size_t per_row = s.inner / t.count;
            g_[t.node].reduce->finish(home_data(t.node) +
                                          first * per_row * dtype_size(g_[t.node].type),
                                      n * per_row, t.count);
        }
    }

    // A swept region's group of rows through its block program (or its one op, row by row): not
    // inlined into sweep, whose usual path, a piece, then saves fewer registers per call.
    XTRACE_NOINLINE void sweep_blocks(sweep_step& s, std::size_t first, std::size_t n,
                                      bool by_row) const {
        const plan::region& r = *s.st.r;
        const std::size_t moving = r.inputs.size() + r.nodes.size();
        if (by_row) {
            // One op (as softmax's last division by each row's sum): its kernel called
            // straight, without the block program's setup for each row.
            for (std::size_t row = first; row < first + n; ++row) {
                if (const plan::instruction* one = s.one) {
                    const void* in[3] = {s.ptrs[one->in[0]], s.ptrs[one->in[1]],
                                         s.ptrs[one->in[2]]};
                    one->fn(in, s.ptrs[one->out], s.inner);
                } else {
                    run_block(s.st, 0, row * s.inner, s.inner, s.ptrs);
                }
                for (std::size_t i = 0; i < moving; ++i)
                    s.ptrs[i] += s.st.row_steps[i];
            }
        } else {
            run_block(s.st, 0, first * s.inner, n * s.inner, s.ptrs);
            for (std::size_t i = 0; i < moving; ++i)
                s.ptrs[i] += static_cast<std::ptrdiff_t>(n) * s.st.row_steps[i];
        }
    }

    // Fills the registers of a swept region's inputs that are one value for the whole tile with
    // `count` copies. Such an input may be a step's result (a tile of one row), so it is filled
    // once its step has run: for each group, as much as a block takes.
    void fill_fixed(const region_state& st, std::size_t count, std::byte* const* ptrs) const {
        const plan::region& r = *st.r;
        for (std::size_t i = 0; i < r.inputs.size(); ++i) {
            const input_state& in = st.inputs[i];
            if (in.mode == access::fixed && !in.splat)
                gather(in.base, in.size, in.broadcast_strides, r.shape.data(), r.shape.size(), 0,
                       count, ptrs[i]);
        }
    }

    // Bytes of one set of block registers, rounded to cache lines with one to spare, so that
    // two sets (two worker slots' or two swept regions') share no line.
    std::size_t register_set_bytes() const {
        return (p_.register_bytes + 2 * plan::scratch_alignment - 1) / plan::scratch_alignment *
               plan::scratch_alignment;
    }

    // What every chunk of region r reads (all but its row steps), and its chunks: one, with
    // `registers` its block registers, when `one_chunk` is set.
    region_state prepare_region(const plan::region& r, plan::scratch_scope& scratch,
                                std::byte* registers, bool one_chunk) {
        const std::size_t rank = r.shape.size();
        const std::size_t n_in = r.inputs.size();
        const std::size_t n_nodes = r.nodes.size();
        const std::size_t n_tails = r.tails.size();
        std::array<std::int64_t, XTRACE_MAX_RANK> region_strides{};
        contiguous_strides(r.shape.data(), rank, region_strides.data());
        region_state st{};
        st.r = &r;
        st.inputs =
            reinterpret_cast<input_state*>(scratch.allocate(n_in * sizeof(input_state) + 1));
        auto* broadcast = reinterpret_cast<std::int64_t*>(
            scratch.allocate(n_in * (rank + 1) * sizeof(std::int64_t) + 1));
        st.outs = reinterpret_cast<std::byte**>(scratch.allocate(n_nodes * sizeof(std::byte*) + 1));
        st.out_sizes =
            reinterpret_cast<std::size_t*>(scratch.allocate(n_nodes * sizeof(std::size_t) + 1));
        for (std::size_t k = 0; k < n_nodes; ++k) {
            st.outs[k] = r.live_out[k] ? home_data(r.nodes[k]) : nullptr;
            st.out_sizes[k] = dtype_size(g_[r.nodes[k]].type);
        }
        for (std::size_t i = 0; i < n_in; ++i) {
            const graph::node_id id = r.inputs[i];
            input_state& in = st.inputs[i];
            in.size = dtype_size(g_[id].type);
            in.base = home_data(id);
            in.broadcast_strides = broadcast + i * (rank + 1);
            in.splat = g_[id].op == op_kind::constant && r.registers[i] == plan::no_register;
            if (in.splat) {
                in.mode = access::fixed;
                continue;
            }
            const shape_t& s = p_.shapes[id];
            std::array<std::int64_t, XTRACE_MAX_RANK> own{};
            const std::int64_t* strides = home_strides(id, own.data());
            std::int64_t* e = broadcast + i * (rank + 1);
            bool contiguous = true, constant = true;
            for (std::size_t d = 0; d < rank; ++d) {
                const std::ptrdiff_t sd =
                    static_cast<std::ptrdiff_t>(d) - static_cast<std::ptrdiff_t>(rank - s.size());
                e[d] = (sd < 0 || s[sd] == 1) ? 0 : strides[sd];
                if (r.shape[d] != 1) {
                    contiguous = contiguous && e[d] == region_strides[d];
                    constant = constant && e[d] == 0;
                }
            }
            // One value: each chunk fills its register once for every block.
            in.mode = r.registers[i] == plan::no_register ? access::row_splat
                      : constant                          ? access::fixed
                      : contiguous                        ? access::in_place
                                                          : access::gather;
            in.rows = rank > 0 && e[rank - 1] == 1;
        }
        st.chunk = one_chunk ? r.size : chunk_elements(r.size, r.block);
        st.chunks = one_chunk ? 1 : chunk_count(r.size, st.chunk);
        const std::size_t slots = st.chunks > 1 ? worker_slots() : 1;
        st.register_stride = register_set_bytes();
        st.registers = st.chunks > 1 ? scratch.allocate(slots * st.register_stride) : registers;
        constexpr std::size_t per_line = plan::scratch_alignment / sizeof(std::byte*);
        st.ptr_stride = (r.registers.size() + per_line) / per_line * per_line;
        st.slot_ptrs = reinterpret_cast<std::byte**>(
            scratch.allocate(slots * st.ptr_stride * sizeof(std::byte*)));
        if (st.chunks > 1 && n_tails > 0)
            allocate_partials(st, scratch);
        return st;
    }

    // A rank-2 region whose rows each fit a block and whose chunks start at rows can run block
    // by block as row by row: each input's and result's pointer then moves on by a fixed step
    // from one row to the next, without a cursor (a region cut at row ends does, and so does a
    // tile swept row by row). Null when the region is not such, or when an input is gathered
    // block by block.
    const std::ptrdiff_t* row_steps_of(const region_state& st, plan::scratch_scope& scratch) const {
        const plan::region& r = *st.r;
        if (r.shape.size() != 2)
            return nullptr;
        const auto inner = static_cast<std::size_t>(r.shape[1]);
        if (inner == 0 || inner > r.block || st.chunk % inner != 0)
            return nullptr;
        const std::size_t n_in = r.inputs.size();
        const std::size_t n_nodes = r.nodes.size();
        auto* steps = reinterpret_cast<std::ptrdiff_t*>(
            scratch.allocate((n_in + n_nodes) * sizeof(std::ptrdiff_t) + 1));
        for (std::size_t i = 0; i < n_in; ++i) {
            const input_state& in = st.inputs[i];
            const auto size = static_cast<std::ptrdiff_t>(in.size);
            switch (in.mode) {
            case access::fixed: // filled once per chunk, or a constant
                steps[i] = 0;
                break;
            case access::in_place:
                steps[i] = static_cast<std::ptrdiff_t>(inner) * size;
                break;
            case access::gather: // read in place only as a row (a bias row)
                if (!in.rows)
                    return nullptr;
                steps[i] = in.broadcast_strides[0] * size;
                break;
            case access::row_splat:
                steps[i] = in.broadcast_strides[0] * size;
                break;
            }
        }
        for (std::size_t k = 0; k < n_nodes; ++k)
            steps[n_in + k] = st.outs[k] ? static_cast<std::ptrdiff_t>(inner * st.out_sizes[k]) : 0;
        return steps;
    }

    // Each chunk of a region with tail reductions folds into partial results of its own: the
    // results its elements reach (innermost reductions) or all of them (outermost ones).
    void allocate_partials(region_state& st, plan::scratch_scope& scratch) const {
        const plan::region& r = *st.r;
        const std::size_t entries = r.tails.size() * st.chunks;
        st.partials = reinterpret_cast<std::byte**>(scratch.allocate(entries * sizeof(void*)));
        st.first_results =
            reinterpret_cast<std::size_t*>(scratch.allocate(entries * sizeof(std::size_t)));
        st.result_counts =
            reinterpret_cast<std::size_t*>(scratch.allocate(entries * sizeof(std::size_t)));
        for (std::size_t t = 0; t < r.tails.size(); ++t) {
            const plan::tail_reduction& tail = r.tails[t];
            const std::size_t bytes = dtype_size(g_[tail.node].type);
            for (std::size_t c = 0; c < st.chunks; ++c) {
                const std::size_t begin = c * st.chunk;
                const std::size_t end = std::min(r.size, begin + st.chunk);
                const std::size_t e = t * st.chunks + c;
                st.first_results[e] = tail.outer ? 0 : begin / tail.count;
                st.result_counts[e] =
                    tail.outer ? tail.results : (end - 1) / tail.count + 1 - st.first_results[e];
                st.partials[e] = scratch.allocate(st.result_counts[e] * bytes + 1);
                g_[tail.node].reduce->init(st.partials[e], st.result_counts[e]);
            }
        }
    }

    // The chunks' partial results joined in chunk order, whichever thread ran which chunk.
    void fold_partials(const region_state& st) const {
        const plan::region& r = *st.r;
        for (std::size_t t = 0; t < r.tails.size(); ++t) {
            const graph::node_id id = r.tails[t].node;
            const std::size_t bytes = dtype_size(g_[id].type);
            std::byte* home = home_data(id);
            for (std::size_t c = 0; c < st.chunks; ++c) {
                const std::size_t e = t * st.chunks + c;
                g_[id].reduce->combine(home + st.first_results[e] * bytes, st.partials[e],
                                       st.result_counts[e]);
            }
        }
    }

    // The multi-index, over a region's shape, of the first element of the block a chunk is at:
    // found by division once per chunk, then moved on block by block.
    struct block_cursor {
        std::array<std::size_t, XTRACE_MAX_RANK> at{};

        void seek(const dim_t* shape, std::size_t rank, std::size_t index) {
            for (std::size_t d = rank; d-- > 0;) {
                const auto extent = static_cast<std::size_t>(shape[d]);
                at[d] = index % extent;
                index /= extent;
            }
        }
        void advance(const dim_t* shape, std::size_t rank, std::size_t n) {
            if (rank == 0)
                return;
            at[rank - 1] += n;
            for (std::size_t d = rank - 1; d > 0; --d) {
                const auto extent = static_cast<std::size_t>(shape[d]);
                if (at[d] < extent)
                    return;
                if (at[d] < 2 * extent) { // a block that ends a row: no division
                    at[d] -= extent;
                    ++at[d - 1];
                } else {
                    at[d - 1] += at[d] / extent;
                    at[d] %= extent;
                }
            }
        }
        // The offset in elements of that element in a tensor with element `strides`.
        std::ptrdiff_t offset(const std::int64_t* strides, std::size_t rank) const {
            std::ptrdiff_t o = 0;
            for (std::size_t d = 0; d < rank; ++d)
                o += static_cast<std::ptrdiff_t>(at[d]) * strides[d];
            return o;
        }
    };

    // Worker `slot`'s slot pointers, set for a chunk: registers, constants, and (unless `fill`
    // is false) the inputs that are one value filled into theirs.
    std::byte** chunk_pointers(const region_state& st, std::size_t slot, bool fill = true) const {
        const plan::region& r = *st.r;
        const std::size_t block_bytes = r.block * 8;
        std::byte** ptrs = st.slot_ptrs + slot * st.ptr_stride;
        std::byte* registers = st.registers + slot * st.register_stride;
        for (std::size_t i = 0; i < r.registers.size(); ++i)
            ptrs[i] = r.registers[i] == plan::no_register
                          ? nullptr
                          : registers + std::size_t(r.registers[i]) * block_bytes;
        for (std::size_t i = 0; i < r.inputs.size(); ++i) {
            const input_state& in = st.inputs[i];
            if (in.splat)
                ptrs[i] = const_cast<std::byte*>(in.base);
            else if (in.mode == access::fixed && fill)
                gather(in.base, in.size, in.broadcast_strides, r.shape.data(), r.shape.size(), 0,
                       r.block, ptrs[i]);
        }
        return ptrs;
    }

    // Elements [c * chunk, (c + 1) * chunk) of a region, block by block, on worker `slot`.
    void run_chunk(const region_state& st, std::size_t c, std::size_t slot) const {
        const plan::region& r = *st.r;
        const std::size_t rank = r.shape.size();
        const std::size_t n_in = r.inputs.size();
        const std::size_t n_nodes = r.nodes.size();
        const std::size_t block_bytes = r.block * 8;
        std::byte** ptrs = chunk_pointers(st, slot);
        std::byte* registers = st.registers + slot * st.register_stride;
        const std::size_t begin = c * st.chunk;
        const std::size_t end = std::min(r.size, begin + st.chunk);
        if (st.row_steps) {
            run_rows(st, c, ptrs, begin, end);
            return;
        }
        const std::size_t inner = rank > 0 ? static_cast<std::size_t>(r.shape[rank - 1]) : 1;
        block_cursor cursor;
        if (begin < end) // (no element, maybe a dim of 0)
            cursor.seek(r.shape.data(), rank, begin);
        for (std::size_t start = begin, n = 0; start < end;
             start += n, cursor.advance(r.shape.data(), rank, n)) {
            n = std::min(r.block, end - start);
            if (r.row_cut) // a row splat's value holds to the row's end
                n = std::min(n, inner - cursor.at[rank - 1]);
            for (std::size_t i = 0; i < n_in; ++i) {
                const input_state& in = st.inputs[i];
                if (in.mode == access::in_place) {
                    ptrs[i] = const_cast<std::byte*>(in.base) + start * in.size;
                } else if (in.mode == access::row_splat) {
                    ptrs[i] = const_cast<std::byte*>(in.base) +
                              cursor.offset(in.broadcast_strides, rank) *
                                  static_cast<std::ptrdiff_t>(in.size);
                } else if (in.mode == access::gather) {
                    if (in.rows && cursor.at[rank - 1] + n <= inner) { // a bias row: in place
                        ptrs[i] = const_cast<std::byte*>(in.base) +
                                  cursor.offset(in.broadcast_strides, rank) *
                                      static_cast<std::ptrdiff_t>(in.size);
                        continue;
                    }
                    ptrs[i] = registers + std::size_t(r.registers[i]) * block_bytes;
                    gather(in.base, in.size, in.broadcast_strides, r.shape.data(), rank, start, n,
                           ptrs[i]);
                }
            }
            for (std::size_t k = 0; k < n_nodes; ++k)
                if (st.outs[k])
                    ptrs[n_in + k] = st.outs[k] + start * st.out_sizes[k];
            run_block(st, c, start, n, ptrs);
        }
    }

    // The rows [begin, end) of chunk c of a region that runs row by row (see row_steps_of), one
    // block each.
    void run_rows(const region_state& st, std::size_t c, std::byte** ptrs, std::size_t begin,
                  std::size_t end) const {
        const std::size_t moving = st.r->inputs.size() + st.r->nodes.size();
        const auto inner = static_cast<std::size_t>(st.r->shape[1]);
        seek_row(st, ptrs, begin);
        for (std::size_t start = begin; start < end; start += inner) {
            run_block(st, c, start, inner, ptrs);
            if (start + inner < end)
                for (std::size_t i = 0; i < moving; ++i)
                    ptrs[i] += st.row_steps[i];
        }
    }

    // Points `ptrs` at the row that starts at element `begin` of a region that runs row by row.
    void seek_row(const region_state& st, std::byte** ptrs, std::size_t begin) const {
        const plan::region& r = *st.r;
        const std::size_t n_in = r.inputs.size();
        const auto row = static_cast<std::ptrdiff_t>(begin / static_cast<std::size_t>(r.shape[1]));
        for (std::size_t i = 0; i < n_in; ++i) {
            const input_state& in = st.inputs[i];
            if (in.mode == access::in_place)
                ptrs[i] = const_cast<std::byte*>(in.base) + begin * in.size;
            else if (in.mode != access::fixed) // a row splat, or a bias row read in place
                ptrs[i] = const_cast<std::byte*>(in.base) +
                          row * in.broadcast_strides[0] * static_cast<std::ptrdiff_t>(in.size);
        }
        for (std::size_t k = 0; k < r.nodes.size(); ++k)
            if (st.outs[k])
                ptrs[n_in + k] = st.outs[k] + begin * st.out_sizes[k];
    }

    // The region's program on the n elements at `start` (of chunk c) that `ptrs` point at, then
    // its tail reductions that no piece folds.
    void run_block(const region_state& st, std::size_t c, std::size_t start, std::size_t n,
                   std::byte* const* ptrs) const {
        const plan::region& r = *st.r;
        for (const auto& ins : r.program) {
            if (ins.leaves) { // a fused piece: its leaves, then which are one value
                const void* in[plan::max_fused_leaves + 1];
                const std::uint16_t* leaf = r.leaf_slots.data() + ins.first_leaf;
                for (std::size_t j = 0; j < ins.leaves; ++j)
                    in[j] = ptrs[leaf[j]];
                in[ins.leaves] = &ins.one_value;
                if (ins.fold) {
                    const tail_target to = target(st, ins.tail, c, start);
                    ins.fold(in, ptrs[ins.out], to.start, n, r.tails[ins.tail].count, to.results);
                } else {
                    ins.fn(in, ptrs[ins.out], n);
                }
                continue;
            }
            const void* in[3] = {ptrs[ins.in[0]], ptrs[ins.in[1]], ptrs[ins.in[2]]};
            ins.fn(in, ptrs[ins.out], n);
        }
        for (std::size_t t = 0; t < r.tails.size(); ++t) {
            const plan::tail_reduction& tail = r.tails[t];
            if (tail.folded)
                continue;
            const graph::reduce_kernels& k = *g_[tail.node].reduce;
            const tail_target to = target(st, t, c, start);
            if (tail.outer)
                k.accumulate_outer(ptrs[tail.slot], to.start, n, tail.results, to.results);
            else
                k.accumulate(ptrs[tail.slot], to.start, n, tail.count, to.results);
        }
    }

    // Where a block of chunk c starting at element `start` folds into tail reduction t: the
    // results themselves when the region runs as one chunk, else the chunk's partial results,
    // with the start shifted so that the chunk's first result is the partial's first.
    struct tail_target {
        std::byte* results;
        std::size_t start;
    };
    tail_target target(const region_state& st, std::size_t t, std::size_t c,
                       std::size_t start) const {
        const plan::tail_reduction& tail = st.r->tails[t];
        if (st.chunks == 1)
            return {home_data(tail.node), start};
        const std::size_t e = t * st.chunks + c;
        return {st.partials[e], tail.outer ? start : start - st.first_results[e] * tail.count};
    }

    void view_strides(graph::node_id id, std::int64_t* out) const {
        const graph::node& n = g_[id];
        const graph::node_id src = n.inputs[0];
        const shape_t& in = p_.shapes[src];
        const shape_t& shape = p_.shapes[id];
        std::array<std::int64_t, XTRACE_MAX_RANK> own{};
        const std::int64_t* st = home_strides(src, own.data());
        switch (n.op) {
        case op_kind::transpose:
            for (std::size_t i = 0; i < shape.size(); ++i)
                out[i] = st[n.axes[i]];
            break;
        case op_kind::expand_dims:
            for (std::size_t i = 0, j = 0; i < shape.size(); ++i)
                out[i] = static_cast<std::int64_t>(i) == n.axes[0] ? 0 : st[j++];
            break;
        case op_kind::squeeze:
            for (std::size_t i = 0, j = 0; j < in.size(); ++j)
                if (static_cast<std::int64_t>(j) != n.axes[0])
                    out[i++] = st[j];
            break;
        case op_kind::broadcast_to:
            for (std::size_t i = 0; i < shape.size(); ++i) {
                const std::ptrdiff_t j = static_cast<std::ptrdiff_t>(i) -
                                         static_cast<std::ptrdiff_t>(shape.size() - in.size());
                out[i] = (j < 0 || in[j] == 1) ? 0 : st[j];
            }
            break;
        default: // reshape of a contiguous source
            contiguous_strides(shape.data(), shape.size(), out);
        }
    }

    // A shape op that cannot be a view: its source gathered, row-major, into its home. A
    // reshape of an argument the caller passed contiguous reads the argument in place instead
    // (the plan cannot know the layout: it is shared by calls of any strides).
    void run_copy(graph::node_id id) {
        const graph::node_id src = g_[id].inputs[0];
        const shape_t& s = p_.shapes[src];
        const std::size_t n = static_cast<std::size_t>(num_elements(s));
        if (n == 0)
            return;
        std::array<std::int64_t, XTRACE_MAX_RANK> own{};
        const plan::home& from = p_.homes[src];
        if (from.where == plan::location::arg && p_.homes[id].where == plan::location::temp &&
            is_row_major(args_[from.index].strides.data(), s)) {
            if (!aliases_) {
                aliases_ = reinterpret_cast<std::byte**>(
                    scratch_->allocate(g_.nodes.size() * sizeof(std::byte*)));
                std::fill(aliases_, aliases_ + g_.nodes.size(), nullptr);
            }
            aliases_[id] = home_data(src);
            return;
        }
        gather(home_data(src), dtype_size(g_[src].type), home_strides(src, own.data()), s.data(),
               s.size(), 0, n, home_data(id));
    }

    // One 2-D product per batch index; batch dims broadcast (stride 0 where an operand has 1).
    void run_matmul(graph::node_id id) {
        const graph::node& n = g_[id];
        const shape_t& out = p_.shapes[id];
        const shape_t &as = p_.shapes[n.inputs[0]], &bs = p_.shapes[n.inputs[1]];
        std::array<std::int64_t, XTRACE_MAX_RANK> abuf{}, bbuf{};
        const std::int64_t* ast = home_strides(n.inputs[0], abuf.data());
        const std::int64_t* bst = home_strides(n.inputs[1], bbuf.data());
        const std::byte* a = home_data(n.inputs[0]);
        const std::byte* b = home_data(n.inputs[1]);
        std::byte* c = home_data(id);
        const std::size_t size = dtype_size(n.type);
        const std::size_t batch_rank = out.size() - 2;
        const std::int64_t m = out[batch_rank], nn = out[batch_rank + 1];
        const std::int64_t k = as[as.size() - 1];
        auto batch_stride = [&](const shape_t& s, const std::int64_t* st, std::size_t d) {
            const std::ptrdiff_t j = static_cast<std::ptrdiff_t>(d) -
                                     static_cast<std::ptrdiff_t>(batch_rank - (s.size() - 2));
            return (j < 0 || s[j] == 1) ? std::int64_t(0) : st[j];
        };
        std::int64_t batches = 1;
        for (std::size_t d = 0; d < batch_rank; ++d)
            batches *= out[d];
        if (m == 0 || nn == 0)
            return;
        // Row panels of matmul_panel_rows(...) rows, each a product of its own: every element
        // sums over k in the same order whatever the panels, so the split changes no bits.
        const std::int64_t rows = matmul_panel_rows(n.type, m, nn, k);
        const std::int64_t panels = (m + rows - 1) / rows;
        for_chunks(static_cast<std::size_t>(batches * panels), [&](std::size_t chunk, std::size_t) {
            const std::int64_t t = static_cast<std::int64_t>(chunk) / panels;
            const std::int64_t r0 = static_cast<std::int64_t>(chunk) % panels * rows;
            std::int64_t ao = r0 * ast[as.size() - 2], bo = 0, rest = t;
            for (std::size_t d = batch_rank; d-- > 0;) {
                const std::int64_t i = rest % out[d];
                rest /= out[d];
                ao += i * batch_stride(as, ast, d);
                bo += i * batch_stride(bs, bst, d);
            }
            n.matmul(a + ao * static_cast<std::int64_t>(size), ast[as.size() - 2],
                     ast[as.size() - 1], b + bo * static_cast<std::int64_t>(size),
                     bst[bs.size() - 2], bst[bs.size() - 1], std::min(rows, m - r0), nn, k,
                     c + static_cast<std::size_t>(t * m * nn + r0 * nn) * size);
        });
    }

    // Rows per panel of a product: enough that a panel is a chunk's worth of multiply-adds (a
    // multiple of the kernel's 4-row tile), or all of them when the product goes to a BLAS,
    // which threads on its own and may round differently for a different row count.
    static std::int64_t matmul_panel_rows(dtype type, std::int64_t m, std::int64_t n,
                                          std::int64_t k) {
#if defined(XTRACE_USE_BLAS)
        if (type == dtype::float32 || type == dtype::float64)
            return std::max<std::int64_t>(m, 1);
#else
        (void)type;
#endif
        const auto per_row = static_cast<std::size_t>(std::max<std::int64_t>(n * k, 1));
        const auto floor = static_cast<std::int64_t>(
            chunk_elements(static_cast<std::size_t>(m) * per_row, per_row) / per_row);
        // At least 64 rows at the default floor: each panel packs B again.
        const auto least =
            static_cast<std::int64_t>(std::clamp<std::size_t>(min_chunk_elements() / 512, 4, 64));
        const std::int64_t rows = std::max(floor, least);
        return std::min(std::max<std::int64_t>(m, 1), (rows + 3) / 4 * 4);
    }

    void run_print(graph::node_id id) {
        const graph::node& n = g_[id];
        std::ostringstream line;
        line << n.text;
        for (std::size_t i = 0; i < n.inputs.size(); ++i) {
            const graph::node_id in = n.inputs[i];
            const shape_t& s = p_.shapes[in];
            std::array<std::int64_t, XTRACE_MAX_RANK> own{};
            line << ' ';
            n.printers[i](line, home_data(in), home_strides(in, own.data()), s.data(), s.size());
        }
        line << '\n';
        print_line(line.str());
    }

    void run_host(graph::node_id id) {
        const graph::node& n = g_[id];
        const std::size_t count = n.inputs.size();
        std::vector<const std::byte*> data(count);
        std::vector<std::array<std::int64_t, XTRACE_MAX_RANK>> buffers(count);
        std::vector<const std::int64_t*> strides(count);
        std::vector<shape_t> shapes(count);
        for (std::size_t i = 0; i < count; ++i) {
            data[i] = home_data(n.inputs[i]);
            strides[i] = home_strides(n.inputs[i], buffers[i].data());
            shapes[i] = p_.shapes[n.inputs[i]];
        }
        // The result has no home when nothing reads it; the callback still runs (an effect).
        std::vector<std::byte> discard;
        std::byte* out = home_data(id);
        if (!out) {
            discard.resize(static_cast<std::size_t>(num_elements(n.shape)) * dtype_size(n.type) +
                           1);
            out = discard.data();
        }
        n.host->run(data.data(), strides.data(), shapes.data(), p_.shapes[id], out);
    }

    // A subgraph's arguments: node inputs read where they live, or (while_loop, scan) the
    // current loop variables, contiguous in `vars`.
    std::vector<strided_input> body_inputs(const graph::graph& body, const graph::node& n,
                                           const std::byte* const* vars = nullptr) const {
        std::vector<strided_input> in(body.args.size());
        const std::size_t var_count = n.op == op_kind::scan ? static_cast<std::size_t>(n.carried)
                                                            : n.bodies.back()->outputs.size();
        for (std::size_t i = 0; i < body.args.size(); ++i) {
            const auto k = static_cast<std::size_t>(body[body.args[i]].arg_position);
            const graph::node_id src = n.inputs[k];
            if (vars && k < var_count) {
                in[i].data = vars[k];
                contiguous_strides(p_.shapes[src].data(), p_.shapes[src].size(),
                                   in[i].strides.data());
                continue;
            }
            in[i].data = home_data(src);
            const std::int64_t* st = home_strides(src, in[i].strides.data());
            if (st != in[i].strides.data())
                std::copy(st, st + p_.shapes[src].size(), in[i].strides.begin());
        }
        return in;
    }

    // Where result k of control step c goes: its home, or `discard` when nothing reads it.
    std::byte* result_home(const plan::control_step& c, std::size_t k, const plan::plan& body,
                           const graph::graph& bg, std::vector<std::byte>& discard) const {
        if (c.results[k] != plan::no_node)
            return home_data(c.results[k]);
        const graph::node_id o = bg.outputs[k];
        discard.resize(
            static_cast<std::size_t>(num_elements(body.shapes[o])) * dtype_size(bg[o].type) + 1);
        return discard.data();
    }

    void run_cond(const plan::control_step& c) {
        const graph::node& n = g_[c.node];
        const bool taken = *reinterpret_cast<const bool*>(home_data(n.inputs[0]));
        const std::size_t branch = taken ? 0 : 1;
        const graph::graph& body = *n.bodies[branch];
        const plan::plan& bp = *c.bodies[branch];
        const auto in = body_inputs(body, n);
        std::vector<std::vector<std::byte>> discard(body.outputs.size());
        std::vector<void*> out(body.outputs.size());
        for (std::size_t k = 0; k < out.size(); ++k)
            out[k] = result_home(c, k, bp, body, discard[k]);
        executor(body, bp, in, out, variables_).run();
    }

    void run_while(const plan::control_step& c) {
        const graph::node& n = g_[c.node];
        const graph::graph& test = *n.bodies[0];
        const graph::graph& body = *n.bodies[1];
        const std::size_t vars = body.outputs.size();
        // Two contiguous buffers per loop variable: the current values and the next ones.
        plan::scratch_scope scratch;
        std::vector<std::byte*> cur, next;
        const auto bytes = loop_buffers(n, vars, scratch, cur, next);
        bool go = false;
        std::vector<void*> test_out{&go}, body_out(vars);
        const std::int64_t limit = n.max_iterations;
        for (std::int64_t iteration = 0; limit < 0 || iteration < limit; ++iteration) {
            executor(test, *c.bodies[0], body_inputs(test, n, cur.data()), test_out, variables_)
                .run();
            if (!go)
                break;
            std::copy(next.begin(), next.end(), body_out.begin());
            executor(body, *c.bodies[1], body_inputs(body, n, cur.data()), body_out, variables_)
                .run();
            std::swap(cur, next);
        }
        for (std::size_t k = 0; k < vars; ++k)
            if (c.results[k] != plan::no_node && bytes[k] > 0)
                std::memcpy(home_data(c.results[k]), cur[k], bytes[k]);
    }

    // Two contiguous buffers per loop variable (current and next), the current ones holding the
    // initial values `n.inputs[0..count)`; returns their sizes in bytes.
    std::vector<std::size_t> loop_buffers(const graph::node& n, std::size_t count,
                                          plan::scratch_scope& scratch,
                                          std::vector<std::byte*>& cur,
                                          std::vector<std::byte*>& next) const {
        std::vector<std::size_t> bytes(count);
        cur.resize(count);
        next.resize(count);
        for (std::size_t k = 0; k < count; ++k) {
            const graph::node_id init = n.inputs[k];
            const shape_t& s = p_.shapes[init];
            bytes[k] = static_cast<std::size_t>(num_elements(s)) * dtype_size(g_[init].type);
            cur[k] = scratch.allocate(bytes[k] + 1);
            next[k] = scratch.allocate(bytes[k] + 1);
            std::array<std::int64_t, XTRACE_MAX_RANK> own{};
            if (bytes[k] > 0)
                gather(home_data(init), dtype_size(g_[init].type), home_strides(init, own.data()),
                       s.data(), s.size(), 0, static_cast<std::size_t>(num_elements(s)), cur[k]);
        }
        return bytes;
    }

    // scan: the body once per leading-dim slice of the scanned inputs, the carries in two
    // buffers swapped per step, each per-step output written straight into row `step` of its
    // stacked result.
    void run_scan(const plan::control_step& c) {
        const graph::node& n = g_[c.node];
        const graph::graph& body = *n.bodies[0];
        const plan::plan& bp = *c.bodies[0];
        const auto carried = static_cast<std::size_t>(n.carried);
        const std::size_t outputs = body.outputs.size();
        plan::scratch_scope scratch;
        std::vector<std::byte*> cur, next;
        const auto bytes = loop_buffers(n, carried, scratch, cur, next);
        const std::int64_t length = p_.shapes[n.inputs[carried]][0];
        // Per-step output k: its row size, and where row 0 goes (a reused row when unread).
        std::vector<std::size_t> row(outputs);
        std::vector<std::byte*> stacked(outputs);
        for (std::size_t k = carried; k < outputs; ++k) {
            const graph::node_id o = body.outputs[k];
            row[k] =
                static_cast<std::size_t>(num_elements(bp.shapes[o])) * dtype_size(body[o].type);
            stacked[k] = c.results[k] != plan::no_node ? home_data(c.results[k])
                                                       : scratch.allocate(row[k] + 1);
        }
        std::vector<void*> out(outputs);
        for (std::int64_t i = 0; i < length; ++i) {
            const std::int64_t step = n.reverse ? length - 1 - i : i;
            auto in = body_inputs(body, n, cur.data());
            for (std::size_t i = 0; i < body.args.size(); ++i) {
                const std::int64_t k = body[body.args[i]].arg_position;
                if (k < n.carried || k >= n.carried + n.scanned)
                    continue;
                // Slice `step` of a scanned input: its leading stride moves the data, and the
                // rest are the slice's strides.
                const graph::node_id src = n.inputs[static_cast<std::size_t>(k)];
                const std::size_t rank = p_.shapes[src].size();
                in[i].data =
                    static_cast<const std::byte*>(in[i].data) +
                    step * in[i].strides[0] * static_cast<std::int64_t>(dtype_size(g_[src].type));
                std::copy(in[i].strides.begin() + 1, in[i].strides.begin() + rank,
                          in[i].strides.begin());
            }
            for (std::size_t k = 0; k < outputs; ++k)
                out[k] = k < carried
                             ? static_cast<void*>(next[k])
                             : static_cast<void*>(stacked[k] +
                                                  (c.results[k] != plan::no_node
                                                       ? static_cast<std::size_t>(step) * row[k]
                                                       : 0));
            executor(body, bp, in, out, variables_).run();
            std::swap(cur, next);
        }
        for (std::size_t k = 0; k < carried; ++k)
            if (c.results[k] != plan::no_node && bytes[k] > 0)
                std::memcpy(home_data(c.results[k]), cur[k], bytes[k]);
    }

    // The variable node `n` reads or assigns: its own, or for a stand-in of a variable
    // argument, the call's.
    graph::variable_storage& variable_of(const graph::node& n) const {
        if (n.var->argument < 0)
            return *n.var;
        const auto k = static_cast<std::size_t>(n.var->argument);
        if (k >= variables_.size())
            throw error("xtrace: the graph reads variable argument " + std::to_string(k) +
                        ", and the call passed " + std::to_string(variables_.size()));
        return *variables_[k];
    }

    void run_read(graph::node_id id) {
        graph::variable_storage& var = variable_of(g_[id]);
        std::byte* out = home_data(id);
        if (!out)
            return;
        const std::lock_guard lock(var.mutex);
        std::copy(var.bytes.begin(), var.bytes.end(), out);
    }

    void run_assign(graph::node_id id) {
        const graph::node& n = g_[id];
        graph::variable_storage& var = variable_of(n);
        const graph::node_id src = n.inputs[0];
        const shape_t& s = p_.shapes[src];
        const auto count = static_cast<std::size_t>(num_elements(s));
        std::array<std::int64_t, XTRACE_MAX_RANK> own{};
        const std::int64_t* st = home_strides(src, own.data());
        if (count == 0) {
            const std::lock_guard lock(var.mutex);
            var.initialized = true;
            return;
        }
        if (!n.kernels) {
            const std::lock_guard lock(var.mutex);
            if (n.initializer && var.initialized)
                return; // an initializer runs once, on the first call
            gather(home_data(src), dtype_size(n.type), st, s.data(), s.size(), 0, count,
                   var.bytes.data());
            var.initialized = true;
            return;
        }
        // assign_add / assign_sub: one read-modify-write under the lock, as tf's assign_add.
        plan::scratch_scope scratch;
        std::byte* value = scratch.allocate(count * dtype_size(n.type));
        gather(home_data(src), dtype_size(n.type), st, s.data(), s.size(), 0, count, value);
        const std::lock_guard lock(var.mutex);
        const void* in[3] = {var.bytes.data(), value, nullptr};
        n.kernels->plain(in, var.bytes.data(), count);
    }

    void run_reduction(graph::node_id id) {
        const graph::node& n = g_[id];
        const graph::node_id in = n.inputs[0];
        const shape_t& shape = p_.shapes[in];
        std::array<std::int64_t, XTRACE_MAX_RANK> own{};
        const std::int64_t* st = home_strides(in, own.data());
        std::uint64_t mask = 0;
        for (auto a : n.axes)
            mask |= std::uint64_t(1) << a;
        reduce_whole(n, home_data(in), st, shape, mask, home_data(id));
    }

    // A reduction of a strided tensor over the dims in `mask`, split along the outermost kept
    // dim: each result is reduced by one call, the same way whatever the split.
    void reduce_whole(const graph::node& n, const std::byte* in, const std::int64_t* strides,
                      const shape_t& shape, std::uint64_t mask, std::byte* out) const {
        std::size_t outer = shape.size();
        for (std::size_t d = 0; d < shape.size() && outer == shape.size(); ++d)
            if (!(mask >> d & 1) && shape[d] > 1)
                outer = d;
        const auto total = static_cast<std::size_t>(num_elements(shape));
        if (outer == shape.size() || total == 0) {
            n.reduce->whole(in, strides, shape.data(), shape.size(), mask, out);
            return;
        }
        const auto extent = static_cast<std::size_t>(shape[outer]);
        const std::size_t per_index = total / extent;
        std::size_t results_after = 1; // results per index of the outer kept dim
        for (std::size_t d = outer + 1; d < shape.size(); ++d)
            if (!(mask >> d & 1))
                results_after *= static_cast<std::size_t>(shape[d]);
        const std::size_t indices =
            std::max<std::size_t>(1, chunk_elements(total, per_index) / per_index);
        const std::size_t in_bytes = dtype_size(g_[n.inputs[0]].type);
        const std::size_t out_bytes = dtype_size(n.type);
        for_chunks(chunk_count(extent, indices), [&](std::size_t c, std::size_t) {
            const std::size_t first = c * indices;
            std::array<std::int64_t, XTRACE_MAX_RANK> part{};
            std::copy(shape.begin(), shape.end(), part.begin());
            part[outer] = static_cast<std::int64_t>(std::min(indices, extent - first));
            n.reduce->whole(in + static_cast<std::int64_t>(first) * strides[outer] *
                                     static_cast<std::int64_t>(in_bytes),
                            strides, part.data(), shape.size(), mask,
                            out + first * results_after * out_bytes);
        });
    }

    // The dims operand 1 has as 1 (or lacks) where operand 0's are larger are summed away; the
    // result, contiguous, has operand 1's shape.
    void run_sum_to(graph::node_id id) {
        const graph::node& n = g_[id];
        const graph::node_id in = n.inputs[0];
        const shape_t& from = p_.shapes[in];
        const shape_t& to = p_.shapes[id];
        std::uint64_t mask = 0;
        const std::size_t lead = from.size() - to.size();
        for (std::size_t d = 0; d < from.size(); ++d)
            if (d < lead || (to[d - lead] == 1 && from[d] != 1))
                mask |= std::uint64_t(1) << d;
        std::array<std::int64_t, XTRACE_MAX_RANK> own{};
        reduce_whole(n, home_data(in), home_strides(in, own.data()), from, mask, home_data(id));
    }

    void copy_out(const plan::output_copy& c) {
        const shape_t& s = p_.shapes[c.node];
        std::array<std::int64_t, XTRACE_MAX_RANK> own{};
        const std::int64_t* st = home_strides(c.node, own.data());
        const std::size_t n = static_cast<std::size_t>(num_elements(s));
        if (n == 0)
            return;
        gather(home_data(c.node), dtype_size(g_[c.node].type), st, s.data(), s.size(), 0, n,
               static_cast<std::byte*>(outputs_[c.output]));
    }

    const graph::graph& g_;
    const plan::plan& p_;
    std::span<const strided_input> args_;
    std::span<void* const> outputs_;
    std::span<graph::variable_storage* const> variables_; // the call's variable arguments
    std::byte* temps_ = nullptr;
    plan::scratch_scope* scratch_ = nullptr;
    std::byte** aliases_ = nullptr; // per node: memory it reads in place of its temp, or null
    std::byte* registers_ = nullptr;
};

} // namespace detail

XTRACE_DECL bool execute_fused(static_fusion::kernel_fn kernel, const graph::graph& g,
                               const plan::plan& p, std::span<const strided_input> args,
                               void* output) {
    if (!kernel || p.fused_leaves.empty())
        return false;
    const shape_t& shape = p.shapes[g.outputs[0]];
    const plan::fused_leaf_table& table = p.fused_leaves;
    for (const std::uint32_t a : table.read)
        if (!detail::is_row_major(args[a].strides.data(), shape))
            return false;
    std::array<const void*, static_fusion::max_leaves> leaves;
    for (std::size_t k = 0; k < table.size(); ++k)
        leaves[k] = &table.bits[k];
    for (const plan::fused_leaf_table::arg_leaf& a : table.args)
        leaves[a.leaf] = args[a.arg].data;
    // Chunks of whole SIMD-friendly blocks: each leaf (but a constant) and the output move on.
    const auto size = static_cast<std::size_t>(num_elements(shape));
    const std::size_t chunk = chunk_elements(size, 64);
    if (size <= chunk) { // one chunk, the small call's path
        kernel(leaves.data(), output, size);
        return true;
    }
    const std::size_t bytes = table.element_bytes;
    for_chunks(chunk_count(size, chunk), [&](std::size_t c, std::size_t) {
        const std::size_t begin = c * chunk;
        std::array<const void*, static_fusion::max_leaves> moved = leaves;
        for (const plan::fused_leaf_table::arg_leaf& a : table.args)
            moved[a.leaf] = static_cast<const std::byte*>(leaves[a.leaf]) + begin * bytes;
        kernel(moved.data(), static_cast<std::byte*>(output) + begin * bytes,
               std::min(chunk, size - begin));
    });
    return true;
}

namespace detail {

// The call tile by tile of rows: each tile's arguments and outputs start at its first row. The
// moved pointers live in the calling thread's scratch, so a warm call allocates nothing.
inline void execute_tiles(const graph::graph& g, const plan::plan& p,
                          std::span<const strided_input> args, std::span<void* const> outputs,
                          std::span<graph::variable_storage* const> variables) {
    const plan::row_tiling& t = *p.tiling;
    const std::size_t tiles = static_cast<std::size_t>((t.total + t.rows - 1) / t.rows);
    for_chunks(tiles, [&](std::size_t tile, std::size_t) {
        const thread_cap_scope serial(1); // the tiles are the parallel work
        plan::scratch_scope scratch;
        const std::int64_t first = static_cast<std::int64_t>(tile) * t.rows;
        const plan::plan& tp = first + t.rows > t.total ? *t.rest : *t.tile;
        auto* in = reinterpret_cast<strided_input*>(
            scratch.allocate(args.size() * sizeof(strided_input) + 1));
        for (std::size_t i = 0; i < args.size(); ++i) {
            in[i] = args[i];
            if (t.indexed[i])
                in[i].data = static_cast<const std::byte*>(in[i].data) +
                             first * in[i].strides[0] *
                                 static_cast<std::int64_t>(dtype_size(g[g.args[i]].type));
        }
        auto* out = reinterpret_cast<void**>(scratch.allocate(outputs.size() * sizeof(void*) + 1));
        for (std::size_t k = 0; k < outputs.size(); ++k) {
            const graph::node_id o = g.outputs[k];
            const auto row_bytes = static_cast<std::size_t>(num_elements(p.shapes[o]) / t.total) *
                                   dtype_size(g[o].type);
            out[k] =
                static_cast<std::byte*>(outputs[k]) + static_cast<std::size_t>(first) * row_bytes;
        }
        executor(g, tp, std::span<const strided_input>(in, args.size()),
                 std::span<void* const>(out, outputs.size()), variables)
            .run();
    });
}

} // namespace detail

XTRACE_DECL void execute(const graph::graph& g, const plan::plan& p,
                         std::span<const strided_input> args, std::span<void* const> outputs,
                         std::span<graph::variable_storage* const> variables) {
    if (p.tiling)
        detail::execute_tiles(g, p, args, outputs, variables);
    else
        detail::executor(g, p, args, outputs, variables).run();
}

} // namespace xtrace::interp
