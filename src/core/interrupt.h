// Interrupting a prepare. interrupt_prepares() (toroid_interrupt() in the C API; one atomic
// increment, so a signal handler may call it) makes every prepare in progress in the process
// stop at its next check with toroid::Error("interrupted"); prepares that begin later are
// not affected: each notes the count of interrupts when it begins. The compiling engines'
// prepare() holds an InterruptScope; decomposition (per op), scheduling (per pass and per
// tensor), code generation and binding call check_interrupt().
#pragma once

#include <cstdint>

namespace toroid {

void interrupt_prepares() noexcept;

// Marks the calling thread's prepare (nested scopes keep the outermost one's start).
class InterruptScope {
public:
    InterruptScope();
    ~InterruptScope();
    InterruptScope(const InterruptScope&) = delete;
    InterruptScope& operator=(const InterruptScope&) = delete;
};

// True when the calling thread is inside an InterruptScope and interrupt_prepares() was called
// since it began: what check_interrupt() throws on. Waits that do not throw (a compiler's
// process, another process's cache lock) poll it, so that an interrupted prepare stops them
// at once instead of waiting for them to end.
bool interrupted() noexcept;

// Throws toroid::Error("interrupted") when interrupt_prepares() was called since the calling
// thread's InterruptScope began; does nothing outside one.
void check_interrupt();

// Work a prepare starts (a compile, a background build) notes the prepare's generation: the
// count of interrupts when the calling thread's outermost InterruptScope began, or the count
// now outside one. It is abandoned once interrupted_since(that generation): exit does not
// wait for it.
std::uint64_t interrupt_generation() noexcept;
bool interrupted_since(std::uint64_t generation) noexcept;

}  // namespace toroid
