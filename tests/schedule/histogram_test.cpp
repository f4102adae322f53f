// Histograms (schedule/histogram.h): which kernels are counts of keys per bin, their parts,
// the printed scatter on both targets, and compiled results equal to the reference
// engine's (whose equalize counts pixel by pixel, independently of the graph).
#include "schedule/histogram.h"

#include "../engine/op_table_support.h"
#include "codegen/cpp.h"
#include "codegen/cuda.h"
#include "decomp/decompose.h"
#include "ops/pipeline_json.h"
#include "schedule/schedule.h"

#include <gtest/gtest.h>

#include <string>

namespace toroid {
namespace {

ir::Program program_for(const std::string& json, const Target& target, Layout layout = Layout::Contiguous,
                        DType dtype = DType::UInt8) {
    const Pipeline p = parse_pipeline(json, ".");
    const Dims shape{2, 3, 20, 45};
    schedule::Options o;
    o.target = target;
    return schedule::schedule(decomp::decompose(p, TensorSpec{dtype, shape, dense_strides(shape, layout)}), o);
}

std::vector<const ir::Kernel*> histograms(const ir::Program& p) {
    std::vector<const ir::Kernel*> out;
    for (const ir::Kernel& k : p.kernels)
        if (k.histogram) out.push_back(&k);
    return out;
}

TEST(Histogram, EqualizeCountsEachValueInOnePass) {
    for (const auto& target : {Target::host_cpu(), Target::cuda("sm_90")})
        for (Layout layout : {Layout::Contiguous, Layout::ChannelsLast})
            for (DType dtype : {DType::UInt8, DType::Float32}) {
                const ir::Program p = program_for(R"([{"op": "equalize"}])", target, layout, dtype);
                const auto h = histograms(p);
                ASSERT_EQ(h.size(), 1u);
                const auto f = schedule::histogram_form(p, *h.front());
                ASSERT_TRUE(f.has_value());
                EXPECT_EQ(f->dim, 2);
                EXPECT_EQ(f->bins, 256);
                // CPU: rows and columns of the image; CUDA: a histogram per row (its columns),
                // summed over the rows (schedule/block_reduce.h, split_image_reductions).
                EXPECT_EQ(f->sums.size(), target.kind == TargetKind::Cuda ? 1u : 2u);
                EXPECT_EQ(f->key->type, ir::Type::I64);
            }
}

TEST(Histogram, OtherReductionsAreNotHistograms) {
    const auto cpu = Target::host_cpu();
    EXPECT_TRUE(histograms(program_for(R"([{"op": "autocontrast"}])", cpu)).empty());
    EXPECT_TRUE(histograms(program_for(R"([{"op": "adjust_contrast", "factor": 0.5}])", cpu)).empty());
    EXPECT_TRUE(histograms(program_for(R"([{"op": "resize", "size": [9, 17], "mode": "bilinear", "antialias": true}])", cpu))
                    .empty());
}

TEST(Histogram, FormIsRefusedWhereTheBinsVaryOrTheTermIsNotACount) {
    using namespace ir;
    Program p;
    Buffer out;
    out.id = 0;
    out.type = Type::I32;
    out.logical = Shape{iconst(4), iconst(256)};
    p.buffers.push_back(out);
    Buffer in;
    in.id = 1;
    in.role = BufferRole::Input;
    in.type = Type::U8;
    in.logical = Shape{iconst(4), iconst(100)};
    p.buffers.push_back(in);
    const int r = kFirstReductionVar;
    const Expr key = cast(Type::I32, load(1, Type::U8, {var(0), var(r)}));
    const Expr one = iconst(1, Type::I32), zero = iconst(0, Type::I32);
    Kernel k;
    k.output = 0;
    k.value = sum(r, iconst(100), select(eq(key, cast(Type::I32, var(1))), one, zero), Type::I32);
    const auto f = schedule::histogram_form(p, k);
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->dim, 1);
    EXPECT_EQ(f->sums.size(), 1u);
    // A key that depends on the bin's own variable.
    k.value = sum(r, iconst(100), select(eq(add(key, cast(Type::I32, var(1))), cast(Type::I32, var(1))), one, zero),
                  Type::I32);
    EXPECT_FALSE(schedule::histogram_form(p, k).has_value());
    // Not a count: the term adds 2.
    k.value = sum(r, iconst(100), select(eq(key, cast(Type::I32, var(1))), iconst(2, Type::I32), zero), Type::I32);
    EXPECT_FALSE(schedule::histogram_form(p, k).has_value());
    // A comparison other than equality (a running count).
    k.value = sum(r, iconst(100), select(le(key, cast(Type::I32, var(1))), one, zero), Type::I32);
    EXPECT_FALSE(schedule::histogram_form(p, k).has_value());
    // Too many bins.
    p.buffers[0].logical = Shape{iconst(4), iconst(schedule::kMaxHistogramBins + 1)};
    k.value = sum(r, iconst(100), select(eq(key, cast(Type::I32, var(1))), one, zero), Type::I32);
    EXPECT_FALSE(schedule::histogram_form(p, k).has_value());
}

TEST(Histogram, PrintedAsAScatter) {
    const std::string cpp = codegen::generate_cpp(program_for(R"([{"op": "equalize"}])", Target::host_cpu()), 16);
    EXPECT_NE(cpp.find("std::int32_t bins[4][256] = {};"), std::string::npos);
    EXPECT_NE(cpp.find("++bins[3]["), std::string::npos);
    const std::string cu = codegen::generate_cuda(program_for(R"([{"op": "equalize"}])", Target::cuda("sm_90")), 128);
    EXPECT_NE(cu.find("__shared__ int32_t t_bins[256];"), std::string::npos);
    EXPECT_NE(cu.find("atomicAdd(&t_bins["), std::string::npos);
}

TEST(Histogram, CompiledEqualsReferenceOnRandomImages) {
    test::expect_compiled_matches_reference(
        {R"([{"op": "equalize"}])", R"([{"op": "posterize", "bits": 2}, {"op": "equalize"}])",
         R"([{"op": "crop", "top": 1, "left": 2, "height": 3, "width": 5}, {"op": "equalize"}])"},
        {Dims{1, 1, 7, 5}, Dims{2, 3, 9, 16}, Dims{1, 3, 13, 37}, Dims{1, 1, 3, 70}, Dims{1, 1, 1, 1}});
}

}  // namespace
}  // namespace toroid
