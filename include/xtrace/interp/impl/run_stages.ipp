// The runtime section of interp/run_stages.hpp.

#include <algorithm>
#include <memory>
#include <unordered_map>
#include <vector>

namespace xtrace::interp {

namespace detail {

// A value handed from one stage to a later one: contiguous, row-major.
struct held_value {
    std::unique_ptr<std::byte[]> bytes;
    shape_t shape;

    std::byte* allocate(const shape_t& s, dtype type) {
        shape = s;
        bytes.reset(
            new std::byte[static_cast<std::size_t>(num_elements(s)) * dtype_size(type) + 1]);
        return bytes.get();
    }

    strided_input input() const {
        strided_input in{bytes.get(), {}};
        std::int64_t stride = 1;
        for (std::size_t d = shape.size(); d-- > 0;) {
            in.strides[d] = stride;
            stride *= shape[d];
        }
        return in;
    }
};

// Where a host function's result goes: a held value of its dtype.
struct held_result final : graph::result_allocator {
    held_result(held_value& v, dtype t) : value(v), type(t) {}
    std::byte* allocate(const shape_t& shape) override { return value.allocate(shape, type); }
    held_value& value;
    dtype type;
};

} // namespace detail

XTRACE_DECL void run_stages(const plan::staged_graph& g, const plan::plan& first,
                            std::span<const strided_input> args, output_allocator& outputs,
                            std::span<graph::variable_storage* const> variables) {
    const auto& stages = g.stages();
    const std::size_t n_args = g.args().size();
    std::vector<shape_t> arg_shapes;
    for (std::size_t i = 0; i < n_args; ++i)
        arg_shapes.push_back(first.shapes[stages[0].g.args[i]]);
    std::unordered_map<graph::node_id, detail::held_value> values;
    // An operand of a host function: the call's argument, or a value held from before.
    auto operand = [&](graph::node_id v, shape_t& shape) -> strided_input {
        const auto at = std::find(g.args().begin(), g.args().end(), v);
        if (at != g.args().end()) {
            shape = arg_shapes[static_cast<std::size_t>(at - g.args().begin())];
            return args[static_cast<std::size_t>(at - g.args().begin())];
        }
        const detail::held_value& h = values.at(v);
        shape = h.shape;
        return h.input();
    };
    for (std::size_t s = 0; s < stages.size(); ++s) {
        const plan::stage& st = stages[s];
        const bool last = s + 1 == stages.size();
        std::vector<strided_input> in(args.begin(),
                                      args.begin() + static_cast<std::ptrdiff_t>(n_args));
        std::vector<shape_t> shapes = arg_shapes;
        for (graph::node_id v : st.carried) {
            const detail::held_value& h = values.at(v);
            in.push_back(h.input());
            shapes.push_back(h.shape);
        }
        std::shared_ptr<const plan::plan> planned;
        const plan::plan* p = &first;
        if (s > 0) {
            planned = g.plan_for(s, shapes);
            p = planned.get();
        }
        std::vector<void*> out;
        for (std::size_t k = 0; k < st.g.outputs.size(); ++k) {
            const graph::node_id o = st.g.outputs[k];
            out.push_back(last ? outputs.allocate(k, p->shapes[o])
                               : values[st.produced[k]].allocate(p->shapes[o], st.g[o].type));
        }
        if (last || !st.g.outputs.empty() || !st.g.effects.empty())
            execute(st.g, *p, in, out, variables);
        if (last)
            break;
        const graph::node& h = st.host;
        const std::size_t count = h.inputs.size();
        std::vector<strided_input> operands(count);
        std::vector<shape_t> operand_shapes(count);
        std::vector<const std::byte*> data(count);
        std::vector<const std::int64_t*> strides(count);
        for (std::size_t i = 0; i < count; ++i) {
            operands[i] = operand(h.inputs[i], operand_shapes[i]);
            data[i] = static_cast<const std::byte*>(operands[i].data);
            strides[i] = operands[i].strides.data();
        }
        detail::held_result result(values[st.host_id], h.type);
        h.host->run_dynamic(data.data(), strides.data(), operand_shapes.data(), result);
    }
}

} // namespace xtrace::interp
