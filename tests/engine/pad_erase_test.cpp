// pad and erase: hand-checked values on a small image (each padding mode, negative padding,
// per-channel fills, erased regions by Python's slice rules) through the reference and the
// compiled engine, and the compiled engine equal to the reference bit for bit on random
// images: every mode, paddings of every sign, 1 and 3 channels, both layouts, uint8 and
// float32, alone and fused with the ops around them; chains of crops past the image's
// edges, merged into one read (decomp/decompose.cpp), equal to the reference likewise.
#include "engine/cuda_engine.h"
#include "engine/engine.h"
#include "engine_test_support.h"
#include "op_table_support.h"
#include "ops/pipeline_json.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace toroid {
namespace {

// A 1 x C x 3 x 4 uint8 image whose pixel (c, y, x) is 100 c + 10 y + x.
Tensor small_image(std::int64_t channels, Layout layout) {
    Tensor t = Tensor::empty(DType::UInt8, {1, channels, 3, 4}, layout);
    for (std::int64_t c = 0; c < channels; ++c)
        for (std::int64_t y = 0; y < 3; ++y)
            for (std::int64_t x = 0; x < 4; ++x) t.at<std::uint8_t>(0, c, y, x) = static_cast<std::uint8_t>(100 * c + 10 * y + x);
    return t;
}

// Channel c of a uint8 result as rows of values.
std::vector<std::vector<int>> plane(const Tensor& t, std::int64_t c) {
    std::vector<std::vector<int>> rows;
    for (std::int64_t y = 0; y < t.shape()[2]; ++y) {
        rows.emplace_back();
        for (std::int64_t x = 0; x < t.shape()[3]; ++x) rows.back().push_back(t.at<std::uint8_t>(0, c, y, x));
    }
    return rows;
}

using Rows = std::vector<std::vector<int>>;

class PadEraseValues : public ::testing::TestWithParam<std::string> {
protected:
    Tensor run(const std::string& json, const Tensor& in) {
        auto engine = make_engine(GetParam(), EngineOptions{});
        return engine->prepare(parse_pipeline(json, "."), in.spec())->run(in);
    }
};

TEST_P(PadEraseValues, PadModesByHand) {
    for (Layout l : {Layout::Contiguous, Layout::ChannelsLast}) {
        SCOPED_TRACE(std::string(layout_name(l)));
        const Tensor in = small_image(1, l);
        // Rows 0..2 are 0 1 2 3 / 10 11 12 13 / 20 21 22 23.
        EXPECT_EQ(plane(run(R"([{"op": "pad", "padding": [2, 1, 1, 0], "fill": 9}])", in), 0),
                  (Rows{{9, 9, 9, 9, 9, 9, 9}, {9, 9, 0, 1, 2, 3, 9}, {9, 9, 10, 11, 12, 13, 9}, {9, 9, 20, 21, 22, 23, 9}}));
        EXPECT_EQ(plane(run(R"([{"op": "pad", "padding": [2, 1, 1, 0], "mode": "edge"}])", in), 0),
                  (Rows{{0, 0, 0, 1, 2, 3, 3}, {0, 0, 0, 1, 2, 3, 3}, {10, 10, 10, 11, 12, 13, 13}, {20, 20, 20, 21, 22, 23, 23}}));
        EXPECT_EQ(plane(run(R"([{"op": "pad", "padding": [2, 1, 1, 0], "mode": "reflect"}])", in), 0),
                  (Rows{{12, 11, 10, 11, 12, 13, 12}, {2, 1, 0, 1, 2, 3, 2}, {12, 11, 10, 11, 12, 13, 12}, {22, 21, 20, 21, 22, 23, 22}}));
        EXPECT_EQ(plane(run(R"([{"op": "pad", "padding": [2, 1, 1, 0], "mode": "symmetric"}])", in), 0),
                  (Rows{{1, 0, 0, 1, 2, 3, 3}, {1, 0, 0, 1, 2, 3, 3}, {11, 10, 10, 11, 12, 13, 13}, {21, 20, 20, 21, 22, 23, 23}}));
        // Negative padding crops; reflect still mirrors about the input's own last column
        // (torch), symmetric about the cropped image's (torchvision crops first).
        EXPECT_EQ(plane(run(R"([{"op": "pad", "padding": [-2, -1, 2, 0], "mode": "reflect"}])", in), 0),
                  (Rows{{12, 13, 12, 11}, {22, 23, 22, 21}}));
        EXPECT_EQ(plane(run(R"([{"op": "pad", "padding": [-2, -1, 2, 0], "mode": "symmetric"}])", in), 0),
                  (Rows{{12, 13, 13, 12}, {22, 23, 23, 22}}));
        EXPECT_EQ(plane(run(R"([{"op": "pad", "padding": [-1, -1, 1, -1], "mode": "edge"}])", in), 0), (Rows{{11, 12, 13, 13}}));
        EXPECT_EQ(plane(run(R"([{"op": "pad", "padding": [-3, 0, 0, -2], "fill": 200}])", in), 0), (Rows{{3}}));
        // A fill of 127.9 is truncated for uint8 (torch's fill_).
        EXPECT_EQ(plane(run(R"([{"op": "pad", "padding": [0, 0, 1, 0], "fill": 127.9}])", in), 0),
                  (Rows{{0, 1, 2, 3, 127}, {10, 11, 12, 13, 127}, {20, 21, 22, 23, 127}}));
    }
}

TEST_P(PadEraseValues, FillsAndErasedValuesPerChannel) {
    for (Layout l : {Layout::Contiguous, Layout::ChannelsLast}) {
        SCOPED_TRACE(std::string(layout_name(l)));
        const Tensor in = small_image(3, l);
        // One fill per channel: a float32 tensor converted to uint8 (300 -> 44, -1.5 -> 255).
        const Tensor padded = run(R"([{"op": "pad", "padding": [1, 0, 0, 0], "fill": [5, 300, -1.5]}])", in);
        EXPECT_EQ(plane(padded, 0), (Rows{{5, 0, 1, 2, 3}, {5, 10, 11, 12, 13}, {5, 20, 21, 22, 23}}));
        EXPECT_EQ(plane(padded, 1), (Rows{{44, 100, 101, 102, 103}, {44, 110, 111, 112, 113}, {44, 120, 121, 122, 123}}));
        EXPECT_EQ(plane(padded, 2), (Rows{{255, 200, 201, 202, 203}, {255, 210, 211, 212, 213}, {255, 220, 221, 222, 223}}));
        // Erase rows 1:3 and columns -2:10 (-> 2:4) with one value per channel.
        const Tensor erased = run(R"([{"op": "erase", "top": 1, "left": -2, "height": 5, "width": 12, "value": [7, 8.9, 255.5]}])", in);
        EXPECT_EQ(plane(erased, 0), (Rows{{0, 1, 2, 3}, {10, 11, 7, 7}, {20, 21, 7, 7}}));
        EXPECT_EQ(plane(erased, 1), (Rows{{100, 101, 102, 103}, {110, 111, 8, 8}, {120, 121, 8, 8}}));
        EXPECT_EQ(plane(erased, 2), (Rows{{200, 201, 202, 203}, {210, 211, 255, 255}, {220, 221, 255, 255}}));
        // An empty region leaves the image as it is.
        const Tensor same = run(R"([{"op": "erase", "top": 2, "left": 1, "height": -1, "width": 2, "value": 0}])", in);
        EXPECT_TRUE(test::identical(same, in));
    }
}

INSTANTIATE_TEST_SUITE_P(Engines, PadEraseValues, ::testing::Values("reference", "compiled"));

TEST(PadErase, CompiledEqualsReferenceOnRandomImages) {
    auto compiled = make_engine("compiled", EngineOptions{});
    auto reference = make_engine("reference", EngineOptions{});
    const std::vector<std::string> pipelines = {
        R"([{"op": "pad", "padding": [3, 2, 5, 1], "fill": [10, 20, 30]}])",
        R"([{"op": "pad", "padding": [-2, 4, 3, -1], "fill": 0.5}])",
        R"([{"op": "pad", "padding": [0, -3, 0, 2], "fill": 250}])",
        R"([{"op": "pad", "padding": [-1, -2, -3, -4]}])",
        R"([{"op": "pad", "padding": [4, 4, 4, 4], "mode": "edge"}])",
        R"([{"op": "pad", "padding": [-3, 2, 6, -2], "mode": "edge"}])",
        R"([{"op": "pad", "padding": [5, 4, 6, 3], "mode": "reflect"}])",
        R"([{"op": "pad", "padding": [-4, 2, 5, -1], "mode": "reflect"}])",
        R"([{"op": "pad", "padding": [7, 5, 3, 6], "mode": "symmetric"}])",
        R"([{"op": "pad", "padding": [-4, 2, 3, -1], "mode": "symmetric"}])",
        R"([{"op": "erase", "top": 2, "left": 3, "height": 4, "width": 5, "value": [1, 2, 3]}])",
        R"([{"op": "erase", "top": -3, "left": -30, "height": 9, "width": 25, "value": 0}])",
        R"([{"op": "erase", "top": 0, "left": 0, "height": 100, "width": 100, "value": 3.75}])",
        // Fused with the ops around them.
        R"([{"op": "resize", "size": [9, 13], "mode": "bilinear", "antialias": true},
            {"op": "pad", "padding": [4, 3, 2, 5], "mode": "reflect"}, {"op": "flip", "dims": [3]},
            {"op": "convert", "dtype": "float32", "scale": true}])",
        R"([{"op": "pad", "padding": [4, 4, 4, 4], "fill": [1, 2, 3]}, {"op": "crop", "top": 3, "left": 5, "height": 8, "width": 9},
            {"op": "erase", "top": 1, "left": 2, "height": 3, "width": 4, "value": [9, 8, 7]}])",
        R"([{"op": "pad", "padding": [2, 1, 2, 1], "mode": "symmetric"}, {"op": "pad", "padding": [-1, 3, 2, 0], "mode": "edge"},
            {"op": "erase", "top": 2, "left": 2, "height": 2, "width": 2, "value": 5}])",
    };
    std::uint32_t seed = 7;
    for (const std::string& text : pipelines) {
        Pipeline p = parse_pipeline(text, ".");
        for (DType dt : {DType::UInt8, DType::Float32}) {
            for (std::int64_t c : {1, 3}) {
                for (Layout l : {Layout::Contiguous, Layout::ChannelsLast}) {
                    for (const Dims& hw : {Dims{0, 0, 12, 17}, Dims{0, 0, 8, 70}}) {
                        const Tensor in = test::random_image(dt, {2, c, hw[2], hw[3]}, l, seed++);
                        Pipeline q = p;
                        // Per-channel values on a 1-channel image: one value for all.
                        for (Op& op : q.ops) {
                            if (auto* pad = std::get_if<PadOp>(&op); pad && c == 1 && pad->fill.size() > 1) pad->fill = std::vector<double>(1, pad->fill[0]);
                            if (auto* e = std::get_if<EraseOp>(&op); e && c == 1 && e->value.size() > 1) e->value = std::vector<double>(1, e->value[0]);
                        }
                        SCOPED_TRACE(text + " " + std::string(dtype_name(dt)) + " C=" + std::to_string(c) + " " +
                                     std::string(layout_name(l)) + " W=" + std::to_string(hw[3]));
                        const Tensor want = reference->prepare(q, in.spec())->run(in);
                        const Tensor got = compiled->prepare(q, in.spec())->run(in);
                        if (dt == DType::Float32 && text.find("resize") != std::string::npos) {
                            // A float32 separable resize may run its passes in the other
                            // order than the reference (docs/architecture.md): rounding only.
                            EXPECT_LE(test::max_difference(got, want), 1e-5);
                        } else {
                            EXPECT_TRUE(test::identical(got, want)) << "max difference " << test::max_difference(got, want);
                        }
                    }
                }
            }
        }
    }
}

