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
#include <optional>

namespace toroid {
namespace {

struct Case {
    std::string name;
    std::string engine;
    Layout layout;
    std::string label;  // op summary for the test name
    std::optional<DType> input_dtype;     // bfloat16: input.npy holds it as float32
    std::optional<DType> expected_dtype;  // bfloat16: expected.npy holds it as float32
    bool interpolates = false;            // a uint16, float16 or bfloat16 image through an op computed
                                          // in float32 and rounded once (a bilinear or bicubic resize,
                                          // a warp, a blur)
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
            Case k{c["name"].get<std::string>(), engine, parse_layout(c["input_layout"].get<std::string>()), label, {}, {}};
            if (c.value("dtype", "") == "bfloat16") k.input_dtype = DType::BFloat16;
            if (c.contains("expected_dtype")) k.expected_dtype = parse_dtype(c["expected_dtype"].get<std::string>());
            for (const auto& op : c["pipeline"]) {
                const std::string kind = op["op"], mode = op.value("mode", "");
                if ((kind == "resize" && (mode == "bilinear" || mode == "bicubic")) || kind == "perspective" ||
                    kind == "affine" || kind == "gaussian_blur")
                    k.interpolates = c.value("dtype", "") != "uint8" && c.value("dtype", "") != "float32";
            }
            out.push_back(k);
        }
    }
    return out;
}

// Test logs name the case instead of dumping its bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << c.engine << " " << c.name << c.label; }

bool cuda_usable() { return test::cuda_unavailable().empty(); }
std::string cuda_unusable_reason() { return "no CUDA device: " + test::cuda_unavailable(); }

// A float32 tensor holding values of `dtype` (bfloat16 in .npy files) as that dtype.
Tensor as_dtype(const Tensor& t, DType dtype) {
    Tensor out = Tensor::empty(dtype, t.shape(), Layout::Contiguous);
    const Dims& s = t.shape();
    for (std::int64_t n = 0; n < s[0]; ++n)
        for (std::int64_t c = 0; c < s[1]; ++c)
            for (std::int64_t h = 0; h < s[2]; ++h)
                for (std::int64_t w = 0; w < s[3]; ++w) {
                    const float v = t.at<float>(n, c, h, w);
                    dispatch_dtype(dtype, [&](auto tag) {
                        using T = decltype(tag);
                        out.at<T>(n, c, h, w) = from_float<T>(v);
                        if (to_float(out.at<T>(n, c, h, w)) != v && v == v)
                            throw Error("a value of the case is not a " + std::string(dtype_name(dtype)));
                    });
                }
    return out;
}

double value(const Tensor& t, std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) {
    return dispatch_dtype(t.dtype(), [&](auto tag) { return static_cast<double>(to_float(t.at<decltype(tag)>(n, c, h, w))); });
}

// float32 within 1e-4 (tests/data/conformance/README.md); float16 and bfloat16 within one
// unit in the last place of the expected value (a float32 result 1e-7 away may round to
// the neighbouring value).
double tolerance(DType t, double expected) {
    if (t == DType::Float16 || t == DType::BFloat16) {
        const int bits = t == DType::Float16 ? 10 : 7;
        const double e = std::fabs(expected);
        const double ulp = std::ldexp(1.0, std::max(std::ilogb(e == 0 ? 1e-30 : e), t == DType::Float16 ? -14 : -126) - bits);
        return std::max(1e-4, ulp);
    }
    return 1e-4;
}

class EngineConformance : public ::testing::TestWithParam<Case> {};

TEST_P(EngineConformance, MatchesPyTorch) {
    const Case& c = GetParam();
    auto dir = data_dir() / c.name;
    Pipeline pipeline = load_pipeline((dir / "pipeline.json").string());
    Tensor input = io::read_npy_image(dir / "input.npy");
    if (c.input_dtype) input = as_dtype(input, *c.input_dtype);
    input = input.to_layout(c.layout);
    ASSERT_TRUE(input.is_dense(c.layout));
    Tensor expected = io::read_npy_image(dir / "expected.npy");
    if (c.expected_dtype) expected = as_dtype(expected, *c.expected_dtype);

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
        if (std::memcmp(full.data(), got.data(), got.nbytes()) != 0) {
            const Dims& d = got.shape();
            std::string where;
            for (std::int64_t n = 0; n < d[0] && where.empty(); ++n)
                for (std::int64_t ch = 0; ch < d[1] && where.empty(); ++ch)
                    for (std::int64_t h = 0; h < d[2] && where.empty(); ++h)
                        for (std::int64_t w = 0; w < d[3] && where.empty(); ++w)
                            if (value(full, n, ch, h, w) != value(got, n, ch, h, w))
                                where = "(" + std::to_string(n) + "," + std::to_string(ch) + "," + std::to_string(h) +
                                        "," + std::to_string(w) + "): full " + std::to_string(value(full, n, ch, h, w)) +
                                        ", quick " + std::to_string(value(got, n, ch, h, w)) + ", input " +
                                        std::to_string(value(input, n, ch, h, w));
            ADD_FAILURE() << "the quick and full builds differ, first at " << where;
        }
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
                    const double a = value(got, n, ch, h, w), b = value(expected, n, ch, h, w);
                    double err = std::fabs(a - b);
                    if (a == b || (std::isnan(a) && std::isnan(b))) err = 0;  // infinities, NaN
                    // A 16-bit result rounded once from float32: a float32 sum taken in another
                    // order may round to the neighbouring value where it lies within its rounding
                    // error of a tie (docs/reference.md).
                    const double int_tolerance = c.interpolates ? 1 : 0;
                    bool bad = !dtype_is_float(got.dtype()) ? err > int_tolerance
                                                            : !(err <= tolerance(expected.dtype(), b));
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
