// The CPU axis pass (schedule/cpu_axes.cpp) on small pipelines' programs: the lane count it
// picks from the widest element a kernel's vectors hold (a register of bytes for kernels
// that only move bytes, 4-byte lanes for kernels that compute), and the fusion of
// channels-last pixels read backwards (horizontal flips) on targets that permute bytes.
#include "decomp/decompose.h"
#include "ir/simplify.h"
#include "ops/pipeline_json.h"
#include "schedule/partition.h"
#include "schedule/schedule.h"

#include <gtest/gtest.h>

#include <string>

namespace toroid {
namespace {

// A CPU target; byte windows come with the byte permute unless given (AVX2: windows
// without it).
Target cpu(int vector_bytes, bool byte_permute, bool byte_windows) {
    Target t;
    t.kind = TargetKind::Cpu;
    t.vector_bytes = vector_bytes;
    t.byte_permute = byte_permute;
    t.byte_windows = byte_windows;
    return t;
}
Target cpu(int vector_bytes, bool byte_permute) { return cpu(vector_bytes, byte_permute, byte_permute); }

ir::Program program_for(const std::string& json, DType dt, Layout layout, const Target& target) {
    const Pipeline p = parse_pipeline(json, ".");
    TensorSpec spec;
    spec.dtype = dt;
    spec.shape = {1, 3, 224, 224};
    spec.strides = dense_strides(spec.shape, layout);
    schedule::Options o;
    o.target = target;
    o.index_width = ir::IndexWidth::I32;
    return schedule::schedule(decomp::decompose(p, spec), o);
}

std::string decisions(const ir::Kernel& k) {
    std::string s;
    for (const auto& d : k.decisions) s += d + "\n";
    return s;
}

const char* kHflip = R"([{"op": "flip", "dims": [-1]}])";
const char* kVflip = R"([{"op": "flip", "dims": [-2]}])";

TEST(CpuAxes, KernelsThatMoveBytesFillARegisterWithThem) {
    for (const char* flip : {kHflip, kVflip}) {
        for (Layout layout : {Layout::Contiguous, Layout::ChannelsLast}) {
            SCOPED_TRACE(std::string(flip) + " " + std::string(layout_name(layout)));
            const ir::Program p = program_for(flip, DType::UInt8, layout, cpu(64, true));
            ASSERT_EQ(p.kernels.size(), 1u);
            EXPECT_EQ(p.kernels[0].cpu().vector_width, 64) << decisions(p.kernels[0]);
            EXPECT_NE(decisions(p.kernels[0]).find("(64 lanes, its vectors hold bytes only)"), std::string::npos)
                << decisions(p.kernels[0]);
            // 32-byte vectors (AVX2): 32 lanes of bytes.
            const ir::Program q = program_for(flip, DType::UInt8, layout, cpu(32, false));
            if (q.kernels[0].cpu().vector_width > 1) {
                EXPECT_EQ(q.kernels[0].cpu().vector_width, 32) << decisions(q.kernels[0]);
            }
        }
    }
    const ir::Program crop = program_for(R"([{"op": "crop", "top": 3, "left": 5, "height": 100, "width": 101}])",
                                         DType::UInt8, Layout::Contiguous, cpu(64, true));
    EXPECT_EQ(crop.kernels[0].cpu().vector_width, 64) << decisions(crop.kernels[0]);
}

TEST(CpuAxes, KernelsThatComputeKeepFourByteLanes) {
    const Target t = cpu(64, true);
    // Float flips: 16 lanes of 4 bytes.
    const ir::Program f = program_for(kHflip, DType::Float32, Layout::Contiguous, t);
    EXPECT_EQ(f.kernels[0].cpu().vector_width, 16) << decisions(f.kernels[0]);
    // Bytes widened to float: the widest element decides.
    const ir::Program c = program_for(R"([{"op": "convert", "dtype": "float32", "scale": true}])", DType::UInt8,
                                      Layout::Contiguous, t);
    EXPECT_EQ(c.kernels.back().cpu().vector_width, 16) << decisions(c.kernels.back());
    EXPECT_NE(decisions(c.kernels.back()).find("4-byte elements"), std::string::npos) << decisions(c.kernels.back());
    // A uint8 resize computes in int32 even though it reads and writes bytes.
    const ir::Program r = program_for(R"([{"op": "resize", "mode": "bilinear", "size": [100, 120]}])", DType::UInt8,
                                      Layout::Contiguous, t);
    for (const ir::Kernel& k : r.kernels) {
        if (k.cpu().vector_width > 1) {
            EXPECT_EQ(k.cpu().vector_width, 16) << decisions(k);
        }
    }
    // A crop that pads compares int32 indices per lane.
    const ir::Program pad = program_for(R"([{"op": "crop", "top": -3, "left": -5, "height": 230, "width": 240}])",
                                        DType::UInt8, Layout::Contiguous, t);
    for (const ir::Kernel& k : pad.kernels) {
        if (k.cpu().vector_width > 1) {
            EXPECT_EQ(k.cpu().vector_width, 16) << decisions(k);
        }
    }
}

TEST(CpuAxes, ChannelsLastHorizontalFlipFusesMirroredPixels) {
    const ir::Program p = program_for(kHflip, DType::UInt8, Layout::ChannelsLast, cpu(64, true));
    ASSERT_EQ(p.kernels.size(), 1u);
    const ir::Kernel& k = p.kernels[0];
    EXPECT_EQ(k.cpu().fused_channels, 3) << decisions(k);
    EXPECT_TRUE(k.cpu().fused_mirrored) << decisions(k);
    EXPECT_NE(decisions(k).find("backwards through the pixels"), std::string::npos) << decisions(k);
    // As printed: one loop over the row's bytes, stored contiguously; the load goes back
    // through the pixels (no constant stride along the fused loop).
    const ir::Kernel printed = ir::fused_channel_kernel(p, k);
    const int f = printed.loops.back().var;
    const ir::Buffer& out = p.buffer(k.output);
    EXPECT_EQ(ir::linear_stride(ir::simplify(ir::offset_expr(out, printed.store_index)), f), 1);
    bool found = false;
    ir::visit(printed.value, [&](const ir::Expr& e) {
        if (e->op != ir::Op::Load) return;
        found = true;
        const ir::Expr off = ir::simplify(ir::offset_expr(p.buffer(e->buffer), e->args));
        EXPECT_FALSE(ir::linear_stride(off, f)) << ir::to_string(off);
        EXPECT_TRUE(ir::depends_on_var(off, f)) << ir::to_string(off);
    });
    EXPECT_TRUE(found);
    // A vertical flip fuses forwards: the printed loads are affine, stride 1.
    const ir::Program v = program_for(kVflip, DType::UInt8, Layout::ChannelsLast, cpu(64, true));
    EXPECT_EQ(v.kernels[0].cpu().fused_channels, 3);
    EXPECT_FALSE(v.kernels[0].cpu().fused_mirrored);
    // Without byte windows the backward pixels are not fused (no window reads there).
    const ir::Program n = program_for(kHflip, DType::UInt8, Layout::ChannelsLast, cpu(64, false));
    EXPECT_EQ(n.kernels[0].cpu().fused_channels, 0) << decisions(n.kernels[0]);
    EXPECT_FALSE(n.kernels[0].cpu().fused_mirrored);
    // AVX2's 32-byte windows (no byte permute) fuse them, 32 lanes of bytes.
    const ir::Program a = program_for(kHflip, DType::UInt8, Layout::ChannelsLast, cpu(32, false, true));
    EXPECT_EQ(a.kernels[0].cpu().fused_channels, 3) << decisions(a.kernels[0]);
    EXPECT_TRUE(a.kernels[0].cpu().fused_mirrored);
    EXPECT_EQ(a.kernels[0].cpu().vector_width, 32) << decisions(a.kernels[0]);
    // Nor are float pixels (no word windows at this width).
    const ir::Program fl = program_for(kHflip, DType::Float32, Layout::ChannelsLast, cpu(64, true));
    EXPECT_FALSE(fl.kernels[0].cpu().fused_mirrored);
}

// A byte table one for every channel (brightness, solarize, posterize: tabulate.h) reads
// channels-last pixels as one run of bytes, as contiguous planes do; one table per channel
// (autocontrast's) keeps the channels apart; so does a table looked up by bytes read
// backwards (a flip after it: its lanes are not read through windows).
TEST(CpuAxes, ChannelsLastByteTablesFuseTheChannels) {
    Target t = cpu(64, true);
    t.byte_tables = true;  // tables in registers (AVX-512 VBMI)
    for (const char* op : {R"([{"op": "adjust_brightness", "factor": 1.3}])", R"([{"op": "solarize", "threshold": 100}])",
                           R"([{"op": "posterize", "bits": 3}])"}) {
        SCOPED_TRACE(op);
        const ir::Program p = program_for(op, DType::UInt8, Layout::ChannelsLast, t);
        const ir::Kernel& k = p.kernels.back();
        ASSERT_NE(decisions(k).find("tabulate"), std::string::npos) << decisions(k);
        EXPECT_EQ(k.cpu().fused_channels, 3) << decisions(k);
        EXPECT_FALSE(k.cpu().fused_mirrored) << decisions(k);
    }
    const ir::Program per_channel = program_for(R"([{"op": "autocontrast"}])", DType::UInt8, Layout::ChannelsLast, t);
    EXPECT_EQ(per_channel.kernels.back().cpu().fused_channels, 0) << decisions(per_channel.kernels.back());
    const ir::Program flipped = program_for(R"([{"op": "adjust_brightness", "factor": 1.3}, {"op": "flip", "dims": [-1]}])",
                                            DType::UInt8, Layout::ChannelsLast, t);
    EXPECT_EQ(flipped.kernels.back().cpu().fused_channels, 0) << decisions(flipped.kernels.back());
}

// A flip after a resize, channels-last: the vertical pass is realized (its taps read
// forwards) and the flip is a kernel of its own that fuses mirrored pixels; planar, or on
// CUDA, the flip stays in the pass.
TEST(CpuAxes, ChannelsLastFlipAfterTapsIsAKernelOfItsOwn) {
    const char* json = R"([{"op": "resize", "mode": "bilinear", "size": [100, 90], "antialias": true},
                           {"op": "flip", "dims": [-1]}])";
    const ir::Program cl = program_for(json, DType::UInt8, Layout::ChannelsLast, cpu(64, true));
    ASSERT_EQ(cl.kernels.size(), 3u);
    EXPECT_TRUE(cl.kernels.back().cpu().fused_mirrored) << decisions(cl.kernels.back());
    EXPECT_NE(decisions(cl.kernels[1]).find("read backwards along W"), std::string::npos) << decisions(cl.kernels[1]);
    const ir::Program planar = program_for(json, DType::UInt8, Layout::Contiguous, cpu(64, true));
    EXPECT_EQ(planar.kernels.size(), 2u);
}

