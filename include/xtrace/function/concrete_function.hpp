#ifndef XTRACE_FUNCTION_CONCRETE_FUNCTION_HPP
#define XTRACE_FUNCTION_CONCRETE_FUNCTION_HPP

// A single trace, callable: what get_concrete_function returns (tf's ConcreteFunction).

#include "../graph/dot.hpp"
#include "../graph/text.hpp"
#include "../plan/build.hpp"
#include "../plan/text.hpp"
#include "call_frame.hpp"
#include "run_graph.hpp"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace xtrace {

namespace function_detail {

/// The printed plan of `trace` for tensor arguments of `shapes`, or of its signature's own dims
/// when `shapes` is null; throws signature_error when they do not fit it. `who` names the function.
XTRACE_DECL std::string plan_text(const trace_entry& trace, const std::vector<shape_t>* shapes,
                                  const std::string& who);

} // namespace function_detail

/// One traced graph with its signature; calls must fit the signature (signature_error).
template <class Traced, std::size_t Arity>
class concrete_function {
public:
    concrete_function(std::shared_ptr<const function_detail::trace_entry> trace, std::string name,
                      int max_threads = 0)
        : state_(std::make_shared<state>(std::move(trace), std::move(name), max_threads)) {}

    /// Runs the graph on arguments that fit its signature.
    template <class... Args>
    auto operator()(const Args&... args) const {
        static_assert(sizeof...(Args) == Arity,
                      "xtrace::concrete_function: call it with as many arguments as its specs");
        (function_detail::check_argument<Args>(), ...);
        function_detail::call_frame<Args...> frame(args...);
        auto plan = state_->plan_for(frame);
        const interp::thread_cap_scope cap(state_->max_threads);
        return function_detail::run_graph<Traced>(*state_->trace, *plan, frame.inputs(),
                                                  frame.variable_storages());
    }

    /// "(x0: float32[?,3], x1: float32[3]) -> float32[?,3]".
    std::string signature() const { return state_->trace->pretty(); }
    /// The graph, one node per line.
    std::string graph_text() const { return graph::to_text(state_->trace->g); }
    /// The plan calls with tensor arguments of these shapes (in order) run: fused regions,
    /// block size, registers, where each value lives, step order (plan/text.hpp).
    std::string plan_text(const std::vector<shape_t>& shapes) const {
        return function_detail::plan_text(*state_->trace, &shapes, state_->name);
    }
    /// The plan for the signature's own dims, which must all be known (else signature_error:
    /// pass the shapes).
    std::string plan_text() const {
        return function_detail::plan_text(*state_->trace, nullptr, state_->name);
    }
    /// The graph in Graphviz DOT.
    std::string to_dot() const { return graph::to_dot(state_->trace->g, state_->name); }
    /// The trace it runs: graph, signature, output specs (what exporters read).
    const function_detail::trace_entry& trace() const noexcept { return *state_->trace; }
    /// The name messages use (the function's, else "xtrace::concrete_function").
    const std::string& name() const noexcept { return state_->name; }

private:
    struct state {
        state(std::shared_ptr<const function_detail::trace_entry> t, std::string n, int threads)
            : trace(std::move(t)), name(std::move(n)), max_threads(threads) {}

        // The plan for the frame's shapes; checks the frame against the signature first.
        template <class Frame>
        std::shared_ptr<const plan::plan> plan_for(const Frame& frame) {
            const auto key = frame.key();
            {
                std::lock_guard lock(mutex);
                for (const auto& [k, p] : plans)
                    if (std::equal(k.begin(), k.end(), key.begin(), key.end()) &&
                        statics_match(frame))
                        return p;
            }
            std::vector<function_detail::static_value> values;
            const function_detail::signature call = frame.make_signature(values);
            function_detail::check_fits(trace->sig, call, name,
                                        "the concrete function's signature");
            auto p = plan::make_plan(trace->planned_graph(), function_detail::tensor_shapes(call));
            std::lock_guard lock(mutex);
            if (plans.size() == max_plans)
                plans.erase(plans.begin());
            plans.emplace_back(std::vector<std::int64_t>(key.begin(), key.end()), p);
            return p;
        }

        // Static values are fixed by the signature: a cached plan is valid when they match it.
        template <class Frame>
        bool statics_match(const Frame& frame) const {
            const auto refs = frame.statics();
            std::size_t s = 0;
            for (const auto& a : trace->sig) {
                const function_detail::static_value* value = function_detail::static_of(a);
                if (!value)
                    continue;
                const function_detail::static_ref& r = refs[s++];
                if (!r.equals(*value, r.value))
                    return false;
            }
            return true;
        }

        static constexpr std::size_t max_plans = 8;
        std::shared_ptr<const function_detail::trace_entry> trace;
        std::string name;
        int max_threads; // the options' cap, for every call
        std::mutex mutex;
        std::vector<std::pair<std::vector<std::int64_t>, std::shared_ptr<const plan::plan>>> plans;
    };

    std::shared_ptr<state> state_;
};

} // namespace xtrace

#if XTRACE_DEFINE_RUNTIME

namespace xtrace::function_detail {

XTRACE_DECL std::string plan_text(const trace_entry& trace, const std::vector<shape_t>* shapes,
                                  const std::string& who) {
    signature call = trace.sig;
    std::size_t t = 0;
    for (auto& a : call)
        if (tensor_spec* spec = tensor_of(a)) {
            if (!shapes) {
                if (!is_fully_known(spec->dims))
                    throw signature_error(
                        who + ": plan_text() needs known dims, the signature is " +
                        signature_text(trace.sig) + "; pass the tensor arguments' shapes");
                continue;
            }
            if (t == shapes->size())
                throw signature_error(who + ": plan_text was given " +
                                      std::to_string(shapes->size()) +
                                      " shapes, the signature has more tensor arguments");
            spec->dims = (*shapes)[t++];
        }
    if (shapes && t != shapes->size())
        throw signature_error(who + ": plan_text was given " + std::to_string(shapes->size()) +
                              " shapes, the signature has " + std::to_string(t) +
                              " tensor arguments");
    check_fits(trace.sig, call, who, "the concrete function's signature");
    const auto p = plan::build(trace.planned_graph(), tensor_shapes(call));
    if (!trace.stages)
        return plan::to_text(p, trace.g);
    return "stage 1 of " + std::to_string(trace.stages->stages().size()) +
           " (a host_function's result dims are known only when it runs; the later stages are "
           "planned then):\n" +
           plan::to_text(p, trace.planned_graph());
}

} // namespace xtrace::function_detail

#endif

#endif
