#ifndef XTRACE_FUNCTION_CACHE_HPP
#define XTRACE_FUNCTION_CACHE_HPP

// The signature cache of one traced function: traces (graphs with the signature they were traced
// for) and bindings (an exact call signature tied to a trace and its plan for those shapes).
// Calls look bindings up under a shared lock; misses are serialised, so each signature is traced
// once however many threads miss at the same time, and the cache only changes after a trace and
// its plan succeed.

#include "../config.hpp"
#include "../graph/graph.hpp"
#include "../graph/text.hpp"
#include "../interp/static_fusion.hpp"
#include "../plan/plan.hpp"
#include "../trace/builder.hpp"
#include "options.hpp"
#include "signature.hpp"

#include <atomic>
#include <chrono>
#include <iostream>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>
#include <thread>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <vector>

namespace xtrace {

/// Counters of one traced function.
struct function_stats {
    std::uint64_t calls = 0;                 ///< calls through the traced path
    std::uint64_t cache_hits = 0;            ///< calls that found a trace
    std::uint64_t traces = 0;                ///< traces performed
    std::uint64_t evictions = 0;             ///< traces dropped by max_cache_size
    std::chrono::nanoseconds tracing_time{}; ///< spent running lambdas symbolically and planning
    std::chrono::nanoseconds running_time{}; ///< spent executing graphs
};

namespace detail {

/// A static argument of the current call, compared in place (no copy on the hit path).
struct static_ref {
    const void* value;
    const std::type_info* type;
    std::size_t hash;
    bool (*equals)(const static_value&, const void*);
};

/// One trace: the graph and the signature it serves (dims may be unknown).
struct trace_entry {
    signature sig;                                    ///< what calls it serves
    graph::graph g;                                   ///< the traced graph
    std::vector<tensor_spec> outputs;                 ///< output dtypes and trace-time shapes
    interp::static_fusion::kernel_fn fused = nullptr; ///< compiled kernel, if the type has one
    std::atomic<std::uint64_t> last_used{0};
    std::size_t bindings = 0; ///< bindings that point here (under the cache lock)

    /// "(x0: float32[?,3], x1: float32[3]) -> float32[?,3]".
    std::string pretty() const {
        std::string out = signature_text(sig) + " -> ";
        if (outputs.size() != 1)
            out += '(';
        for (std::size_t i = 0; i < outputs.size(); ++i)
            out += (i ? ", " : "") + outputs[i].to_string();
        return outputs.size() != 1 ? out + ')' : out;
    }
};

/// An exact call signature bound to a trace and its plan for those shapes.
struct binding {
    std::vector<std::int64_t> key;     ///< dtype, rank and dims per tensor argument
    std::vector<static_value> statics; ///< static argument values, in order
    std::size_t hash = 0;
    std::shared_ptr<trace_entry> trace;
    std::shared_ptr<const plan::plan> plan;
    std::atomic<std::uint64_t> last_used{0};
};

inline std::size_t hash_key(std::span<const std::int64_t> key,
                            std::span<const static_ref> statics) noexcept {
    std::size_t h = 1469598103934665603ull;
    for (auto v : key)
        h = (h ^ static_cast<std::size_t>(v)) * 1099511628211ull;
    for (const auto& s : statics)
        h = (h ^ s.hash) * 1099511628211ull;
    return h;
}

/// The trace and plan a call runs.
struct resolved {
    std::shared_ptr<trace_entry> trace;
    std::shared_ptr<const plan::plan> plan;
};

/// Traces the lambda for a signature; supplied by the typed traced_function. A reference to a
/// callable that outlives the call it is passed to (cheaper to instantiate than std::function).
class tracer {
public:
    template <class F>
    requires(!std::is_same_v<F, tracer>) tracer(const F& f)
    noexcept
        : object_(&f),
          call_([](const void* o, const signature& s) { return (*static_cast<const F*>(o))(s); }) {}

    std::shared_ptr<trace_entry> operator()(const signature& s) const { return call_(object_, s); }

private:
    const void* object_;
    std::shared_ptr<trace_entry> (*call_)(const void*, const signature&);
};

class trace_cache {
public:
    explicit trace_cache(options o) : opts_(std::move(o)) {}

    const options& opts() const noexcept { return opts_; }

    /// The binding for this exact call, if cached (the hit path).
    bool find(std::span<const std::int64_t> key, std::span<const static_ref> statics,
              resolved& out);

    /// The miss path: finds or traces a graph for `call`, binds it, caches both.
    resolved miss(const signature& call, std::span<const std::int64_t> key,
                  std::span<const static_ref> statics, const std::vector<static_value>& values,
                  const tracer& trace);

