// Runs every case of tests/data/conformance (made by PyTorch 2.11) through each engine,
// with the input placed in the layout the case names, and checks the tolerance of the
// case's README: uint8 equal in every element, float32 within 1e-4.
#include "../engine/engine_test_support.h"
#include "core/error.h"
#include "engine/engine.h"
#include "runtime/cuda/cuda.h"
#include "io/npy.h"
#include "ops/pipeline_json.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace toroid {
namespace {

struct Case {
    std::string name;
    std::string engine;
    Layout layout;
    std::string label;  // op summary for the test name
};

// The cases' folder: $TOROID_TEST_DATA when set (a packed build run from another checkout
// path, as on the GPU machine), else the source tree the tests were built from.
std::filesystem::path data_dir() {
    const char* env = std::getenv("TOROID_TEST_DATA");
    return std::filesystem::path(env && *env ? env : TOROID_TEST_DATA) / "conformance";
}

std::vector<Case> load_cases() {
    std::ifstream f(data_dir() / "cases.json");
    auto doc = nlohmann::json::parse(f);
    std::vector<Case> out;
    // "cuda" runs where a GPU is (the GPU machine's scripts/gpu-test.sh); elsewhere those
    // cases are skipped with the reason. "compiled_quick" is the compiled engine's quick
    // build (EngineOptions::tiers), which must also equal its full build bit for bit.
    for (const std::string engine : {"reference", "compiled", "compiled_quick", "cuda"}) {
        for (const auto& c : doc["cases"]) {
            std::string label;
            for (const auto& op : c["pipeline"]) {
                label += "_" + op["op"].get<std::string>();
                if (op.contains("mode")) label += "_" + op["mode"].get<std::string>();
                if (op.value("antialias", false)) label += "_aa";
            }
            for (char& ch : label)
                if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
            out.push_back({c["name"].get<std::string>(), engine, parse_layout(c["input_layout"].get<std::string>()),
                           label});
        }
    }
    return out;
}

// Test logs name the case instead of dumping its bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << c.engine << " " << c.name << c.label; }

bool cuda_usable() { return test::cuda_unavailable().empty(); }
std::string cuda_unusable_reason() { return "no CUDA device: " + test::cuda_unavailable(); }

class EngineConformance : public ::testing::TestWithParam<Case> {};

TEST_P(EngineConformance, MatchesPyTorch) {
    const Case& c = GetParam();
    auto dir = data_dir() / c.name;
    Pipeline pipeline = load_pipeline((dir / "pipeline.json").string());
    Tensor input = io::read_npy_image(dir / "input.npy").to_layout(c.layout);
    ASSERT_TRUE(input.is_dense(c.layout));
    Tensor expected = io::read_npy_image(dir / "expected.npy");

    if (c.engine == "cuda" && !cuda_usable()) GTEST_SKIP() << cuda_unusable_reason();
    EngineOptions options;
    if (c.engine == "compiled_quick") options.tiers = Tiers::QuickOnly;
    auto engine = make_engine(c.engine == "compiled_quick" ? "compiled" : c.engine, options);
    auto prepared = engine->prepare(pipeline, input.spec());
    Tensor got = prepared->run(input);
    if (c.engine == "compiled_quick") {
        EngineOptions full_options;
        full_options.tiers = Tiers::FullOnly;
        const Tensor full = make_engine("compiled", full_options)->prepare(pipeline, input.spec())->run(input);
        ASSERT_EQ(full.shape(), got.shape());
        ASSERT_EQ(full.dtype(), got.dtype());
        ASSERT_EQ(full.strides(), got.strides());
        EXPECT_EQ(std::memcmp(full.data(), got.data(), got.nbytes()), 0) << "the quick and full builds differ";
    }

    ASSERT_EQ(got.dtype(), expected.dtype());
    ASSERT_EQ(got.shape(), expected.shape());
    const Dims& s = got.shape();
    std::int64_t mismatches = 0;
    double max_err = 0;
    std::string first;
    for (std::int64_t n = 0; n < s[0]; ++n)
        for (std::int64_t ch = 0; ch < s[1]; ++ch)
            for (std::int64_t h = 0; h < s[2]; ++h)
                for (std::int64_t w = 0; w < s[3]; ++w) {
                    double a, b;
                    if (got.dtype() == DType::UInt8) {
                        a = got.at<std::uint8_t>(n, ch, h, w);
                        b = expected.at<std::uint8_t>(n, ch, h, w);
                    } else {
                        a = got.at<float>(n, ch, h, w);
                        b = expected.at<float>(n, ch, h, w);
                    }
                    double err = std::fabs(a - b);
                    bool bad = got.dtype() == DType::UInt8 ? err != 0 : !(err <= 1e-4);
                    if (bad) {
                        if (mismatches == 0)
                            first = "first at (" + std::to_string(n) + "," + std::to_string(ch) + "," +
                                    std::to_string(h) + "," + std::to_string(w) + "): got " + std::to_string(a) +
                                    " expected " + std::to_string(b);
                        ++mismatches;
                    }
                    if (!(err <= max_err)) max_err = err;
                }
    EXPECT_EQ(mismatches, 0) << c.name << ": " << mismatches << " of " << got.numel()
                             << " elements differ, max |diff| " << max_err << "; " << first;
}

INSTANTIATE_TEST_SUITE_P(Conformance, EngineConformance, ::testing::ValuesIn(load_cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                             return info.param.engine + "_" + info.param.name + info.param.label;
                         });

}  // namespace
}  // namespace toroid
