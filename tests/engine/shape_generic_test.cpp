// One compiled program for every image size: images of many sizes through one pipeline
// compile once and match the reference engine; torchvision's aspect-preserving resize and
// center crop (sizes and anchors); batches of differently sized images in one call, with a
// bad item reported and skipped.
#include "core/error.h"
#include "engine/engine.h"
#include "engine_test_support.h"
#include "ops/pipeline_json.h"
#include "ops/resize_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>

namespace toroid {
namespace {

Pipeline parse_pipeline(const std::string& text) { return toroid::parse_pipeline(text, "."); }

using test::random_image;

void expect_equal(const Tensor& a, const Tensor& b, double tol) {
    ASSERT_EQ(a.shape(), b.shape());
    ASSERT_EQ(a.dtype(), b.dtype());
    const Dims& s = a.shape();
    for (std::int64_t n = 0; n < s[0]; ++n)
        for (std::int64_t c = 0; c < s[1]; ++c)
            for (std::int64_t h = 0; h < s[2]; ++h)
                for (std::int64_t w = 0; w < s[3]; ++w) {
                    const double x = a.dtype() == DType::UInt8 ? a.at<std::uint8_t>(n, c, h, w) : a.at<float>(n, c, h, w);
                    const double y = b.dtype() == DType::UInt8 ? b.at<std::uint8_t>(n, c, h, w) : b.at<float>(n, c, h, w);
                    ASSERT_LE(std::fabs(x - y), tol) << "at (" << n << "," << c << "," << h << "," << w << ")";
                }
}

const char* kEvalTransform = R"([
  {"op": "resize", "mode": "bilinear", "antialias": true, "smaller_edge": 64},
  {"op": "center_crop", "size": 56},
  {"op": "convert", "dtype": "float32", "scale": true},
  {"op": "normalize", "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}])";

TEST(ShapeGeneric, ManySizesOneCompile) {
    const Pipeline p = parse_pipeline(kEvalTransform);
    auto compiled = make_engine("compiled", EngineOptions{});
    auto reference = make_engine("reference", EngineOptions{});
    int builds = 0, shared = 0;
    // Down- and upscales, both orientations, odd sizes: one structure, one program. (An
    // image already at the target size is a copy: a structure of its own, not tried here.)
    const std::vector<Dims> sizes = {{1, 3, 97, 130}, {1, 3, 130, 97}, {1, 3, 67, 65}, {2, 3, 301, 75},
                                     {1, 3, 71, 333}, {1, 3, 57, 60}, {3, 3, 140, 141}};
    std::uint32_t seed = 1;
    for (const Dims& s : sizes) {
        for (Layout l : {Layout::Contiguous, Layout::ChannelsLast}) {
            const Tensor in = random_image(DType::UInt8, s, l, seed++);
            auto prepared = compiled->prepare(p, in.spec());
            const PrepareStats st = prepared->stats();
            builds += st.compiled + st.disk_hits;
            shared += st.memory_hits;
            expect_equal(prepared->run(in), reference->prepare(p, in.spec())->run(in), 1e-5);
        }
    }
    // One program per layout class at most (a build, or a disk hit of an earlier run).
    EXPECT_LE(builds, 2);
    EXPECT_GE(shared, static_cast<int>(2 * sizes.size()) - 2);
}

TEST(ShapeGeneric, ThinAndOnePixelImages) {
    const char* pipelines[] = {
        R"([{"op": "resize", "mode": "bicubic", "antialias": true, "size": [5, 3]}])",
        R"([{"op": "resize", "mode": "bilinear", "size": [1, 7]}, {"op": "flip", "dims": [-1, -2]}])",
        R"([{"op": "convert", "dtype": "float32"}, {"op": "affine", "theta": [[0.9, 0.1, 0.05], [-0.2, 1.1, 0.0]],
            "mode": "bicubic", "padding_mode": "reflection"}])",
        R"([{"op": "center_crop", "size": [4, 9]}, {"op": "resize", "mode": "nearest-exact", "scale_factor": [1.7, 0.6]}])",
    };
    auto compiled = make_engine("compiled", EngineOptions{});
    auto reference = make_engine("reference", EngineOptions{});
    std::uint32_t seed = 7;
    for (const char* text : pipelines) {
        const Pipeline p = parse_pipeline(text);
        for (const Dims& s : std::vector<Dims>{{1, 3, 1, 1}, {1, 3, 1, 40}, {2, 1, 33, 1}, {1, 4, 2, 2}, {1, 3, 17, 6}}) {
            const Tensor in = random_image(DType::UInt8, s, Layout::ChannelsLast, seed++);
            SCOPED_TRACE(std::string(text) + " on " + std::to_string(s[2]) + "x" + std::to_string(s[3]));
            expect_equal(compiled->prepare(p, in.spec())->run(in), reference->prepare(p, in.spec())->run(in), 1e-4);
        }
    }
}

