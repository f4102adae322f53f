// The compiled engine's tiers (EngineOptions::tiers): a first prepare returns with the quick
// build, runs on it, and the full build swaps in; results are the same bit for bit before
// and after, and equal the reference engine's. The compiler is a wrapper that sleeps before
// full builds (-O3) so that the swap happens after the first runs. (Every conformance case
// also runs on the quick build alone and against the full one: tests/conformance.)
#include "engine/engine.h"
#include "engine_test_support.h"
#include "ops/pipeline_json.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

namespace toroid {
namespace {

namespace fs = std::filesystem;

// Sets an environment variable for the life of the object.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const std::string& value) : name_(name) {
        if (const char* v = std::getenv(name)) old_ = v;
        ::setenv(name, value.c_str(), 1);
    }
    ~ScopedEnv() {
        if (old_) ::setenv(name_, old_->c_str(), 1);
        else ::unsetenv(name_);
    }

private:
    const char* name_;
    std::optional<std::string> old_;
};

TEST(EngineTiers, QuickBuildThenFullBuildSameResults) {
    const fs::path root = fs::path(::testing::TempDir()) / ("toroid_engine_tiers_" + std::to_string(::getpid()));
    fs::remove_all(root);
    fs::create_directories(root / "cache");
    const fs::path wrapper = root / "slow-c++";
    std::ofstream(wrapper) << "#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = -O3 ] && sleep 1; done\nexec '"
                           << TOROID_CXX_COMPILER << "' \"$@\"\n";
    ::chmod(wrapper.c_str(), 0755);
    {
        // A cold prepare makes its compiler from the environment: this cache, this wrapper.
        ScopedEnv cache("TOROID_CACHE_DIR", (root / "cache").string());
        ScopedEnv cxx("TOROID_CXX", wrapper.string());
        ScopedEnv flags("TOROID_CXXFLAGS", "-O3 -march=native");
        ScopedEnv tiered("TOROID_TIERED", "1");
        const Pipeline p = parse_pipeline(R"([
          {"op": "resize", "mode": "bilinear", "antialias": true, "smaller_edge": 40},
          {"op": "center_crop", "size": 36},
          {"op": "flip", "dims": [-1]},
          {"op": "convert", "dtype": "float32", "scale": true},
          {"op": "normalize", "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}])", ".");
        const Tensor in = test::random_image(DType::UInt8, {1, 3, 61, 83}, Layout::ChannelsLast, 11);
        const Tensor want = make_engine("reference", EngineOptions{})->prepare(p, in.spec())->run(in);

        EngineOptions o;
        o.cold_prepare = true;
        auto engine = make_engine("compiled", o);
        auto prepared = engine->prepare(p, in.spec());
        EXPECT_TRUE(prepared->stats().quick);
        EXPECT_EQ(prepared->stats().compiled, 1);
        const Tensor first = prepared->run(in);
        prepared->wait_full();
        const Tensor later = prepared->run(in);
        ASSERT_EQ(first.shape(), later.shape());
        ASSERT_EQ(first.strides(), later.strides());
        EXPECT_EQ(std::memcmp(first.data(), later.data(), first.nbytes()), 0);
        EXPECT_LE(test::max_difference(later, want), 1e-4);

        // A new prepare finds the full build on disk: no quick build.
        auto again = engine->prepare(p, in.spec());
        EXPECT_FALSE(again->stats().quick);
        EXPECT_EQ(again->stats().compiled, 0);
        EXPECT_EQ(again->stats().disk_hits, 1);

        // FullOnly, and Tiered under TOROID_TIERED=0, return with the full build loaded and
        // build no quick one; QuickOnly runs one alone, the same bytes.
        for (const bool by_env : {false, true}) {
            const fs::path cache_dir = root / (by_env ? "cache_tiered_0" : "cache_full_only");
            ScopedEnv fresh("TOROID_CACHE_DIR", cache_dir.string());
            ScopedEnv off("TOROID_TIERED", by_env ? "0" : "1");
            EngineOptions f = o;
            if (!by_env) f.tiers = Tiers::FullOnly;
            auto full = make_engine("compiled", f)->prepare(p, in.spec());
            EXPECT_FALSE(full->stats().quick) << by_env;
            EXPECT_EQ(full->stats().compiled, 1) << by_env;
            int entries = 0;
            for (const auto& e : fs::directory_iterator(cache_dir)) entries += fs::exists(e.path() / "manifest.json");
            EXPECT_EQ(entries, 1) << "a quick build was made (TOROID_TIERED=0: " << by_env << ")";
            const Tensor y = full->run(in);
            EXPECT_EQ(std::memcmp(y.data(), later.data(), later.nbytes()), 0);
        }
        EngineOptions q = o;
        q.tiers = Tiers::QuickOnly;
        const Tensor quick = make_engine("compiled", q)->prepare(p, in.spec())->run(in);
        EXPECT_EQ(std::memcmp(quick.data(), later.data(), later.nbytes()), 0);
    }
    fs::remove_all(root);
}

}  // namespace
}  // namespace toroid
