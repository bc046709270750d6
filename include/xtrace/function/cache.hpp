#ifndef XTRACE_FUNCTION_CACHE_HPP
#define XTRACE_FUNCTION_CACHE_HPP

// The signature cache of one traced function: its traces (graphs with the signature they were
// traced for), the binding table of exact call signatures (the hit path), the tracing policy
// (which signature a miss traces), and the retrace monitor. Calls look bindings up under a shared
// lock; misses are serialised, so each signature is traced once however many threads miss at
// the same time, and the cache only changes after a trace and its plan succeed.

#include "../config.hpp"
#include "../plan/plan.hpp"
#include "binding_table.hpp"
#include "options.hpp"
#include "retrace_monitor.hpp"
#include "signature.hpp"
#include "stats.hpp"
#include "trace_entry.hpp"

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace xtrace {

namespace function_detail {

/// Set when the calling thread's pin has been destroyed (trivially destructible, so it stays
/// readable while the thread's other thread_local objects, or at exit the statics, go).
inline thread_local bool thread_pin_gone = false;

/// The binding a thread found last, held by the thread (see trace_cache::find).
struct thread_pin {
    std::uint64_t cache = 0;       ///< the cache it came from (trace_cache::id)
    std::uint64_t generation = 0;  ///< that cache's generation when it was pinned
    std::shared_ptr<binding> held; ///< keeps it alive while the thread may use it
    bool busy = false;             ///< a call of this thread is running on it

    thread_pin() = default;
    thread_pin(const thread_pin&) = delete;
    thread_pin& operator=(const thread_pin&) = delete;
    // A function destroyed later by this thread (a thread_local made before the pin, or a static
    // at exit) must not touch the destroyed pin: it would release `held` a second time.
    ~thread_pin() { thread_pin_gone = true; }
};

/// The calling thread's pin, or null once it has been destroyed (functions then take the
/// locked path).
inline thread_pin* this_thread_pin() noexcept {
    if (thread_pin_gone)
        return nullptr;
    thread_local thread_pin pin;
    return &pin;
}

/// What a call runs: a trace and its plan for the call's shapes.
struct bound_trace {
    std::shared_ptr<const binding> keep; ///< keeps trace and plan alive while the call runs
    const trace_entry* trace = nullptr;
    const plan::plan* plan = nullptr;
    bool pinned = false;    ///< found through the thread's pin, which keeps them alive instead
    std::uint64_t call = 0; ///< the call's number among the function's calls, from 1 (find)

    bound_trace() = default;
    bound_trace(std::shared_ptr<const binding> k, const trace_entry* t, const plan::plan* p)
        : keep(std::move(k)), trace(t), plan(p) {}
    bound_trace(bound_trace&& other) noexcept
        : keep(std::move(other.keep)), trace(other.trace), plan(other.plan),
          pinned(std::exchange(other.pinned, false)) {}
    bound_trace(const bound_trace&) = delete;
    bound_trace& operator=(const bound_trace&) = delete;
    bound_trace& operator=(bound_trace&& other) noexcept {
        release();
        keep = std::move(other.keep);
        trace = other.trace;
        plan = other.plan;
        pinned = std::exchange(other.pinned, false);
        return *this;
    }
    ~bound_trace() { release(); }

private:
    void release() noexcept {
        if (std::exchange(pinned, false))
            if (thread_pin* pin = this_thread_pin())
                pin->busy = false;
    }
};

/// Traces the lambda for a signature; supplied by the typed traced_function. A reference to a
/// callable that outlives the call it is passed to (cheaper to instantiate than std::function).
class trace_callback {
public:
    template <class F>
    requires(!std::is_same_v<F, trace_callback>) trace_callback(const F& f)
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
    trace_cache(const trace_cache&) = delete;
    trace_cache& operator=(const trace_cache&) = delete;
    /// Drops the calling thread's pin if it holds one of this cache's bindings.
    ~trace_cache();

    const options& opts() const noexcept { return opts_; }

    /// The binding for this exact call, if cached (the hit path). A thread calling with the
    /// signature it called with last, while the cache is unchanged since, finds it through its
    /// pin: no lock and no reference count. The pin keeps that binding alive until the thread's
    /// next call to another function (or its exit), also when this cache is cleared or destroyed
    /// by another thread.
    bool find(std::span<const std::int64_t> key, std::span<const static_ref> statics,
              bound_trace& out);

    /// The miss path: finds or traces a graph for `call`, binds it, caches both.
    bound_trace miss(const signature& call, std::span<const std::int64_t> key,
                     std::span<const static_ref> statics, const std::vector<static_value>& values,
                     const trace_callback& trace);

    /// A cached trace that `sig` fits, tracing `sig` itself if there is none
    /// (get_concrete_function: traces without running).
    std::shared_ptr<trace_entry> trace_exact(const signature& sig, const trace_callback& trace);

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
    // Which signatures a miss may trace: a call's own (or relaxed) one, or exactly the one asked.
    enum class tracing_mode : std::uint8_t { call, exact };

    // The outcome of the tracing policy: the trace to use, and whether it was traced now (why).
    struct traced {
        std::shared_ptr<trace_entry> entry;
        bool new_trace = false;
        std::string reason;
    };

    // The tracing policy, in order: the call must fit the declared input_signature; a cached
    // trace it fits serves it; else trace the declared signature, or (reduce_retracing, calls
    // only) the relaxation of the call with a cached trace, or the call itself; the reason is
    // the difference from the nearest cached trace.
    traced trace_for(const signature& call, tracing_mode mode, const trace_callback& trace);

    // A new trace joins the cache (under the unique lock).
    void adopt(const traced& t);

    std::string who() const { return opts_.name.empty() ? "xtrace::function" : opts_.name; }

    // With an input_signature, the signature every call must fit (static values: the call's).
    signature declared(const signature& call) const;

    void check_input_signature(const signature& call) const;

    std::shared_ptr<trace_entry> fitting_trace(const signature& call) const;

    // The signature to trace for a call no trace fits.
    signature trace_signature(const signature& call, tracing_mode mode) const;

    // Why tracing for `target` now: its differences from the nearest cached trace.
    std::string retrace_reason(const signature& target) const;

    void evict();

    void add_tracing_time(std::chrono::steady_clock::time_point since) noexcept;

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
    binding_table bindings_;
    std::vector<std::string> reasons_;
    std::size_t tracing_count_ = 0;
    bool first_trace_ = true;
    std::uint64_t evictions_ = 0;
    // Hits are calls minus the calls that missed (counted on the slow path only).
    std::atomic<std::uint64_t> calls_{0}, missed_{0};
    // Bumped whenever bindings change (under the unique lock): a pin from before is stale.
    std::atomic<std::uint64_t> generation_{1};
    const std::uint64_t id_ = next_cache_id(); // never reused, unlike the cache's address

    XTRACE_DECL static std::uint64_t next_cache_id() noexcept;
    std::atomic<std::int64_t> tracing_ns_{0}, running_ns_{0};
    retrace_monitor monitor_;
};

/// Adds the time until its end to `cache`'s running time, counted function_stats::timing_period
/// times, as one call in that many is timed; a null cache times nothing.
class running_timer {
public:
    explicit running_timer(trace_cache* cache) noexcept
        : cache_(cache), start_(cache ? std::chrono::steady_clock::now()
                                      : std::chrono::steady_clock::time_point{}) {}
    running_timer(const running_timer&) = delete;
    running_timer& operator=(const running_timer&) = delete;
    ~running_timer() {
        if (cache_)
            cache_->add_running_time((std::chrono::steady_clock::now() - start_) *
                                     function_stats::timing_period);
    }

private:
    trace_cache* cache_;
    std::chrono::steady_clock::time_point start_;
};

/// A new signature cache (made here, so that callers never compile its destructor); throws
/// signature_error for an input_signature spec no tensor can have.
XTRACE_DECL std::shared_ptr<trace_cache> make_trace_cache(options o);

} // namespace function_detail
} // namespace xtrace

#if XTRACE_DEFINE_RUNTIME
#include "impl/cache.ipp"
#endif

#endif