    /// The cached trace whose signature is exactly `sig`, tracing it if there is none
    /// (get_concrete_function: traces without running).
    std::shared_ptr<trace_entry> trace_exact(const signature& sig, const tracer& trace);

    /// Adds time spent executing a graph.
    void add_running_time(std::chrono::nanoseconds t) noexcept;

    std::size_t tracing_count() const;

    /// True until a trace is cached, and again after clear(): the trace that may create
    /// variables (tf.function's first trace; clear_cache starts over, as in TensorFlow).
    bool first_trace() const;
    std::size_t size() const;
    void clear();
    function_stats stats() const;
    std::vector<std::string> retrace_reasons() const;
    std::vector<std::string> pretty_printed_signatures() const;

private:
    // A relaxed trace keeps at most this many concrete-shape plans.
    static constexpr std::size_t max_bindings_per_trace = 8;

    static bool matches(const binding& b, std::span<const std::int64_t> key,
                        std::span<const static_ref> statics);

    binding* lookup(std::span<const std::int64_t> key, std::span<const static_ref> statics) const;

    std::string who() const { return opts_.name.empty() ? "xtrace::function" : opts_.name; }

    // With an input_signature, the signature every call must fit (static values: the call's).
    signature declared(const signature& call) const;

    void check_input_signature(const signature& call) const;

    std::shared_ptr<trace_entry> fitting_trace(const signature& call) const;

    // The signature to trace for a call no trace fits.
    signature trace_signature(const signature& call) const;

    // Why tracing for `target` now: its differences from the nearest cached trace.
    std::string retrace_reason(const signature& target) const;

    void insert(std::shared_ptr<binding> b);

    void evict();

    // The retracing warning: 5 of the last 10 calls traced, said at most twice per function.
    void note_trace(std::uint64_t call, const std::string& reason);

    // Holds trace_mutex_ for one miss at a time; a miss from the thread that is tracing (the
    // lambda calling its own function on a new signature) would wait for itself forever, so it
    // throws tracing_error instead.
    class serial_trace {
    public:
        explicit serial_trace(trace_cache& c);
        serial_trace(const serial_trace&) = delete;
        serial_trace& operator=(const serial_trace&) = delete;
        ~serial_trace();

    private:
        trace_cache& c_;
    };