// The same through a crop of the resized image (Resize, RandomCrop, flip): the crop reads the
// pass forwards and is inlined, the flip reads the crop backwards, so the kernel the pass
// would be inlined into reads it backwards: it is realized too. A crop alone keeps it inlined.
TEST(CpuAxes, ChannelsLastFlipAfterACropOfTapsIsAKernelOfItsOwn) {
    const char* flipped = R"([{"op": "resize", "mode": "bilinear", "size": [100, 90], "antialias": true},
                              {"op": "crop", "top": 5, "left": 7, "height": 80, "width": 70},
                              {"op": "flip", "dims": [-1]}])";
    const ir::Program cl = program_for(flipped, DType::UInt8, Layout::ChannelsLast, cpu(64, true));
    ASSERT_EQ(cl.kernels.size(), 3u);
    EXPECT_TRUE(cl.kernels.back().cpu().fused_mirrored) << decisions(cl.kernels.back());
    EXPECT_NE(decisions(cl.kernels[1]).find("read backwards along W"), std::string::npos) << decisions(cl.kernels[1]);
    const char* cropped = R"([{"op": "resize", "mode": "bilinear", "size": [100, 90], "antialias": true},
                              {"op": "crop", "top": 5, "left": 7, "height": 80, "width": 70}])";
    EXPECT_EQ(program_for(cropped, DType::UInt8, Layout::ChannelsLast, cpu(64, true)).kernels.size(), 2u);
    EXPECT_EQ(program_for(flipped, DType::UInt8, Layout::Contiguous, cpu(64, true)).kernels.size(), 2u);
}

