// Warps that gather bytes straight from the caller's input (4-byte word gathers kept inside
// its span, codegen's gather_bytes_bounded_v) equal the reference engine bit for bit, from
// images of one pixel to wider than a vector, where the last bytes of the input are
// gathered; and a float warp followed by a resize and a crop whose window's lanes come from
// a gather through another window (a table indexed by a clamped column) compiles and
// matches (a case the differential sweep found).
#include "engine/engine.h"
#include "engine_test_support.h"
#include "ops/pipeline_json.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace toroid {
namespace {

using test::max_difference;
using test::random_image;

TEST(Warps, ByteGathersOfTheInputMatchTheReference) {
    auto compiled = make_engine("compiled", EngineOptions{});
    auto reference = make_engine("reference", EngineOptions{});
    std::uint32_t seed = 3;
    for (const char* mode : {"nearest", "bilinear"})
        for (std::int64_t c : {1, 3, 4})
            for (Layout l : {Layout::Contiguous, Layout::ChannelsLast})
                for (std::int64_t w : {1, 2, 5, 17, 40}) {
                    const std::string text = std::string(R"([{"op": "affine", "convention": "torchvision", "mode": ")") +
                                             mode + R"(", "theta": [[0.9, -0.3, 0.7], [0.35, 1.1, -0.4]]}])";
                    const Tensor in = random_image(DType::UInt8, {1, c, 3, w}, l, seed++);
                    SCOPED_TRACE(text + " C=" + std::to_string(c) + " W=" + std::to_string(w) + " " +
                                 std::string(layout_name(l)));
                    const Pipeline p = parse_pipeline(text, ".");
                    EXPECT_EQ(max_difference(compiled->prepare(p, in.spec())->run(in), reference->prepare(p, in.spec())->run(in)),
                              0.0);
                }
}

TEST(Warps, WindowsThroughWindowsCompile) {
    auto compiled = make_engine("compiled", EngineOptions{});
    auto reference = make_engine("reference", EngineOptions{});
    const std::string text = R"([{"dtype": "float32", "op": "convert", "scale": false},
        {"align_corners": false, "mode": "bicubic", "op": "affine", "padding_mode": "zeros",
         "theta": [[1.0, -0.37848905371569974, 0.2557058248258421], [-0.9462403933230339, 1.0, 0.1485602152546286]]},
        {"mode": "nearest-exact", "op": "resize", "size": [1, 6]},
        {"height": 1, "left": 4, "op": "crop", "top": 0, "width": 12}])";
    const Pipeline p = parse_pipeline(text, ".");
    for (std::int64_t w : {2, 30}) {
        const Tensor in = random_image(DType::UInt8, {3, 3, 2, w}, Layout::ChannelsLast, 5044 + static_cast<std::uint32_t>(w));
        const double d = max_difference(compiled->prepare(p, in.spec())->run(in), reference->prepare(p, in.spec())->run(in));
        EXPECT_GE(d, 0.0);
        EXPECT_LE(d, 1e-3);
    }
}

}  // namespace
}  // namespace toroid
