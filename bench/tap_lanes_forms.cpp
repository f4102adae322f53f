// Register layouts for taps in lanes (channels-last uint8, 3 channels) timed alone, outside
// the compiler: the 4K frame's horizontal pass (2160 rows, 3840 -> 640 pixels, 13 taps of
// random int16 weights), 4 rows a step, one thread, each checked against a scalar loop.
//   A    one pixel's channels x 8 taps a register (the preamble's AVX-512 form), the sums
//        of 4 pixels transposed into lane 4j + s
//   A'   the same, the sums left in lane 4s + j and put in order by the store's shuffle
//   A'64 A' with 64-byte masked loads (32-byte ones in the others)
//   A'bc A' with 32-byte broadcast loads, unmasked
//   B    two pixels' channels x 4 taps a register, from two 16-byte loads and one
//        two-source byte permute, the weights of a pixel pair per 4 taps; pair sums
//
//   g++ -O3 -march=native -std=c++20 bench/tap_lanes_forms.cpp -o tap_lanes_forms && taskset -c 8 ./tap_lanes_forms
//   ./tap_lanes_forms placement     (A' and A'bc with the output at offsets from the input mod 4096)
#include <immintrin.h>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <random>
#include <string>
#include <vector>

constexpr int C = 3, H = 2160, WI = 3840, WO = 640, K = 13, PREC = 14;
static std::vector<uint8_t> in(size_t(H) * WI * C + 64);
static std::vector<int64_t> off(WO + 4);
static std::vector<int16_t> wt(size_t(WO + 4) * 16);

static void reference(uint8_t* out) {
    for (int y = 0; y < H; ++y)
        for (int x = 0; x < WO; ++x)
            for (int c = 0; c < C; ++c) {
                int32_t s = 0;
                for (int k = 0; k < K; ++k) s += int32_t(wt[x * 16 + k]) * in[size_t(y) * WI * C + off[x] + k * C + c];
                s = (s + (1 << (PREC - 1))) >> PREC;
                out[(size_t(y) * WO + x) * C + c] = uint8_t(std::clamp(s, 0, 255));
            }
}

// ---- Form A: one pixel's 3 channels x 8 taps a register (lane 8s + 2i + t), sum4.
static __m512i idxA;
static __mmask64 keepA;
static std::vector<int16_t> wA;  // per pixel, per chunk of 8 taps: 8 weights
static void setupA() {
    alignas(64) int8_t idx[64] = {};
    keepA = 0;
    for (int s = 0; s < 4; ++s)
        for (int i = 0; i < 4; ++i)
            for (int k = 0; k < 2; ++k) {
                const int lane = 8 * s + 2 * i + k;
                idx[2 * lane] = int8_t((2 * i + k) * C + (s < C ? s : 0));
                if (s < C) keepA |= __mmask64(1) << (2 * lane);
            }
    idxA = _mm512_load_si512(idx);
    wA.assign(size_t(WO + 4) * 16, 0);
    for (int x = 0; x < WO + 4; ++x)
        for (int k = 0; k < 16; ++k) wA[size_t(x) * 16 + k] = k < K ? wt[size_t(std::min(x, WO - 1)) * 16 + k] : 0;
}
// Wide: 1 a 64-byte masked load, 2 a 32-byte broadcast load (no mask: the bytes past the
// taps meet zero weights; inside the page here), 0 a 32-byte masked load.
template <int Wide = 0>
static inline __m512i maddA(__m512i acc, const uint8_t* p, __mmask32 m, __m512i w) {
    const __m512i px = Wide == 1   ? _mm512_maskz_loadu_epi8(__mmask64(m), p)
                       : Wide == 2 ? _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i*)p))
                                   : _mm512_castsi256_si512(_mm256_maskz_loadu_epi8(m, p));
    return _mm512_dpwssd_epi32(acc, _mm512_maskz_permutexvar_epi8(keepA, idxA, px), w);
}
static inline __m512i pair_sums(__m512i a, __m512i b) {
    const __m512i e = _mm512_setr_epi32(0, 2, 16, 18, 4, 6, 20, 22, 8, 10, 24, 26, 12, 14, 28, 30);
    const __m512i o = _mm512_setr_epi32(1, 3, 17, 19, 5, 7, 21, 23, 9, 11, 25, 27, 13, 15, 29, 31);
    return _mm512_add_epi32(_mm512_permutex2var_epi32(a, e, b), _mm512_permutex2var_epi32(a, o, b));
}
template <bool FoldOrder, int Wide = 0>
static void formA(uint8_t* out) {
    const __m512i half = _mm512_set1_epi32(1 << (PREC - 1));
    const __m512i zero = _mm512_setzero_si512(), top = _mm512_set1_epi32(255);
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    // store: lane 4j + s (or 4s + j when the order is folded) -> byte j * C + s
    alignas(16) int8_t st[16];
    for (int b = 0; b < 16; ++b) st[b] = -1;
    for (int j = 0; j < 4; ++j)
        for (int s = 0; s < C; ++s) st[j * C + s] = int8_t(FoldOrder ? 4 * s + j : 4 * j + s);
    const __m128i stIdx = _mm_load_si128((const __m128i*)st);
    const size_t rs = size_t(WI) * C;
    for (int y = 0; y < H; y += 4) {
        const uint8_t* row = in.data() + size_t(y) * rs;
        for (int x = 0; x < WO; x += 4) {
            __m512i a[4][4];
            for (int r = 0; r < 4; ++r)
                for (int j = 0; j < 4; ++j) a[r][j] = _mm512_setzero_si512();
            for (int ch = 0; ch < 2; ++ch) {
                const __mmask32 m = ch == 0 ? 0xFFFFFF : (1u << ((K - 8) * C)) - 1;
                for (int j = 0; j < 4; ++j) {
                    const __m512i w = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i*)&wA[size_t(x + j) * 16 + ch * 8]));
                    const uint8_t* q = row + off[x + j] + ch * 8 * C;
                    for (int r = 0; r < 4; ++r) a[r][j] = maddA<Wide>(a[r][j], q + r * rs, m, w);
                }
            }
            for (int r = 0; r < 4; ++r) {
                __m512i u = pair_sums(pair_sums(a[r][0], a[r][1]), pair_sums(a[r][2], a[r][3]));
                if (!FoldOrder) u = _mm512_permutexvar_epi32(order, u);
                u = _mm512_srai_epi32(_mm512_add_epi32(u, half), PREC);
                u = _mm512_min_epi32(_mm512_max_epi32(u, zero), top);
                const __m128i b = _mm_shuffle_epi8(_mm512_cvtepi32_epi8(u), stIdx);
                _mm_mask_storeu_epi8(out + (size_t(y + r) * WO + x) * C, 0xFFF, b);
            }
        }
    }
}

