// Thread-count defaults for parallel_for.
#include "core/parallel.h"

namespace toroid {

int default_threads() {
    unsigned n = std::thread::hardware_concurrency();
    return n == 0 ? 1 : static_cast<int>(n);
}

}  // namespace toroid
