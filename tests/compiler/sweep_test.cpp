// The seeded differential sweep as GoogleTests: the generator and comparator on their own
// (no compiles), then TOROID_SWEEP_CASES random cases (default 60, from TOROID_SWEEP_SEED)
// run on the compiled and reference engines, split into a few shards.
#include "sweep.h"

#include "ops/pipeline_json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <set>
#include <string>

namespace toroid::sweep {
namespace {

constexpr std::uint64_t kDefaultSeed = 1000;
constexpr std::int64_t kDefaultCases = 60;
constexpr int kShards = 4;

std::int64_t env_int(const char* name, std::int64_t fallback) {
    const char* v = std::getenv(name);
    if (!v || !*v) return fallback;
    return std::stoll(v);
}

bool same_bytes(const Tensor& a, const Tensor& b) {
    if (a.spec() != b.spec()) return false;
    const Tensor x = a.to_layout(Layout::Contiguous), y = b.to_layout(Layout::Contiguous);
    return std::memcmp(x.data(), y.data(), x.nbytes()) == 0;
}

TEST(SweepGenerator, SameSeedSameCase) {
    for (std::uint64_t seed : {0ULL, 1ULL, 77ULL, 123456789ULL}) {
        const Case a = make_case(seed), b = make_case(seed);
        EXPECT_EQ(pipeline_to_json(a.pipeline), pipeline_to_json(b.pipeline));
        EXPECT_TRUE(same_bytes(a.input, b.input)) << "seed " << seed;
        EXPECT_EQ(a.threads, b.threads);
        ASSERT_EQ(a.more_inputs.size(), b.more_inputs.size());
        for (std::size_t i = 0; i < a.more_inputs.size(); ++i)
            EXPECT_TRUE(same_bytes(a.more_inputs[i], b.more_inputs[i])) << "seed " << seed;
        ASSERT_EQ(a.pipeline.ops.size(), b.pipeline.ops.size());
        for (std::size_t i = 0; i < a.pipeline.ops.size(); ++i) {
            if (const auto* g = std::get_if<GridSampleOp>(&a.pipeline.ops[i])) {
                EXPECT_TRUE(same_bytes(g->grid, std::get<GridSampleOp>(b.pipeline.ops[i]).grid));
            }
        }
    }
    EXPECT_NE(pipeline_to_json(make_case(1).pipeline) + describe_case(make_case(1)),
              pipeline_to_json(make_case(2).pipeline) + describe_case(make_case(2)));
}

// Every case is valid, within the size limit, and together they reach every op, mode and
// input kind the sweep is meant to cover.
TEST(SweepGenerator, CasesAreValidAndCoverTheCatalogue) {
    std::set<std::string> seen;
    for (std::uint64_t seed = 0; seed < 300; ++seed) {
        const Case c = make_case(seed);
        ShapeInfo cur{c.input.dtype(), c.input.shape()};
        ASSERT_FALSE(c.pipeline.ops.empty());
        ASSERT_LE(c.pipeline.ops.size(), 8u);
        for (const Op& op : c.pipeline.ops) {
            const ShapeInfo cur_in = cur;
            ASSERT_NO_THROW(cur = infer_shape(op, cur)) << describe_case(c);
            ASSERT_LE(cur.shape[0] * cur.shape[1] * cur.shape[2] * cur.shape[3], kMaxOutputElements);
            seen.insert(std::string(op_name(op)));
            std::visit(
                [&](const auto& o) {
                    using T = std::decay_t<decltype(o)>;
                    if constexpr (std::is_same_v<T, ResizeOp>) {
                        seen.insert("resize " + std::string(resize_mode_name(o.mode)));
                        if (o.antialias) seen.insert("resize antialias");
                        if (o.align_corners) seen.insert("resize align_corners");
                        if (o.recompute_scale_factor) seen.insert("resize recompute");
                        seen.insert(o.size ? "resize size" : o.scale_factor ? "resize scale_factor" : "resize smaller_edge/max_size");
                        if (o.smaller_edge && o.max_size) seen.insert("resize smaller_edge + max_size");
                        if (!o.smaller_edge && o.max_size) seen.insert("resize max_size only");
                    } else if constexpr (std::is_same_v<T, AffineOp> || std::is_same_v<T, GridSampleOp>) {
                        seen.insert(std::string(op_name(op)) + " " + std::string(grid_mode_name(o.mode)));
                        seen.insert(std::string(op_name(op)) + " " + std::string(padding_mode_name(o.padding_mode)));
                        if (o.align_corners) seen.insert(std::string(op_name(op)) + " align_corners");
                        if constexpr (std::is_same_v<T, GridSampleOp>) {
                            const float* g = o.grid.template data_as<float>();
                            for (std::int64_t i = 0; i < o.grid.numel(); ++i)
                                if (std::isnan(g[i])) seen.insert("grid NaN");
                        }
                    } else if constexpr (std::is_same_v<T, FlipOp>) {
                        for (int d : o.dims) seen.insert("flip " + std::to_string(d));
                    } else if constexpr (std::is_same_v<T, CropOp>) {
                        if (!o.center && (o.top < 0 || o.left < 0)) seen.insert("crop outside");
                        if (o.center) seen.insert("center_crop");
                        if (o.center && (o.height > cur_in.shape[2] || o.width > cur_in.shape[3]))
                            seen.insert("center_crop padded");
                    } else if constexpr (std::is_same_v<T, ConvertOp>) {
                        seen.insert(std::string("convert to ") + std::string(dtype_name(o.dtype)) +
                                    (o.scale ? " scaled" : ""));
                    } else if constexpr (std::is_same_v<T, NormalizeOp>) {
                        seen.insert(o.mean.size() > 1 ? "normalize per-channel" : "normalize single");
                    } else if constexpr (std::is_same_v<T, ColorOp>) {
                        seen.insert(std::string(op_name(op)));
                    } else if constexpr (std::is_same_v<T, PadOp>) {
                        seen.insert("pad " + std::string(pad_mode_name(o.mode)));
                        if (o.left < 0 || o.top < 0 || o.right < 0 || o.bottom < 0) seen.insert("pad negative");
                        if (o.fill.size() > 1) seen.insert("pad fill per-channel");
                    } else if constexpr (std::is_same_v<T, EraseOp>) {
                        const auto reg = erase_region(o, cur_in.shape[2], cur_in.shape[3]);
                        seen.insert(reg[1] > reg[0] && reg[3] > reg[2] ? "erase" : "erase empty");
                    } else if constexpr (std::is_same_v<T, BlurOp>) {
                        seen.insert(std::string(op_name(op)));
                    }
                },
                op);
        }
        seen.insert(std::string(dtype_name(c.input.dtype())) + " input");
        if (!c.input.is_dense(Layout::Contiguous) && !c.input.is_dense(Layout::ChannelsLast)) seen.insert("view input");
        if (c.input.is_dense(Layout::ChannelsLast) && !c.input.is_dense(Layout::Contiguous))
            seen.insert("channels_last input");
        if (c.input.dim(0) > 1) seen.insert("batch > 1");
        if (c.input.dim(2) == 1 && c.input.dim(3) == 1) seen.insert("1x1 input");
        if (c.input.dim(2) == 1 && c.input.dim(3) > 1) seen.insert("1xW input");
        if (c.input.dim(2) > 1 && c.input.dim(3) == 1) seen.insert("Hx1 input");
        if (c.input.dim(2) == 2 && c.input.dim(3) == 2) seen.insert("2x2 input");
        if (!c.more_inputs.empty()) seen.insert("several sizes");
        for (const Tensor& t : c.more_inputs) {
            EXPECT_EQ(t.dtype(), c.input.dtype());
            EXPECT_EQ(t.dim(0), c.input.dim(0));
            EXPECT_EQ(t.dim(1), c.input.dim(1));
            ShapeInfo more{t.dtype(), t.shape()};
            for (const Op& op : c.pipeline.ops) ASSERT_NO_THROW(more = infer_shape(op, more)) << describe_case(c);
            if (!t.is_dense(Layout::Contiguous) && !t.is_dense(Layout::ChannelsLast)) seen.insert("several sizes, views");
        }
        if (c.threads > 1) seen.insert("threads > 1");
    }
    for (const char* want :
         {"resize nearest", "resize nearest-exact", "resize bilinear", "resize bicubic", "resize antialias",
          "resize align_corners", "resize recompute", "resize size", "resize scale_factor", "resize smaller_edge/max_size",
          "resize smaller_edge + max_size", "resize max_size only", "center_crop", "center_crop padded", "affine bilinear",
          "affine nearest", "affine bicubic", "affine zeros", "affine border", "affine reflection",
          "affine align_corners", "grid_sample bilinear", "grid_sample nearest", "grid_sample bicubic",
          "grid_sample reflection", "grid NaN", "flip 0", "flip 1", "flip 2", "flip 3", "crop outside",
          "convert to uint8", "convert to uint8 scaled", "convert to float32", "convert to float32 scaled",
          "normalize per-channel", "normalize single", "uint8 input", "float32 input", "view input",
          "channels_last input", "batch > 1", "threads > 1", "1x1 input", "1xW input", "Hx1 input", "2x2 input",
          "several sizes", "several sizes, views", "invert", "posterize", "solarize", "adjust_brightness",
          "adjust_saturation", "adjust_contrast", "rgb_to_grayscale", "adjust_gamma", "adjust_hue", "autocontrast",
          "equalize", "pad constant", "pad edge", "pad reflect",
          "pad symmetric", "pad negative", "pad fill per-channel", "erase", "erase empty", "gaussian_blur", "adjust_sharpness"})
        EXPECT_TRUE(seen.count(want)) << "no case has: " << want;
}

TEST(SweepCompare, Tolerances) {
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    EXPECT_TRUE(values_match(1.0f, 1.00009f));
    EXPECT_FALSE(values_match(1.0f, 1.0002f));
    EXPECT_TRUE(values_match(30000.0f, 30000.25f));  // 1e-5 relative
    EXPECT_FALSE(values_match(30000.0f, 30001.0f));
    EXPECT_TRUE(values_match(nan, nan));
    EXPECT_FALSE(values_match(nan, 0.0f));
    EXPECT_FALSE(values_match(0.0f, nan));
    EXPECT_TRUE(values_match(inf, inf));
    EXPECT_FALSE(values_match(inf, -inf));
    EXPECT_FALSE(values_match(3e38f, inf));

    Tensor a = Tensor::zeros(DType::UInt8, {1, 1, 2, 2}), b = Tensor::zeros(DType::UInt8, {1, 1, 2, 2}, Layout::ChannelsLast);
    EXPECT_TRUE(compare(a, b).ok);
    b.at<std::uint8_t>(0, 0, 1, 0) = 1;
    const Comparison c = compare(a, b);
    EXPECT_FALSE(c.ok);
    EXPECT_EQ(c.mismatches, 1);
    EXPECT_EQ(c.first_index, (Dims{0, 0, 1, 0}));
    EXPECT_FALSE(compare(a, Tensor::zeros(DType::Float32, {1, 1, 2, 2})).ok);
    EXPECT_FALSE(compare(a, Tensor::zeros(DType::UInt8, {1, 1, 2, 3})).ok);
}

// A loader's transform on several image sizes: one compiled program serves them all, and
// run_case compares every size against the reference.
TEST(SweepRunCase, SeveralSizesShareOneProgram) {
    Case c;
    c.pipeline = parse_pipeline(
        R"([{"op": "resize", "mode": "bilinear", "antialias": true, "smaller_edge": 40},
            {"op": "center_crop", "size": [36, 36]}, {"op": "convert", "dtype": "float32", "scale": true},
            {"op": "normalize", "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}])", ".");
    auto image = [](std::int64_t h, std::int64_t w) {
        Tensor t = Tensor::empty(DType::UInt8, {1, 3, h, w}, Layout::ChannelsLast);
        for (std::int64_t i = 0; i < t.numel(); ++i) t.data_as<std::uint8_t>()[i] = static_cast<std::uint8_t>(i * 37 + i / 7);
        return t;
    };
    c.input = image(50, 70);
    c.more_inputs = {image(91, 45), image(30, 33), image(63, 120)};  // down, up, down
    const CaseResult r = run_case(c);
    EXPECT_TRUE(r.ok) << report(c, r);
    EXPECT_EQ(r.input_index, 3u);  // every input ran
    EXPECT_EQ(r.programs, 1u);
}

class CompilerSweep : public ::testing::TestWithParam<int> {};

// Shard k of the sweep runs the cases whose index is k modulo kShards, so CTest can run
// the shards in parallel; every failing seed is reported with its pipeline and input.
TEST_P(CompilerSweep, CompiledMatchesReference) {
    Options o;
    o.seed = static_cast<std::uint64_t>(env_int("TOROID_SWEEP_SEED", static_cast<std::int64_t>(kDefaultSeed)));
    o.cases = env_int("TOROID_SWEEP_CASES", kDefaultCases);
    o.shard = GetParam();
    o.shards = kShards;
    const Summary s = run_sweep(o);
    for (const std::string& r : s.reports) ADD_FAILURE() << r;
    std::string seeds;
    for (auto seed : s.failing_seeds) seeds += " " + std::to_string(seed);
    EXPECT_TRUE(s.failing_seeds.empty()) << s.failing_seeds.size() << " of " << s.cases
                                         << " cases failed; seeds:" << seeds
                                         << "\nrerun one with: toroid_sweep --seed SEED --cases 1 --minimize";
}

INSTANTIATE_TEST_SUITE_P(Shards, CompilerSweep, ::testing::Range(0, kShards));

}  // namespace
}  // namespace toroid::sweep
