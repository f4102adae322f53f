// Target descriptions: the host CPU's vector width, read once.
#include "schedule/target.h"

#include "core/error.h"

#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <vector>

namespace toroid::schedule {

int Target::lanes(ir::Type t) const {
    if (kind != TargetKind::Cpu) return 1;
    return std::max(1, vector_bytes / static_cast<int>(ir::type_bytes(t)));
}

std::string Target::name() const {
    if (kind == TargetKind::Cuda) return fmt::format("cuda {} ({} threads a block)", arch, block_threads);
    if (!explicit_vectors) return "cpu (scalar loops)";
    return fmt::format("cpu ({}-byte vectors{}{})", vector_bytes,
                       byte_permute   ? ", byte permute"
                       : byte_windows ? ", byte windows"
                                      : "",
                       word_gather ? ", word gather" : "");
}

std::string Target::isa_level() const {
    if (kind != TargetKind::Cpu) fail("internal: isa_level() of a {} target", name());
    if (vector_bytes == 64) return byte_permute ? "x86-64-v4-vbmi-vnni" : "x86-64-v4";
    return "x86-64-v3";
}

Target Target::scalar() const {
    Target t = *this;
    t.explicit_vectors = false;
    t.byte_permute = false;
    t.byte_windows = false;
    t.tap_pairs = false;
    t.tap_lanes_span = -1;
    return t;
}

Target Target::cuda(const std::string& arch) {
    Target t;
    t.kind = TargetKind::Cuda;
    t.vector_bytes = 4;
    t.arch = arch;
    return t;
}

namespace {

// $TOROID_CPU_TARGET: the CPU code is generated for a named feature set instead of the one
// this process runs on, to read (or compile, with a matching $TOROID_CXXFLAGS -march) the
// source another machine would get. Running it needs a CPU that has those features.
std::optional<Target> named_cpu_target(std::string_view name) {
    Target t;
    t.kind = TargetKind::Cpu;
    t.word_gather = true;
    if (name == "avx2") t.vector_bytes = 32, t.tap_lanes_span = Target::kTapLanesSpanAvx2;
    else if (name == "avx512") t.vector_bytes = 64;
    else if (name == "avx512vbmi") t.vector_bytes = 64, t.byte_permute = true;
    else if (name == "zen4") t.vector_bytes = 64, t.byte_permute = true, t.tap_lanes_past_window = true;
    else return std::nullopt;
    t.byte_tables = t.byte_permute;
    t.byte_windows = t.byte_permute || t.vector_bytes == 32;
    return t;
}

}  // namespace

Target Target::host_cpu() {
    Target t;
    t.kind = TargetKind::Cpu;
    t.vector_bytes = 32;
    if (const char* n = std::getenv("TOROID_CPU_TARGET"); n != nullptr && *n != '\0' && std::string_view(n) != "host") {
        auto named = named_cpu_target(n);
        if (!named) fail("TOROID_CPU_TARGET='{}' is not one of host, avx2, avx512, avx512vbmi, zen4", printable(n));
        t = *named;
        t.named = true;
        // The features its code may use; running it elsewhere is an illegal instruction.
        std::vector<const char*> lacking;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_cpu_init();
        if (!__builtin_cpu_supports("avx2")) lacking.push_back("avx2");
        if (t.vector_bytes == 64 && !__builtin_cpu_supports("avx512f")) lacking.push_back("avx512f");
        if (t.vector_bytes == 64 && !__builtin_cpu_supports("avx512bw")) lacking.push_back("avx512bw");
        if (t.byte_permute && !__builtin_cpu_supports("avx512vbmi")) lacking.push_back("avx512vbmi");
#else
        lacking.push_back("x86-64");
#endif
        if (!lacking.empty())
            t.cannot_run = fmt::format("TOROID_CPU_TARGET={} generates code for a CPU with {}, which this one lacks",
                                       printable(n), fmt::join(lacking, ", "));
    } else {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx512f")) t.vector_bytes = 64;
        t.byte_permute = t.vector_bytes == 64 && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vbmi");
        t.byte_tables = t.byte_permute;
        t.word_gather = t.vector_bytes == 64 || __builtin_cpu_supports("avx2");
        // The preamble's 32-byte windows: AVX2 code (-march=native without AVX-512).
        t.byte_windows = t.byte_permute || (t.vector_bytes == 32 && __builtin_cpu_supports("avx2"));
        // AMD's Zen 4 runs the vector loop's window permutes faster than taps in lanes
        // while one tap of 16 outputs fits one window, and slower past it.
        if (__builtin_cpu_is("amd") && t.vector_bytes == 64) t.tap_lanes_past_window = true;
        if (t.vector_bytes == 32) t.tap_lanes_span = kTapLanesSpanAvx2;
#endif
    }
    if (const char* m = std::getenv("TOROID_TAP_LANES_SPAN"); m != nullptr && *m != '\0') {
        t.tap_lanes_span = std::atoi(m);
        t.tap_lanes_past_window = false;
    }
    const char* pairs = std::getenv("TOROID_TAP_PAIRS");
    t.tap_pairs = pairs != nullptr && std::string_view(pairs) == "1";
    return t;
}

}  // namespace toroid::schedule
