// A minimal parallel-for over an index range on std::thread, used by the reference
// engine and the benchmark. threads <= 1 runs inline.
#pragma once

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace toroid {

int default_threads();  // hardware concurrency (at least 1)

template <typename F>
void parallel_for(std::int64_t begin, std::int64_t end, int threads, F&& body) {
    std::int64_t n = end - begin;
    if (n <= 0) return;
    int t = static_cast<int>(std::min<std::int64_t>(std::max(threads, 1), n));
    if (t <= 1) {
        for (std::int64_t i = begin; i < end; ++i) body(i);
        return;
    }
    std::vector<std::thread> pool;
    pool.reserve(static_cast<std::size_t>(t));
    for (int k = 0; k < t; ++k) {
        std::int64_t lo = begin + n * k / t, hi = begin + n * (k + 1) / t;
        pool.emplace_back([lo, hi, &body] {
            for (std::int64_t i = lo; i < hi; ++i) body(i);
        });
    }
    for (auto& th : pool) th.join();
}

}  // namespace toroid
