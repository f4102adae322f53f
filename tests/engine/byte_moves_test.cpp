// Kernels that only move bytes (flips, crops, their combinations) run a register of bytes
// per vector step and read channels-last pixels backwards through byte windows: the
// compiled engine must still equal the reference bit for bit at every row width around
// the vector's (shorter than one vector, exactly one, one more, many, with a tail), for
// 1, 3 and 4 channels, both layouts and crops that read into a wider image.
#include "engine/engine.h"
#include "engine_test_support.h"
#include "ops/pipeline_json.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace toroid {
namespace {

// The number of elements of a and b that differ (shapes must match).
std::int64_t differences(const Tensor& a, const Tensor& b) {
    EXPECT_EQ(a.shape(), b.shape());
    if (a.shape() != b.shape()) return -1;
    std::int64_t bad = 0;
    const Dims& s = a.shape();
    for (std::int64_t n = 0; n < s[0]; ++n)
        for (std::int64_t c = 0; c < s[1]; ++c)
            for (std::int64_t h = 0; h < s[2]; ++h)
                for (std::int64_t w = 0; w < s[3]; ++w) bad += a.at<std::uint8_t>(n, c, h, w) != b.at<std::uint8_t>(n, c, h, w);
    return bad;
}

TEST(ByteMoves, FlipsAndCropsMatchTheReferenceAtEveryWidth) {
    const char* pipelines[] = {
        R"([{"op": "flip", "dims": [-1]}])",
        R"([{"op": "flip", "dims": [-2]}])",
        R"([{"op": "flip", "dims": [-1, -2]}])",
        R"([{"op": "crop", "top": 1, "left": 2, "height": 3, "width": 1}, {"op": "flip", "dims": [-1]}])",
    };
    auto compiled = make_engine("compiled", EngineOptions{});
    auto reference = make_engine("reference", EngineOptions{});
    std::uint32_t seed = 11;
    const std::vector<std::int64_t> widths = {1, 2, 5, 21, 22, 31, 63, 64, 65, 100, 127, 128, 129, 224, 257};
    for (const char* text : pipelines) {
        const Pipeline base = parse_pipeline(text, ".");
        for (std::int64_t c : {1, 3, 4}) {
            for (Layout l : {Layout::Contiguous, Layout::ChannelsLast}) {
                for (std::int64_t w : widths) {
                    Pipeline p = base;
                    if (p.ops.size() > 1) {
                        // The crop keeps all but the image's outer columns (and reads past
                        // its region: the input is wider than what is flipped).
                        auto& crop = std::get<CropOp>(p.ops[0]);
                        crop.width = w > 4 ? w - 4 : 1;
                        crop.left = w > 4 ? 2 : 0;
                        crop.top = 1;
                        crop.height = 3;
                    }
                    const Tensor in = test::random_image(DType::UInt8, {2, c, 5, w}, l, seed++);
                    SCOPED_TRACE(std::string(text) + " C=" + std::to_string(c) + " W=" + std::to_string(w) + " " +
                                 std::string(layout_name(l)));
                    EXPECT_EQ(differences(compiled->prepare(p, in.spec())->run(in), reference->prepare(p, in.spec())->run(in)),
                              0);
                }
            }
        }
    }
}

// A resize whose result is mirrored (a horizontal flip after it, the last op of a uint8
// pipeline: RandomResizedCrop then RandomHorizontalFlip) runs its vertical pass in the
// flip's kernel, reading each tap's row backwards through the pixels: through byte windows
// worked out once per call (tests/data/golden/resize_aa_flip_u8_cl_avx512vbmi.cpp), equal
// to the reference at output widths around the vector's, every mode, both layouts.
TEST(ByteMoves, MirroredResizesMatchTheReferenceAtEveryWidth) {
    auto compiled = make_engine("compiled", EngineOptions{});
    auto reference = make_engine("reference", EngineOptions{});
    std::uint32_t seed = 71;
    const char* modes[] = {R"("mode": "bilinear", "antialias": true)", R"("mode": "bicubic", "antialias": true)",
                           R"("mode": "bilinear")", R"("mode": "nearest")"};
    for (const char* mode : modes) {
        for (std::int64_t out_w : {5, 16, 17, 21, 22, 43, 64, 65, 100}) {
            for (bool crop : {false, true}) {
                std::string text = "[";
                if (crop) text += R"({"op": "crop", "top": 2, "left": 3, "height": 30, "width": 41}, )";
                text += R"({"op": "resize", "size": [7, )" + std::to_string(out_w) + "], " + mode + R"(}, {"op": "flip", "dims": [-1]}])";
                const Pipeline p = parse_pipeline(text, ".");
                for (std::int64_t c : {1, 3, 4}) {
                    for (Layout l : {Layout::Contiguous, Layout::ChannelsLast}) {
                        const Tensor in = test::random_image(DType::UInt8, {2, c, 37, 53}, l, seed++);
                        SCOPED_TRACE(text + " C=" + std::to_string(c) + " " + std::string(layout_name(l)));
                        EXPECT_EQ(differences(compiled->prepare(p, in.spec())->run(in),
                                              reference->prepare(p, in.spec())->run(in)),
                                  0);
                    }
                }
            }
        }
    }
}

}  // namespace
}  // namespace toroid