    options opts_;
    mutable std::shared_mutex mutex_;               // traces_, bindings_, reasons_, tracing_count_
    std::mutex trace_mutex_;                        // one miss at a time
    std::atomic<std::thread::id> tracing_thread_{}; // who holds trace_mutex_
    std::vector<std::shared_ptr<trace_entry>> traces_;
    std::unordered_multimap<std::size_t, std::shared_ptr<binding>> bindings_;
    std::atomic<binding*> last_hit_{nullptr};
    std::vector<std::string> reasons_;
    std::size_t tracing_count_ = 0;
    bool first_trace_ = true;
    std::uint64_t evictions_ = 0;
    std::atomic<std::uint64_t> calls_{0}, hits_{0};
    std::atomic<std::int64_t> tracing_ns_{0}, running_ns_{0};
    std::mutex warn_mutex_;
    std::array<std::uint64_t, 5> recent_{};
    std::size_t recent_count_ = 0;
    std::vector<std::string> recent_reasons_;
    int warnings_ = 0;
};

/// A new signature cache (made here, so that callers never compile its destructor).
XTRACE_DECL std::shared_ptr<trace_cache> make_trace_cache(options o);

/// The plan of `g` for the tensor shapes of `call`.
XTRACE_DECL std::shared_ptr<const plan::plan> make_plan(const graph::graph& g,
                                                        const signature& call);

/// Ends trace `b` for signature `sig`: the trace entry, with compiled kernel `fused` if any.
XTRACE_DECL std::shared_ptr<trace_entry> finish_trace(trace::builder& b, const signature& sig,
                                                      interp::static_fusion::kernel_fn fused);

#if XTRACE_DEFINE_RUNTIME

XTRACE_DECL std::shared_ptr<trace_cache> make_trace_cache(options o) {
    if (o.input_signature)
        for (std::size_t i = 0; i < o.input_signature->size(); ++i) {
            const shape_t& dims = (*o.input_signature)[i].dims;
            const bool bad_dim =
                std::any_of(dims.begin(), dims.end(), [](dim_t d) { return d < unknown_dim; });
            if (bad_dim || dims.size() > XTRACE_MAX_RANK)
                throw signature_error((o.name.empty() ? "xtrace::function" : o.name) +
                                      ": input_signature entry " + std::to_string(i) + " " +
                                      shape_string(dims) +
                                      (bad_dim ? " has a negative dim; a dim is a size >= 0, "
                                                 "or -1 for unknown"
                                               : " has more dims than xtrace supports"));
        }
    return std::make_shared<trace_cache>(std::move(o));
}

XTRACE_DECL std::shared_ptr<const plan::plan> make_plan(const graph::graph& g,
                                                        const signature& call) {
    std::vector<shape_t> shapes;
    for (const auto& a : call)
        if (a.tensor)
            shapes.push_back(a.tensor->dims);
    return std::make_shared<const plan::plan>(plan::build(g, shapes));
}

XTRACE_DECL std::shared_ptr<trace_entry> finish_trace(trace::builder& b, const signature& sig,
                                                      interp::static_fusion::kernel_fn fused) {
    auto entry = std::make_shared<trace_entry>();
    entry->sig = sig;
    entry->g = b.finish();
    entry->fused = fused;
    for (auto id : entry->g.outputs)
        entry->outputs.push_back(tensor_spec{entry->g[id].type, entry->g[id].shape});
    return entry;
}

XTRACE_DECL trace_cache::serial_trace::serial_trace(trace_cache& c) : c_(c) {
    if (c.tracing_thread_.load(std::memory_order_acquire) == std::this_thread::get_id())
        throw tracing_error(c.who() +
                            ": the function was called with a new signature (or its cache "
                            "cleared) from inside its own lambda while that lambda was being "
                            "traced; a function cannot trace itself recursively. Call it on the "
                            "lambda's symbolic tensors to inline it, or from outside the lambda");
    c.trace_mutex_.lock();
    c.tracing_thread_.store(std::this_thread::get_id(), std::memory_order_release);
}

XTRACE_DECL trace_cache::serial_trace::~serial_trace() {
    c_.tracing_thread_.store(std::thread::id{}, std::memory_order_release);
    c_.trace_mutex_.unlock();
}

XTRACE_DECL bool trace_cache::find(std::span<const std::int64_t> key,
                                   std::span<const static_ref> statics, resolved& out) {
    const std::uint64_t now = calls_.fetch_add(1, std::memory_order_relaxed) + 1;
    std::shared_lock lock(mutex_);
    binding* b = last_hit_.load(std::memory_order_acquire);
    if (!(b && matches(*b, key, statics))) {
        b = lookup(key, statics);
        if (!b)
            return false;
        last_hit_.store(b, std::memory_order_release);
    }
    b->last_used.store(now, std::memory_order_relaxed);
    b->trace->last_used.store(now, std::memory_order_relaxed);
    out.trace = b->trace;
    out.plan = b->plan;
    hits_.fetch_add(1, std::memory_order_relaxed);
    return true;
}

XTRACE_DECL resolved trace_cache::miss(const signature& call, std::span<const std::int64_t> key,
                                       std::span<const static_ref> statics,
                                       const std::vector<static_value>& values,
                                       const tracer& trace) {
    const serial_trace serial(*this);
    {
        std::shared_lock lock(mutex_);
        if (binding* b = lookup(key, statics)) {
            hits_.fetch_add(1, std::memory_order_relaxed);
            return {b->trace, b->plan};
        }
    }
    check_input_signature(call);
    const auto start = std::chrono::steady_clock::now();
    std::shared_ptr<trace_entry> entry = fitting_trace(call);
    std::string reason;
    const bool traced = !entry;
    if (traced) {
        const signature target = trace_signature(call);
        reason = retrace_reason(call);
        try {
            entry = trace(target);
        } catch (const needs_known_dims&) {
            if (target == call)
                throw;
            // reduce_retracing's relaxed dims reached something that needs them known (a
            // host_function spec made from x.shape()): trace this call's own shapes instead.
            entry = trace(call);
            reason += " (a relaxed trace needed known dims: traced this call's shapes)";
        }
    } else {
        hits_.fetch_add(1, std::memory_order_relaxed);
    }
    auto plan = make_plan(entry->g, call);
    auto b = std::make_shared<binding>();
    b->key.assign(key.begin(), key.end());
    b->statics = values;
    b->hash = hash_key(key, statics);
    b->trace = entry;
    b->plan = plan;
    const std::uint64_t now = calls_.load(std::memory_order_relaxed);
    b->last_used = now;
    entry->last_used = now;
    {
        std::unique_lock lock(mutex_);
        if (traced) {
            traces_.push_back(entry);
            first_trace_ = false;
            ++tracing_count_;
            if (tracing_count_ > 1)
                reasons_.push_back(reason);
        }
        insert(std::move(b));
        evict();
    }
    const auto spent = std::chrono::steady_clock::now() - start;
    tracing_ns_.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(spent).count(),
                          std::memory_order_relaxed);
    if (traced)
        note_trace(now, reason);
    return {entry, plan};
}

XTRACE_DECL std::shared_ptr<trace_entry> trace_cache::trace_exact(const signature& sig,
                                                                  const tracer& trace) {
    const serial_trace serial(*this);
    check_input_signature(sig);            // a spec the input_signature rejects, as a call would be
    if (auto fitting = fitting_trace(sig)) // e.g. a relaxed [?,?] trace for a [2,1] spec
        return fitting;
    const auto start = std::chrono::steady_clock::now();
    const signature target = opts_.input_signature ? declared(sig) : sig;
    const std::string reason = retrace_reason(target);
    auto entry = trace(target);
    entry->last_used = calls_.load(std::memory_order_relaxed);
    {
        std::unique_lock lock(mutex_);
        traces_.push_back(entry);
        first_trace_ = false;
        if (++tracing_count_ > 1)
            reasons_.push_back(reason);
        evict();
    }
    tracing_ns_.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::steady_clock::now() - start)
                              .count(),
                          std::memory_order_relaxed);
    return entry;
}