// Erased rectangles on rows long enough for the row loop's parts (schedule/partition.h):
// parts longer and shorter than a vector, at the row's start and end, empty, and the whole
// row, for uint8 (64-byte lanes) and float32 (16 lanes), against the reference engine.
TEST(PadErase, PartitionedRowsEqualTheReference) {
    auto compiled = make_engine("compiled", EngineOptions{});
    auto reference = make_engine("reference", EngineOptions{});
    const std::vector<std::pair<int, int>> columns = {{0, 200}, {0, 70}, {5, 80}, {130, 70}, {150, 10}, {64, 64},
                                                      {199, 1}, {0, 0}, {3, 2}, {-90, 60}, {20, 300}};
    std::uint32_t seed = 11;
    for (DType dt : {DType::UInt8, DType::Float32}) {
        for (const auto& [left, width] : columns) {
            const std::string text = fmt::format(
                R"([{{"op": "erase", "top": 3, "left": {}, "height": 9, "width": {}, "value": [7, 8, 9]}}])", left, width);
            SCOPED_TRACE(text + " " + std::string(dtype_name(dt)));
            const Tensor in = test::random_image(dt, {2, 3, 16, 200}, Layout::Contiguous, seed++);
            const Pipeline p = parse_pipeline(text, ".");
            EXPECT_TRUE(test::identical(compiled->prepare(p, in.spec())->run(in), reference->prepare(p, in.spec())->run(in)));
        }
    }
}

