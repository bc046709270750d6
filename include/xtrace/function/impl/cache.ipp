// The runtime section of function/cache.hpp.

#include "../../plan/build.hpp"

#include <algorithm>

namespace xtrace::function_detail {

XTRACE_DECL std::shared_ptr<trace_cache> make_trace_cache(options o) {
    if (o.input_signature)
        for (std::size_t i = 0; i < o.input_signature->size(); ++i)
            check_spec_dims((*o.input_signature)[i].dims,
                            (o.name.empty() ? "xtrace::function" : o.name) +
                                ": input_signature entry " + std::to_string(i));
    return std::make_shared<trace_cache>(std::move(o));
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

XTRACE_DECL std::uint64_t trace_cache::next_cache_id() noexcept {
    static std::atomic<std::uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
}

XTRACE_DECL trace_cache::~trace_cache() {
    thread_pin* pin = this_thread_pin();
    if (pin && pin->cache == id_ && !pin->busy) {
        pin->cache = 0;
        pin->held.reset();
    }
}

XTRACE_DECL bool trace_cache::find(std::span<const std::int64_t> key,
                                   std::span<const static_ref> statics, bound_trace& out) {
    const std::uint64_t now = calls_.fetch_add(1, std::memory_order_relaxed) + 1;
    out.call = now;
    // A call nested in another on this thread (a host callback calling a traced function) takes
    // the locked path: the pin must stay as the outer call found it.
    thread_pin* pin = this_thread_pin();
    if (pin && !pin->busy && pin->cache == id_ &&
        pin->generation == generation_.load(std::memory_order_acquire) &&
        binding_table::matches(*pin->held, key, statics)) {
        pin->held->last_used.store(now, std::memory_order_relaxed);
        pin->held->trace->last_used.store(now, std::memory_order_relaxed);
        out.trace = pin->held->trace.get();
        out.plan = pin->held->plan.get();
        out.pinned = pin->busy = true;
        return true;
    }
    std::shared_lock lock(mutex_);
    binding* b = bindings_.find(key, statics);
    if (!b)
        return false;
    b->last_used.store(now, std::memory_order_relaxed);
    b->trace->last_used.store(now, std::memory_order_relaxed);
    out.keep = b->shared_from_this();
    out.trace = b->trace.get();
    out.plan = b->plan.get();
    if (pin && !pin->busy) { // the next call with these arguments finds it through the pin
        pin->cache = id_;
        pin->generation = generation_.load(std::memory_order_relaxed); // stable under the lock
        pin->held = b->shared_from_this();
    }
    return true;
}

XTRACE_DECL trace_cache::traced trace_cache::trace_for(const signature& call, tracing_mode mode,
                                                       const trace_callback& trace) {
    check_input_signature(call);
    if (auto fitting = fitting_trace(call)) // e.g. a relaxed [?,?] trace for a [2,1] call
        return {std::move(fitting), false, {}};
    const signature target = trace_signature(call, mode);
    traced out{nullptr, true, retrace_reason(mode == tracing_mode::call ? call : target)};
    try {
        out.entry = trace(target);
    } catch (const detail::needs_known_dims&) {
        if (target == call || mode == tracing_mode::exact || opts_.input_signature)
            throw; // an input_signature's dims are the user's word: no other trace stands in
        // reduce_retracing's relaxed dims or rank reached something that needs them known (a
        // host_function spec in a body, x.shape() on an unknown rank): trace this call's own
        // shapes instead.
        out.entry = trace(call);
        out.reason += " (a relaxed trace needed known dims or rank: traced this call's shapes)";
    }
    return out;
}

XTRACE_DECL void trace_cache::adopt(const traced& t) {
    traces_.push_back(t.entry);
    first_trace_ = false;
    if (++tracing_count_ > 1)
        reasons_.push_back(t.reason);
}

XTRACE_DECL bound_trace trace_cache::miss(const signature& call, std::span<const std::int64_t> key,
                                          std::span<const static_ref> statics,
                                          const std::vector<static_value>& values,
                                          const trace_callback& trace) {
    const serial_trace serial(*this);
    {
        std::shared_lock lock(mutex_);
        if (binding* b = bindings_.lookup(key, statics)) // bound meanwhile by another call
            return {b->shared_from_this(), b->trace.get(), b->plan.get()};
    }
    missed_.fetch_add(1, std::memory_order_relaxed); // undone below if a cached trace fits
    const auto start = std::chrono::steady_clock::now();
    const traced t = trace_for(call, tracing_mode::call, trace);
    if (!t.new_trace)
        missed_.fetch_sub(1, std::memory_order_relaxed);
    auto plan = plan::make_plan(t.entry->planned_graph(), tensor_shapes(call));
    auto b = std::make_shared<binding>();
    b->key.assign(key.begin(), key.end());
    b->statics = values;
    b->hash = hash_key(key, statics);
    b->trace = t.entry;
    b->plan = plan;
    const std::uint64_t now = calls_.load(std::memory_order_relaxed);
    b->last_used = now;
    t.entry->last_used = now;
    bound_trace out{b, t.entry.get(), plan.get()};
    {
        std::unique_lock lock(mutex_);
        if (t.new_trace)
            adopt(t);
        bindings_.insert(std::move(b));
        evict();
        generation_.fetch_add(1, std::memory_order_release);
    }
    add_tracing_time(start);
    if (t.new_trace)
        monitor_.note(now, t.reason, opts_.name, opts_.on_warning);
    return out;
}

XTRACE_DECL std::shared_ptr<trace_entry> trace_cache::trace_exact(const signature& sig,
                                                                  const trace_callback& trace) {
    const serial_trace serial(*this);
    const auto start = std::chrono::steady_clock::now();
    const traced t = trace_for(sig, tracing_mode::exact, trace);
    if (!t.new_trace)
        return t.entry;
    t.entry->last_used = calls_.load(std::memory_order_relaxed);
    {
        std::unique_lock lock(mutex_);
        adopt(t);
        evict();
        generation_.fetch_add(1, std::memory_order_release);
    }
    add_tracing_time(start);
    return t.entry;
}

XTRACE_DECL void
trace_cache::add_tracing_time(std::chrono::steady_clock::time_point since) noexcept {
    const auto spent = std::chrono::steady_clock::now() - since;
    tracing_ns_.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(spent).count(),
                          std::memory_order_relaxed);
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
    bindings_.clear();
    traces_.clear();
    first_trace_ = true;
    generation_.fetch_add(1, std::memory_order_release);
}

XTRACE_DECL function_stats trace_cache::stats() const {
    std::shared_lock lock(mutex_);
    function_stats s;
    s.calls = calls_.load(std::memory_order_relaxed);
    s.cache_hits = s.calls - std::min(s.calls, missed_.load(std::memory_order_relaxed));
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

XTRACE_DECL signature trace_cache::declared(const signature& call) const {
    signature s = call;
    std::size_t t = 0;
    const auto& specs = *opts_.input_signature;
    for (auto& a : s)
        if (tensor_of(a)) {
            if (t == specs.size())
                throw signature_error(who() +
                                      ": the call has more tensor arguments than "
                                      "input_signature's " +
                                      std::to_string(specs.size()) + " specs");
            a = specs[t++];
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

XTRACE_DECL signature trace_cache::trace_signature(const signature& call, tracing_mode mode) const {
    if (opts_.input_signature)
        return declared(call);
    if (opts_.reduce_retracing && mode == tracing_mode::call) {
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

XTRACE_DECL void trace_cache::evict() {
    if (opts_.max_cache_size == 0)
        return;
    while (traces_.size() > opts_.max_cache_size) {
        auto victim = std::min_element(traces_.begin(), traces_.end(), [](auto& a, auto& b) {
            return a->last_used.load() < b->last_used.load();
        });
        bindings_.erase_trace(victim->get());
        traces_.erase(victim);
        ++evictions_;
    }
}

} // namespace xtrace::function_detail