XTRACE_DECL void trace_cache::add_running_time(std::chrono::nanoseconds t) noexcept {
    running_ns_.fetch_add(t.count(), std::memory_order_relaxed);
}

XTRACE_DECL bool trace_cache::first_trace() const {
    std::shared_lock lock(mutex_);
    return first_trace_;
}

XTRACE_DECL std::size_t trace_cache::tracing_count() const {
    std::shared_lock lock(mutex_);
    return tracing_count_;
}

XTRACE_DECL std::size_t trace_cache::size() const {
    std::shared_lock lock(mutex_);
    return traces_.size();
}

XTRACE_DECL void trace_cache::clear() {
    const serial_trace serial(*this);
    std::unique_lock lock(mutex_);
    last_hit_.store(nullptr);
    bindings_.clear();
    traces_.clear();
    first_trace_ = true;
}

XTRACE_DECL function_stats trace_cache::stats() const {
    std::shared_lock lock(mutex_);
    function_stats s;
    s.calls = calls_.load(std::memory_order_relaxed);
    s.cache_hits = hits_.load(std::memory_order_relaxed);
    s.traces = tracing_count_;
    s.evictions = evictions_;
    s.tracing_time = std::chrono::nanoseconds(tracing_ns_.load(std::memory_order_relaxed));
    s.running_time = std::chrono::nanoseconds(running_ns_.load(std::memory_order_relaxed));
    return s;
}

XTRACE_DECL std::vector<std::string> trace_cache::retrace_reasons() const {
    std::shared_lock lock(mutex_);
    return reasons_;
}

XTRACE_DECL std::vector<std::string> trace_cache::pretty_printed_signatures() const {
    std::shared_lock lock(mutex_);
    std::vector<std::string> out;
    for (const auto& t : traces_)
        out.push_back(t->pretty());
    return out;
}

XTRACE_DECL bool trace_cache::matches(const binding& b, std::span<const std::int64_t> key,
                                      std::span<const static_ref> statics) {
    if (b.key.size() != key.size() || b.statics.size() != statics.size())
        return false;
    if (!std::equal(key.begin(), key.end(), b.key.begin()))
        return false;
    for (std::size_t i = 0; i < statics.size(); ++i)
        if (!statics[i].equals(b.statics[i], statics[i].value))
            return false;
    return true;
}

XTRACE_DECL binding* trace_cache::lookup(std::span<const std::int64_t> key,
                                         std::span<const static_ref> statics) const {
    auto [lo, hi] = bindings_.equal_range(hash_key(key, statics));
    for (auto it = lo; it != hi; ++it)
        if (matches(*it->second, key, statics))
            return it->second.get();
    return nullptr;
}

XTRACE_DECL signature trace_cache::declared(const signature& call) const {
    signature s = call;
    std::size_t t = 0;
    const auto& specs = *opts_.input_signature;
    for (auto& a : s)
        if (a.tensor) {
            if (t == specs.size())
                throw signature_error(who() +
                                      ": the call has more tensor arguments than "
                                      "input_signature's " +
                                      std::to_string(specs.size()) + " specs");
            a.tensor = specs[t++];
        }
    if (t != specs.size())
        throw signature_error(who() + ": the call has " + std::to_string(t) +
                              " tensor arguments, input_signature has " +
                              std::to_string(specs.size()));
    return s;
}

