// The GPU fusion pass (schedule/gpu_fuse.h) without a GPU: which programs get a fused
// kernel (separable resizes, whatever follows them) and which do not; the tile ranges bound
// on the host cover every index the consumer reads (checked against every tap of every
// output); launches whose tile needs more shared memory than the device has run the two
// kernels. The fused kernels' results are checked on the GPU (tests/engine/cuda_fusion_test.cpp).
#include "core/error.h"
#include "decomp/decompose.h"
#include "engine/cuda_engine.h"
#include "ir/eval.h"
#include "ops/pipeline_json.h"
#include "schedule/bind.h"
#include "schedule/gpu_fuse.h"
#include "schedule/schedule.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>

namespace toroid {
namespace {

using namespace ir;

TensorSpec spec_of(DType dt, Dims shape, Layout layout) {
    TensorSpec s;
    s.dtype = dt;
    s.shape = shape;
    s.strides = dense_strides(shape, layout);
    return s;
}

struct Scheduled {
    Graph graph;
    Program program;
};

Scheduled schedule_cuda(const std::string& json, const TensorSpec& spec) {
    Scheduled s{decomp::decompose(parse_pipeline(json, "."), spec), {}};
    schedule::Options o;
    o.target = Target::cuda("sm_90");
    o.index_width = IndexWidth::I32;
    s.program = schedule::schedule(s.graph, o);
    return s;
}

const char* kAntialias = R"([{"op": "resize", "mode": "bilinear", "antialias": true, "size": [37, 53]}])";
const char* kAntialiasThenMore =
    R"([{"op": "resize", "mode": "bicubic", "antialias": true, "size": [40, 50]},
        {"op": "crop", "top": 3, "left": -2, "height": 30, "width": 45},
        {"op": "flip", "dims": [-1, -2]},
        {"op": "convert", "dtype": "float32", "scale": true},
        {"op": "normalize", "mean": [0.5, 0.4, 0.3], "std": [0.2, 0.25, 0.3]}])";
const char* kUpscale = R"([{"op": "resize", "mode": "bilinear", "antialias": true, "size": [300, 290]}])";
const char* kDownscale20 = R"([{"op": "resize", "mode": "bilinear", "antialias": true, "size": [6, 7]}])";

TEST(GpuFuse, SeparableResizesGetAFusedKernel) {
    for (const char* json : {kAntialias, kAntialiasThenMore, kUpscale, kDownscale20}) {
        for (DType dt : {DType::UInt8, DType::Float32}) {
            for (Layout layout : {Layout::Contiguous, Layout::ChannelsLast}) {
                SCOPED_TRACE(std::string(json) + " " + std::string(dtype_name(dt)) + " " + std::string(layout_name(layout)));
                const TensorSpec spec = spec_of(dt, {2, 3, 123, 145}, layout);
                const Scheduled s = schedule_cuda(json, spec);
                ASSERT_EQ(s.program.gpu_fusions.size(), 1u) << s.program.to_string();
                const GpuFusion& f = s.program.gpu_fusions[0];
                EXPECT_LT(f.producer, f.consumer);
                EXPECT_EQ(s.program.buffer(f.temp).role, BufferRole::Temp);
                const std::string src = cuda_source(parse_pipeline(json, "."), spec, "sm_90");
                EXPECT_NE(src.find("toroid_fused_" + std::to_string(f.consumer) + "(const toroid_args args, const toroid_tiles tiles)"),
                          std::string::npos);
                EXPECT_NE(src.find("__syncthreads();"), std::string::npos);
                // The two kernels stay for launches whose tile does not fit.
                EXPECT_NE(src.find("toroid_kernel_" + std::to_string(f.producer) + "("), std::string::npos);
                EXPECT_NE(src.find("toroid_kernel_" + std::to_string(f.consumer) + "("), std::string::npos);
            }
        }
    }
}

