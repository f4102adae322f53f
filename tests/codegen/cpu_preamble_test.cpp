// The generated kernels' C++ preamble (src/codegen/cpu_preamble.h): the library embeds the
// file's current text, and its helpers written with compiler builtins (the hardware gathers,
// floor / round-half-even / fma, the byte permutes) answer like the scalar code they replace, under GCC and,
// where installed, Clang, at every vector width this machine can run.
#include "codegen/cpp.h"
#include "runtime/jit.h"
#include "jit_test_support.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <dlfcn.h>
#include <unistd.h>

namespace toroid {
namespace {

namespace fs = std::filesystem;

using jit_test::kHeader;
using jit_test::on_path;
using jit_test::slurp;

// A program of one kernel: `in` with each row reversed, `lanes` lanes a vector step.
ir::Program reversing_program(int lanes) {
    ir::Program p;
    ir::Buffer in{};
    in.id = 0;
    in.name = "in";
    in.role = ir::BufferRole::Input;
    in.type = ir::Type::U8;
    in.shape = {ir::iconst(1), ir::iconst(1), ir::iconst(4), ir::param(0)};
    in.strides = {ir::param(1), ir::param(1), ir::param(0), ir::iconst(1)};
    ir::Buffer out = in;
    out.id = 1;
    out.name = "out";
    out.role = ir::BufferRole::Output;
    p.buffers = {in, out};
    p.input = 0;
    p.output = 1;
    p.params = {ir::ProgramParam{"w", ir::ParamKind::Size, {}}, ir::ProgramParam{"plane", ir::ParamKind::Stride, {}}};
    ir::Kernel k;
    k.name = "bytes";
    k.output = 1;
    k.loops = {{0, ir::iconst(0), ir::iconst(1), ir::LoopKind::Parallel}, {1, ir::iconst(0), ir::iconst(1), ir::LoopKind::Parallel},
               {2, ir::iconst(0), ir::iconst(4), ir::LoopKind::Parallel}, {3, ir::iconst(0), ir::param(0), ir::LoopKind::Vector}};
    k.cpu().vector_width = lanes;
    k.value = ir::load(0, ir::Type::U8, {ir::var(0), ir::var(1), ir::var(2), ir::sub(ir::sub(ir::param(0), ir::iconst(1)), ir::var(3))});
    p.kernels = {k};
    return p;
}

TEST(CpuPreamble, GeneratedSourceEmbedsTheHeader) {
    const std::string header = slurp(kHeader);
    ASSERT_FALSE(header.empty()) << kHeader;
    const std::size_t split = header.find(codegen::kLaneSplit);
    ASSERT_NE(split, std::string::npos) << "no per-lane-count part in " << kHeader;
    std::string common = header.substr(0, split);
    const std::string vectors = header.substr(split);
    // The shared scalar helpers stand where the header includes them.
    const std::string include = "#include \"../core/scalar_math.h\"\n";
    const std::size_t at = common.find(include);
    ASSERT_NE(at, std::string::npos);
    common.replace(at, include.size(), slurp(kHeader.parent_path().parent_path() / "core" / "scalar_math.h"));
    // Without vector loops, the scalar part alone.
    const std::string scalar = codegen::generate_cpp(ir::Program{}, 16);
    EXPECT_NE(scalar.find(common), std::string::npos);
    EXPECT_EQ(scalar.find(codegen::kLaneSplit), std::string::npos);
    EXPECT_EQ(scalar.find("#define TOROID_LANES"), std::string::npos);
    for (int lanes : {4, 8, 16}) {
        const std::string src = codegen::generate_cpp(reversing_program(lanes), lanes);
        EXPECT_NE(src.find(common), std::string::npos) << "the library's preamble is not " << kHeader;
        EXPECT_NE(src.find(vectors), std::string::npos) << "the library's preamble is not " << kHeader;
        EXPECT_NE(src.find("#define TOROID_LANES " + std::to_string(lanes) + "\n"), std::string::npos);
        std::string reverse = "#define TOROID_REVERSE ";
        for (int i = lanes - 1; i >= 0; --i) reverse += std::to_string(i) + (i > 0 ? ", " : "\n");
        EXPECT_NE(src.find(reverse), std::string::npos) << reverse;
        EXPECT_LT(src.find(reverse), src.find(vectors)) << "the macros must come before the vector part";
        EXPECT_LT(src.find(common), src.find(reverse));
        EXPECT_NE(src.find("namespace " + codegen::lane_namespace(lanes) + " {"), std::string::npos);
    }
}

// Kernels of different lane counts in one program: the vector part once per count, each
// kernel printed in its count's namespace, and the source compiles.
TEST(CpuPreamble, KernelsOfTwoLaneCountsShareASource) {
    ir::Program p = reversing_program(64);
    const ir::Kernel k = p.kernels[0];
    ir::Kernel k2 = k;
    k2.name = "words";
    k2.cpu().vector_width = 16;
    k2.value = ir::sat_cast(ir::Type::U8, ir::add(ir::cast(ir::Type::I32, k.value), ir::iconst(1, ir::Type::I32)));
    p.kernels = {k, k2};
    const std::string src = codegen::generate_cpp(p, 16);
    for (int n : {16, 64}) {
        const std::string ns = codegen::lane_namespace(n);
        const std::size_t def = src.find("#define TOROID_LANES " + std::to_string(n) + "\n");
        ASSERT_NE(def, std::string::npos);
        EXPECT_LT(def, src.find("namespace " + ns + " {\n"));
        EXPECT_NE(src.find("    " + ns + "::" + (n == 64 ? "bytes" : "words") + "(buffers, params, threads);"), std::string::npos)
            << src;
    }
    const std::string header = slurp(kHeader);
    const std::string vectors = header.substr(header.find(codegen::kLaneSplit));
    const std::size_t first = src.find(vectors);
    ASSERT_NE(first, std::string::npos);
    EXPECT_NE(src.find(vectors, first + 1), std::string::npos) << "the vector part once per lane count";
    const fs::path cache = fs::path(::testing::TempDir()) / ("toroid_two_counts_" + std::to_string(::getpid()));
    fs::remove_all(cache);
    CompilerConfig c;
    c.cxx = TOROID_CXX_COMPILER;
    c.optimization_flags = {"-O2", "-march=native"};
    c.extra_flags = {"-fopenmp"};
    c.cache_dir = cache;
    // The module brings in OpenMP's runtime: keep it loaded for the process, as the compiled
    // engine does (engine/compiled.cpp), so that unloading the module does not unload it
    // with what it allocated when it started.
    ASSERT_NE(::dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE), nullptr);
    JitCompiler jit(c);
    auto module = jit.load(src, codegen::kEntryPoint);
    using Entry = void (*)(void* const*, const std::int64_t*, int);
    std::vector<std::uint8_t> a(4 * 100), b(4 * 100, 0);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<std::uint8_t>(i * 7 + 3);
    void* bufs[] = {a.data(), b.data()};
    const std::int64_t params[] = {100, 400};
    module->lookup<Entry>(codegen::kEntryPoint)(bufs, params, 1);
    // The second kernel wrote last: each row reversed, plus one (saturating).
    int bad = 0;
    for (int h = 0; h < 4; ++h)
        for (int w = 0; w < 100; ++w) {
            const int x = a[static_cast<std::size_t>(h * 100 + 99 - w)] + 1;
            bad += b[static_cast<std::size_t>(h * 100 + w)] != (x > 255 ? 255 : x);
        }
    EXPECT_EQ(bad, 0);
    fs::remove_all(cache);
}

// Checks the preamble's builtin-based helpers against plain scalar code inside the compiled
// module: returns the number of lanes or values that differ.
const std::string kCheck = R"(
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <sys/mman.h>
#include <unistd.h>
extern "C" int check_gathers() {
    float f[97];
    std::int32_t d[97];
    for (int i = 0; i < 97; ++i) {
        f[i] = static_cast<float>(i) * 1.25f - 40.0f;
        d[i] = i * 7919 - 300000;
    }
    int bad = 0;
    for (int start = 0; start < 5; ++start) {
        vec<std::int32_t> off;
        for (int i = 0; i < kLanes; ++i) off[i] = (start * 13 + i * 37) % 97;
        const vec<float> gf = gather_v(f, off);
        const vec<std::int32_t> gd = gather_v(d, off);
        for (int i = 0; i < kLanes; ++i) bad += gf[i] != f[off[i]] || gd[i] != d[off[i]];
    }
    return bad;
}
// Byte gathers as 4-byte words: of a buffer ending where an unreadable page begins, every
// lane (the first and last 3 bytes included) gives its byte and nothing faults; under 4
// bytes, byte by byte. And of a buffer with 3 bytes to spare.
extern "C" int check_word_gathers() {
    const long page = sysconf(_SC_PAGESIZE);
    char* m = static_cast<char*>(mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (m == MAP_FAILED || mprotect(m + page, page, PROT_NONE) != 0) return 1000;
    int bad = 0;
    for (int n : {1, 3, 4, 5, 17, 100, 4096}) {
        std::uint8_t* p = reinterpret_cast<std::uint8_t*>(m + page - n);
        for (int i = 0; i < n; ++i) p[i] = static_cast<std::uint8_t>(i * 31 + 7);
        for (int start = 0; start < 7; ++start) {
            vec<std::int32_t> off;
            for (int i = 0; i < kLanes; ++i) off[i] = (start * 11 + i * 5) % n;
            off[0] = n - 1;
            if (kLanes > 3) {
                off[1] = n > 1 ? n - 2 : 0;
                off[2] = n > 2 ? n - 3 : 0;
                off[3] = 0;
            }
            const vec<std::uint8_t> g = gather_bytes_bounded_v(p, off, n);
            for (int i = 0; i < kLanes; ++i) bad += g[i] != p[off[i]];
            if (n >= 4 && n + 3 <= page) {
                // The same bytes 3 before the page's end: gather_bytes_v may read 3 past each.
                const std::uint8_t* q = reinterpret_cast<const std::uint8_t*>(m + page - n - 3);
                std::memmove(const_cast<std::uint8_t*>(q), p, static_cast<std::size_t>(n));
                const vec<std::uint8_t> w = gather_bytes_v(q, off);
                for (int i = 0; i < kLanes; ++i) bad += w[i] != q[off[i]];
                for (int i = 0; i < n; ++i) p[i] = static_cast<std::uint8_t>(i * 31 + 7);
            }
        }
    }
    munmap(m, 2 * page);
    return bad;
}
// The 16-bit product of mul16_v and its accumulating form dp16_v (vpdpwssd with
// AVX512-VNNI) against int32 arithmetic, extremes included.
extern "C" int check_dp16() {
    int bad = 0;
    std::uint32_t seed = 12345;
    auto next = [&] { seed = seed * 1664525u + 1013904223u; return seed >> 8; };
    for (int round = 0; round < 50; ++round) {
        vec<std::int32_t> acc, a, b;
        for (int i = 0; i < kLanes; ++i) {
            acc[i] = static_cast<std::int32_t>(next()) - (1 << 23);
            a[i] = round == 0 ? 32767 : static_cast<std::int32_t>(next() % 32768);
            b[i] = round == 0 ? (i % 2 ? -32768 : 32767) : static_cast<std::int32_t>(next() % 65536) - 32768;
        }
        const vec<std::int32_t> m = mul16_v(a, b), d = dp16_v(acc, a, b);
        for (int i = 0; i < kLanes; ++i) {
            bad += m[i] != a[i] * b[i];
            bad += d[i] != static_cast<std::int32_t>(static_cast<std::uint32_t>(acc[i]) + static_cast<std::uint32_t>(a[i] * b[i]));
        }
    }
    return bad;
}
extern "C" int check_math() {
    const float xs[] = {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, -0.0f, 3.7f, -3.7f, 8388609.0f, -1e30f};
    int bad = 0;
    for (float x : xs) {
        bad += t_floor(x) != std::floor(x) || t_round_even(x) != std::nearbyint(x) || t_fabs(x) != std::fabs(x);
        bad += t_floor(static_cast<double>(x)) != std::floor(static_cast<double>(x));
        bad += t_round_even(static_cast<double>(x)) != std::nearbyint(static_cast<double>(x));
        const float a = x * 1.1f, b = 0.3f;
        bad += t_fma(a, b, x) != std::fma(a, b, x);
        bad += t_fma(static_cast<double>(a), 0.1, static_cast<double>(x)) != std::fma(static_cast<double>(a), 0.1, static_cast<double>(x));
    }
    // fma_v rounds once per lane in the lanes' own type, as std::fma(float, float, float).
    vec<float> a, b, c;
    for (int i = 0; i < kLanes; ++i) {
        a[i] = 1.0f + 0x1p-23f * static_cast<float>(i + 1);
        b[i] = 1.0f - 0x1p-23f * static_cast<float>(i + 1);
        c[i] = -1.0f;
    }
    const vec<float> r = fma_v(a, b, c);
    for (int i = 0; i < kLanes; ++i) bad += r[i] != std::fma(a[i], b[i], c[i]);
    bad += !(NAN != NAN) || !(INFINITY > 3.4e38f) || !std::isinf(INFINITY);
    return bad;
}
)";

// The byte helpers (window gathers, strided byte gathers, interleaved stores, widening
// conversions) against plain loops: spans within one window, two and four groups and
// lane by lane, windows that end at the last byte of an exactly sized buffer.
const std::string kCheckBytes = R"(
#include <initializer_list>
extern "C" int check_bytes() {
    const int n = 4096;
    std::uint8_t* buf = new std::uint8_t[n];
    for (int i = 0; i < n; ++i) buf[i] = static_cast<std::uint8_t>(i * 37 + 11);
    int bad = 0;
    int two_groups = 0;  // windows in two groups seen (scale 9, 15 with a byte permute)
    for (int scale : {0, 1, 3, 7, 9, 15, 40, 300}) {
        vec<std::int32_t> off;
        for (int i = 0; i < kLanes; ++i) off[i] = (i * scale + (i % 3)) % 2000;
        for (int base : {0, 7, n - 2000}) {
            const lane_window<1> w = window_u8(off);
            const std::uint8_t* p = buf + base + w.first;
            const vec<std::uint8_t> g = gather_window(p, w);
            for (int i = 0; i < kLanes; ++i) bad += g[i] != buf[base + off[i]];
            if (w.groups == 1) {
                const vec<std::uint8_t> g1 = gather_window1(p, w);
                for (int i = 0; i < kLanes; ++i) bad += g1[i] != buf[base + off[i]];
            }
            if (w.groups == 2) {
                const vec<std::uint8_t> g2 = gather_window2(p, w);
                for (int i = 0; i < kLanes; ++i) bad += g2[i] != buf[base + off[i]];
                ++two_groups;
            }
            const window_table<1> t(3);
            t[2] = w;
            const vec<std::uint8_t> gt = gather_window(p, t[2]);
            for (int i = 0; i < kLanes; ++i) bad += gt[i] != buf[base + off[i]];
        }
    }
    if (kWindowPermute<1> && kLanes == 16) bad += two_groups == 0;
#if defined(TOROID_TAP_LANES)
    // Taps in lanes: each of a step's pixels its own 1..T taps of C channels, read inside a
    // page and ending at a page's last byte (the copy, not the 16-byte read), multiplied
    // with its own weights laid out by t_tap_lanes_weight, against the plain sums, each
    // pixel in its own lanes of the step's sum.
    {
        constexpr int P = kTapLanesPixels, T = 2 * P;
        std::uint8_t* pages = static_cast<std::uint8_t*>(__builtin_malloc(3 * 4096 + 4096));
        std::uint8_t* page = reinterpret_cast<std::uint8_t*>((reinterpret_cast<std::uintptr_t>(pages) + 4095) & ~std::uintptr_t{4095});
        for (int i = 0; i < 3 * 4096; ++i) page[i] = static_cast<std::uint8_t>(i * 29 + 3);
        for (int c : {3, 4}) {
            const t_tap_lanes tl = t_make_tap_lanes(c);
            for (int taps = 1; taps <= T; ++taps)
                for (int last = 0; last < 2; ++last) {
                    const std::uint8_t* px[P];
                    std::int16_t w[P][kTapLanesWeights] = {};
                    vec<std::int32_t> acc[P];
                    for (int j = 0; j < P; ++j) {
                        // Pixel P - 1 ends at the page's last byte in the second round.
                        px[j] = last && j == P - 1 ? page + 2 * 4096 - c * taps : page + 100 + 37 * j;
                        for (int r = 0; r < taps; ++r) t_tap_lanes_weight(w[j], r, static_cast<std::int16_t>(r * 97 - 120 + 31 * j));
                        // Whole loads (inside the page; the masked load at its end) for odd
                        // tap counts.
                        acc[j] = taps % 2 ? t_tap_lanes_madd<true>(vec<std::int32_t>{}, px[j], t_tap_lanes_span(taps * c), tl, w[j])
                                          : t_tap_lanes_madd(vec<std::int32_t>{}, px[j], t_tap_lanes_span(taps * c), tl, w[j]);
                    }
#if TOROID_LANES == 16
                    const vec<std::int32_t> sum = t_tap_lanes_sum4(acc[0], acc[1], acc[2], acc[3]);
#else
                    const vec<std::int32_t> sum = t_tap_lanes_sum2(acc[0], acc[1]);
#endif
                    for (int j = 0; j < P; ++j)
                        for (int ch = 0; ch < c; ++ch) {
                            int want = 0;
                            for (int r = 0; r < taps; ++r) want += (r * 97 - 120 + 31 * j) * px[j][r * c + ch];
                            bad += sum[t_tap_lanes_lane(j, ch)] != want;
                        }
                }
        }
        __builtin_free(pages);
    }
#endif
    // One read per tap shared by gathers 0..2 bytes apart (3-byte pixels), with windows
    // whose span leaves room for the slack and windows it nearly fills (each gather reads
    // its own window then), in one and two groups.
    int unshared = 0;  // windows the slack did not fit (stride 18: two groups of span 127; 0: one of 127)
    for (int stride : {0, 3, 6, 8, 9, 17, 18}) {
        vec<std::int32_t> off;
        for (int i = 0; i < kLanes; ++i) off[i] = stride == 0 ? (i == kLanes - 1 ? 126 : 3 * i) : 3 * ((i * stride) / 3);
        for (int base : {0, 5, n - 3 * (kLanes * 17) - 3}) {
            const lane_window<1> w = make_window<1>(off, 2);
            const std::uint8_t* p = buf + base + w.first;
#if defined(TOROID_BYTE_PERMUTE)
            unshared += w.groups > 0 && !w.shared;
#endif
            if (w.groups == 1 || w.groups == 2) {
                const t_window_reads r = w.groups == 1 ? read_window1(p, w) : read_window2(p, w);
                for (int k = 0; k < 3; ++k) {
                    const vec<std::uint8_t> g = w.groups == 1 ? pick_window1(r, w, k) : pick_window2(r, w, k);
                    for (int i = 0; i < kLanes; ++i) bad += g[i] != buf[base + off[i] + k];
                    // The same widened to int32 lanes, from the shared read and from p + k.
                    const vec<std::int32_t> g32 = w.groups == 1 ? pick_window_u32<1>(r, w, k) : pick_window_u32<2>(r, w, k);
                    const vec<std::int32_t> d32 = w.groups == 1 ? gather_window_u32<1>(p + k, w) : gather_window_u32<2>(p + k, w);
                    for (int i = 0; i < kLanes; ++i) bad += g32[i] != buf[base + off[i] + k] || d32[i] != buf[base + off[i] + k];
                }
            }
        }
    }
#if defined(TOROID_BYTE_PERMUTE)
    if (kWindowPermute<1> && kLanes == 16) bad += unshared == 0;
#endif
    (void)unshared;
    // 16-bit products into int32 (mul16_v): a in [0, 32767] times b in [-32768, 32767].
    {
        const int as[] = {0, 1, 255, 32767}, bs[] = {-32768, -32767, -1, 0, 1, 255, 32767};
        vec<std::int32_t> a, b;
        for (int i = 0; i < kLanes; ++i) {
            a[i] = as[i % 4];
            b[i] = bs[(i / 4 + i) % 7];
        }
        const vec<std::int32_t> r = mul16_v(a, b);
        for (int i = 0; i < kLanes; ++i) bad += r[i] != a[i] * b[i];
    }
    // The last window of the buffer: its lanes' highest byte is the buffer's last.
    {
        vec<std::int32_t> off;
        for (int i = 0; i < kLanes; ++i) off[i] = n - 1 - 5 * (kLanes - 1 - i);
        const lane_window<1> w = window_u8(off);
        const vec<std::uint8_t> g = gather_window(buf + w.first, w);
        for (int i = 0; i < kLanes; ++i) bad += g[i] != buf[off[i]];
    }
    // Windows of bytes ending where an unreadable page begins: every span and place, and the
    // strided byte reads (forwards and backwards) the same; nothing faults.
    {
        const long page = sysconf(_SC_PAGESIZE);
        char* m = static_cast<char*>(mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        if (m == MAP_FAILED || mprotect(m + page, page, PROT_NONE) != 0) return 1000;
        std::uint8_t* end = reinterpret_cast<std::uint8_t*>(m + page);
        for (long i = 0; i < page; ++i) end[i - page] = static_cast<std::uint8_t>(i * 13 + 5);
        for (int scale = 0; scale <= 5; ++scale) {
            for (int back = 0; back < 8; ++back) {
                vec<std::int32_t> off;  // the highest lane reads the page's last byte minus `back`
                for (int i = 0; i < kLanes; ++i) off[i] = -1 - back - (kLanes - 1 - i) * scale / 2;
                const lane_window<1> w = window_u8(off);
                const vec<std::uint8_t> g = gather_window(end + w.first, w);
                for (int i = 0; i < kLanes; ++i) bad += g[i] != end[off[i]];
            }
        }
        for (int stride : {1, 2, 3, 4, -1, -2, -4}) {
            for (int back = 0; back < 4; ++back) {
                const int a = stride > 0 ? stride : -stride;
                const std::uint8_t* p = stride > 0 ? end - 1 - back - (kLanes - 1) * a : end - 1 - back;
                const vec<std::uint8_t> g = gather_stride_v(p, stride);
                for (int i = 0; i < kLanes; ++i) bad += g[i] != p[i * stride];
            }
        }
        // Words through windows, the last one the page's last word.
        const std::int32_t* wend = reinterpret_cast<const std::int32_t*>(end);
        for (int scale = 0; scale <= 4; ++scale) {
            vec<std::int32_t> off;
            for (int i = 0; i < kLanes; ++i) off[i] = -1 - (kLanes - 1 - i) * scale / 2;
            const lane_window<4> w = make_window<4>(off);
            const vec<std::int32_t> g = gather_window(wend + w.first, w);
            for (int i = 0; i < kLanes; ++i) bad += g[i] != wend[off[i]];
            if (kWindowPermute<4> && scale <= 2) bad += w.groups != 1;  // read through a window
        }
        munmap(m, 2 * page);
    }
    // 4-byte words through windows of 32.
    std::int32_t* words = new std::int32_t[n];
    for (int i = 0; i < n; ++i) words[i] = i * 7919 - 5;
    for (int scale : {0, 1, 2, 3, 7, 9, 40}) {
        vec<std::int32_t> off;
        for (int i = 0; i < kLanes; ++i) off[i] = n - 1 - (kLanes - 1 - i) * scale - (i % 2);
        const lane_window<4> w = make_window<4>(off);
        const vec<std::int32_t> g = gather_window(words + w.first, w);
        for (int i = 0; i < kLanes; ++i) bad += g[i] != words[off[i]];
        if (w.groups == 1) {
            const vec<std::int32_t> g1 = gather_window1(words + w.first, w);
            for (int i = 0; i < kLanes; ++i) bad += g1[i] != words[off[i]];
        }
        const vec<float> gf = gather_window(reinterpret_cast<const float*>(words) + w.first, w);
        const vec<std::int32_t> gi = reinterpret_cast<const vec<std::int32_t>&>(gf);
        for (int i = 0; i < kLanes; ++i) bad += gi[i] != words[off[i]];
    }
    delete[] words;
    // A reversed full-width load: one load and a lane reverse.
    {
        const vec<std::uint8_t> r = reverse_v(load_v(buf + 5));
        for (int i = 0; i < kLanes; ++i) bad += r[i] != buf[5 + kLanes - 1 - i];
    }
    // Windows whose lanes run backwards through 3-byte pixels (a channels-last flip).
    for (int phase = 0; phase < 3; ++phase) {
        vec<std::int32_t> off;
        for (int i = 0; i < kLanes; ++i) off[i] = 3000 - 3 * ((phase + i) / 3) + (phase + i) % 3;
        const lane_window<1> w = window_u8(off);
        const vec<std::uint8_t> g = gather_window_any(buf + w.first, w);
        for (int i = 0; i < kLanes; ++i) bad += g[i] != buf[off[i]];
        // One window where the lanes' span (up to kLanes + 2 bytes) fits in one, else groups.
        if (kWindowPermute<1>) bad += kLanes + 2 <= lane_window<1>::kSpan ? w.groups != 1 : w.groups == 0;
    }
    for (int stride = -9; stride <= 9; ++stride) {
        const std::uint8_t* p = stride < 0 ? buf + n - 1 : buf;
        const vec<std::uint8_t> g = gather_stride_v(p, stride);
        for (int i = 0; i < kLanes; ++i) bad += g[i] != p[i * stride];
    }
    for (int c = 3; c <= 4; ++c) {
        std::uint8_t out[4 * 64 + 8];
        for (auto& x : out) x = 0xA5;
        vec<std::uint8_t> a, b, d, e;
        for (int i = 0; i < kLanes; ++i) {
            a[i] = static_cast<std::uint8_t>(i);
            b[i] = static_cast<std::uint8_t>(100 + i);
            d[i] = static_cast<std::uint8_t>(200 + i);
            e[i] = static_cast<std::uint8_t>(50 + i);
        }
        if (c == 3) store_interleaved(out + 1, a, b, d);
        else store_interleaved(out + 1, a, b, d, e);
        bad += out[0] != 0xA5 || out[1 + kLanes * c] != 0xA5;
        for (int i = 0; i < kLanes; ++i) {
            bad += out[1 + i * c] != a[i] || out[2 + i * c] != b[i] || out[3 + i * c] != d[i];
            if (c == 4) bad += out[4 + i * c] != e[i];
        }
    }
    for (int c = 3; c <= 4; ++c) {
        float out[4 * 64 + 2];
        for (auto& x : out) x = -7.0f;
        vec<float> a, b, d, e;
        for (int i = 0; i < kLanes; ++i) {
            a[i] = static_cast<float>(i) + 0.5f;
            b[i] = 100.0f + static_cast<float>(i);
            d[i] = -200.0f - static_cast<float>(i);
            e[i] = 1e6f * static_cast<float>(i);
        }
        if (c == 3) store_interleaved(out + 1, a, b, d);
        else store_interleaved(out + 1, a, b, d, e);
        bad += out[0] != -7.0f || out[1 + kLanes * c] != -7.0f;
        for (int i = 0; i < kLanes; ++i) {
            bad += out[1 + i * c] != a[i] || out[2 + i * c] != b[i] || out[3 + i * c] != d[i];
            if (c == 4) bad += out[4 + i * c] != e[i];
        }
    }
    vec<std::uint8_t> u;
    vec<std::int16_t> h;
    vec<std::int32_t> big;
    for (int i = 0; i < kLanes; ++i) {
        u[i] = static_cast<std::uint8_t>(255 - i * 7);
        h[i] = static_cast<std::int16_t>(-30000 + i * 4001);
        big[i] = -300 + i * 97;
    }
    const vec<std::int32_t> ui = to_v<vec<std::int32_t>>(u), hi = to_v<vec<std::int32_t>>(h);
    const vec<float> uf = to_v<vec<float>>(u), hf = to_v<vec<float>>(h);
    const vec<std::uint8_t> sat = sat_v<std::uint8_t>(big);
    for (int i = 0; i < kLanes; ++i) {
        bad += ui[i] != u[i] || hi[i] != h[i] || uf[i] != static_cast<float>(u[i]) || hf[i] != static_cast<float>(h[i]);
        bad += sat[i] != (big[i] < 0 ? 0 : big[i] > 255 ? 255 : big[i]);
    }
    // Every integer conversion, widening and narrowing (truncating, as static_cast does),
    // and integers to float, lane by lane against the scalar cast.
    auto convert_all = [&](auto from) {
        using S = decltype(from);
        vec<S> x;
        for (int i = 0; i < kLanes; ++i) x[i] = static_cast<S>(static_cast<std::uint32_t>(0x9e3779b9u * static_cast<std::uint32_t>(i + 1)) >> (i % 5));
        auto check = [&](auto to) {
            using D = decltype(to);
            const vec<D> y = to_v<vec<D>>(x);
            for (int i = 0; i < kLanes; ++i) bad += y[i] != static_cast<D>(x[i]);
        };
        check(std::uint8_t{}), check(std::int8_t{}), check(std::uint16_t{}), check(std::int16_t{});
        check(std::int32_t{}), check(std::uint32_t{}), check(float{});
    };
    convert_all(std::uint8_t{}), convert_all(std::int8_t{}), convert_all(std::uint16_t{});
    convert_all(std::int16_t{}), convert_all(std::int32_t{}), convert_all(std::uint32_t{});
    // Floats and doubles to narrow integers (through 32-bit lanes): truncation toward zero,
    // then the low bytes, as a scalar cast through int32 gives; fractions, negatives and
    // values past the narrow type's range (within int32's).
    auto convert_floats = [&](auto from) {
        using S = decltype(from);
        vec<S> x;
        for (int i = 0; i < kLanes; ++i) x[i] = static_cast<S>(-70000.75 + i * 9371.37) * (i % 3 == 0 ? 0.001 : 1.0);
        auto check = [&](auto to) {
            using D = decltype(to);
            const vec<D> y = to_v<vec<D>>(x);
            for (int i = 0; i < kLanes; ++i) bad += y[i] != static_cast<D>(static_cast<std::int32_t>(x[i]));
        };
        check(std::uint8_t{}), check(std::int8_t{}), check(std::uint16_t{}), check(std::int16_t{});
    };
    convert_floats(float{}), convert_floats(double{});
    delete[] buf;
    return bad;
}
)";

// The float16 / bfloat16 conversions, scalar and vector, against core/half.h's (the
// compiler's own): every 16-bit pattern widened, and floats narrowed — every exponent with
// a spread of significands (ties, the subnormal range, overflow to inf, NaN) — bit for bit
// (NaNs: any NaN).
const std::string kCheckNarrow = R"(
extern "C" int check_narrow() {
    int bad = 0;
    auto same = [](float a, float b) { return (a != a && b != b) || std::memcmp(&a, &b, 4) == 0; };
    for (std::uint32_t b = 0; b < 65536; b += kLanes) {
        vec<std::uint16_t> h;
        for (int i = 0; i < kLanes; ++i) h[i] = static_cast<std::uint16_t>(b + static_cast<std::uint32_t>(i));
        const vec<float> fh = t_f16_to_f32_v(h), fb = t_bf16_to_f32_v(h);
        for (int i = 0; i < kLanes; ++i) {
            bad += !same(fh[i], toroid::half_bits_to_float(h[i])) + !same(t_f16_to_f32(h[i]), toroid::half_bits_to_float(h[i]));
            bad += !same(fb[i], toroid::bfloat16_bits_to_float(h[i])) + !same(t_bf16_to_f32(h[i]), toroid::bfloat16_bits_to_float(h[i]));
        }
    }
    auto nan16 = [](std::uint16_t x, std::uint16_t mask) { return (x & 0x7fffu) > mask; };
    for (std::uint32_t e = 0; e < 512; ++e) {
        for (std::uint32_t k = 0; k < 512; k += static_cast<std::uint32_t>(kLanes)) {
            std::uint32_t u[64];
            float fs[64];
            for (int i = 0; i < kLanes; ++i) {
                const std::uint32_t m = (k + static_cast<std::uint32_t>(i)) * 0x3fffu % 0x800000u;  // spread significands
                const std::uint32_t tie = (k + static_cast<std::uint32_t>(i)) % 7 == 0 ? 0x1000u : 0u;
                u[i] = (e << 23) | ((m & ~0x1fffu) | tie);  // ties to even at float16's last place
                std::memcpy(&fs[i], &u[i], 4);
            }
            const vec<float> f = load_v(fs);
            const vec<std::uint16_t> h = t_f32_to_f16_v(f), b = t_f32_to_bf16_v(f);
            for (int i = 0; i < kLanes; ++i) {
                const std::uint16_t wh = toroid::float_to_half_bits(f[i]), wb = toroid::float_to_bfloat16_bits(f[i]);
                const bool fnan = f[i] != f[i];
                bad += fnan ? !(nan16(h[i], 0x7c00) && nan16(t_f32_to_f16(f[i]), 0x7c00)) : (h[i] != wh) + (t_f32_to_f16(f[i]) != wh);
                bad += fnan ? !(nan16(b[i], 0x7f80) && nan16(t_f32_to_bf16(f[i]), 0x7f80)) : (b[i] != wb) + (t_f32_to_bf16(f[i]) != wb);
            }
        }
    }
    return bad;
}
)";

