// The runtime section of function/binding_table.hpp.

#include <algorithm>

namespace xtrace::function_detail {

XTRACE_DECL std::size_t hash_key(std::span<const std::int64_t> key,
                                 std::span<const static_ref> statics) noexcept {
    std::size_t h = 1469598103934665603ull;
    for (auto v : key)
        h = (h ^ static_cast<std::size_t>(v)) * 1099511628211ull;
    for (const auto& s : statics)
        h = (h ^ s.hash) * 1099511628211ull;
    return h;
}

XTRACE_DECL bool binding_table::matches(const binding& b, std::span<const std::int64_t> key,
                                        std::span<const static_ref> statics) {
    if (b.key.size() != key.size() || b.statics.size() != statics.size())
        return false;
    // A loop, not std::equal: keys are a few words, shorter than a call of memcmp.
    for (std::size_t i = 0; i < key.size(); ++i)
        if (key[i] != b.key[i])
            return false;
    for (std::size_t i = 0; i < statics.size(); ++i)
        if (!statics[i].equals(b.statics[i], statics[i].value))
            return false;
    return true;
}

XTRACE_DECL binding* binding_table::find(std::span<const std::int64_t> key,
                                         std::span<const static_ref> statics) {
    binding* b = last_hit_.load(std::memory_order_acquire);
    if (b && matches(*b, key, statics))
        return b;
    b = lookup(key, statics);
    if (b)
        last_hit_.store(b, std::memory_order_release);
    return b;
}

XTRACE_DECL binding* binding_table::lookup(std::span<const std::int64_t> key,
                                           std::span<const static_ref> statics) const {
    auto [lo, hi] = bindings_.equal_range(hash_key(key, statics));
    for (auto it = lo; it != hi; ++it)
        if (matches(*it->second, key, statics))
            return it->second.get();
    return nullptr;
}

XTRACE_DECL void binding_table::insert(std::shared_ptr<binding> b) {
    trace_entry& t = *b->trace;
    if (++t.bindings > max_per_trace) {
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

XTRACE_DECL void binding_table::erase_trace(const trace_entry* t) {
    last_hit_.store(nullptr);
    std::erase_if(bindings_, [&](const auto& kv) { return kv.second->trace.get() == t; });
}

XTRACE_DECL void binding_table::clear() {
    last_hit_.store(nullptr);
    bindings_.clear();
}

} // namespace xtrace::function_detail