XTRACE_DECL void trace_cache::check_input_signature(const signature& call) const {
    if (opts_.input_signature)
        check_fits(declared(call), call, who(), "input_signature");
}

XTRACE_DECL std::shared_ptr<trace_entry> trace_cache::fitting_trace(const signature& call) const {
    std::shared_lock lock(mutex_);
    for (auto it = traces_.rbegin(); it != traces_.rend(); ++it)
        if (fits((*it)->sig, call))
            return *it;
    return nullptr;
}

XTRACE_DECL signature trace_cache::trace_signature(const signature& call) const {
    if (opts_.input_signature)
        return declared(call);
    if (opts_.reduce_retracing) {
        std::shared_lock lock(mutex_);
        for (auto it = traces_.rbegin(); it != traces_.rend(); ++it)
            if (auto r = relax((*it)->sig, call))
                return *r;
    }
    return call;
}

XTRACE_DECL std::string trace_cache::retrace_reason(const signature& target) const {
    std::shared_lock lock(mutex_);
    if (tracing_count_ == 0)
        return "first trace";
    if (traces_.empty())
        return "no cached trace (the cache was cleared or evicted)";
    // The nearest trace explains best: same structure (argument kinds, dtypes, ranks) first,
    // then the fewest differing dims and values, as JAX's explain_cache_misses chooses.
    std::vector<std::string> best;
    std::pair<std::size_t, std::size_t> best_distance{};
    bool found = false;
    for (const auto& t : traces_) {
        const auto distance = signature_distance(t->sig, target);
        if (!found || distance < best_distance) {
            best = differences(t->sig, target);
            best_distance = distance;
            found = true;
        }
    }
    std::string out;
    for (const auto& s : best)
        out += (out.empty() ? "" : "; ") + s;
    return out.empty() ? "same signature as an evicted trace" : out;
}

XTRACE_DECL void trace_cache::insert(std::shared_ptr<binding> b) {
    trace_entry& t = *b->trace;
    if (++t.bindings > max_bindings_per_trace) {
        auto oldest = bindings_.end();
        for (auto it = bindings_.begin(); it != bindings_.end(); ++it)
            if (it->second->trace.get() == &t &&
                (oldest == bindings_.end() || it->second->last_used < oldest->second->last_used))
                oldest = it;
        if (oldest != bindings_.end()) {
            if (last_hit_.load() == oldest->second.get())
                last_hit_.store(nullptr);
            bindings_.erase(oldest);
            --t.bindings;
        }
    }
    const std::size_t h = b->hash;
    bindings_.emplace(h, std::move(b));
}

XTRACE_DECL void trace_cache::evict() {
    if (opts_.max_cache_size == 0)
        return;
    while (traces_.size() > opts_.max_cache_size) {
        auto victim = std::min_element(traces_.begin(), traces_.end(), [](auto& a, auto& b) {
            return a->last_used.load() < b->last_used.load();
        });
        const trace_entry* gone = victim->get();
        last_hit_.store(nullptr);
        std::erase_if(bindings_, [&](const auto& kv) { return kv.second->trace.get() == gone; });
        traces_.erase(victim);
        ++evictions_;
    }
}

XTRACE_DECL void trace_cache::note_trace(std::uint64_t call, const std::string& reason) {
    std::lock_guard lock(warn_mutex_);
    recent_[recent_count_++ % recent_.size()] = call;
    recent_reasons_.push_back(reason);
    if (recent_reasons_.size() > recent_.size())
        recent_reasons_.erase(recent_reasons_.begin());
    if (recent_count_ < recent_.size() || warnings_ >= 2)
        return;
    const std::uint64_t oldest = recent_[recent_count_ % recent_.size()];
    if (call - oldest >= 10)
        return;
    ++warnings_;
    std::string msg =
        "xtrace: " +
        (opts_.name.empty() ? std::string("a traced function") : "function '" + opts_.name + "'") +
        " traced 5 times in its last 10 calls (reasons:";
    for (const auto& r : recent_reasons_)
        msg += " [" + r + "]";
    msg += "). Tracing is expensive; pass tensors of stable shapes, or use "
           "xtrace::options{.reduce_retracing = true} or an input_signature with -1 dims.";
    if (opts_.on_warning)
        opts_.on_warning(msg);
    else
        std::cerr << msg << '\n';
}

#endif

} // namespace detail
} // namespace xtrace

#endif
