// A loaded model's calls: arguments checked against the model's inputs, a plan per input shapes
// (cached, least recently used dropped), the interpreter run into freshly made values.

#include "model_data.hpp"

#include <xtrace/function/signature.hpp>
#include <xtrace/graph/text.hpp>
#include <xtrace/interp/execute.hpp>
#include <xtrace/interp/run_stages.hpp>
#include <xtrace/plan/build.hpp>
#include <xtrace/plan/stages.hpp>
#include <xtrace/plan/text.hpp>

#include <chrono>
#include <fstream>
#include <iterator>
#include <mutex>
#include <sstream>
#include <system_error>

namespace xtrace::onnx::detail {

/// What a loaded model keeps: the checked model, its graph lowered once (when its shape
/// arithmetic allows unknown dims) and the plans of the shapes it was called with.
struct model_state {
    struct entry {
        std::vector<std::int64_t> key; // the inputs' dims, concatenated
        std::shared_ptr<const graph::graph> g;
        std::shared_ptr<const plan::plan> p; // of the first stage when the graph runs in stages
        std::shared_ptr<const plan::staged_graph> stages; // null when every shape is known
        std::uint64_t last_used = 0;
    };

    std::shared_ptr<const model_data> m;
    std::size_t max_plans = 16;
    std::shared_ptr<const graph::graph> once; // lowered for the declared dims, if possible
    std::vector<tensor_spec> outputs;         // as lowered, when lowered once; else as declared
    mutable std::mutex mutex;
    std::vector<entry> plans;
    std::uint64_t clock = 0;
    function_stats stats;

    // The graph for inputs of `shapes`: the one lowered once, else one lowered for them.
    std::shared_ptr<const graph::graph> graph_for(const std::vector<shape_t>& shapes) {
        if (once)
            return once;
        return std::make_shared<graph::graph>(lower(*m, shapes).g);
    }
};

namespace {

std::string spec_text(const std::string& name, const tensor_spec& s) {
    return name + ": " + s.to_string();
}

// The inputs' shapes, checked against the model's inputs.
// Throws signature_error unless the arguments fit the model's inputs; allocates nothing when
// they do (the hit path).
void check_arguments(const model_data& m, std::span<const argument_view> args) {
    if (args.size() != m.inputs.size())
        throw signature_error(m.name + " takes " + std::to_string(m.inputs.size()) +
                              " inputs, it was called with " + std::to_string(args.size()));
    for (std::size_t k = 0; k < args.size(); ++k) {
        const argument_view& a = args[k];
        const tensor_spec& want = m.inputs[k];
        bool fits = a.type == want.type && a.rank == want.dims.size();
        for (std::size_t d = 0; fits && d < a.rank; ++d)
            fits = want.dims[d] < 0 || want.dims[d] == a.shape[d];
        if (!fits) {
            const shape_t got(a.shape.begin(),
                              a.shape.begin() + static_cast<std::ptrdiff_t>(a.rank));
            throw signature_error(m.name + ": input " + std::to_string(k) + " ('" +
                                  m.input_names[k] + "') must be " + want.to_string() +
                                  ", the argument is " + tensor_spec{a.type, got}.to_string());
        }
    }
}

// The arguments' shapes (the miss path).
std::vector<shape_t> shapes_of(std::span<const argument_view> args) {
    std::vector<shape_t> shapes;
    for (const argument_view& a : args)
        shapes.emplace_back(a.shape.begin(), a.shape.begin() + static_cast<std::ptrdiff_t>(a.rank));
    return shapes;
}

// Runs a graph in stages (its first stage planned by `first`) into freshly made values.
std::vector<value> run_staged(const graph::graph& g, const plan::staged_graph& stages,
                              const plan::plan& first, std::span<const argument_view> args) {
    struct allocator final : interp::output_allocator {
        allocator(const graph::graph& g) : g(g), out(g.outputs.size()) {}
        void* allocate(std::size_t k, const shape_t& shape) override {
            out[k] = value(g[g.outputs[k]].type, shape);
            return std::visit([](auto& a) -> void* { return a.data(); }, out[k].data());
        }
        const graph::graph& g;
        std::vector<value> out;
    } outputs(g);
    std::vector<interp::strided_input> inputs(args.size());
    for (std::size_t k = 0; k < args.size(); ++k) {
        inputs[k].data = args[k].data;
        inputs[k].strides = args[k].strides;
    }
    interp::run_stages(stages, first, inputs, outputs);
    return std::move(outputs.out);
}

model make_model(std::shared_ptr<const model_data> m, const load_options& options) {
    auto s = std::make_shared<model_state>();
    s->m = m;
    s->max_plans = std::max<std::size_t>(options.max_plans, 1);
    s->outputs = m->outputs;
    std::vector<shape_t> declared;
    for (const auto& i : m->inputs)
        declared.push_back(i.dims);
    const auto start = std::chrono::steady_clock::now();
    try {
        auto t = lower(*m, declared);
        s->once = std::make_shared<graph::graph>(std::move(t.g));
        s->outputs = std::move(t.outputs);
        s->stats.traces = 1;
    } catch (const xtrace::detail::needs_known_dims&) {
        // Shape arithmetic on a symbolic dim: lowered again for each call's shapes.
    } catch (const shape_error&) {
        bool symbolic = false;
        for (const auto& d : declared)
            symbolic = symbolic || !is_fully_known(d);
        if (!symbolic)
            throw; // wrong whatever the inputs: the model itself is
    }
    s->stats.tracing_time = std::chrono::steady_clock::now() - start;
    for (std::size_t k = 0; k < s->outputs.size() && k < m->outputs.size(); ++k)
        if (s->outputs[k].type != m->outputs[k].type)
            throw model_error(m->name + ": output '" + m->output_names[k] + "' is declared " +
                              std::string(dtype_name(m->outputs[k].type)) + " but computes " +
                              std::string(dtype_name(s->outputs[k].type)));
    return model(std::move(s));
}

} // namespace

} // namespace xtrace::onnx::detail