// ---- Form B: two pixels x 3 channels x 4 taps a register (qword k: pixel k & 1, channel
// k >> 1; int16 lane 4k + tap), from two 16-byte loads and one two-source byte permute;
// the weights of a pixel pair per 4 taps, 16 bytes, broadcast; pair sums.
static __m512i idxB;
static __mmask64 keepB;
static std::vector<int16_t> wB;  // per pixel pair, per chunk of 4 taps: 8 weights
constexpr int KB = (K + 3) / 4;
static void setupB() {
    alignas(64) int8_t idx[64] = {};
    keepB = 0;
    for (int k = 0; k < 8; ++k)
        for (int t = 0; t < 4; ++t) {
            const int p = k & 1, s = k >> 1, l = 4 * k + t;
            idx[2 * l] = int8_t((p ? 64 : 0) + t * C + (s < C ? s : 0));
            if (s < C) keepB |= __mmask64(1) << (2 * l);
        }
    idxB = _mm512_load_si512(idx);
    wB.assign(size_t(WO + 4) / 2 * KB * 8, 0);
    for (int x2 = 0; x2 < (WO + 4) / 2; ++x2)
        for (int ch = 0; ch < KB; ++ch)
            for (int p = 0; p < 2; ++p)
                for (int t = 0; t < 4; ++t) {
                    const int x = std::min(2 * x2 + p, WO - 1), k = ch * 4 + t;
                    wB[(size_t(x2) * KB + ch) * 8 + p * 4 + t] = k < K ? wt[size_t(x) * 16 + k] : 0;
                }
}
static void formB(uint8_t* out) {
    const __m512i half = _mm512_set1_epi32(1 << (PREC - 1));
    const __m512i zero = _mm512_setzero_si512(), top = _mm512_set1_epi32(255);
    const __m512i e = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i o = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    // lane m: m < 8 pair A (pixels 0, 1), else B (2, 3); k = m % 8: pixel k & 1, channel k >> 1
    alignas(16) int8_t st[16];
    for (int b = 0; b < 16; ++b) st[b] = -1;
    for (int j = 0; j < 4; ++j)
        for (int s = 0; s < C; ++s) st[j * C + s] = int8_t((j >> 1) * 8 + 2 * s + (j & 1));
    const __m128i stIdx = _mm_load_si128((const __m128i*)st);
    const size_t rs = size_t(WI) * C;
    for (int y = 0; y < H; y += 4) {
        const uint8_t* row = in.data() + size_t(y) * rs;
        for (int x = 0; x < WO; x += 4) {
            __m512i a[4][2];
            for (int r = 0; r < 4; ++r) a[r][0] = a[r][1] = _mm512_setzero_si512();
            for (int ch = 0; ch < KB; ++ch) {
                const int n = std::min(4, K - ch * 4) * C;
                const __mmask16 m = __mmask16((1u << n) - 1);
                for (int pp = 0; pp < 2; ++pp) {
                    const __m512i w = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i*)&wB[(size_t(x / 2 + pp) * KB + ch) * 8]));
                    const uint8_t* q0 = row + off[x + 2 * pp] + ch * 4 * C;
                    const uint8_t* q1 = row + off[x + 2 * pp + 1] + ch * 4 * C;
                    for (int r = 0; r < 4; ++r) {
                        const __m512i p0 = _mm512_castsi128_si512(_mm_maskz_loadu_epi8(m, q0 + r * rs));
                        const __m512i p1 = _mm512_castsi128_si512(_mm_maskz_loadu_epi8(m, q1 + r * rs));
                        a[r][pp] = _mm512_dpwssd_epi32(a[r][pp], _mm512_maskz_permutex2var_epi8(keepB, p0, idxB, p1), w);
                    }
                }
            }
            for (int r = 0; r < 4; ++r) {
                __m512i u = _mm512_add_epi32(_mm512_permutex2var_epi32(a[r][0], e, a[r][1]), _mm512_permutex2var_epi32(a[r][0], o, a[r][1]));
                u = _mm512_srai_epi32(_mm512_add_epi32(u, half), PREC);
                u = _mm512_min_epi32(_mm512_max_epi32(u, zero), top);
                const __m128i b = _mm_shuffle_epi8(_mm512_cvtepi32_epi8(u), stIdx);
                _mm_mask_storeu_epi8(out + (size_t(y + r) * WO + x) * C, 0xFFF, b);
            }
        }
    }
}