TEST(ShapeGeneric, SmallerEdgeAndMaxSizeFollowTorchvision) {
    ResizeOp op;
    op.mode = ResizeMode::Bilinear;
    op.smaller_edge = 256;
    // int(256 * long / short), the smaller edge exactly 256.
    EXPECT_EQ(resize_output_size(op, 375, 500), (std::array<std::int64_t, 2>{256, 341}));
    EXPECT_EQ(resize_output_size(op, 500, 375), (std::array<std::int64_t, 2>{341, 256}));
    EXPECT_EQ(resize_output_size(op, 300, 300), (std::array<std::int64_t, 2>{256, 256}));
    EXPECT_EQ(resize_output_size(op, 199, 1000), (std::array<std::int64_t, 2>{256, 1286}));
    // The longer edge capped by max_size: the shorter one int(max_size * 256 / 1286).
    op.max_size = 800;
    EXPECT_EQ(resize_output_size(op, 199, 1000), (std::array<std::int64_t, 2>{159, 800}));
    EXPECT_EQ(resize_output_size(op, 375, 500), (std::array<std::int64_t, 2>{256, 341}));
    // max_size alone: the longer edge.
    ResizeOp longer;
    longer.mode = ResizeMode::Bilinear;
    longer.max_size = 100;
    EXPECT_EQ(resize_output_size(longer, 375, 500), (std::array<std::int64_t, 2>{75, 100}));
    EXPECT_THROW(parse_pipeline(R"([{"op": "resize", "smaller_edge": 256, "max_size": 200}])"), Error);
    EXPECT_THROW(parse_pipeline(R"([{"op": "resize", "smaller_edge": 256, "size": [2, 2]}])"), Error);
    EXPECT_EQ(pipeline_to_json(parse_pipeline(R"([{"op": "resize", "smaller_edge": 256, "max_size": 300}])")),
              R"([{"max_size":300,"mode":"nearest","op":"resize","smaller_edge":256}])");
}

