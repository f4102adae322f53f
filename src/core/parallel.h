// A minimal parallel-for over an index range on std::thread, used by the reference
// engine and the benchmark. threads <= 1 runs inline.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"

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

// make(i) once for each distinct key among the items that have one (keys[i] set; the first
// item of a key stands for the others), on up to `threads` threads (parallel_each). Returns
// per item make's value, or the message of its failure (error_message); items without a key
// get neither.
template <typename Value>
struct MadeOnce {
    Value value{};
    std::string error;
};
template <typename Key, typename Make>
auto parallel_once_per_key(const std::vector<std::optional<Key>>& keys, int threads, Make&& make) {
    using Value = decltype(make(std::size_t{}));
    std::vector<MadeOnce<Value>> out(keys.size());
    std::map<Key, std::size_t> first_of;
    std::vector<std::size_t> firsts, first(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) {
        if (!keys[i]) continue;
        const auto [it, added] = first_of.emplace(*keys[i], i);
        if (added) firsts.push_back(i);
        first[i] = it->second;
    }
    parallel_each(firsts.size(), threads, [&](std::size_t k) {
        const std::size_t i = firsts[k];
        try {
            out[i].value = make(i);
        } catch (...) {
            out[i].error = error_message(std::current_exception());
        }
    });
    for (std::size_t i = 0; i < keys.size(); ++i)
        if (keys[i] && first[i] != i) out[i] = out[first[i]];
    return out;
}

}  // namespace toroid
