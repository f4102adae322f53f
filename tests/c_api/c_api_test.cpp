// Tests of the C API (include/toroid/toroid.h) through its C functions only: pipelines
// from JSON, grids given as arrays, compile/run into caller memory of any strides on
// both engines, and a status plus message for every error path.
#include "toroid/toroid.h"

#include "core/error.h"
#include "runtime/cuda/cuda.h"

#include <dlpack/dlpack.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

std::string data_dir() { return std::string(TOROID_TEST_DATA) + "/conformance"; }

toroid_tensor_desc desc(toroid_dtype dtype, std::vector<std::int64_t> shape, std::vector<std::int64_t> strides) {
    toroid_tensor_desc d{};
    d.dtype = dtype;
    d.device = TOROID_CPU;
    d.ndim = static_cast<std::int32_t>(shape.size());
    for (std::size_t i = 0; i < shape.size(); ++i) {
        d.shape[i] = shape[i];
        d.strides[i] = strides[i];
    }
    return d;
}

// Dense row-major strides of `shape`.
std::vector<std::int64_t> row_major(const std::vector<std::int64_t>& shape) {
    std::vector<std::int64_t> s(shape.size());
    std::int64_t n = 1;
    for (std::size_t i = shape.size(); i-- > 0;) {
        s[i] = n;
        n *= shape[i];
    }
    return s;
}

// Owns a pipeline and a function; fails the test on any unexpected status.
struct Compiled {
    toroid_pipeline* pipeline = nullptr;
    toroid_function* fn = nullptr;
    ~Compiled() {
        toroid_function_free(fn);
        toroid_pipeline_free(pipeline);
    }
};

void compile(Compiled& c, const char* json, const toroid_tensor_desc& in, const char* engine = "reference") {
    ASSERT_EQ(toroid_pipeline_from_json(json, nullptr, &c.pipeline), TOROID_OK) << toroid_last_error();
    toroid_options o;
    toroid_options_init(&o);
    o.engine = engine;
    o.threads = 1;
    ASSERT_EQ(toroid_compile(c.pipeline, &in, &o, &c.fn), TOROID_OK) << toroid_last_error();
}

std::vector<std::uint8_t> iota_u8(std::size_t n) {
    std::vector<std::uint8_t> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(i * 7 + 3);
    return v;
}

TEST(CApi, VersionAndStatusNames) {
    EXPECT_STREQ(toroid_version(), TOROID_VERSION);
    EXPECT_EQ(toroid_abi_version(), TOROID_ABI_VERSION);
    EXPECT_STREQ(toroid_status_name(TOROID_OK), "ok");
    EXPECT_STREQ(toroid_status_name(TOROID_ERROR_UNSUPPORTED), "unsupported");
    EXPECT_STREQ(toroid_status_name(static_cast<toroid_status>(99)), "unknown status");
}

TEST(CApi, PipelineJsonRoundTrip) {
    toroid_pipeline* p = nullptr;
    ASSERT_EQ(toroid_pipeline_from_json(R"([{"op": "flip", "dims": [-1]}, {"op": "crop", "top": 1, "left": 2,
        "height": 3, "width": 4}])", nullptr, &p), TOROID_OK);
    size_t n = 0;
    ASSERT_EQ(toroid_pipeline_num_ops(p, &n), TOROID_OK);
    EXPECT_EQ(n, 2u);
    const char* json = nullptr;
    ASSERT_EQ(toroid_pipeline_to_json(p, &json), TOROID_OK);
    EXPECT_NE(std::string(json).find(R"("dims":[3])"), std::string::npos) << json;
    toroid_pipeline_free(p);
    toroid_pipeline_free(nullptr);
    toroid_function_free(nullptr);
}

