// Separable resampling passes at row widths around their vector steps: vertical passes
// compute several vectors a step (then one at a time, the last one ending at the row's
// end, or lane by lane when a row is shorter than a vector), horizontal passes read byte
// windows in one or two groups of lanes or lane by lane, by how far apart their taps lie.
// The compiled engine must equal the reference bit for bit (uint8) and within float
// rounding (float32) at each of those widths, for 1, 3 and 4 channels in both layouts.
#include "engine/engine.h"
#include "engine_test_support.h"
#include "ops/pipeline_json.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace toroid {
namespace {

using test::max_difference;
using test::random_image;

std::string resize(std::int64_t h, std::int64_t w, const char* mode) {
    return "[{\"op\": \"resize\", \"mode\": \"" + std::string(mode) + "\", \"antialias\": true, \"size\": [" +
           std::to_string(h) + ", " + std::to_string(w) + "]}]";
}

void check(Engine& compiled, Engine& reference, const std::string& text, const Tensor& in, const std::string& what) {
    SCOPED_TRACE(what + " " + text);
    const Pipeline p = parse_pipeline(text, ".");
    const double d = max_difference(compiled.prepare(p, in.spec())->run(in), reference.prepare(p, in.spec())->run(in));
    if (in.dtype() == DType::UInt8) EXPECT_EQ(d, 0.0);
    else {
        EXPECT_GE(d, 0.0);
        EXPECT_LE(d, 1e-4);
    }
}

TEST(ResampleWidths, VerticalPassesAtEveryWidthAroundTheirVectorSteps) {
    auto compiled = make_engine("compiled", EngineOptions{});
    auto reference = make_engine("reference", EngineOptions{});
    std::uint32_t seed = 5;
    // Row runs (channels x width) shorter than a vector, one, several, 4 vectors and more,
    // with and without a remainder.
    const std::vector<std::int64_t> widths = {1, 5, 16, 21, 22, 43, 64, 65, 85, 100, 129};
    for (DType dt : {DType::UInt8, DType::Float32})
        for (std::int64_t c : {1, 3, 4})
            for (Layout l : {Layout::Contiguous, Layout::ChannelsLast})
                for (std::int64_t w : widths) {
                    const Tensor in = random_image(dt, {2, c, 23, w}, l, seed++);
                    const std::string what = std::string(dtype_name(dt)) + " C=" + std::to_string(c) + " W=" +
                                             std::to_string(w) + " " + std::string(layout_name(l));
                    check(*compiled, *reference, resize(9, w, "bilinear"), in, what);
                    check(*compiled, *reference, resize(31, w, "bicubic"), in, what);
                }
}

TEST(ResampleWidths, HorizontalDownscalesWithTapsOneTwoAndFourWindowsApart) {
    auto compiled = make_engine("compiled", EngineOptions{});
    auto reference = make_engine("reference", EngineOptions{});
    std::uint32_t seed = 77;
    // 16 outputs of channels-last pixels span one 128-byte window up to a downscale of
    // about 2.5, two up to about 5, then lanes are read one by one.
    for (std::int64_t c : {1, 3, 4})
        for (Layout l : {Layout::Contiguous, Layout::ChannelsLast})
            for (std::int64_t w : {70, 130, 301, 453}) {
                const Tensor in = random_image(DType::UInt8, {1, c, 6, w}, l, seed++);
                for (std::int64_t ow : {w / 2, w / 3, w * 10 / 43, w / 6, w / 11}) {
                    if (ow < 1) continue;
                    const std::string what =
                        "C=" + std::to_string(c) + " W=" + std::to_string(w) + " " + std::string(layout_name(l));
                    check(*compiled, *reference, resize(6, ow, "bilinear"), in, what);
                }
            }
}

}  // namespace
}  // namespace toroid
