// Micro-benchmark of a horizontal flip's inner loop, the form toroid's CPU kernels take on
// AVX-512 (64-byte vectors reversed with vpermb): uint8 rows of W bytes (224 x 672 rows is a
// (1, 3, 224, 224) image), the output at the input's offset modulo 4096 or not, in three
// orders (output left to right; pairs from both ends; a whole row loaded first), beside a
// memcpy of the same bytes. Needs AVX512VBMI.
//
//     g++ -O2 -march=native -o flip_rows bench/flip_rows.cpp && ./flip_rows 224 672
#include <immintrin.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <algorithm>
#include <vector>

static inline __m512i rev(__m512i v) {
    const __m512i idx = _mm512_set_epi8(0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,
                                        32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63);
    return _mm512_permutexvar_epi8(idx, v);
}

// toroid's order: output vectors left to right, each reading the mirrored input vector.
__attribute__((noinline)) void flip_fwd(const uint8_t* in, uint8_t* out, int rows, int W) {
    for (int r = 0; r < rows; ++r) {
        const uint8_t* a = in + (long)r * W; uint8_t* b = out + (long)r * W;
        int x = 0;
        for (; x < W - 64; x += 64) _mm512_storeu_si512(b + x, rev(_mm512_loadu_si512(a + W - x - 64)));
        x = W - 64;
        _mm512_storeu_si512(b + x, rev(_mm512_loadu_si512(a + W - x - 64)));
    }
}
// Pairs from both ends inward: loads of a pair come before its stores.
__attribute__((noinline)) void flip_pairs(const uint8_t* in, uint8_t* out, int rows, int W) {
    for (int r = 0; r < rows; ++r) {
        const uint8_t* a = in + (long)r * W; uint8_t* b = out + (long)r * W;
        int lo = 0, hi = W - 64;
        while (lo < hi) {
            __m512i p = _mm512_loadu_si512(a + W - lo - 64), q = _mm512_loadu_si512(a + W - hi - 64);
            _mm512_storeu_si512(b + lo, rev(p)); _mm512_storeu_si512(b + hi, rev(q));
            lo += 64; hi -= 64;
        }
        if (lo == hi) _mm512_storeu_si512(b + lo, rev(_mm512_loadu_si512(a + W - lo - 64)));
    }
}
// Whole row loaded first (up to 8 vectors), then stored.
__attribute__((noinline)) void flip_rowfirst(const uint8_t* in, uint8_t* out, int rows, int W) {
    for (int r = 0; r < rows; ++r) {
        const uint8_t* a = in + (long)r * W; uint8_t* b = out + (long)r * W;
        __m512i v[64]; int xs[64]; int n = 0;
        for (int x = 0; n < 64; x += 64) { int xx = std::min(x, W - 64); xs[n] = xx; v[n++] = _mm512_loadu_si512(a + W - xx - 64); if (xx == W - 64) break; }
        for (int i = 0; i < n; ++i) _mm512_storeu_si512(b + xs[i], rev(v[i]));
    }
}
// A plain copy, for the bandwidth reference.
__attribute__((noinline)) void copy(const uint8_t* in, uint8_t* out, int rows, int W) { std::memcpy(out, in, (size_t)rows * W); }

int main(int argc, char** argv) {
    const int W = argc > 1 ? atoi(argv[1]) : 224, rows = argc > 2 ? atoi(argv[2]) : 672;
    const size_t n = (size_t)W * rows;
    uint8_t* base_in = (uint8_t*)aligned_alloc(4096, n + 8192);
    uint8_t* base_out = (uint8_t*)aligned_alloc(4096, n + 8192);
    for (size_t i = 0; i < n + 8192; ++i) base_in[i] = (uint8_t)(i * 7), base_out[i] = 0;
    using F = void (*)(const uint8_t*, uint8_t*, int, int);
    struct V { const char* name; F f; } vs[] = {{"fwd", flip_fwd}, {"pairs", flip_pairs}, {"rowfirst", flip_rowfirst}, {"copy", copy}};
    for (int off : {0, 64, 2048}) {
        for (auto& v : vs) {
            double best = 1e9;
            for (int rep = 0; rep < 7; ++rep) {
                const int iters = 2000;
                auto t0 = std::chrono::steady_clock::now();
                for (int i = 0; i < iters; ++i) v.f(base_in, base_out + off, rows, W);
                auto t1 = std::chrono::steady_clock::now();
                best = std::min(best, std::chrono::duration<double, std::micro>(t1 - t0).count() / iters);
            }
            std::printf("W=%d rows=%d out_offset=%4d %-9s %8.2f us\n", W, rows, off, v.name, best);
        }
    }
    // check
    flip_fwd(base_in, base_out, rows, W);
    for (int r = 0; r < rows; ++r) for (int x = 0; x < W; ++x) if (base_out[(long)r*W + x] != base_in[(long)r*W + W-1-x]) { std::printf("WRONG\n"); return 1; }
    flip_pairs(base_in, base_out + 64, rows, W);
    for (int r = 0; r < rows; ++r) for (int x = 0; x < W; ++x) if (base_out[64 + (long)r*W + x] != base_in[(long)r*W + W-1-x]) { std::printf("WRONG pairs\n"); return 1; }
    std::printf("ok\n");
}