TEST(GpuFuse, OtherPipelinesHaveNone) {
    const char* single[] = {
        R"([{"op": "resize", "mode": "nearest", "size": [37, 53]}])",
        R"([{"op": "flip", "dims": [-1]}, {"op": "crop", "top": 1, "left": 2, "height": 30, "width": 40}])",
        R"([{"op": "affine", "theta": [[0.9, 0.1, 0.05], [-0.1, 0.9, 0.0]], "mode": "bilinear", "padding_mode": "zeros", "align_corners": false}])",
        // One separable pass only (the width does not change).
        R"([{"op": "resize", "mode": "bilinear", "antialias": true, "size": [37, 145]}])",
    };
    for (const char* json : single) {
        for (Layout layout : {Layout::Contiguous, Layout::ChannelsLast}) {
            SCOPED_TRACE(std::string(json) + " " + std::string(layout_name(layout)));
            const TensorSpec spec = spec_of(DType::Float32, {2, 3, 123, 145}, layout);
            const Scheduled s = schedule_cuda(json, spec);
            EXPECT_TRUE(s.program.gpu_fusions.empty()) << s.program.to_string();
            EXPECT_EQ(cuda_source(parse_pipeline(json, "."), spec, "sm_90").find("toroid_fused_"), std::string::npos);
        }
    }
    // Float bilinear without antialias is one kernel of taps x taps gathers: nothing to fuse.
    const Scheduled s =
        schedule_cuda(R"([{"op": "resize", "mode": "bilinear", "size": [37, 53]}])", spec_of(DType::Float32, {1, 3, 50, 60}, Layout::Contiguous));
    EXPECT_TRUE(s.program.gpu_fusions.empty());
}

// Every index the consumer reads of the intermediate, for every output of every tile and
// every tap, lies in that tile's range, and every range lies in the intermediate's region.
void check_tiles_cover_reads(const Scheduled& s, const schedule::Binding& b, const schedule::FusedLaunch& L) {
    const Program& p = s.program;
    const GpuFusion& f = p.gpu_fusions[0];
    const Kernel& k = p.kernels[static_cast<std::size_t>(f.consumer)];
    const Buffer& t = p.buffer(f.temp);
    VarValues vars;
    for (std::size_t i = 0; i < b.params.size(); ++i) vars[kFirstParamVar + static_cast<int>(i)] = b.params[i];
    const LoadFn load = [&](int buffer, const std::vector<std::int64_t>& index) {
        const GraphTensor& g = s.graph.at(p.buffer(buffer).tensor);
        const auto shape = s.graph.concrete_shape(g.id);
        std::int64_t off = 0;
        for (std::size_t d = 0; d < shape.size(); ++d) off = off * shape[d] + index[d];
        std::int32_t v = 0;
        EXPECT_EQ(g.type, Type::I32);
        std::memcpy(&v, g.data.data() + off * 4, 4);
        return Scalar::of_int(v);
    };
    int x = -1, y = -1;
    std::int64_t xb = 0, xe = 1, yb = 0, ye = 1;
    for (const Loop& l : k.loops) {
        if (l.kind == LoopKind::GridX) x = l.var, xb = eval_int(l.begin, vars), xe = eval_int(l.extent, vars);
        if (l.kind == LoopKind::GridY) y = l.var, yb = eval_int(l.begin, vars), ye = eval_int(l.extent, vars);
    }
    std::map<int, std::int64_t> taps;
    std::vector<Expr> loads;
    visit(k.value, [&](const Expr& e) {
        if (e->op == ir::Op::Sum) taps[e->var] = eval_int(sum_extent(e), vars);
        if (e->op == ir::Op::Load && e->buffer == f.temp) loads.push_back(e);
    });
    ASSERT_FALSE(loads.empty());
    const auto& region = b.shapes[static_cast<std::size_t>(f.temp)];
    std::int64_t checked = 0;
    for (std::size_t d = 0; d < t.shape.size(); ++d) {
        if (f.dims[d] != GpuFusion::DimKind::TiledX && f.dims[d] != GpuFusion::DimKind::TiledY) continue;
        const bool along_x = f.dims[d] == GpuFusion::DimKind::TiledX;
        const int v = along_x ? x : y;
        const std::int64_t begin = along_x ? xb : yb, extent = along_x ? xe : ye;
        const int size = along_x ? L.tile_x : L.tile_y;
        const std::int64_t origin = eval_int(t.origin[d], vars);
        ASSERT_GE(L.offset[d], 0);
        for (std::int64_t i = 0; i < extent; ++i) {
            const std::int64_t tile = i / size;
            const std::int32_t lo = L.ranges[static_cast<std::size_t>(2 * (L.offset[d] + tile))];
            const std::int32_t n = L.ranges[static_cast<std::size_t>(2 * (L.offset[d] + tile) + 1)];
            EXPECT_GE(lo, origin);
            EXPECT_LE(lo + n, origin + region[d]);
            VarValues vv = vars;
            if (v >= 0) vv[v] = begin + i;
            for (const Expr& l : loads) {
                std::set<int> red;
                visit(l->args[d], [&](const Expr& e) {
                    if (e->op == ir::Op::Var && e->var >= kFirstReductionVar && !is_param_var(e->var)) red.insert(e->var);
                });
                const int r = red.empty() ? -1 : *red.begin();
                const std::int64_t count = r < 0 ? 1 : taps.at(r);
                for (std::int64_t j = 0; j < count; ++j) {
                    if (r >= 0) vv[r] = j;
                    const std::int64_t a = eval_int(l->args[d], vv, load);
                    EXPECT_GE(a, lo) << "dim " << d << " tile " << tile << " value " << i << " tap " << j;
                    EXPECT_LT(a, lo + n) << "dim " << d << " tile " << tile << " value " << i << " tap " << j;
                    ++checked;
                }
            }
        }
    }
    EXPECT_GT(checked, 0);
}

