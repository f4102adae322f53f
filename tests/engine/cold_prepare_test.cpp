// EngineOptions::cold_prepare: a prepare that skips the process's in-memory caches and so
// costs what a new process's first prepare costs (benchmarks report it as compile latency),
// while computing the same result as a warm prepare.
#include "engine/engine.h"
#include "ops/pipeline_json.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

namespace toroid {
namespace {

TEST(ColdPrepare, SkipsTheMemoryCachesAndAgrees) {
    const Pipeline p = parse_pipeline(R"([
      {"op": "resize", "mode": "bilinear", "antialias": true, "size": [21, 17]},
      {"op": "crop", "top": 2, "left": 1, "height": 15, "width": 14},
      {"op": "flip", "dims": [-1]},
      {"op": "convert", "dtype": "float32", "scale": true},
      {"op": "normalize", "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}])", ".");
    Tensor in = Tensor::empty(DType::UInt8, {1, 3, 37, 29}, Layout::ChannelsLast);
    auto* px = static_cast<std::uint8_t*>(in.data());
    for (std::int64_t i = 0; i < in.numel(); ++i) px[i] = static_cast<std::uint8_t>(i * 37 % 251);

    auto warm = make_engine("compiled", EngineOptions{});
    const Tensor want = warm->prepare(p, in.spec())->run(in);  // now in memory and on disk
    EXPECT_EQ(warm->prepare(p, in.spec())->stats().memory_hits, 1);

    EngineOptions cold_options;
    cold_options.cold_prepare = true;
    auto cold = make_engine("compiled", cold_options);
    for (int round = 0; round < 2; ++round) {
        SCOPED_TRACE(round);
        auto prepared = cold->prepare(p, in.spec());
        const PrepareStats st = prepared->stats();
        EXPECT_EQ(st.memory_hits, 0);
        EXPECT_EQ(st.compiled, 0);
        EXPECT_EQ(st.disk_hits, 1);  // the warm engine's module, loaded again from disk
        EXPECT_EQ(st.compile_seconds, 0.0);
        const Tensor got = prepared->run(in);
        ASSERT_EQ(got.shape(), want.shape());
        ASSERT_EQ(got.dtype(), want.dtype());
        EXPECT_EQ(std::memcmp(got.data(), want.data(), want.nbytes()), 0);
    }
}

}  // namespace
}  // namespace toroid
