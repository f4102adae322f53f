// Tabulating functions of one byte (schedule/tabulate.h): which values are functions of one
// uint8 read, which the CPU scheduler turns into a 256-entry table and a read of it, and the
// results of such programs equal to the reference engine's.
#include "schedule/tabulate.h"

#include "../engine/op_table_support.h"
#include "decomp/decompose.h"
#include "ops/pipeline_json.h"
#include "schedule/schedule.h"

#include <gtest/gtest.h>

#include <string>

namespace toroid {
namespace {

using namespace ir;
using namespace schedule;

Expr x_at(Expr w) { return load(0, Type::U8, {var(0), var(1), var(2), std::move(w)}); }

TEST(Tabulate, FindsTheOneByteAValueDependsOn) {
    const Expr x = x_at(var(3));
    const Expr gamma = load(1, Type::F32, {iconst(0)});  // a table read at a fixed index
    const Expr curve = sat_cast(Type::U8, mul(pow(mul(cast(Type::F32, x), fconst(1 / 255.0)), gamma), fconst(255.999)));
    ASSERT_TRUE(byte_function_argument(curve));
    EXPECT_TRUE(structurally_equal(*byte_function_argument(curve), x));
    EXPECT_GE(pointwise_cost(curve), kTabulateMinCost);
    // The same read twice (a separately built copy) is still one argument.
    EXPECT_TRUE(byte_function_argument(add(cast(Type::I32, x), cast(Type::I32, x_at(var(3))))));
    // Not functions of one byte: a loop variable outside the read, two different reads, a
    // float read, a table read along a row, a reduction.
    EXPECT_FALSE(byte_function_argument(add(cast(Type::I64, x), var(3))));
    EXPECT_FALSE(byte_function_argument(add(cast(Type::I32, x), cast(Type::I32, x_at(sub(var(3), iconst(1)))))));
    EXPECT_FALSE(byte_function_argument(mul(load(0, Type::F32, {var(0), var(1), var(2), var(3)}), fconst(2.0))));
    EXPECT_FALSE(byte_function_argument(mul(cast(Type::F32, x), load(1, Type::F32, {var(2)}))));
    // A function per channel, and per image (a table read at n, c: a channel's statistics).
    const auto per_channel = byte_function(mul(cast(Type::F32, x), load(1, Type::F32, {var(1)})));
    ASSERT_TRUE(per_channel);
    EXPECT_TRUE(per_channel->per_channel);
    EXPECT_FALSE(per_channel->per_image);
    const auto per_plane = byte_function(mul(cast(Type::F32, x), load(2, Type::F32, {var(0), var(1), iconst(0), iconst(0)})));
    ASSERT_TRUE(per_plane);
    EXPECT_TRUE(per_plane->per_channel && per_plane->per_image);
    EXPECT_FALSE(byte_function_argument(sum(kFirstReductionVar, 3, cast(Type::I32, x_at(add(var(3), var(kFirstReductionVar)))), Type::I32)));
    // Cheap functions stay as they are.
    EXPECT_LT(pointwise_cost(sub(iconst(255, Type::U8), x)), kTabulateMinCost);
}

ir::Program program_for(const std::string& json, const Target& target) {
    const Pipeline p = parse_pipeline(json, ".");
    TensorSpec spec{DType::UInt8, {1, 3, 64, 64}, dense_strides({1, 3, 64, 64}, Layout::Contiguous)};
    schedule::Options o;
    o.target = target;
    return schedule::schedule(decomp::decompose(p, spec), o);
}

ir::Program program_for(const std::string& json, TargetKind kind) {
    return program_for(json, kind == TargetKind::Cpu ? Target::host_cpu() : Target::cuda("sm_90"));
}

Target avx512(bool vbmi) {
    Target t;
    t.kind = TargetKind::Cpu;
    t.vector_bytes = 64;
    t.word_gather = true;
    t.byte_permute = t.byte_tables = vbmi;
    return t;
}

// Where bytes are looked up in registers, any uint8 function of a byte that computes is a
// table read, in 64 lanes of bytes (the same buffers in the quick tier's program); elsewhere
// only costly ones are.
TEST(Tabulate, CheapByteFunctionsWhereTablesAreInRegisters) {
    for (const char* json : {R"([{"op": "invert"}])", R"([{"op": "posterize", "bits": 3}])",
                             R"([{"op": "adjust_brightness", "factor": 1.3}])"}) {
        SCOPED_TRACE(json);
        const ir::Program vbmi = program_for(json, avx512(true));
        ASSERT_EQ(vbmi.kernels.size(), 2u);
        EXPECT_TRUE(vbmi.buffer(vbmi.kernels[0].output).lookup_table);
        EXPECT_TRUE(schedule::byte_table_argument(vbmi, vbmi.kernels[1].value));
        EXPECT_EQ(vbmi.kernels[1].cpu().vector_width, 64);
        const ir::Program quick = program_for(json, avx512(true).scalar());
        EXPECT_EQ(quick.buffers.size(), vbmi.buffers.size());
        EXPECT_EQ(program_for(json, avx512(false)).kernels.size(), 1u);
    }
    // Plain moves of bytes compute nothing: no table.
    EXPECT_EQ(program_for(R"([{"op": "flip", "dims": [-1]}])", avx512(true)).kernels.size(), 1u);
}

// A read through much index arithmetic (a reflect pad's mirrored rows and columns) is not a
// costly function of its byte: the arithmetic stays, a table would save nothing.
TEST(Tabulate, IndexArithmeticIsNotTabulated) {
    for (const char* json : {R"([{"op": "pad", "padding": 16, "mode": "reflect"}])",
                             R"([{"op": "flip", "dims": [-1]}, {"op": "pad", "padding": [3, 1], "mode": "symmetric"}])"}) {
        SCOPED_TRACE(json);
        const ir::Program p = program_for(json, TargetKind::Cpu);
        EXPECT_EQ(p.kernels.size(), 1u);
    }
}

TEST(Tabulate, CpuProgramsReadAGammaCurveFromATable) {
    const ir::Program cpu = program_for(R"([{"op": "adjust_gamma", "gamma": 0.8}])", TargetKind::Cpu);
    ASSERT_EQ(cpu.kernels.size(), 2u);
    const ir::Buffer& table = cpu.buffer(cpu.kernels[0].output);
    EXPECT_EQ(table.role, BufferRole::Temp);
    EXPECT_EQ(table.type, Type::U8);
    EXPECT_TRUE(is_const(table.shape[3], 256));
    // The result reads the table at the input's byte, and holds no pow.
    int pows = 0, table_reads = 0;
    visit(cpu.kernels[1].value, [&](const Expr& e) {
        pows += e->op == ir::Op::Pow;
        table_reads += e->op == ir::Op::Load && e->buffer == table.id;
    });
    EXPECT_EQ(pows, 0);
    EXPECT_EQ(table_reads, 1);
    // CUDA programs keep the pow in the kernel.
    const ir::Program gpu = program_for(R"([{"op": "adjust_gamma", "gamma": 0.8}])", TargetKind::Cuda);
    EXPECT_EQ(gpu.kernels.size(), 1u);
}

// Tabulated programs, bit for bit the reference's: byte and float tables, reads through a
// flip and a crop, both layouts and dtypes' neighbours (a float input is not tabulated).
TEST(Tabulate, CompiledEqualsReferenceOnRandomImages) {
    test::expect_compiled_matches_reference(
        {R"([{"op": "adjust_gamma", "gamma": 0.45, "gain": 1.2}])",
         R"([{"op": "flip", "dims": [-1]}, {"op": "adjust_gamma", "gamma": 2.2}, {"op": "convert", "dtype": "float32", "scale": true}])",
         R"([{"op": "crop", "top": 1, "left": -1, "height": 6, "width": 9}, {"op": "adjust_gamma", "gamma": 1.7},
             {"op": "adjust_gamma", "gamma": 0.6}])"},
        {Dims{1, 1, 7, 9}, Dims{1, 1, 33, 70}});
}

}  // namespace
}  // namespace toroid
