// A minimal parallel-for over an index range on std::thread, used by the reference
// engine and the benchmark. threads <= 1 runs inline.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
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

// body(i) for every i in [0, n) on up to `threads` threads, each taking the next index as it
// finishes one (items of uneven cost). threads <= 1 runs inline, in order. body must not
// throw: catch and record per item.
template <typename F>
void parallel_each(std::size_t n, int threads, F&& body) {
    const int t = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(std::max(threads, 1)), n));
    if (t <= 1) {
        for (std::size_t i = 0; i < n; ++i) body(i);
        return;
    }
    std::atomic<std::size_t> next{0};
    parallel_for(0, t, t, [&](std::int64_t) {
        for (std::size_t i = next++; i < n; i = next++) body(i);
    });
}

}  // namespace toroid
