#ifndef XTRACE_FUNCTION_BINDING_TABLE_HPP
#define XTRACE_FUNCTION_BINDING_TABLE_HPP

// The hit path of a traced function: exact call signatures (dtype, rank and dims per tensor, and
// the static values) bound to a trace and its plan for those shapes. Not synchronised: the
// trace_cache that owns it reads it under a shared lock and changes it under a unique one.

#include "../config.hpp"
#include "../plan/plan.hpp"
#include "static_value.hpp"
#include "trace_entry.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <typeinfo>
#include <unordered_map>
#include <vector>

namespace xtrace::function_detail {

/// A static argument of the current call, compared in place (no copy on the hit path).
struct static_ref {
    const void* value;
    const std::type_info* type;
    std::size_t hash;
    bool (*equals)(const static_value&, const void*);
};

/// An exact call signature bound to a trace and its plan for those shapes. A call holds its
/// binding while it runs (one reference count, which keeps trace and plan alive).
struct binding : std::enable_shared_from_this<binding> {
    std::vector<std::int64_t> key;     ///< dtype, rank and dims per tensor argument
    std::vector<static_value> statics; ///< static argument values, in order
    std::size_t hash = 0;
    std::shared_ptr<trace_entry> trace;
    std::shared_ptr<const plan::plan> plan;
    std::atomic<std::uint64_t> last_used{0}; ///< the call that last found it
};

/// The hash of a call's key and static values.
XTRACE_DECL std::size_t hash_key(std::span<const std::int64_t> key,
                                 std::span<const static_ref> statics) noexcept;

/// Bindings by call signature, with the last one found kept aside (a loop calling with one shape
/// compares one key), and at most max_per_trace per trace (the least recently used goes).
class binding_table {
public:
    /// A relaxed trace keeps at most this many concrete-shape plans.
    static constexpr std::size_t max_per_trace = 8;

    /// The binding for this exact call, or nullptr; remembers it as the last hit.
    binding* find(std::span<const std::int64_t> key, std::span<const static_ref> statics);

    /// The same without touching the last hit.
    binding* lookup(std::span<const std::int64_t> key, std::span<const static_ref> statics) const;

    /// Adds `b`; when its trace then has more than max_per_trace bindings, drops its least
    /// recently used one.
    void insert(std::shared_ptr<binding> b);

    /// Drops every binding of trace `t`.
    void erase_trace(const trace_entry* t);

    /// Drops every binding.
    void clear();

    /// Whether `b` binds this exact call.
    static bool matches(const binding& b, std::span<const std::int64_t> key,
                        std::span<const static_ref> statics);

private:
    std::unordered_multimap<std::size_t, std::shared_ptr<binding>> bindings_;
    std::atomic<binding*> last_hit_{nullptr};
};

} // namespace xtrace::function_detail

#if XTRACE_DEFINE_RUNTIME
#include "impl/binding_table.ipp"
#endif

#endif
