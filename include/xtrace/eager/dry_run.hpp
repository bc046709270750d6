#ifndef XTRACE_EAGER_DRY_RUN_HPP
#define XTRACE_EAGER_DRY_RUN_HPP

// A dry run: code running now (eager) only to learn the shapes it produces. A scan of zero
// steps that runs now calls its fn once on placeholder slices to learn the shapes of the
// outputs it stacks (the traced path learns them by tracing); xtrace's effects (print, variable
// assignments, host_function callbacks) do nothing meanwhile, so the run leaves no trace.

namespace xtrace::detail {

/// This thread's dry-run switch.
inline bool& dry_run_flag() noexcept {
    thread_local bool on = false;
    return on;
}

/// True while a dry run is under way on this thread: effects are skipped.
inline bool dry_run() noexcept {
    return dry_run_flag();
}

/// Makes its lifetime a dry run (nesting restores the previous state).
class dry_run_scope {
public:
    dry_run_scope() noexcept : was_(dry_run_flag()) { dry_run_flag() = true; }
    dry_run_scope(const dry_run_scope&) = delete;
    dry_run_scope& operator=(const dry_run_scope&) = delete;
    ~dry_run_scope() { dry_run_flag() = was_; }

private:
    bool was_;
};

} // namespace xtrace::detail

#endif