TEST(GpuFuse, TileRangesCoverEveryRead) {
    struct Size {
        Dims in;
        const char* json;
    };
    const Size sizes[] = {
        {{2, 3, 123, 145}, kAntialias},
        {{1, 3, 1, 1}, kAntialias},
        {{1, 1, 1, 900}, kAntialias},
        {{3, 3, 700, 2}, kAntialias},
        {{2, 3, 123, 145}, kAntialiasThenMore},
        {{1, 3, 17, 19}, kUpscale},
        {{2, 3, 123, 145}, kDownscale20},
    };
    for (const Size& sz : sizes) {
        for (DType dt : {DType::UInt8, DType::Float32}) {
            for (Layout layout : {Layout::Contiguous, Layout::ChannelsLast}) {
                SCOPED_TRACE(std::string(sz.json) + " " + std::string(dtype_name(dt)) + " " +
                             std::string(layout_name(layout)) + " " + std::to_string(sz.in[2]) + "x" +
                             std::to_string(sz.in[3]));
                const Scheduled s = schedule_cuda(sz.json, spec_of(dt, sz.in, layout));
                if (s.program.gpu_fusions.empty()) continue;  // one pass only (a size of 1)
                const schedule::Binding b = schedule::bind(s.program, s.graph);
                const schedule::FusedLaunch L =
                    schedule::plan_fused_launch(s.program, s.program.gpu_fusions[0], b, schedule::FusedLimits{});
                ASSERT_TRUE(L.fused) << L.why;
                EXPECT_GT(L.shared_bytes, 0);
                EXPECT_LE(L.shared_bytes, schedule::FusedLimits{}.shared_limit);
                check_tiles_cover_reads(s, b, L);
            }
        }
    }
}

TEST(GpuFuse, TilesThatDoNotFitRunApart) {
    // A 20x downscale of a wide row: even one output's taps need more than 256 bytes.
    const Scheduled s = schedule_cuda(kDownscale20, spec_of(DType::Float32, {1, 3, 120, 140}, Layout::Contiguous));
    ASSERT_EQ(s.program.gpu_fusions.size(), 1u);
    const schedule::Binding b = schedule::bind(s.program, s.graph);
    schedule::FusedLimits small;
    small.shared_limit = 256;
    small.shared_budget = 256;
    const schedule::FusedLaunch L = schedule::plan_fused_launch(s.program, s.program.gpu_fusions[0], b, small);
    EXPECT_FALSE(L.fused);
    EXPECT_NE(L.why.find("shared memory"), std::string::npos) << L.why;
    // Within the device's limit but over the budget: the tile that needs the least.
    schedule::FusedLimits tight;
    tight.shared_budget = 1;
    const schedule::FusedLaunch M = schedule::plan_fused_launch(s.program, s.program.gpu_fusions[0], b, tight);
    ASSERT_TRUE(M.fused) << M.why;
    EXPECT_EQ(M.tile_x * M.tile_y, 1);
    // Turned off (the CUDA engine's $TOROID_CUDA_FUSE=0).
    schedule::FusedLimits off;
    off.fuse = false;
    const schedule::FusedLaunch N = schedule::plan_fused_launch(s.program, s.program.gpu_fusions[0], b, off);
    EXPECT_FALSE(N.fused);
    EXPECT_NE(N.why.find("TOROID_CUDA_FUSE=0"), std::string::npos) << N.why;
}

}  // namespace
}  // namespace toroid
