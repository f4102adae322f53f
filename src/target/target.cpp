// Target descriptions: the host CPU's features and the choices made from them.
#include "target/target.h"

#include "target/isa_level.h"

#include "core/error.h"

#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <vector>

namespace toroid {

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
    return isa_level_of(features).name;
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
std::optional<CpuFeatures> named_cpu_features(std::string_view name) {
    if (name == "avx2") return CpuFeatures::x86_64_v3();
    if (name == "avx512") return CpuFeatures::x86_64_v4();
    if (name == "avx512vbmi" || name == "zen4")
        return CpuFeatures::x86_64_v4() | CpuFeatures{CpuFeature::Avx512Vbmi, CpuFeature::Avx512Vnni};
    return std::nullopt;
}

// The scheduling choices a CPU of `features` gets.
Target cpu_target(const CpuFeatures& features) {
    Target t;
    t.kind = TargetKind::Cpu;
    t.features = features;
    t.vector_bytes = features.contains(CpuFeatures::x86_64_v4()) ? 64 : 32;
    t.byte_permute = t.vector_bytes == 64 && features.has(CpuFeature::Avx512Vbmi);
    t.byte_tables = t.byte_permute;
    t.word_gather = features.has(CpuFeature::Avx2);
    // The preamble's 32-byte windows: two in-lane byte shuffles and a blend (AVX2).
    t.byte_windows = t.byte_permute || (t.vector_bytes == 32 && features.has(CpuFeature::Avx2));
    if (t.vector_bytes == 32 && features.has(CpuFeature::Avx2)) t.tap_lanes_span = Target::kTapLanesSpanAvx2;
    return t;
}

}  // namespace

Target Target::host_cpu() {
    Target t;
    const CpuFeatures host = CpuFeatures::host();
    if (const char* n = std::getenv("TOROID_CPU_TARGET"); n != nullptr && *n != '\0' && std::string_view(n) != "host") {
        auto named = named_cpu_features(n);
        if (!named) fail("TOROID_CPU_TARGET='{}' is not one of host, avx2, avx512, avx512vbmi, zen4", printable(n));
        t = cpu_target(*named);
        t.tap_lanes_past_window = std::string_view(n) == "zen4";
        t.named = true;
        // The features its code may use; running it elsewhere is an illegal instruction.
        if (const CpuFeatures lacking = named->minus(host); !lacking.empty())
            t.cannot_run = fmt::format("TOROID_CPU_TARGET={} generates code for a CPU with {}, which this one lacks",
                                       printable(n), lacking.names());
    } else {
        t = cpu_target(host);
#if defined(__x86_64__) || defined(__i386__)
        // AMD's Zen 4 runs the vector loop's window permutes faster than taps in lanes
        // while one tap of 16 outputs fits one window, and slower past it.
        __builtin_cpu_init();
        if (__builtin_cpu_is("amd") && t.vector_bytes == 64) t.tap_lanes_past_window = true;
#endif
    }
    if (const char* m = std::getenv("TOROID_TAP_LANES_SPAN"); m != nullptr && *m != '\0') {
        t.tap_lanes_span = std::atoi(m);
        t.tap_lanes_past_window = false;
    }
    if (const char* r = std::getenv("TOROID_TAP_LANES_ROWS"); r != nullptr && *r != '\0')
        t.tap_lanes_rows = std::clamp(std::atoi(r), 1, 4);
    if (const char* w = std::getenv("TOROID_TAP_LANES_WHOLE"); w != nullptr && *w != '\0')
        t.tap_lanes_whole_loads = std::string_view(w) == "1";
    const char* pairs = std::getenv("TOROID_TAP_PAIRS");
    t.tap_pairs = pairs != nullptr && std::string_view(pairs) == "1";
    return t;
}

}  // namespace toroid