// Chains of crops, each merged into one masked read of the chain's source: regions inside,
// past every edge, larger than the image, wholly outside (zeros), center crops, and crops on
// both sides of other ops (a flip, a resize, a pad between them ends the chain). Found by
// the Python fuzzer: the last two ended in a division by zero (kernels nobody read, with
// regions of no elements).
TEST(CropChains, CompiledEqualsReferenceOnRandomImages) {
    const std::vector<std::string> pipelines = {
        R"([{"op": "crop", "top": -2, "left": 3, "height": 9, "width": 6}, {"op": "crop", "top": 1, "left": -2, "height": 8, "width": 9}])",
        R"([{"op": "crop", "top": 2, "left": 2, "height": 5, "width": 5}, {"op": "crop", "top": -3, "left": -1, "height": 11, "width": 7},
            {"op": "center_crop", "size": [4, 12]}, {"op": "crop", "top": 1, "left": 1, "height": 2, "width": 3}])",
        R"([{"op": "crop", "top": 30, "left": 0, "height": 4, "width": 4}, {"op": "crop", "top": -1, "left": -1, "height": 6, "width": 6}])",
        R"([{"op": "center_crop", "size": [20, 3]}, {"op": "center_crop", "size": [9, 9]}, {"op": "flip", "dims": [3]},
            {"op": "crop", "top": -1, "left": 2, "height": 5, "width": 5}])",
        R"([{"op": "crop", "top": -3, "left": -3, "height": 12, "width": 12}, {"op": "pad", "padding": [1, 2, 0, 1], "mode": "reflect"},
            {"op": "crop", "top": 2, "left": -1, "height": 9, "width": 9}, {"op": "crop", "top": 0, "left": 0, "height": 7, "width": 7}])",
        R"([{"op": "crop", "top": -1, "left": -2, "height": 10, "width": 11},
            {"op": "resize", "size": [6, 6], "mode": "bilinear"}, {"op": "crop", "top": 1, "left": -1, "height": 5, "width": 7}])",
        // Wholly outside after ops whose intermediates it then reads none of (the resize's
        // separable pass), or whose reads simplify away (an equalized image of zeros).
        R"([{"op": "resize", "mode": "bilinear", "size": [7, 13], "antialias": true}, {"op": "crop", "top": 15, "left": 8,
            "height": 6, "width": 29}, {"op": "pad", "padding": [-3, 5, -4, 4], "mode": "edge"}])",
        R"([{"op": "crop", "top": 2, "left": 20, "height": 28, "width": 7}, {"op": "equalize"}])",
    };
    test::expect_compiled_matches_reference(pipelines, {Dims{1, 1, 7, 9}, Dims{1, 1, 10, 6}});
}

// The CUDA generator's sources for pad and erase (fill and value tables of both dtypes,
// mirrored indices) compile with clang's CUDA front end and no SDK where clang can
// (scripts/check-cuda-source.sh); running them is the GPU machine's job.
TEST(PadErase, CudaSourcesCompileWithoutAnSdk) {
    const char* pipelines[] = {
        R"([{"op": "pad", "padding": [3, 2, 5, 1], "fill": [10, 20, 30]}])",
        R"([{"op": "pad", "padding": [-2, 4, 3, -1], "mode": "reflect"}, {"op": "erase", "top": 1, "left": 2,
            "height": 3, "width": 4, "value": [1, 2, 3]}])",
        R"([{"op": "pad", "padding": [4, 1, 2, 3], "mode": "symmetric"}, {"op": "pad", "padding": 1, "mode": "edge"}])",
    };
    test::expect_cuda_sources_compile(test::cuda_sources_of({std::begin(pipelines), std::end(pipelines)}, Dims{2, 3, 12, 17}));
}

}  // namespace
}  // namespace toroid