namespace xtrace::onnx {

using detail::argument_view;
using detail::model_data;
using detail::model_state;

std::vector<value> model::run(std::span<const argument_view> args) const {
    model_state& s = *state_;
    const model_data& m = *s.m;
    detail::check_arguments(m, args);
    thread_local std::vector<std::int64_t> key; // a warm call allocates no key
    key.clear();
    for (const argument_view& a : args) {
        key.push_back(static_cast<std::int64_t>(a.rank));
        key.insert(key.end(), a.shape.begin(),
                   a.shape.begin() + static_cast<std::ptrdiff_t>(a.rank));
    }
    std::shared_ptr<const graph::graph> g;
    std::shared_ptr<const plan::plan> p;
    std::shared_ptr<const plan::staged_graph> stages;
    {
        std::lock_guard lock(s.mutex);
        ++s.stats.calls;
        for (auto& e : s.plans)
            if (e.key == key) {
                e.last_used = ++s.clock;
                g = e.g;
                p = e.p;
                stages = e.stages;
                ++s.stats.cache_hits;
                break;
            }
    }
    if (!p) {
        const auto start = std::chrono::steady_clock::now();
        const bool lowering = !s.once;
        const auto shapes = detail::shapes_of(args);
        g = s.graph_for(shapes);
        // A fill of computed length (an exported loop gradient's) runs the graph in stages,
        // each planned when its shapes are known; the fill itself is held to max_bytes.
        stages = plan::staged_graph::split(*g);
        const graph::graph& first = stages ? stages->stages()[0].g : *g;
        p = plan::make_plan(first, shapes);
        for (graph::node_id id = 0; id < first.nodes.size(); ++id)
            detail::checked_bytes(first[id].type, p->shapes[id], m.max_bytes,
                                  m.name + ": a " + std::string(info(first[id].op).name) +
                                      " result");
        std::lock_guard lock(s.mutex);
        if (lowering)
            ++s.stats.traces;
        s.stats.tracing_time += std::chrono::steady_clock::now() - start;
        // Another thread may have planned the same shapes meanwhile: keep one entry.
        const auto same = std::find_if(s.plans.begin(), s.plans.end(),
                                       [&](const auto& e) { return e.key == key; });
        if (same != s.plans.end())
            s.plans.erase(same);
        else if (s.plans.size() >= s.max_plans) {
            auto oldest =
                std::min_element(s.plans.begin(), s.plans.end(), [](const auto& a, const auto& b) {
                    return a.last_used < b.last_used;
                });
            s.plans.erase(oldest);
            ++s.stats.evictions;
        }
        s.plans.push_back({key, g, p, stages, ++s.clock});
    }
    const auto start = std::chrono::steady_clock::now();
    std::vector<value> out;
    if (stages) {
        out = detail::run_staged(*g, *stages, *p, args);
        std::lock_guard lock(s.mutex);
        s.stats.running_time += std::chrono::steady_clock::now() - start;
        return out;
    }
    out.reserve(g->outputs.size());
    thread_local std::vector<void*> ptrs;
    ptrs.clear();
    for (const graph::node_id o : g->outputs) {
        out.emplace_back((*g)[o].type, p->shapes[o]);
        ptrs.push_back(std::visit([](auto& a) -> void* { return a.data(); }, out.back().data()));
    }
    thread_local std::vector<interp::strided_input> inputs;
    inputs.resize(args.size());
    for (std::size_t k = 0; k < args.size(); ++k) {
        inputs[k].data = args[k].data;
        inputs[k].strides = args[k].strides;
    }
    interp::execute(*g, *p, inputs, ptrs);
    std::lock_guard lock(s.mutex);
    s.stats.running_time += std::chrono::steady_clock::now() - start;
    return out;
}

std::vector<value> model::run(const std::vector<value>& args) const {
    std::vector<argument_view> views;
    for (std::size_t k = 0; k < args.size(); ++k)
        std::visit([&](const auto& a) { views.push_back(detail::view_of(a, k)); }, args[k].data());
    return run(std::span<const argument_view>(views));
}

const std::vector<std::string>& model::input_names() const {
    return state_->m->input_names;
}
const std::vector<std::string>& model::output_names() const {
    return state_->m->output_names;
}
const std::vector<tensor_spec>& model::input_specs() const {
    return state_->m->inputs;
}
const std::vector<tensor_spec>& model::output_specs() const {
    return state_->outputs;
}
const std::string& model::name() const {
    return state_->m->name;
}
std::int64_t model::opset() const {
    return state_->m->opset;
}
bool model::lowered_once() const {
    return state_->once != nullptr;
}

std::string model::signature() const {
    const model_data& m = *state_->m;
    std::string out = "(";
    for (std::size_t k = 0; k < m.inputs.size(); ++k)
        out += (k ? ", " : "") + detail::spec_text(m.input_names[k], m.inputs[k]);
    out += ") -> ";
    if (m.outputs.size() != 1)
        out += '(';
    for (std::size_t k = 0; k < state_->outputs.size(); ++k)
        out += (k ? ", " : "") + detail::spec_text(m.output_names[k], state_->outputs[k]);
    return m.outputs.size() != 1 ? out + ')' : out;
}

std::string model::graph_text(const std::vector<shape_t>& shapes) const {
    return graph::to_text(*state_->graph_for(shapes));
}

std::string model::plan_text(const std::vector<shape_t>& shapes) const {
    auto g = state_->graph_for(shapes);
    const auto stages = plan::staged_graph::split(*g);
    if (!stages)
        return plan::to_text(plan::build(*g, shapes), *g);
    const graph::graph& first = stages->stages()[0].g;
    return "stage 1 of " + std::to_string(stages->stages().size()) +
           " (a fill's length is known only when it runs; the later stages are planned then):\n" +
           plan::to_text(plan::build(first, shapes), first);
}

function_stats model::stats() const {
    std::lock_guard lock(state_->mutex);
    return state_->stats;
}

std::size_t model::cache_size() const {
    std::lock_guard lock(state_->mutex);
    return state_->plans.size();
}

model load_bytes(std::string_view bytes, const load_options& options) {
    return detail::make_model(detail::read_model(bytes, options), options);
}

model load(const std::filesystem::path& path, const load_options& options) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::system_error(errno, std::generic_category(),
                                "xtrace::onnx::load: cannot read " + path.string());
    std::ostringstream bytes;
    bytes << in.rdbuf();
    return load_bytes(bytes.str(), options);
}

} // namespace xtrace::onnx