TEST(CApi, BadJsonReportsMessage) {
    toroid_pipeline* p = reinterpret_cast<toroid_pipeline*>(0x1);
    EXPECT_EQ(toroid_pipeline_from_json("[{", nullptr, &p), TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(p, nullptr);
    EXPECT_NE(std::string(toroid_last_error()).find("not valid JSON"), std::string::npos) << toroid_last_error();
    EXPECT_EQ(toroid_pipeline_from_json(R"([{"op": "resize", "mode": "linear", "size": 4}])", nullptr, &p),
              TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(toroid_last_error()).find("unknown mode"), std::string::npos) << toroid_last_error();
    EXPECT_EQ(toroid_pipeline_from_json(nullptr, nullptr, &p), TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_STREQ(toroid_last_error(), "json must not be NULL");
    EXPECT_EQ(toroid_pipeline_from_json("[]", nullptr, nullptr), TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(toroid_pipeline_from_json(R"([{"op": "grid_sample", "grid": "no/such.npy"}])", "/nonexistent", &p),
              TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(toroid_last_error()).find("no/such.npy"), std::string::npos) << toroid_last_error();
}

TEST(CApi, LastErrorIsPerThread) {
    toroid_pipeline* p = nullptr;
    EXPECT_EQ(toroid_pipeline_from_json("{}", nullptr, &p), TOROID_ERROR_INVALID_ARGUMENT);
    std::string mine = toroid_last_error();
    std::string theirs;
    std::thread t([&] {
        theirs = toroid_last_error();  // nothing failed on this thread yet
        toroid_pipeline* q = nullptr;
        toroid_pipeline_from_json("[1]", nullptr, &q);
    });
    t.join();
    EXPECT_EQ(theirs, "");
    EXPECT_EQ(std::string(toroid_last_error()), mine);
}

// flip(W) on a (1, 3, 4, 5) uint8 image, run into contiguous, channels-last and padded
// output memory, on both engines.
TEST(CApi, FlipIntoAnyStrides) {
    for (const char* engine : {"reference", "compiled"}) {
        SCOPED_TRACE(engine);
        const std::vector<std::int64_t> shape{1, 3, 4, 5};
        std::vector<std::uint8_t> in = iota_u8(60);
        Compiled c;
        compile(c, R"([{"op": "flip", "dims": [3]}])", desc(TOROID_UINT8, shape, row_major(shape)), engine);
        toroid_tensor_desc od{};
        ASSERT_EQ(toroid_function_output_desc(c.fn, &od), TOROID_OK);
        EXPECT_EQ(od.ndim, 4);
        EXPECT_EQ(od.dtype, TOROID_UINT8);
        EXPECT_EQ(od.strides[1], 20);
        EXPECT_EQ(od.strides[3], 1);
        auto expect = [&](std::int64_t n, std::int64_t ch, std::int64_t h, std::int64_t w) {
            return in[static_cast<std::size_t>(n * 60 + ch * 20 + h * 5 + (4 - w))];
        };
        toroid_tensor tin{in.data(), desc(TOROID_UINT8, shape, row_major(shape))};
        const std::vector<std::vector<std::int64_t>> out_strides{{60, 20, 5, 1}, {60, 1, 15, 3}, {200, 1, 40, 5}};
        for (const auto& st : out_strides) {
            std::vector<std::uint8_t> out(200, 0xEE);
            toroid_tensor tout{out.data(), desc(TOROID_UINT8, shape, st)};
            ASSERT_EQ(toroid_run(c.fn, &tin, &tout), TOROID_OK) << toroid_last_error();
            for (std::int64_t ch = 0; ch < 3; ++ch)
                for (std::int64_t h = 0; h < 4; ++h)
                    for (std::int64_t w = 0; w < 5; ++w)
                        ASSERT_EQ(out[static_cast<std::size_t>(ch * st[1] + h * st[2] + w * st[3])],
                                  expect(0, ch, h, w));
            if (st[3] == 5) {
                EXPECT_EQ(out[3], 0xEE);  // padding between pixels untouched
                EXPECT_EQ(out[4], 0xEE);
            }
        }
    }
}

// A channels-last view (H, W, C memory seen as C, H, W) in; the result comes in the
// same layout, and a sliced input (every other column) works through its strides.
TEST(CApi, ChannelsLastAndSlicedInputs) {
    const std::int64_t H = 6, W = 8, C = 3;
    std::vector<std::uint8_t> hwc = iota_u8(static_cast<std::size_t>(H * W * C));
    Compiled c;
    compile(c, R"([{"op": "crop", "top": 1, "left": 2, "height": 3, "width": 4}])",
            desc(TOROID_UINT8, {C, H, W}, {1, W * C, C}), "compiled");
    toroid_tensor_desc od{};
    ASSERT_EQ(toroid_function_output_desc(c.fn, &od), TOROID_OK);
    ASSERT_EQ(od.ndim, 3);
    EXPECT_EQ(od.shape[0], 3);
    EXPECT_EQ(od.shape[1], 3);
    EXPECT_EQ(od.shape[2], 4);
    EXPECT_EQ(od.strides[0], 1);  // channels-last
    EXPECT_EQ(od.strides[2], 3);
    toroid_tensor_desc id{};
    ASSERT_EQ(toroid_function_input_desc(c.fn, &id), TOROID_OK);
    EXPECT_EQ(id.ndim, 3);
    EXPECT_EQ(id.strides[1], W * C);
    std::vector<std::uint8_t> out(36);
    toroid_tensor tin{hwc.data(), desc(TOROID_UINT8, {C, H, W}, {1, W * C, C})};
    toroid_tensor tout{out.data(), od};
    ASSERT_EQ(toroid_run(c.fn, &tin, &tout), TOROID_OK) << toroid_last_error();
    for (std::int64_t ch = 0; ch < 3; ++ch)
        for (std::int64_t h = 0; h < 3; ++h)
            for (std::int64_t w = 0; w < 4; ++w)
                ASSERT_EQ(out[static_cast<std::size_t>(ch + h * 12 + w * 3)],
                          hwc[static_cast<std::size_t>((h + 1) * W * C + (w + 2) * C + ch)]);

    // (H, W) float32 view of every other column: strides (2W, 2).
    std::vector<float> img(static_cast<std::size_t>(H * W * 2));
    for (std::size_t i = 0; i < img.size(); ++i) img[i] = static_cast<float>(i);
    Compiled f;
    compile(f, R"([{"op": "flip", "dims": [-2]}])", desc(TOROID_FLOAT32, {H, W}, {2 * W, 2}));
    std::vector<float> res(static_cast<std::size_t>(H * W));
    toroid_tensor fin{img.data(), desc(TOROID_FLOAT32, {H, W}, {2 * W, 2})};
    toroid_tensor fout{res.data(), desc(TOROID_FLOAT32, {H, W}, {W, 1})};
    ASSERT_EQ(toroid_run(f.fn, &fin, &fout), TOROID_OK) << toroid_last_error();
    for (std::int64_t h = 0; h < H; ++h)
        for (std::int64_t w = 0; w < W; ++w)
            ASSERT_EQ(res[static_cast<std::size_t>(h * W + w)], img[static_cast<std::size_t>((H - 1 - h) * 2 * W + 2 * w)]);
}

// Size-1 dims address nothing: their strides may differ between compile and run.
TEST(CApi, SizeOneStridesAreIgnored) {
    std::vector<float> in(12, 1.5f), out(12);
    Compiled c;
    compile(c, R"([{"op": "normalize", "mean": [1], "std": [0.5]}])", desc(TOROID_FLOAT32, {1, 1, 3, 4}, {12, 12, 4, 1}));
    toroid_tensor tin{in.data(), desc(TOROID_FLOAT32, {1, 1, 3, 4}, {99, 7, 4, 1})};
    toroid_tensor tout{out.data(), desc(TOROID_FLOAT32, {1, 1, 3, 4}, {0, 0, 4, 1})};
    ASSERT_EQ(toroid_run(c.fn, &tin, &tout), TOROID_OK) << toroid_last_error();
    for (float v : out) EXPECT_FLOAT_EQ(v, 1.0f);
}

// grid_sample with its grid given as an array: the identity grid returns the input.
TEST(CApi, GridFromArray) {
    const std::int64_t N = 2, C = 2, H = 3, W = 4;
    toroid_pipeline* p = nullptr;
    ASSERT_EQ(toroid_pipeline_from_json(
                  R"([{"op": "grid_sample", "mode": "bilinear", "padding_mode": "border", "align_corners": true}])",
                  nullptr, &p),
              TOROID_OK)
        << toroid_last_error();
    const toroid_tensor_desc in_desc = desc(TOROID_FLOAT32, {N, C, H, W}, row_major({N, C, H, W}));
    toroid_function* fn = nullptr;
    EXPECT_EQ(toroid_compile(p, &in_desc, nullptr, &fn), TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(toroid_last_error()).find("no grid given"), std::string::npos) << toroid_last_error();

    // Identity grid, stored (N, H, W, 2) but laid out with x and y planes apart.
    std::vector<float> grid(static_cast<std::size_t>(N * H * W * 2));
    const std::vector<std::int64_t> gstrides{2 * H * W, W, 1, H * W};
    for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t h = 0; h < H; ++h)
            for (std::int64_t w = 0; w < W; ++w) {
                grid[static_cast<std::size_t>(n * gstrides[0] + h * W + w)] = -1.0f + 2.0f * static_cast<float>(w) / (W - 1);
                grid[static_cast<std::size_t>(n * gstrides[0] + h * W + w + H * W)] = -1.0f + 2.0f * static_cast<float>(h) / (H - 1);
            }
    toroid_tensor tgrid{grid.data(), desc(TOROID_FLOAT32, {N, H, W, 2}, gstrides)};
    ASSERT_EQ(toroid_pipeline_set_grid(p, 0, &tgrid), TOROID_OK) << toroid_last_error();
    const char* json = nullptr;
    ASSERT_EQ(toroid_pipeline_to_json(p, &json), TOROID_OK);
    EXPECT_NE(std::string(json).find("<array>"), std::string::npos) << json;
    for (const char* engine : {"reference", "compiled"}) {
        SCOPED_TRACE(engine);
        toroid_options o;
        toroid_options_init(&o);
        o.engine = engine;
        ASSERT_EQ(toroid_compile(p, &in_desc, &o, &fn), TOROID_OK) << toroid_last_error();
        std::vector<float> in(static_cast<std::size_t>(N * C * H * W)), out(in.size());
        for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i) * 0.25f;
        toroid_tensor tin{in.data(), in_desc}, tout{out.data(), in_desc};
        ASSERT_EQ(toroid_run(fn, &tin, &tout), TOROID_OK) << toroid_last_error();
        for (std::size_t i = 0; i < in.size(); ++i) ASSERT_NEAR(out[i], in[i], 1e-4) << i;
        const char* explain = nullptr;
        ASSERT_EQ(toroid_function_explain(fn, &explain), TOROID_OK);
        EXPECT_GT(std::strlen(explain), 0u);
        toroid_function_free(fn);
        fn = nullptr;
    }

    // A grid whose batch differs from the input's fails at compile time.
    toroid_tensor one{grid.data(), desc(TOROID_FLOAT32, {H, W, 2}, {W, 1, H * W})};
    ASSERT_EQ(toroid_pipeline_set_grid(p, 0, &one), TOROID_OK) << toroid_last_error();
    EXPECT_EQ(toroid_compile(p, &in_desc, nullptr, &fn), TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(toroid_last_error()).find("batch"), std::string::npos) << toroid_last_error();
    toroid_pipeline_free(p);
}

TEST(CApi, GridErrors) {
    toroid_pipeline* p = nullptr;
    EXPECT_EQ(toroid_pipeline_from_json(R"([{"op": "grid_sample", "mode": "area"}])", nullptr, &p),
              TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(std::string(toroid_last_error()).rfind("op 0 (grid_sample): unknown mode", 0), 0u) << toroid_last_error();
    EXPECT_EQ(toroid_pipeline_from_json(R"([{"op": "grid_sample", "theta": 1}])", nullptr, &p),
              TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_STREQ(toroid_last_error(), "op 0 (grid_sample): unknown field 'theta'");
    EXPECT_EQ(toroid_pipeline_from_json(R"([{"op": "grid_sample", "grid": null, "bogus": 1}])", nullptr, &p),
              TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_STREQ(toroid_last_error(), "op 0 (grid_sample): unknown field 'bogus'");

    ASSERT_EQ(toroid_pipeline_from_json(R"([{"op": "flip", "dims": []}, {"op": "grid_sample"}])", nullptr, &p),
              TOROID_OK);
    std::vector<float> g(16);
    toroid_tensor grid{g.data(), desc(TOROID_FLOAT32, {1, 2, 4, 2}, {16, 8, 2, 1})};
    EXPECT_EQ(toroid_pipeline_set_grid(p, 0, &grid), TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_STREQ(toroid_last_error(), "op 0 (flip) is not a grid_sample op");
    EXPECT_EQ(toroid_pipeline_set_grid(p, 2, &grid), TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(toroid_last_error()).find("out of range"), std::string::npos);
    toroid_tensor bad_last{g.data(), desc(TOROID_FLOAT32, {1, 2, 2, 4}, {16, 8, 4, 1})};
    EXPECT_EQ(toroid_pipeline_set_grid(p, 1, &bad_last), TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(toroid_last_error()).find("last dim of size 2"), std::string::npos);
    toroid_tensor bad_type{g.data(), desc(TOROID_UINT8, {1, 2, 4, 2}, {16, 8, 2, 1})};
    EXPECT_EQ(toroid_pipeline_set_grid(p, 1, &bad_type), TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_STREQ(toroid_last_error(), "grid must be float32, got uint8");
    toroid_tensor bad_rank{g.data(), desc(TOROID_FLOAT32, {16, 1}, {1, 1})};
    EXPECT_EQ(toroid_pipeline_set_grid(p, 1, &bad_rank), TOROID_ERROR_INVALID_ARGUMENT);
    toroid_tensor null_data{nullptr, desc(TOROID_FLOAT32, {1, 2, 4, 2}, {16, 8, 2, 1})};
    EXPECT_EQ(toroid_pipeline_set_grid(p, 1, &null_data), TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_STREQ(toroid_last_error(), "grid has a NULL data pointer");
    EXPECT_EQ(toroid_pipeline_set_grid(p, 1, &grid), TOROID_OK) << toroid_last_error();
    toroid_pipeline_free(p);
}

// A grid read from a file through base_dir, as `toroid apply` does.
TEST(CApi, GridFromFileMatchesConformanceCase) {
    const std::string dir = data_dir() + "/case0008";
    toroid_pipeline* p = nullptr;
    ASSERT_EQ(toroid_pipeline_from_json(R"([{"op": "grid_sample", "grid": "grid.npy", "mode": "bicubic"}])",
                                        dir.c_str(), &p),
              TOROID_OK)
        << toroid_last_error();
    toroid_pipeline_free(p);
}

TEST(CApi, CompileErrors) {
    toroid_pipeline* p = nullptr;
    ASSERT_EQ(toroid_pipeline_from_json(R"([{"op": "normalize", "mean": [0.5], "std": [0.5]}])", nullptr, &p),
              TOROID_OK);
    toroid_function* fn = reinterpret_cast<toroid_function*>(0x1);
    toroid_tensor_desc u8 = desc(TOROID_UINT8, {3, 4, 5}, {20, 5, 1});
    EXPECT_EQ(toroid_compile(p, &u8, nullptr, &fn), TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(fn, nullptr);
    EXPECT_NE(std::string(toroid_last_error()).find("normalize needs float input"), std::string::npos)
        << toroid_last_error();

    toroid_tensor_desc f64 = desc(TOROID_FLOAT64, {3, 4, 5}, {20, 5, 1});
    EXPECT_EQ(toroid_compile(p, &f64, nullptr, &fn), TOROID_ERROR_UNSUPPORTED);
    EXPECT_NE(std::string(toroid_last_error()).find("float64 is not supported yet"), std::string::npos);
    // float16 and bfloat16 images normalize (in their own dtype); uint16 ones do not.
    for (const toroid_dtype t : {TOROID_FLOAT16, TOROID_BFLOAT16}) {
        toroid_tensor_desc d = desc(t, {3, 4, 5}, {20, 5, 1});
        toroid_function* ok = nullptr;
        EXPECT_EQ(toroid_compile(p, &d, nullptr, &ok), TOROID_OK) << toroid_last_error();
        toroid_tensor_desc out{};
        EXPECT_EQ(toroid_function_output_desc(ok, &out), TOROID_OK);
        EXPECT_EQ(out.dtype, t);
        toroid_function_free(ok);
    }
    toroid_tensor_desc u16 = desc(TOROID_UINT16, {3, 4, 5}, {20, 5, 1});
    EXPECT_EQ(toroid_compile(p, &u16, nullptr, &fn), TOROID_ERROR_INVALID_ARGUMENT);
    toroid_tensor_desc bad_dtype = desc(static_cast<toroid_dtype>(42), {3, 4, 5}, {20, 5, 1});
    EXPECT_EQ(toroid_compile(p, &bad_dtype, nullptr, &fn), TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(toroid_last_error()).find("unknown dtype value 42"), std::string::npos);

    toroid_tensor_desc cuda = desc(TOROID_FLOAT32, {3, 4, 5}, {20, 5, 1});
    cuda.device = TOROID_CUDA;
    bool have_gpu = true;
    try {
        toroid::cuda::Device::get(0);
    } catch (const toroid::Error&) {
        have_gpu = false;
    }
    if (!have_gpu) {
        // Without a driver or a GPU: unsupported here, with what is missing named.
        EXPECT_EQ(toroid_compile(p, &cuda, nullptr, &fn), TOROID_ERROR_UNSUPPORTED);
        EXPECT_NE(std::string(toroid_last_error()).find("CUDA"), std::string::npos) << toroid_last_error();
        EXPECT_EQ(fn, nullptr);
    }
    cuda.device = 7;
    EXPECT_EQ(toroid_compile(p, &cuda, nullptr, &fn), TOROID_ERROR_INVALID_ARGUMENT);

    toroid_tensor_desc rank1 = desc(TOROID_FLOAT32, {5}, {1});
    EXPECT_EQ(toroid_compile(p, &rank1, nullptr, &fn), TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(toroid_last_error()).find("has 1 dims"), std::string::npos);
    toroid_tensor_desc negative = desc(TOROID_FLOAT32, {3, 4, 5}, {20, -5, 1});
    EXPECT_EQ(toroid_compile(p, &negative, nullptr, &fn), TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(toroid_last_error()).find("negative stride"), std::string::npos);

    toroid_tensor_desc ok = desc(TOROID_FLOAT32, {3, 4, 5}, {20, 5, 1});
    toroid_options o;
    toroid_options_init(&o);
    o.engine = "interpreted";
    EXPECT_EQ(toroid_compile(p, &ok, &o, &fn), TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(toroid_last_error()).find("unknown engine 'interpreted'"), std::string::npos);
    o.engine = "reference";
    o.threads = -2;
    EXPECT_EQ(toroid_compile(p, &ok, &o, &fn), TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(toroid_compile(nullptr, &ok, nullptr, &fn), TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_STREQ(toroid_last_error(), "pipeline must not be NULL");
    EXPECT_EQ(toroid_compile(p, nullptr, nullptr, &fn), TOROID_ERROR_INVALID_ARGUMENT);
    toroid_pipeline_free(p);

    ASSERT_EQ(toroid_pipeline_from_json(R"([{"op": "resize", "size": [100000, 100000]}])", nullptr, &p), TOROID_OK);
    toroid_tensor_desc big = desc(TOROID_FLOAT32, {200, 3, 4, 5}, {60, 20, 5, 1});
    EXPECT_EQ(toroid_compile(p, &big, nullptr, &fn), TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(toroid_last_error()).find("too large"), std::string::npos) << toroid_last_error();
    toroid_pipeline_free(p);
}

TEST(CApi, RunErrors) {
    Compiled c;
    const std::vector<std::int64_t> shape{2, 3, 4};
    compile(c, R"([{"op": "convert", "dtype": "float32", "scale": true}])", desc(TOROID_UINT8, shape, {12, 4, 1}));
    std::vector<std::uint8_t> in = iota_u8(24);
    std::vector<float> out(64);
    toroid_tensor tin{in.data(), desc(TOROID_UINT8, shape, {12, 4, 1})};
    toroid_tensor tout{out.data(), desc(TOROID_FLOAT32, shape, {12, 4, 1})};
    ASSERT_EQ(toroid_run(c.fn, &tin, &tout), TOROID_OK) << toroid_last_error();
    EXPECT_FLOAT_EQ(out[1], static_cast<float>(in[1]) / 255.0f);

    auto expect_error = [&](toroid_tensor i, toroid_tensor o, const char* text) {
        EXPECT_EQ(toroid_run(c.fn, &i, &o), TOROID_ERROR_INVALID_ARGUMENT) << text;
        EXPECT_NE(std::string(toroid_last_error()).find(text), std::string::npos) << toroid_last_error();
    };
    toroid_tensor wrong_shape{in.data(), desc(TOROID_UINT8, {2, 4, 3}, {12, 3, 1})};
    expect_error(wrong_shape, tout, "but the function was compiled for uint8 (1, 2, 3, 4)");
    toroid_tensor wrong_strides{in.data(), desc(TOROID_UINT8, shape, {1, 8, 2})};
    expect_error(wrong_strides, tout, "differ from the strides the function was compiled for");
    toroid_tensor wrong_out_dtype{out.data(), desc(TOROID_UINT8, shape, {12, 4, 1})};
    expect_error(tin, wrong_out_dtype, "output is uint8 (1, 2, 3, 4) but the result is float32 (1, 2, 3, 4)");
    toroid_tensor overlapping{out.data(), desc(TOROID_FLOAT32, shape, {12, 4, 0})};
    expect_error(tin, overlapping, "make elements overlap");
    toroid_tensor overlapping2{out.data(), desc(TOROID_FLOAT32, shape, {4, 3, 1})};
    expect_error(tin, overlapping2, "make elements overlap");
    toroid_tensor aliasing{in.data(), desc(TOROID_FLOAT32, shape, {12, 4, 1})};
    expect_error(tin, aliasing, "overlaps the input");
    toroid_tensor null_in{nullptr, desc(TOROID_UINT8, shape, {12, 4, 1})};
    expect_error(null_in, tout, "input has a NULL data pointer");
    toroid_tensor null_out{nullptr, desc(TOROID_FLOAT32, shape, {12, 4, 1})};
    expect_error(tin, null_out, "output has a NULL data pointer");
    toroid_tensor cuda_out = tout;
    cuda_out.desc.device = TOROID_CUDA;
    expect_error(tin, cuda_out, "output is on cuda 0 but the function was compiled for cpu 0");
    int not_a_stream = 0;
    EXPECT_EQ(toroid_run_on_stream(c.fn, &tin, &tout, &not_a_stream), TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(toroid_run(nullptr, &tin, &tout), TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(toroid_run(c.fn, nullptr, &tout), TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(toroid_run(c.fn, &tin, nullptr), TOROID_ERROR_INVALID_ARGUMENT);
    toroid_tensor_desc d{};
    EXPECT_EQ(toroid_function_output_desc(nullptr, &d), TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(toroid_function_output_desc(c.fn, nullptr), TOROID_ERROR_INVALID_ARGUMENT);
}

// One function run from several threads at once.
TEST(CApi, ConcurrentRuns) {
    Compiled c;
    const std::vector<std::int64_t> shape{1, 3, 16, 16};
    compile(c, R"([{"op": "flip", "dims": [2, 3]}])", desc(TOROID_UINT8, shape, row_major(shape)), "compiled");
    std::vector<std::uint8_t> in = iota_u8(768);
    std::vector<std::thread> threads;
    std::vector<int> ok(4, 0);
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            std::vector<std::uint8_t> out(768);
            toroid_tensor tin{in.data(), desc(TOROID_UINT8, shape, row_major(shape))};
            toroid_tensor tout{out.data(), desc(TOROID_UINT8, shape, row_major(shape))};
            bool good = true;
            for (int i = 0; i < 20 && good; ++i) {
                good = toroid_run(c.fn, &tin, &tout) == TOROID_OK;
                for (std::size_t k = 0; k < 768 && good; ++k) {
                    std::size_t ch = k / 256, h = (k / 16) % 16, w = k % 16;
                    good = out[k] == in[ch * 256 + (15 - h) * 16 + (15 - w)];
                }
            }
            ok[static_cast<std::size_t>(t)] = good;
        });
    for (auto& t : threads) t.join();
    for (int v : ok) EXPECT_TRUE(v);
}


// toroid_run_data: memory laid out as compiled, for both engines; the pointers are checked
// (NULL, overlap) and a CUDA-less CPU function is all it runs.
TEST(CApi, RunDataOnCompiledLayout) {
    for (const char* engine : {"reference", "compiled"}) {
        SCOPED_TRACE(engine);
        const std::vector<std::int64_t> shape{3, 4, 5};
        std::vector<std::uint8_t> in = iota_u8(60);
        Compiled c;
        compile(c, R"([{"op": "flip", "dims": [3]}])", desc(TOROID_UINT8, shape, row_major(shape)), engine);
        std::vector<std::uint8_t> out(60, 0);
        ASSERT_EQ(toroid_run_data(c.fn, in.data(), out.data()), TOROID_OK) << toroid_last_error();
        for (std::size_t ch = 0; ch < 3; ++ch)
            for (std::size_t h = 0; h < 4; ++h)
                for (std::size_t w = 0; w < 5; ++w)
                    ASSERT_EQ(out[ch * 20 + h * 5 + w], in[ch * 20 + h * 5 + (4 - w)]);
        EXPECT_EQ(toroid_run_data(c.fn, nullptr, out.data()), TOROID_ERROR_INVALID_ARGUMENT);
        EXPECT_NE(std::string(toroid_last_error()).find("input has a NULL data pointer"), std::string::npos);
        EXPECT_EQ(toroid_run_data(c.fn, in.data(), nullptr), TOROID_ERROR_INVALID_ARGUMENT);
        EXPECT_EQ(toroid_run_data(c.fn, in.data(), in.data() + 59), TOROID_ERROR_INVALID_ARGUMENT);
        EXPECT_NE(std::string(toroid_last_error()).find("overlaps the input"), std::string::npos);
        EXPECT_EQ(toroid_run_data(nullptr, in.data(), out.data()), TOROID_ERROR_INVALID_ARGUMENT);
        // The stream form: NULL runs the same; a stream is refused for a CPU function and
        // nothing is written.
        std::vector<std::uint8_t> again(60, 0);
        ASSERT_EQ(toroid_run_data_on_stream(c.fn, in.data(), again.data(), nullptr), TOROID_OK) << toroid_last_error();
        EXPECT_EQ(again, out);
        std::vector<std::uint8_t> untouched(60, 7);
        int not_a_stream = 0;
        EXPECT_EQ(toroid_run_data_on_stream(c.fn, in.data(), untouched.data(), &not_a_stream),
                  TOROID_ERROR_INVALID_ARGUMENT);
        EXPECT_NE(std::string(toroid_last_error()).find("a stream is only for CUDA functions"), std::string::npos);
        EXPECT_EQ(untouched, std::vector<std::uint8_t>(60, 7));
    }
}

// DLPack: a DLManagedTensor's memory described without a copy (byte offset, strides or
// their absence, device and dtype mapped), and every tensor toroid cannot take refused with
// its reason; a function compiled from the description runs on the producer's memory.
TEST(CApi, TensorFromDlpack) {
    std::vector<std::uint8_t> memory(8 + 60);
    for (std::size_t i = 0; i < 60; ++i) memory[8 + i] = static_cast<std::uint8_t>(i);
    std::int64_t shape[3] = {3, 4, 5};
    DLManagedTensor m{};
    m.dl_tensor.data = memory.data();
    m.dl_tensor.byte_offset = 8;
    m.dl_tensor.device = DLDevice{kDLCPU, 0};
    m.dl_tensor.ndim = 3;
    m.dl_tensor.dtype = DLDataType{kDLUInt, 8, 1};
    m.dl_tensor.shape = shape;
    m.dl_tensor.strides = nullptr;  // compact row major
    toroid_tensor t{};
    ASSERT_EQ(toroid_tensor_from_dlpack(&m, &t), TOROID_OK) << toroid_last_error();
    EXPECT_EQ(t.data, memory.data() + 8);
    EXPECT_EQ(t.desc.dtype, TOROID_UINT8);
    EXPECT_EQ(t.desc.device, TOROID_CPU);
    EXPECT_EQ(t.desc.ndim, 3);
    EXPECT_EQ((std::vector<std::int64_t>(t.desc.shape, t.desc.shape + 3)), (std::vector<std::int64_t>{3, 4, 5}));
    EXPECT_EQ((std::vector<std::int64_t>(t.desc.strides, t.desc.strides + 3)), (std::vector<std::int64_t>{20, 5, 1}));

    Compiled c;
    compile(c, R"([{"op": "flip", "dims": [-1]}])", t.desc, "compiled");
    std::vector<std::uint8_t> out(60, 0);
    toroid_tensor tout{out.data(), t.desc};
    ASSERT_EQ(toroid_run(c.fn, &t, &tout), TOROID_OK) << toroid_last_error();
    EXPECT_EQ(out[0], 4);
    EXPECT_EQ(out[59], 55);

    // Explicit strides (a channels-last view), CUDA devices, other dtypes.
    std::int64_t strides[3] = {1, 15, 3};
    m.dl_tensor.strides = strides;
    m.dl_tensor.device = DLDevice{kDLCUDA, 1};
    m.dl_tensor.dtype = DLDataType{kDLFloat, 32, 1};
    ASSERT_EQ(toroid_tensor_from_dlpack(&m, &t), TOROID_OK) << toroid_last_error();
    EXPECT_EQ((std::vector<std::int64_t>(t.desc.strides, t.desc.strides + 3)), (std::vector<std::int64_t>{1, 15, 3}));
    EXPECT_EQ(t.desc.device, TOROID_CUDA);
    EXPECT_EQ(t.desc.device_index, 1);
    EXPECT_EQ(t.desc.dtype, TOROID_FLOAT32);

    auto refused = [&](const char* what) {
        toroid_tensor before{};
        before.desc.ndim = 99;
        toroid_tensor r = before;
        EXPECT_EQ(toroid_tensor_from_dlpack(&m, &r), TOROID_ERROR_INVALID_ARGUMENT) << what;
        EXPECT_NE(std::string(toroid_last_error()).find(what), std::string::npos) << toroid_last_error();
        EXPECT_EQ(r.desc.ndim, 99);  // nothing written
    };
    m.dl_tensor.device = DLDevice{kDLOpenCL, 0};
    refused("device type 4");
    m.dl_tensor.device = DLDevice{kDLCPU, 0};
    m.dl_tensor.dtype = DLDataType{kDLInt, 8, 1};
    refused("code 0, 8 bits");
    m.dl_tensor.dtype = DLDataType{kDLUInt, 8, 4};
    refused("4 lanes");
    m.dl_tensor.dtype = DLDataType{kDLUInt, 8, 1};
    m.dl_tensor.ndim = 5;
    refused("5 dims");
    m.dl_tensor.ndim = 3;
    m.dl_tensor.shape = nullptr;
    refused("NULL shape");
    EXPECT_EQ(toroid_tensor_from_dlpack(nullptr, &t), TOROID_ERROR_INVALID_ARGUMENT);
    m.dl_tensor.shape = shape;
    EXPECT_EQ(toroid_tensor_from_dlpack(&m, nullptr), TOROID_ERROR_INVALID_ARGUMENT);
}

// The counters move as the caches work: a new structure compiles or loads once, a second
// size of it binds without compiling, the same size again is a memory hit.
TEST(CApi, CacheStatsCountPreparesCompilesAndBinds) {
    // Earlier tests' full builds (in one process) finish first: the counts below are this
    // test's alone.
    ASSERT_EQ(toroid_wait_for_background_builds(), TOROID_OK);
    toroid_cache_counts before{};
    before.struct_size = sizeof before;
    ASSERT_EQ(toroid_cache_stats(&before), TOROID_OK) << toroid_last_error();
    // A structure no other test compiles: its program is new to this process.
    const char* json = R"([{"op": "flip", "dims": [2]}, {"op": "convert", "dtype": "float32", "scale": true},
                           {"op": "normalize", "mean": [0.25], "std": [0.5]}])";
    const std::vector<std::vector<std::int64_t>> shapes{{1, 6, 7}, {1, 9, 4}, {1, 6, 7}};
    for (const auto& shape : shapes) {
        Compiled c;
        compile(c, json, desc(TOROID_UINT8, shape, row_major(shape)), "compiled");
    }
    toroid_cache_counts after{};
    after.struct_size = sizeof after;
    ASSERT_EQ(toroid_cache_stats(&after), TOROID_OK);
    EXPECT_EQ(after.prepares - before.prepares, 3);
    // The prepares' own compiles: the structure's full build may have compiled in the
    // background meanwhile (counted in compiles, and apart in background_compiles).
    EXPECT_EQ((after.compiles - after.background_compiles) - (before.compiles - before.background_compiles) +
                  (after.disk_hits - before.disk_hits),
              1);
    EXPECT_EQ(after.binds - before.binds, 2);
    EXPECT_EQ(after.memory_hits - before.memory_hits, 2);  // the second size's program, the third's instance
    toroid_cache_counts tiny{};
    tiny.struct_size = 8;
    EXPECT_EQ(toroid_cache_stats(&tiny), TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(toroid_cache_stats(nullptr), TOROID_ERROR_INVALID_ARGUMENT);
    // The structure's full build may still be compiling: waiting for it compiles nothing
    // but that background build, which is counted.
    EXPECT_EQ(toroid_wait_for_background_builds(), TOROID_OK);
    toroid_cache_counts settled{};
    settled.struct_size = sizeof settled;
    ASSERT_EQ(toroid_cache_stats(&settled), TOROID_OK);
    EXPECT_EQ(settled.compiles - after.compiles, settled.background_compiles - after.background_compiles);
    // Compiled (not loaded from disk): its full build was compiled in the background, once.
    if (after.compiles > before.compiles) {
        EXPECT_EQ(settled.background_compiles - before.background_compiles, 1);
    }
}


// A pipeline handle's batches keep what they prepared by input spec: a second batch of seen
// sizes prepares nothing, and a new grid (set_grid) is not served by what the old one prepared.
TEST(CApi, RepeatedBatchesPrepareOncePerSpecAndFollowNewGrids) {
    const std::int64_t H = 2, W = 3;
    toroid_pipeline* p = nullptr;
    ASSERT_EQ(toroid_pipeline_from_json(
                  R"([{"op": "grid_sample", "mode": "nearest", "padding_mode": "border", "align_corners": true}])",
                  nullptr, &p),
              TOROID_OK);
    // A grid of (H, W, 2) sampling input pixel (h, w) or, flipped, (h, W - 1 - w).
    auto set_grid = [&](bool flipped) {
        std::vector<float> g(static_cast<std::size_t>(H * W * 2));
        for (std::int64_t h = 0; h < H; ++h)
            for (std::int64_t w = 0; w < W; ++w) {
                const std::int64_t sw = flipped ? W - 1 - w : w;
                g[static_cast<std::size_t>((h * W + w) * 2)] = -1.0f + 2.0f * static_cast<float>(sw) / (W - 1);
                g[static_cast<std::size_t>((h * W + w) * 2 + 1)] = -1.0f + 2.0f * static_cast<float>(h) / (H - 1);
            }
        toroid_tensor t{g.data(), desc(TOROID_FLOAT32, {H, W, 2}, {W * 2, 2, 1})};
        ASSERT_EQ(toroid_pipeline_set_grid(p, 0, &t), TOROID_OK) << toroid_last_error();
    };
    std::vector<float> in(static_cast<std::size_t>(H * W)), out(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i);
    const toroid_tensor_desc d = desc(TOROID_FLOAT32, {1, H, W}, row_major({1, H, W}));
    toroid_tensor tin{in.data(), d}, tout{out.data(), d};
    toroid_options o;
    toroid_options_init(&o);
    o.threads = 1;
    auto prepares = [] {
        toroid_cache_counts c{};
        c.struct_size = sizeof c;
        EXPECT_EQ(toroid_cache_stats(&c), TOROID_OK);
        return c.prepares;
    };
    set_grid(false);
    ASSERT_EQ(toroid_run_batch(p, &tin, &tout, 1, &o, nullptr, nullptr, 0), TOROID_OK) << toroid_last_error();
    EXPECT_EQ(out, in);
    const std::int64_t after_first = prepares();
    ASSERT_EQ(toroid_run_batch(p, &tin, &tout, 1, &o, nullptr, nullptr, 0), TOROID_OK);
    EXPECT_EQ(prepares(), after_first);  // found by its spec
    set_grid(true);
    ASSERT_EQ(toroid_run_batch(p, &tin, &tout, 1, &o, nullptr, nullptr, 0), TOROID_OK) << toroid_last_error();
    EXPECT_EQ(prepares(), after_first + 1);
    for (std::int64_t h = 0; h < H; ++h)
        for (std::int64_t w = 0; w < W; ++w)
            EXPECT_EQ(out[static_cast<std::size_t>(h * W + w)], in[static_cast<std::size_t>(h * W + W - 1 - w)]);
    toroid_pipeline_free(p);
}

// A batch of CPU and CUDA images (toroid_run_batch_on_stream): the CPU images run; the CUDA
// ones need a GPU (without one each is reported as unsupported, naming CUDA); a CUDA input
// whose output is on the CPU, or on another device than the batch's CUDA images, is a bad
// argument for that image alone. (The CUDA images' results on a GPU: tests/engine/
// cuda_batch_test.cpp and tests/python/test_shapes.py.)
TEST(CApi, BatchOfCpuAndCudaImagesChecksEachImage) {
    toroid_pipeline* p = nullptr;
    ASSERT_EQ(toroid_pipeline_from_json(R"([{"op": "flip", "dims": [-1]}])", nullptr, &p), TOROID_OK);
    std::vector<float> in(2 * 3, 0.0f), out(2 * 3, -1.0f);
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i);
    std::vector<toroid_tensor> inputs(4), outputs(4);
    for (std::size_t i = 0; i < 4; ++i) {
        inputs[i] = toroid_tensor{in.data(), desc(TOROID_FLOAT32, {2, 3}, {3, 1})};
        outputs[i] = toroid_tensor{out.data(), desc(TOROID_FLOAT32, {2, 3}, {3, 1})};
    }
    inputs[1].desc.device = TOROID_CUDA;  // a CUDA image
    outputs[1].desc.device = TOROID_CUDA;
    inputs[2].desc.device = TOROID_CUDA;  // its output on the CPU
    inputs[3].desc.device = TOROID_CUDA;  // another device than image 1's
    inputs[3].desc.device_index = 1;
    outputs[3].desc.device = TOROID_CUDA;
    outputs[3].desc.device_index = 1;
    bool have_gpu = true;
    try {
        toroid::cuda::Device::get(0);
    } catch (const toroid::Error&) {
        have_gpu = false;
    }
    if (have_gpu) {  // image 1 would be run on this host memory: leave it out
        inputs[1].desc.device = TOROID_CPU;
        outputs[1].desc.device = TOROID_CPU;
    }
    std::vector<std::int32_t> status(4, -1);
    constexpr std::size_t size = 200;
    std::vector<char> messages(4 * size);
    const toroid_status whole = toroid_run_batch_on_stream(p, inputs.data(), outputs.data(), 4, nullptr, status.data(),
                                                           messages.data(), size, nullptr);
    EXPECT_NE(whole, TOROID_OK);
    auto message = [&](std::size_t i) { return std::string(messages.data() + i * size); };
    EXPECT_EQ(status[0], TOROID_OK) << message(0);
    EXPECT_EQ(out[0], 2.0f);
    EXPECT_EQ(out[5], 3.0f);
    if (!have_gpu) {
        EXPECT_EQ(status[1], TOROID_ERROR_UNSUPPORTED) << message(1);
        EXPECT_NE(message(1).find("image 1"), std::string::npos) << message(1);
        EXPECT_NE(message(1).find("CUDA"), std::string::npos) << message(1);
    }
    EXPECT_EQ(status[2], TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message(2).find("image 2: the input is on cuda 0 but the output on cpu 0"), std::string::npos)
        << message(2);
    if (!have_gpu) {
        EXPECT_EQ(status[3], TOROID_ERROR_INVALID_ARGUMENT);
        EXPECT_NE(message(3).find("image 3 is on cuda 1 but the batch's cuda images are on cuda 0"), std::string::npos)
            << message(3);
    }
    toroid_pipeline_free(p);
}

}  // namespace

namespace {

// toroid_run_batch_each: a pipeline per image (a random crop's own offsets, a flip taken or
// not): each result equals that image run alone; pipelines of one structure share one
// compiled program (the later images bind, they do not compile); a NULL pipeline fails the
// call and a bad image only itself.
TEST(CApiEach, EveryImageRunsItsOwnPipeline) {
    const int n = 5;
    std::vector<toroid_pipeline*> pipes(n, nullptr);
    for (int i = 0; i < n; ++i) {
        const std::string json = fmt::format(
            R"([{{"op": "crop", "top": {}, "left": {}, "height": 4, "width": 5}}{}])", i, 2 * i,
            i == 3 ? R"(, {"op": "flip", "dims": [-1]})" : "");
        ASSERT_EQ(toroid_pipeline_from_json(json.c_str(), nullptr, &pipes[static_cast<std::size_t>(i)]), TOROID_OK);
    }
    const std::int64_t H = 12, W = 17;
    std::vector<std::vector<std::uint8_t>> ins(n), outs(n), singles(n);
    std::vector<toroid_tensor> inputs(n), outputs(n);
    for (int i = 0; i < n; ++i) {
        auto& in = ins[static_cast<std::size_t>(i)];
        in.resize(static_cast<std::size_t>(3 * H * W));
        for (std::size_t k = 0; k < in.size(); ++k) in[k] = static_cast<std::uint8_t>(k * 7 + static_cast<std::size_t>(i) * 31);
        outs[static_cast<std::size_t>(i)].assign(3 * 4 * 5, 0);
        inputs[static_cast<std::size_t>(i)] = toroid_tensor{in.data(), desc(TOROID_UINT8, {3, H, W}, row_major({3, H, W}))};
        outputs[static_cast<std::size_t>(i)] =
            toroid_tensor{outs[static_cast<std::size_t>(i)].data(), desc(TOROID_UINT8, {3, 4, 5}, row_major({3, 4, 5}))};
    }
    toroid_options o;
    toroid_options_init(&o);
    o.threads = 2;
    auto counts = [] {
        toroid_cache_counts c{};
        c.struct_size = sizeof c;
        EXPECT_EQ(toroid_cache_stats(&c), TOROID_OK);
        return c;
    };
    const toroid_cache_counts before = counts();
    std::vector<std::int32_t> status(n, -1);
    ASSERT_EQ(toroid_run_batch_each(pipes.data(), inputs.data(), outputs.data(), n, &o, status.data(), nullptr, 0,
                                    nullptr),
              TOROID_OK)
        << toroid_last_error();
    // Two structures (a crop; a crop and a flip): at most two compiles in the call for five
    // images (each program's full build may follow in the background).
    ASSERT_EQ(toroid_wait_for_background_builds(), TOROID_OK);
    const toroid_cache_counts after = counts();
    EXPECT_LE((after.compiles - after.background_compiles) - (before.compiles - before.background_compiles), 2);
    for (int i = 0; i < n; ++i) {
        EXPECT_EQ(status[static_cast<std::size_t>(i)], TOROID_OK);
        auto& single = singles[static_cast<std::size_t>(i)];
        single.assign(3 * 4 * 5, 0);
        toroid_tensor tout{single.data(), outputs[static_cast<std::size_t>(i)].desc};
        ASSERT_EQ(toroid_run_batch(pipes[static_cast<std::size_t>(i)], &inputs[static_cast<std::size_t>(i)], &tout, 1, &o,
                                   nullptr, nullptr, 0),
                  TOROID_OK);
        EXPECT_EQ(outs[static_cast<std::size_t>(i)], single) << "image " << i;
        // And the crop really read this image's own region.
        const std::size_t top = static_cast<std::size_t>(i), left = static_cast<std::size_t>(2 * i);
        const std::size_t x = i == 3 ? 4 : 0;  // image 3 is flipped
        EXPECT_EQ(outs[static_cast<std::size_t>(i)][0], ins[static_cast<std::size_t>(i)][top * W + left + x]);
    }
    // A bad image (its output the wrong shape) fails alone; a NULL pipeline fails the call.
    outputs[1].desc.shape[2] = 4;
    outputs[1].desc.strides[1] = 4;
    outputs[1].desc.strides[0] = 16;
    std::fill(status.begin(), status.end(), -1);
    EXPECT_EQ(toroid_run_batch_each(pipes.data(), inputs.data(), outputs.data(), n, &o, status.data(), nullptr, 0,
                                    nullptr),
              TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(status[0], TOROID_OK);
    EXPECT_EQ(status[1], TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(status[2], TOROID_OK);
    std::vector<toroid_pipeline*> with_null = pipes;
    with_null[2] = nullptr;
    EXPECT_EQ(toroid_run_batch_each(with_null.data(), inputs.data(), outputs.data(), n, &o, status.data(), nullptr, 0,
                                    nullptr),
              TOROID_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(toroid_last_error()).find("pipelines[2] must not be NULL"), std::string::npos)
        << toroid_last_error();
    for (toroid_pipeline* p : pipes) toroid_pipeline_free(p);
}

}  // namespace