using jit_test::Variant;

// The widths whose hardware gathers this machine can run, plus a width without them.
std::vector<Variant> runnable_variants() {
    using F = CpuFeature;
    std::vector<Variant> v = {{4, {}}, {32, {}}};
#if defined(__x86_64__) || defined(__i386__)
    v.push_back({8, {F::Avx2}});
    v.push_back({16, {F::Avx2}});  // AVX2 byte windows at 8, 16 and 32 lanes
    v.push_back({32, {F::Avx2}});
    v.push_back({16, {F::Avx512F}});
    v.push_back({8, {F::Avx512F}});    // AVX-512 compiler, 8 lanes: the AVX2 gather
    v.push_back({16, {F::Avx512Vbmi}});  // the byte permutes
    v.push_back({64, {F::Avx512Vbmi}});  // a register of bytes
    v.push_back({16, {F::Avx512Vbmi, F::Avx512VL}});  // 32-byte masked loads (taps in lanes)
    v.push_back({16, {F::Avx512BW, F::Avx512Vnni}});  // vpdpwssd
    // Features the compiler has but the target does not (its code runs where the compiler's
    // do): the preamble keeps to the target's.
    if (CpuFeatures::host().contains({F::Avx512Vbmi}))
        v.push_back({16, {F::Avx2}, {"-mavx512f", "-mavx512bw", "-mavx512vbmi"}});
#endif
    return jit_test::runnable(std::move(v));
}