TEST(ShapeGeneric, CenterCropAnchorsAndPadding) {
    CropOp c;
    c.center = true;
    c.height = 4;
    c.width = 4;
    // round((size - crop) / 2) with halves to even: 1.5 -> 2, 2.5 -> 2, 3.5 -> 4.
    EXPECT_EQ(crop_origin(c, 7, 9), (std::array<std::int64_t, 2>{2, 2}));
    EXPECT_EQ(crop_origin(c, 11, 4), (std::array<std::int64_t, 2>{4, 0}));
    // A crop larger than the image pads it, the smaller half of the padding first.
    EXPECT_EQ(crop_origin(c, 1, 2), (std::array<std::int64_t, 2>{-1, -1}));
    const Pipeline p = parse_pipeline(R"([{"op": "center_crop", "size": [6, 3]}])");
    EXPECT_EQ(op_name(p.ops[0]), "center_crop");
    const Tensor in = random_image(DType::UInt8, {1, 2, 3, 5}, Layout::Contiguous, 3);
    for (const char* engine : {"reference", "compiled"}) {
        const Tensor out = make_engine(engine, EngineOptions{})->prepare(p, in.spec())->run(in);
        ASSERT_EQ(out.shape(), (Dims{1, 2, 6, 3}));
        // Rows: 3 of padding split 1 above and 2 below; columns start at round(2 / 2) = 1.
        for (std::int64_t c2 = 0; c2 < 2; ++c2)
            for (std::int64_t h = 0; h < 6; ++h)
                for (std::int64_t w = 0; w < 3; ++w) {
                    const std::uint8_t expect = h >= 1 && h < 4 ? in.at<std::uint8_t>(0, c2, h - 1, w + 1) : 0;
                    EXPECT_EQ(out.at<std::uint8_t>(0, c2, h, w), expect) << engine << " " << h << " " << w;
                }
    }
}

TEST(ShapeGeneric, RandomCropOffsetsNeedNoNewCompile) {
    auto compiled = make_engine("compiled", EngineOptions{});
    auto reference = make_engine("reference", EngineOptions{});
    const Tensor in = random_image(DType::Float32, {1, 3, 40, 50}, Layout::Contiguous, 9);
    int builds = 0;
    for (int k = 0; k < 6; ++k) {
        Pipeline p;
        CropOp c;
        c.top = 3 * k;
        c.left = 5 * k + 1;
        c.height = 16;
        c.width = 20;
        AffineOp a;
        a.theta = {{{1.0 - 0.05 * k, 0.1 * k, 0.02}, {-0.1 * k, 1.0, 0.01 * k}}};
        a.mode = GridMode::Bilinear;
        p.ops = {c, a};
        auto prepared = compiled->prepare(p, in.spec());
        builds += prepared->stats().compiled + prepared->stats().disk_hits;
        expect_equal(prepared->run(in), reference->prepare(p, in.spec())->run(in), 1e-5);
    }
    EXPECT_LE(builds, 1);  // new offsets and matrices are values, not code
}

TEST(ShapeGeneric, BatchOfDifferentSizesSkipsBadItems) {
    const Pipeline p = parse_pipeline(kEvalTransform);
    auto reference = make_engine("reference", EngineOptions{});
    std::vector<BatchItem> items;
    const std::vector<Dims> sizes = {{1, 3, 80, 120}, {1, 3, 200, 61}, {1, 3, 64, 64}, {1, 3, 33, 90}, {1, 3, 150, 150}};
    Tensor stacked = Tensor::empty(DType::Float32, {static_cast<std::int64_t>(sizes.size()), 3, 56, 56});
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        BatchItem it;
        it.input = random_image(DType::UInt8, sizes[i], i % 2 ? Layout::ChannelsLast : Layout::Contiguous,
                                static_cast<std::uint32_t>(20 + i));
        it.output = stacked.slice(0, static_cast<std::int64_t>(i), 1);
        items.push_back(it);
    }
    // A bad item: its output has the wrong shape. It fails alone.
    BatchItem bad;
    bad.input = random_image(DType::UInt8, {1, 3, 70, 70}, Layout::Contiguous, 99);
    bad.output = Tensor::empty(DType::Float32, {1, 3, 10, 10});
    items.insert(items.begin() + 2, bad);
    EngineOptions o;
    o.threads = 2;
    run_batch(p, items, "compiled", o);
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i == 2) {
            EXPECT_FALSE(items[i].ok);
            EXPECT_NE(items[i].error.find("output is float32 (1, 3, 10, 10)"), std::string::npos) << items[i].error;
            continue;
        }
        ASSERT_TRUE(items[i].ok) << items[i].error;
        expect_equal(items[i].output, reference->prepare(p, items[i].input.spec())->run(items[i].input), 1e-5);
    }
}

}  // namespace
}  // namespace toroid
