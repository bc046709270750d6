#ifndef XTRACE_FUNCTION_CONCRETE_FUNCTION_HPP
#define XTRACE_FUNCTION_CONCRETE_FUNCTION_HPP

// A single trace, callable: what get_concrete_function returns (tf's ConcreteFunction).

#include "../graph/dot.hpp"
#include "../graph/text.hpp"
#include "call_frame.hpp"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace xtrace {

/// One traced graph with its signature; calls must fit the signature (signature_error).
template <class Traced, std::size_t Arity>
class concrete_function {
public:
    concrete_function(std::shared_ptr<const detail::trace_entry> trace, std::string name)
        : state_(std::make_shared<state>(std::move(trace), std::move(name))) {}

    /// Runs the graph on arguments that fit its signature.
    template <class... Args>
    auto operator()(const Args&... args) const {
        static_assert(sizeof...(Args) == Arity,
                      "xtrace::concrete_function: call it with as many arguments as its specs");
        (detail::check_argument<Args>(), ...);
        detail::call_frame<Args...> frame(args...);
        auto plan = state_->plan_for(frame);
        return detail::run_graph<Traced>(*state_->trace, *plan, frame.inputs());
    }

    /// "(x0: float32[?,3], x1: float32[3]) -> float32[?,3]".
    std::string signature() const { return state_->trace->pretty(); }
    /// The graph, one node per line.
    std::string graph_text() const { return graph::to_text(state_->trace->g); }
    /// The graph in Graphviz DOT.
    std::string to_dot() const { return graph::to_dot(state_->trace->g, state_->name); }

private:
    struct state {
        state(std::shared_ptr<const detail::trace_entry> t, std::string n)
            : trace(std::move(t)), name(std::move(n)) {}

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
            std::vector<detail::static_value> values;
            const detail::signature call = frame.make_signature(values);
            detail::check_fits(trace->sig, call, name, "the concrete function's signature");
            auto p = detail::make_plan(trace->g, call);
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
                if (!a.value)
                    continue;
                const detail::static_ref& r = refs[s++];
                if (!r.equals(*a.value, r.value))
                    return false;
            }
            return true;
        }

        static constexpr std::size_t max_plans = 8;
        std::shared_ptr<const detail::trace_entry> trace;
        std::string name;
        std::mutex mutex;
        std::vector<std::pair<std::vector<std::int64_t>, std::shared_ptr<const plan::plan>>> plans;
    };

    std::shared_ptr<state> state_;
};

} // namespace xtrace

#endif