void check_with(const std::string& cxx, const fs::path& cache) {
    for (const Variant& v : runnable_variants()) {
        SCOPED_TRACE(cxx + " " + v.name());
        CompilerConfig c;
        c.cxx = cxx;
        c.optimization_flags = {"-O2"};
        c.extra_flags = v.flags();
        c.cache_dir = cache;
        JitCompiler jit(c);
        std::string src = v.prefix() + "#include \"" + kHeader.string() + "\"\n#include \"" +
               (kHeader.parent_path().parent_path() / "core" / "half.h").string() + "\"\n" + kCheck + kCheckBytes +
               kCheckNarrow;
        auto module = jit.load(src, "check_gathers");
        EXPECT_EQ(module->lookup<int (*)()>("check_gathers")(), 0);
        EXPECT_EQ(module->lookup<int (*)()>("check_math")(), 0);
        EXPECT_EQ(module->lookup<int (*)()>("check_word_gathers")(), 0);
        EXPECT_EQ(module->lookup<int (*)()>("check_dp16")(), 0);
        EXPECT_EQ(module->lookup<int (*)()>("check_bytes")(), 0);
        EXPECT_EQ(module->lookup<int (*)()>("check_narrow")(), 0);
    }
}

class CpuPreambleCompile : public ::testing::Test {
protected:
    void SetUp() override {
        cache_ = fs::path(::testing::TempDir()) /
                 ("toroid_preamble_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) +
                  "_" + std::to_string(::getpid()));
        fs::remove_all(cache_);
    }
    void TearDown() override { fs::remove_all(cache_); }
    fs::path cache_;
};

TEST_F(CpuPreambleCompile, BuiltinsMatchScalarCode) { check_with(TOROID_CXX_COMPILER, cache_); }

TEST_F(CpuPreambleCompile, BuiltinsMatchScalarCodeUnderClang) {
    if (!on_path("clang++")) GTEST_SKIP() << "clang++ is not installed";
    check_with("clang++", cache_);
}

}  // namespace
}  // namespace toroid
