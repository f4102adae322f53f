// What the scheduler and the code generators know of the machine a program is compiled
// for: one description read by both, so that what --explain reports is what is generated.
// A CPU target is a feature set (cpu_features.h: its compiler flags and the preamble's
// defines) and the scheduling choices made from it. Leaf layer: target/ includes nothing
// of toroid's but itself.
#pragma once

#include "target/cpu_features.h"

#include <cstdint>
#include <string>

namespace toroid {

enum class TargetKind : std::uint8_t { Cpu, Cuda };

struct Target {
    TargetKind kind = TargetKind::Cpu;
    // CPU: the instruction-set features its code may use. The generated source defines them
    // for the preamble and the compiler gets them as flags; every field below that names an
    // ISA form is chosen from them (host_cpu, the named targets).
    CpuFeatures features;
    // CPU: bytes of one SIMD register the vector loops are written for (32: AVX2, 64: AVX-512).
    int vector_bytes = 32;
    // CPU: a byte permute across a 64-byte register pair (AVX-512 VBMI): byte gathers whose
    // lanes lie close together become a window load and a permute (codegen's gather_window).
    bool byte_permute = false;
    // CPU: byte gathers whose lanes lie close together are read through windows of memory
    // and a permute (codegen's gather_window): 128-byte windows with byte_permute, 32-byte
    // ones on AVX2 (two in-lane byte shuffles and a blend). Without it those gathers load lane
    // by lane, which loses to a scalar loop.
    bool byte_windows = false;
    // CPU: the ISA looks bytes up in 256-entry tables held in registers (byte permutes: AVX-512
    // VBMI), so any uint8 function of one byte is tabulated (schedule/tabulate.h). Kept by
    // scalar(): the quick tier's program has the full one's buffers.
    bool byte_tables = false;
    // CPU: a gather of 4-byte words (AVX2, AVX-512): bytes of Temp buffers, which the engine
    // allocates with kTempTailBytes to spare, are gathered as words (codegen's gather_bytes_v).
    bool word_gather = false;
    // CPU: uint8 x int16 tap sums printed two taps per 16-bit multiply-add (schedule/tap_pairs).
    // Opt-in (TOROID_TAP_PAIRS=1): on the Intel Xeon it was measured on, the pairs' permutes
    // and interleaves cost more than the 32-bit multiplies they save (0.96x geo-mean over the
    // uint8 antialiased seed rows; 1.2-1.35x on planar rows of many taps, 0.73-0.9x on others).
    bool tap_pairs = false;
    // CPU with byte_permute (or AVX2: 32-byte vectors with byte_windows): channels-last tap
    // sums run with taps in lanes
    // (schedule/tap_pairs.h, TapLanes) where, at run time, the taps of 16 outputs span more
    // than this many bytes (below it the vector loop's window permutes were faster on the
    // Intel Xeon measured: docs/results/history.md, section 14); $TOROID_TAP_LANES_SPAN
    // overrides it (negative: never).
    int tap_lanes_span = 112;
    // CPU (AMD Zen 4): the form runs instead where one tap of 16 outputs spans more bytes
    // than one window of the vector loop holds (128): there the window permutes read each
    // tap in two or more pieces, or fall back to the hardware gather, and taps in lanes
    // were 1.2-5x faster; within one window they were faster than taps in lanes (0.55-0.8x
    // the time), at every factor measured (docs/performance.md, section 1). A set
    // $TOROID_TAP_LANES_SPAN turns this off and takes the span rule.
    bool tap_lanes_past_window = false;
    // CPU: rows a step of a kernel with taps in lanes (CpuPlan::tap_lanes_rows; each pixel's
    // offset and weights loaded once for them); $TOROID_TAP_LANES_ROWS overrides it (1: a row
    // at a time, for comparisons).
    int tap_lanes_rows = 4;
    // CPU with byte_permute: taps in lanes read each register's 32 pixel bytes whole where
    // they stay inside the page (a broadcast load; the bytes past the taps meet zero weights)
    // instead of through a byte-masked load. Opt-in ($TOROID_TAP_LANES_WHOLE=1): 1.25x the
    // masked load's speed in the form alone on the Intel host and 0.9x on AMD Zen 4
    // (bench/tap_lanes_forms.cpp), but the compiler's kernels on the Intel host ran in two
    // groups of rounds with it, 1.09-1.24x faster or up to 1.4x slower (docs/performance.md).
    bool tap_lanes_whole_loads = false;
    // CPU: explicit vector loops (and the forms built on them: windows, tap pairs, taps in
    // lanes). Off for the compiled engine's quick tier (runtime/jit.h, load_tiered): a program
    // of scalar loops, the same values in the same order, that the C++ compiler builds in a
    // fifth of the time, serving the first calls while the full program compiles.
    bool explicit_vectors = true;
    // AVX2's span: every row (on the AMD Zen 4 host at TOROID_CPU_TARGET=avx2 taps in lanes
    // beat the 32-byte windows at every factor, upscales included: a 300x400 -> 600x700
    // channels-last resize 0.80x the time of span 32, alternating runs).
    static constexpr int kTapLanesSpanAvx2 = 0;
    // GPU: threads of a block (along grid x) and the architecture the code is built for.
    static constexpr int kCudaBlockThreads = 128;  // every CUDA kernel's block (along grid x)
    int block_threads = kCudaBlockThreads;
    std::string arch;  // "sm_90"; part of the compiled code's key
    // CPU named by $TOROID_CPU_TARGET: why this CPU cannot run its code (the features it
    // lacks), else empty. Such code is compiled (`apply --prepare-only`) but not run.
    std::string cannot_run;
    // CPU: named by $TOROID_CPU_TARGET (not this CPU's own features): its code is compiled
    // for that CPU's instruction-set level (isa_level()), not -march=native, so the
    // preamble's feature tests see what the scheduler assumed.
    bool named = false;

    // Lanes of every explicit vector in a kernel: kernels are written for one lane count.
    int kernel_lanes() const { return kind == TargetKind::Cpu ? vector_bytes / 4 : 1; }

    std::string name() const;  // e.g. "cpu (64-byte vectors)"
    // CPU: the instruction-set level (runtime/prebuilt.h) its code needs, to build it ahead of
    // time: the best level whose features `features` holds (x86-64-v3 at least).
    std::string isa_level() const;

    // This CPU target without explicit vectors or the forms that need them (explicit_vectors).
    Target scalar() const;

    // The CPU this process runs on ($TOROID_CPU_TARGET names another: avx2, avx512,
    // avx512vbmi, zen4).
    static Target host_cpu();
    static Target cuda(const std::string& arch);
};

}  // namespace toroid
