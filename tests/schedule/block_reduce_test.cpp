// Block-wide reductions on GPU targets (schedule/block_reduce.h): which kernels a block of
// threads computes one output of, which keep a thread per output, and the printed form.
// Running them is the GPU machine's job (the conformance suite's cuda engine).
#include "schedule/block_reduce.h"

#include "codegen/cuda.h"
#include "decomp/decompose.h"
#include "ops/pipeline_json.h"
#include "schedule/schedule.h"

#include <gtest/gtest.h>

#include <string>

namespace toroid {
namespace {

ir::Program cuda_program(const std::string& json, DType dtype = DType::UInt8, Layout layout = Layout::Contiguous) {
    const Pipeline p = parse_pipeline(json, ".");
    const Dims shape{2, 3, 20, 45};
    schedule::Options o;
    o.target = Target::cuda("sm_90");
    return schedule::schedule(decomp::decompose(p, TensorSpec{dtype, shape, dense_strides(shape, layout)}), o);
}

int block_kernels(const ir::Program& p) {
    int n = 0;
    for (const ir::Kernel& k : p.kernels) n += k.gpu().block_sum != nullptr;
    return n;
}

TEST(BlockReduce, WholeImageReductionsGetABlockPerOutput) {
    // Autocontrast's least and greatest values per channel: each split into its rows' values
    // (a block per row) and their combination (a block per channel).
    EXPECT_EQ(block_kernels(cuda_program(R"([{"op": "autocontrast"}])")), 4);
    EXPECT_EQ(block_kernels(cuda_program(R"([{"op": "autocontrast"}])", DType::Float32, Layout::ChannelsLast)), 4);
    // Contrast of uint8: the rows' double sums of integer grey values, and their total
    // (a sum of those sums, read back from memory: integer values too).
    EXPECT_EQ(block_kernels(cuda_program(R"([{"op": "adjust_contrast", "factor": 0.5}])")), 2);
    // Equalize: its greatest value (rows, then their combination), and its histogram, a
    // histogram per row (schedule/histogram.h) summed over the rows per bin. The running
    // counts are 256-term sums: a thread each.
    EXPECT_EQ(block_kernels(cuda_program(R"([{"op": "equalize"}])")), 3);
}

TEST(BlockReduce, OrderedOrShortReductionsKeepAThreadPerOutput) {
    // Contrast of float32: double sums of float grey values, whose grouping is their rounding.
    EXPECT_EQ(block_kernels(cuda_program(R"([{"op": "adjust_contrast", "factor": 0.5}])", DType::Float32)), 0);
    // Filter taps: a Count parameter (resize) or a constant (blur), never an image size.
    EXPECT_EQ(block_kernels(cuda_program(R"([{"op": "resize", "size": [9, 17], "mode": "bilinear", "antialias": true}])")), 0);
    EXPECT_EQ(block_kernels(cuda_program(R"([{"op": "gaussian_blur", "kernel_size": [5, 5], "sigma": [1.5, 1.5]}])")), 0);
}

TEST(BlockReduce, ReductionsOverRowsOfColumnsAreSplitIntoRows) {
    const ir::Program p = cuda_program(R"([{"op": "autocontrast"}])");
    std::vector<std::string> names;
    for (const ir::Kernel& k : p.kernels) names.push_back(p.buffer(k.output).name);
    EXPECT_EQ(names, (std::vector<std::string>{"op0.min.rows", "op0.min", "op0.max.rows", "op0.max", "op0.autocontrast"}));
    // The rows' values along the output's free dim (its last of extent 1): (N, C, 1, H).
    const ir::Buffer& rows = p.buffer(p.kernels[0].output);
    ASSERT_EQ(rows.logical.size(), 4u);
    EXPECT_TRUE(ir::is_const(rows.logical[2], 1));
    EXPECT_FALSE(ir::is_const(rows.logical[3]));
    // Not on the CPU (its rows run in vector lanes: schedule/rfactor.h), nor where one
    // reduction covers the image (contrast's row sums and total are already two).
    const ir::Program c = cuda_program(R"([{"op": "adjust_contrast", "factor": 0.5}])");
    for (const ir::Kernel& k : c.kernels) EXPECT_EQ(c.buffer(k.output).name.find(".rows"), std::string::npos);
}

TEST(BlockReduce, KernelsSoMarkedAreNeitherFusedNorUnrolled) {
    const ir::Program p = cuda_program(R"([{"op": "adjust_contrast", "factor": 0.5}])", DType::UInt8, Layout::ChannelsLast);
    for (const ir::Kernel& k : p.kernels) {
        if (k.gpu().block_sum == nullptr) continue;
        EXPECT_EQ(k.gpu().x_outputs, 1);
        for (const ir::Loop& l : k.loops) EXPECT_NE(l.kind, ir::LoopKind::Unrolled);
        for (const ir::GpuFusion& f : p.gpu_fusions) {
            EXPECT_NE(&p.kernels[static_cast<std::size_t>(f.producer)], &k);
            EXPECT_NE(&p.kernels[static_cast<std::size_t>(f.consumer)], &k);
        }
    }
}

TEST(BlockReduce, PrintedAsABlockReductionWithOneStore) {
    const ir::Program p = cuda_program(R"([{"op": "autocontrast"}])");
    const std::string src = codegen::generate_cuda(p, 128);
    EXPECT_NE(src.find("t_block_reduce<float>"), std::string::npos);
    EXPECT_NE(src.find("t_op_min()"), std::string::npos);
    EXPECT_NE(src.find("t_op_max()"), std::string::npos);
    EXPECT_NE(src.find("if (threadIdx.x == 0) b"), std::string::npos);
    EXPECT_NE(src.find("const int64_t gx = static_cast<int64_t>(blockIdx.x);"), std::string::npos);
}

TEST(BlockReduce, IntegerValuedFollowsLoadsToTheirKernels) {
    using namespace ir;
    Program p;
    EXPECT_TRUE(schedule::integer_valued(p, floor(fconst(0.5))));
    EXPECT_TRUE(schedule::integer_valued(p, cast(Type::F64, iconst(3, Type::I32))));
    EXPECT_TRUE(schedule::integer_valued(p, add(fconst(2.0), floor(fconst(0.25)))));
    EXPECT_FALSE(schedule::integer_valued(p, fconst(0.5)));
    EXPECT_FALSE(schedule::integer_valued(p, div(fconst(1.0), fconst(3.0))));
    EXPECT_FALSE(schedule::integer_valued(p, add(fconst(2.0), fconst(0.25))));
}

}  // namespace
}  // namespace toroid