template <typename F> static void time_it(const char* name, F f, uint8_t* out, const std::vector<uint8_t>& want) {
    std::memset(out, 0, want.size());
    f(out);
    const bool ok = std::memcmp(out, want.data(), want.size()) == 0;
    std::vector<double> ts;
    for (int i = 0; i < 25; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        f(out);
        ts.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ts.begin(), ts.end());
    std::printf("%-34s min %8.1f us  median %8.1f us  %s\n", name, ts[0], ts[ts.size() / 2], ok ? "exact" : "WRONG");
}

int main(int argc, char** argv) {
    std::mt19937 g(1);
    for (auto& b : in) b = uint8_t(g());
    for (int x = 0; x < WO + 4; ++x) {
        const int xx = std::min(x, WO - 1);
        off[x] = int64_t(std::min(std::max(xx * 6 - 3, 0), WI - K)) * C;
        int sum = 0;
        for (int k = 0; k < K; ++k) {
            const int16_t w = int16_t(k < K - 1 ? (1 << PREC) / K + int(g() % 200) - 100 : 0);
            wt[size_t(x) * 16 + k] = w;
            sum += w;
        }
        wt[size_t(x) * 16 + K - 1] = int16_t((1 << PREC) - sum);
    }
    setupA();
    setupB();
    std::vector<uint8_t> want(size_t(H) * WO * C);
    reference(want.data());
    // `tap_lanes_forms placement`: A' and A'bc with the output placed at offsets from the
    // input's address, mod 4096 (4K aliasing between the loads and the stores).
    if (argc > 1 && std::string(argv[1]) == "placement") {
        std::vector<uint8_t> big(want.size() + 8192);
        for (int off : {0, 64, 512, 1024, 2048, 3072, 4032}) {
            uint8_t* o = big.data() + ((reinterpret_cast<uintptr_t>(in.data()) + off - reinterpret_cast<uintptr_t>(big.data())) & 4095);
            std::printf("output at input + %d mod 4096\n", off);
            time_it("  A': masked loads", formA<true>, o, want);
            time_it("  A'bc: broadcast loads", formA<true, 2>, o, want);
        }
        return 0;
    }
    std::vector<uint8_t> out(want.size());
    for (int round = 0; round < 3; ++round) {
        time_it("A: pixel a register, sum4", formA<false>, out.data(), want);
        time_it("A': the same, order in the store", formA<true>, out.data(), want);
        time_it("A'64: 64-byte masked loads", formA<true, 1>, out.data(), want);
        time_it("A'bc: 32-byte broadcast loads", formA<true, 2>, out.data(), want);
        time_it("B: two pixels a register", formB, out.data(), want);
    }
}