// A flip whose kernel converts to float (RandomResizedCrop, flip, ToDtype, Normalize) keeps
// the pass inlined: its sums are 4-byte lanes already, and a realized pass cost that
// pipeline 1.4x its time. Through a crop, or read by the flip directly, alike.
TEST(CpuAxes, ChannelsLastFlipIntoAFloatKernelKeepsThePassInlined) {
    const char* tail = R"({"op": "convert", "dtype": "float32", "scale": true},
                          {"op": "normalize", "mean": [0.5, 0.4, 0.3], "std": [0.2, 0.2, 0.2]}])";
    const std::string direct = std::string(R"([{"op": "crop", "top": 3, "left": 4, "height": 90, "width": 80},
        {"op": "resize", "mode": "bilinear", "size": [50, 40], "antialias": true}, {"op": "flip", "dims": [-1]},)") + tail;
    const std::string cropped = std::string(R"([{"op": "resize", "mode": "bilinear", "size": [100, 90], "antialias": true},
        {"op": "crop", "top": 5, "left": 7, "height": 80, "width": 70}, {"op": "flip", "dims": [-1]},)") + tail;
    for (const std::string& p : {direct, cropped}) {
        const ir::Program cl = program_for(p, DType::UInt8, Layout::ChannelsLast, cpu(64, true));
        EXPECT_EQ(cl.kernels.size(), 2u) << p;
    }
}

