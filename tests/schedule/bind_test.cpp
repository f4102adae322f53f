// Binding (schedule/bind.cpp): the region of a realized intermediate is what its consumers
// read, worked out through the tables they index with over the rows and columns they
// actually cover. A center crop after an antialiased resize computes the first pass over
// the rows the second pass reads, not over every input row (tight), and no region is ever
// smaller than what a consumer reads: every load of every intermediate is checked, point by
// point with the interpreter, for many pipelines on the CPU's and the GPU's programs.
#include "decomp/decompose.h"
#include "ir/eval.h"
#include "ops/pipeline_json.h"
#include "ops/resize_math.h"
#include "schedule/bind.h"
#include "schedule/schedule.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace toroid {
namespace {

TensorSpec spec_of(DType dt, const Dims& shape, Layout layout) {
    return TensorSpec{dt, shape, dense_strides(shape, layout)};
}

// Thrown by the load callback below at the first read outside a region (after the failure
// is recorded), to stop evaluating that kernel.
struct OutsideRegion {};

struct Bound {
    ir::Program program;
    ir::Graph graph;
    schedule::Binding binding;
};

Bound bind_for(const std::string& json, const TensorSpec& in, const Target& target) {
    Bound b;
    b.graph = decomp::decompose(parse_pipeline(json, "."), in);
    schedule::Options o;
    o.target = target;
    o.index_width = schedule::fits_index32(b.graph) ? ir::IndexWidth::I32 : ir::IndexWidth::I64;
    b.program = schedule::schedule(b.graph, o);
    b.binding = schedule::bind(b.program, b.graph);
    return b;
}

// [origin, origin + extent) of `buf` along each dim, as bound.
std::vector<std::pair<std::int64_t, std::int64_t>> region_of(const Bound& b, const ir::Buffer& buf) {
    std::vector<std::pair<std::int64_t, std::int64_t>> r;
    for (std::size_t d = 0; d < buf.shape.size(); ++d) {
        const std::int64_t o = ir::eval_params(buf.origin[d], b.binding.params);
        r.emplace_back(o, o + b.binding.shapes[static_cast<std::size_t>(buf.id)][d]);
    }
    return r;
}

// Every index at which a kernel reads an intermediate, at every point of its loops and every
// tap of its sums (the interpreter: tables give their data, images and intermediates 0),
// lies inside the intermediate's bound region. Returns the number of loads checked.
std::int64_t expect_regions_cover_reads(const Bound& b) {
    const ir::Program& p = b.program;
    std::int64_t checked = 0;
    for (const ir::Kernel& k : p.kernels) {
        std::vector<std::int64_t> lo, n;
        bool empty = false;
        for (const ir::Loop& l : k.loops) {
            lo.push_back(ir::eval_params(l.begin, b.binding.params));
            n.push_back(ir::eval_params(l.extent, b.binding.params));
            empty |= n.back() <= 0;
        }
        if (empty) continue;
        ir::VarValues vars;
        for (std::size_t i = 0; i < b.binding.params.size(); ++i)
            vars[ir::kFirstParamVar + static_cast<int>(i)] = b.binding.params[i];
        const ir::LoadFn load = [&](int id, const std::vector<std::int64_t>& index) -> ir::Scalar {
            const ir::Buffer& buf = p.buffer(id);
            if (buf.role == ir::BufferRole::Temp) {
                ++checked;
                const auto region = region_of(b, buf);
                for (std::size_t d = 0; d < index.size(); ++d)
                    if (index[d] < region[d].first || index[d] >= region[d].second) {
                        ADD_FAILURE() << k.name << " reads " << buf.name << " at " << index[d] << " along dim " << d
                                      << ", outside its region [" << region[d].first << ", " << region[d].second << ")";
                        throw OutsideRegion{};
                    }
                return {};
            }
            if (buf.role != ir::BufferRole::Constant) return {};
            const auto& shape = b.binding.shapes[static_cast<std::size_t>(id)];
            std::size_t at = 0;
            for (std::size_t d = 0; d < index.size(); ++d) at = at * static_cast<std::size_t>(shape[d]) + static_cast<std::size_t>(index[d]);
            const auto* data = static_cast<const std::uint8_t*>(b.binding.tables[static_cast<std::size_t>(id)]);
            const std::size_t bytes = ir::type_bytes(buf.type);
            std::int64_t i = 0;
            switch (buf.type) {
                case ir::Type::F32: {
                    float f;
                    std::memcpy(&f, data + at * bytes, sizeof f);
                    return ir::Scalar::of_float(f);
                }
                case ir::Type::U8: return ir::Scalar::of_int(data[at]);
                case ir::Type::I16: {
                    std::int16_t v;
                    std::memcpy(&v, data + at * bytes, sizeof v);
                    i = v;
                    break;
                }
                case ir::Type::I32: {
                    std::int32_t v;
                    std::memcpy(&v, data + at * bytes, sizeof v);
                    i = v;
                    break;
                }
                default: std::memcpy(&i, data + at * bytes, sizeof i);
            }
            return ir::Scalar::of_int(i);
        };
        // Odometer over the loop nest.
        std::vector<std::int64_t> at(k.loops.size(), 0);
        for (;;) {
            for (std::size_t i = 0; i < k.loops.size(); ++i) vars[k.loops[i].var] = lo[i] + at[i];
            try {
                ir::evaluate(k.value, vars, load);
            } catch (const OutsideRegion&) {
                return checked;
            }
            std::size_t i = k.loops.size();
            while (i > 0 && ++at[i - 1] == n[i - 1]) at[--i] = 0;
            if (i == 0) break;
        }
    }
    return checked;
}

TEST(Bind, CropAfterResizeReadsOnlyTheRowsTheCropNeeds) {
    // The loader's eval transform on a 500x700 channels-last image: the horizontal pass
    // covers the rows the vertical pass reads for the 224 cropped rows, not all 500.
    const std::string json = R"([{"op": "resize", "mode": "bilinear", "antialias": true, "smaller_edge": 256},
        {"op": "center_crop", "size": 224}, {"op": "convert", "dtype": "float32", "scale": true},
        {"op": "normalize", "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}])";
    const TensorSpec in = spec_of(DType::UInt8, {1, 3, 500, 700}, Layout::ChannelsLast);
    const Bound b = bind_for(json, in, Target::host_cpu());
    const ir::Buffer* temp = nullptr;
    for (const ir::Buffer& buf : b.program.buffers)
        if (buf.role == ir::BufferRole::Temp) temp = &buf;
    ASSERT_NE(temp, nullptr);

    // What the vertical pass reads: rows start[y] .. start[y] + taps - 1 of the rows y the
    // crop keeps (PyTorch's runs, shifted inside the image as the decomposition does).
    ResizeOp op;
    op.mode = ResizeMode::Bilinear;
    op.antialias = true;
    op.smaller_edge = 256;
    const ResizePlan plan = plan_resize(op, in);
    ASSERT_EQ(plan.out_h, 256);
    ASSERT_EQ(plan.out_w, 358);
    CropOp crop;
    crop.height = crop.width = 224;
    crop.center = true;
    const auto [top, left] = crop_origin(crop, plan.out_h, plan.out_w);
    const std::int64_t taps = std::min<std::int64_t>(plan.h.taps, 500);
    std::int64_t first = 500, last = -1;
    for (std::int64_t y = top; y < top + 224; ++y) {
        const std::int64_t start = std::clamp<std::int64_t>(plan.h.first[static_cast<std::size_t>(y)], 0, 500 - taps);
        first = std::min(first, start);
        last = std::max(last, start + taps - 1);
    }
    const auto region = region_of(b, *temp);
    EXPECT_EQ(region[2].first, first);
    EXPECT_EQ(region[2].second, last + 1);
    EXPECT_LT(region[2].second - region[2].first, 460);  // about 441 of 500 rows
    EXPECT_EQ(region[3].first, left);                     // the columns: the crop's
    EXPECT_EQ(region[3].second, left + 224);
    // Tight: one row less and the check below finds a read outside (the check can fail).
    Bound small = bind_for(json, spec_of(DType::UInt8, {1, 3, 50, 70}, Layout::ChannelsLast), Target::host_cpu());
    EXPECT_GT(expect_regions_cover_reads(small), 0);
    for (const ir::Buffer& buf : small.program.buffers)
        if (buf.role == ir::BufferRole::Temp) small.binding.shapes[static_cast<std::size_t>(buf.id)][2] -= 1;
    EXPECT_NONFATAL_FAILURE(expect_regions_cover_reads(small), "outside its region");
}

TEST(Bind, RegionsCoverEveryReadOnCpuAndGpuPrograms) {
    // Crops at the corners and past the edges (padding), flips, upscales, 1-pixel outputs
    // and inputs, one-row and one-column images, float passes in either order, nearest and
    // 2-D interpolation tables, warps.
    const std::vector<std::string> pipelines = {
        R"([{"op": "resize", "mode": "bilinear", "antialias": true, "smaller_edge": 24}, {"op": "center_crop", "size": 20}])",
        R"([{"op": "resize", "mode": "bicubic", "antialias": true, "size": [13, 17]},
            {"op": "crop", "top": 0, "left": 0, "height": 5, "width": 4}])",
        R"([{"op": "resize", "mode": "bilinear", "antialias": true, "size": [13, 17]},
            {"op": "crop", "top": 8, "left": 13, "height": 5, "width": 4}])",
        R"([{"op": "resize", "mode": "bilinear", "antialias": true, "size": [13, 17]},
            {"op": "crop", "top": -3, "left": 11, "height": 20, "width": 9}])",
        R"([{"op": "resize", "mode": "bilinear", "antialias": true, "size": [12, 15]}, {"op": "flip", "dims": [-1, -2]},
            {"op": "crop", "top": 1, "left": 2, "height": 6, "width": 5}])",
        R"([{"op": "resize", "mode": "bilinear", "antialias": true, "scale_factor": [2.5, 1.75]},
            {"op": "crop", "top": 30, "left": 3, "height": 7, "width": 9}])",
        R"([{"op": "resize", "mode": "bilinear", "antialias": true, "size": [1, 1]}])",
        R"([{"op": "resize", "mode": "bilinear", "antialias": true, "size": [9, 1]}, {"op": "center_crop", "size": [3, 1]}])",
        R"([{"op": "convert", "dtype": "float32"}, {"op": "resize", "mode": "bicubic", "antialias": true, "size": [6, 30]},
            {"op": "crop", "top": 1, "left": 20, "height": 4, "width": 10}])",
        R"([{"op": "convert", "dtype": "float32"}, {"op": "resize", "mode": "bilinear", "antialias": true, "size": [30, 6]},
            {"op": "crop", "top": 25, "left": 0, "height": 5, "width": 3}])",
        R"([{"op": "resize", "mode": "nearest", "size": [19, 23]}, {"op": "crop", "top": 4, "left": 6, "height": 8, "width": 9}])",
        R"([{"op": "convert", "dtype": "float32"}, {"op": "resize", "mode": "bicubic", "size": [21, 16]},
            {"op": "center_crop", "size": 7}])",
        R"([{"op": "resize", "mode": "bilinear", "antialias": true, "size": [20, 20]},
            {"op": "resize", "mode": "bilinear", "antialias": true, "size": [9, 11]},
            {"op": "crop", "top": 2, "left": 5, "height": 4, "width": 6}])",
        R"([{"op": "convert", "dtype": "float32"}, {"op": "affine", "theta": [[0.9, 0.1, 0.05], [-0.2, 1.1, 0.0]]},
            {"op": "resize", "mode": "bilinear", "antialias": true, "size": [8, 8]}, {"op": "center_crop", "size": 5}])",
    };
    const std::vector<Dims> sizes = {{1, 3, 31, 40}, {1, 3, 40, 31}, {2, 1, 9, 13}, {1, 3, 1, 7}, {1, 3, 7, 1}, {1, 2, 1, 1}};
    const Target targets[] = {Target::host_cpu(), Target::cuda("sm_90")};
    std::int64_t checked = 0;
    for (const std::string& json : pipelines)
        for (const Dims& s : sizes)
            for (Layout l : {Layout::Contiguous, Layout::ChannelsLast})
                for (const Target& t : targets) {
                    SCOPED_TRACE(json + " on " + std::to_string(s[2]) + "x" + std::to_string(s[3]) +
                                 (l == Layout::ChannelsLast ? " channels-last" : " contiguous") + " for " + t.name());
                    checked += expect_regions_cover_reads(bind_for(json, spec_of(DType::UInt8, s, l), t));
                    if (::testing::Test::HasFailure()) return;
                }
    EXPECT_GT(checked, 10000);
}

}  // namespace
}  // namespace toroid
