#include "core/interrupt.h"

#include "core/error.h"

#include <atomic>

namespace toroid {

namespace {

std::atomic<std::uint64_t> g_interrupts{0};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "interrupt_prepares must be signal-safe");

struct ThreadScope {
    int depth = 0;
    std::uint64_t start = 0;  // g_interrupts when the outermost scope began
};
thread_local ThreadScope t_scope;

}  // namespace

void interrupt_prepares() noexcept { g_interrupts.fetch_add(1, std::memory_order_relaxed); }

InterruptScope::InterruptScope() {
    if (t_scope.depth++ == 0) t_scope.start = g_interrupts.load(std::memory_order_relaxed);
}

InterruptScope::~InterruptScope() { --t_scope.depth; }

std::uint64_t interrupt_generation() noexcept {
    return t_scope.depth > 0 ? t_scope.start : g_interrupts.load(std::memory_order_relaxed);
}

bool interrupted_since(std::uint64_t generation) noexcept {
    return g_interrupts.load(std::memory_order_relaxed) != generation;
}

bool interrupted() noexcept {
    return t_scope.depth > 0 && g_interrupts.load(std::memory_order_relaxed) != t_scope.start;
}

void check_interrupt() {
    if (interrupted()) fail("interrupted");
}

}  // namespace toroid
