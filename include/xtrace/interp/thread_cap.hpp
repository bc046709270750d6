#ifndef XTRACE_INTERP_THREAD_CAP_HPP
#define XTRACE_INTERP_THREAD_CAP_HPP

// The most threads the calling thread's current call may use (options::max_threads). A call
// sets it for its own duration; the interpreter's parallel loops read it.

namespace xtrace::interp {

/// The calling thread's cap: 0 = no cap (the caller's task arena decides), 1 = serial, n = at
/// most n threads.
inline int& thread_cap() noexcept {
    thread_local int cap = 0;
    return cap;
}

/// Sets the calling thread's cap for the scope's lifetime (a cap of 0 keeps the outer one, so a
/// nested call of an uncapped function inside a capped one stays capped).
class thread_cap_scope {
public:
    explicit thread_cap_scope(int cap) noexcept : saved_(thread_cap()) {
        if (cap > 0)
            thread_cap() = cap;
    }
    ~thread_cap_scope() { thread_cap() = saved_; }
    thread_cap_scope(const thread_cap_scope&) = delete;
    thread_cap_scope& operator=(const thread_cap_scope&) = delete;

private:
    int saved_;
};

} // namespace xtrace::interp

#endif