// A uint8 warp of an intermediate (a resize's result) gathers its bytes as 4-byte words on
// targets with a word gather (the engine leaves kTempTailBytes after every temporary); the
// same warp of the caller's input, or without the gather, is left to the C++ compiler.
TEST(CpuAxes, ByteGathersOfTemporariesAndTheInputAreWordGathers) {
    const char* warp = R"([{"op": "affine", "convention": "torchvision", "mode": "bilinear",
                           "theta": [[0.97, -0.2, 5.0], [0.2, 0.97, -3.0]]}])";
    const char* resized_warp = R"([{"op": "resize", "mode": "bilinear", "antialias": true, "size": [200, 210]},
                                   {"op": "affine", "convention": "torchvision", "mode": "bilinear",
                                    "theta": [[0.97, -0.2, 5.0], [0.2, 0.97, -3.0]]}])";
    Target t = cpu(64, true);
    t.word_gather = true;
    for (const char* p : {resized_warp, warp}) {
        const ir::Program prog = program_for(p, DType::UInt8, Layout::ChannelsLast, t);
        EXPECT_GT(prog.kernels.back().cpu().vector_width, 1) << decisions(prog.kernels.back());
    }
    t.word_gather = false;
    for (const char* p : {resized_warp, warp}) {
        const ir::Program without = program_for(p, DType::UInt8, Layout::ChannelsLast, t);
        EXPECT_EQ(without.kernels.back().cpu().vector_width, 1) << decisions(without.kernels.back());
        EXPECT_NE(decisions(without.kernels.back()).find("gathers 1- or 2-byte elements"), std::string::npos)
            << decisions(without.kernels.back());
    }
}

// Vertical resize passes over a run of elements (channels-last pixels fused, or one
// channel) compute several vectors a step, their tap loops as one; passes whose taps
// gather (horizontal ones) and kernels with unrolled channels compute one.
TEST(CpuAxes, VerticalTapLoopsComputeSeveralVectorsAStep) {
    const Target t = cpu(64, true);
    const char* vertical = R"([{"op": "resize", "mode": "bilinear", "antialias": true, "size": [100, 224]}])";
    const char* horizontal = R"([{"op": "resize", "mode": "bilinear", "antialias": true, "size": [224, 100]}])";
    for (DType dt : {DType::UInt8, DType::Float32}) {
        SCOPED_TRACE(std::string(dtype_name(dt)));
        const ir::Program cl = program_for(vertical, dt, Layout::ChannelsLast, t);
        ASSERT_EQ(cl.kernels.size(), 1u);
        EXPECT_EQ(cl.kernels[0].cpu().vector_unroll, 4) << decisions(cl.kernels[0]);
        EXPECT_NE(decisions(cl.kernels[0]).find("4 vectors a step"), std::string::npos) << decisions(cl.kernels[0]);
        const ir::Program cf = program_for(vertical, dt, Layout::Contiguous, t);
        EXPECT_EQ(cf.kernels[0].cpu().vector_unroll, 1) << decisions(cf.kernels[0]);
        const ir::Program h = program_for(horizontal, dt, Layout::ChannelsLast, t);
        for (const ir::Kernel& k : h.kernels) EXPECT_EQ(k.cpu().vector_unroll, 1) << decisions(k);
    }
}

// Loop partitioning (schedule/partition.h): an erased rectangle's columns split the row
// loop into three parts whose values hold no test of the column; each part of a uint8
// image then moves bytes only (64 lanes). The parts' values: the copy, the fill selected by
// the row's test, the copy.
TEST(CpuAxes, ErasedColumnsPartitionTheRowLoop) {
    const ir::Program p = program_for(R"([{"op": "erase", "top": 10, "left": 20, "height": 60, "width": 80, "value": 0}])",
                                      DType::UInt8, Layout::Contiguous, cpu(64, true));
    ASSERT_EQ(p.kernels.size(), 1u);
    const ir::Kernel& k = p.kernels[0];
    ASSERT_TRUE(k.cpu().partition_lo && k.cpu().partition_hi) << decisions(k);
    EXPECT_EQ(k.cpu().vector_width, 64) << decisions(k);
    EXPECT_NE(decisions(k).find("in three parts"), std::string::npos) << decisions(k);
    const int v = k.loops.back().var;
    const auto tests_column = [&](const ir::Expr& e) {
        bool found = false;
        ir::visit(e, [&](const ir::Expr& x) {
            found = found || (x->type == ir::Type::Bool && x->args.size() == 2 && ir::depends_on_var(x, v));
        });
        return found;
    };
    EXPECT_TRUE(tests_column(k.value));
    for (int part = 0; part < 3; ++part) {
        const ir::Expr value = schedule::partitioned_value(k.value, v, part);
        EXPECT_FALSE(tests_column(value)) << part << ": " << ir::to_string(value);
        EXPECT_EQ(value->op == ir::Op::Load, part != 1) << part << ": " << ir::to_string(value);
    }
    // Another test of the column (a flip's mirrored index is no test; a second erase's
    // columns are a second interval): no partition.
    const ir::Program two = program_for(R"([{"op": "erase", "top": 0, "left": 20, "height": 60, "width": 80, "value": 0},
                                            {"op": "erase", "top": 0, "left": 150, "height": 60, "width": 30, "value": 0}])",
                                        DType::UInt8, Layout::Contiguous, cpu(64, true));
    for (const ir::Kernel& x : two.kernels) EXPECT_FALSE(x.cpu().partition_lo) << decisions(x);
    EXPECT_FALSE(schedule::find_partition(ir::lt(ir::var(3), ir::param(0)), 3));  // one bound only
}

}  // namespace
}  // namespace toroid
