// Batches of differently sized images on the GPU (run_batch_cuda / run_device_batch): every
// image's result equals, bit for bit, the single-image launch of its size and, within the
// engines' tolerance (uint8 exact, float32 1e-4), the reference engine's; on random sizes
// including 1-pixel and very thin images, N > 1, uint8 and float32, both layouts, pipelines
// whose sizes fall into several groups (an axis the resize leaves unchanged, a crop that
// reads padding), results written into the slices of one stacked buffer, and bad images
// that are reported while the rest finish. Skipped, with the reason, where no GPU is.
#include "engine_test_support.h"

#include "core/error.h"
#include "engine/cuda_engine.h"
#include "engine/engine.h"
#include "ops/pipeline_json.h"
#include "runtime/cuda/cuda.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace toroid {
namespace {

struct Image {
    Dims shape;
    DType dtype;
    Layout layout;
};

// Runs `json` on `images` as one CUDA batch; every result is checked against the
// single-image launch and the reference engine. Results of one shape go to the slices of
// one stacked buffer (poisoned first, so that an unwritten element fails). `bad` lists the
// images expected to fail, with a piece of their message.
void check_batch(const std::string& json, const std::vector<Image>& images, std::uint32_t seed,
                 const std::vector<std::pair<std::size_t, std::string>>& bad = {}) {
    SCOPED_TRACE(json);
    const Pipeline p = parse_pipeline(json, ".");
    const cuda::Device& dev = cuda::Device::get(0);
    cuda::Stream stream(dev);
    const std::size_t n = images.size();
    std::vector<Tensor> inputs;
    std::vector<cuda::DeviceBuffer> din;
    std::vector<std::optional<ShapeInfo>> out_shape(n);
    for (std::size_t i = 0; i < n; ++i) {
        const Image& im = images[i];
        inputs.push_back(test::random_image(im.dtype, im.shape, im.layout, seed + static_cast<std::uint32_t>(i)));
        const std::size_t bytes = static_cast<std::size_t>(span_elements(im.shape, inputs.back().strides())) *
                                  dtype_size(im.dtype);
        din.emplace_back(dev, std::max<std::size_t>(bytes, 1));
        if (bytes > 0) din.back().copy_from_host(inputs.back().data(), bytes);
        try {
            out_shape[i] = infer_shape(p, ShapeInfo{im.dtype, im.shape});
        } catch (const Error&) {
        }
    }
    // Every result in one buffer, one after another: the slices of a stacked tensor when
    // they share a shape.
    std::vector<CudaBatchItem> items(n);
    std::vector<std::size_t> offset(n, 0);
    std::size_t total = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const Image& im = images[i];
        items[i].input = reinterpret_cast<const void*>(din[i].pointer());
        items[i].input_spec = inputs[i].spec();
        if (!out_shape[i]) {
            items[i].output_spec = TensorSpec{im.dtype, im.shape, dense_strides(im.shape, im.layout)};
            continue;
        }
        const ShapeInfo& o = *out_shape[i];
        // The layout the engine writes (a 1 x 1 image is in both: the contiguous one).
        items[i].output_spec = TensorSpec{o.dtype, o.shape, dense_strides(o.shape, suggested_layout(inputs[i].spec()))};
        offset[i] = total;
        total += static_cast<std::size_t>(o.shape[0] * o.shape[1] * o.shape[2] * o.shape[3]) * dtype_size(o.dtype);
        total = (total + 15) / 16 * 16;
    }
    cuda::DeviceBuffer out(dev, std::max<std::size_t>(total, 1));
    out.memset(0xff);  // NaN for float32, 255 for uint8: an unwritten element shows
    for (std::size_t i = 0; i < n; ++i)
        items[i].output = reinterpret_cast<void*>(out.pointer() + offset[i]);
    run_batch_cuda(p, items, EngineOptions{}, 0, stream.handle());
    stream.synchronize();
    std::vector<unsigned char> host(total);
    if (total > 0) out.copy_to_host(host.data(), total);
    const auto reference = make_engine("reference", EngineOptions{});
    for (std::size_t i = 0; i < n; ++i) {
        const Image& im = images[i];
        SCOPED_TRACE(fmt::format("image {}: {} ({}, {}, {}, {}) {}", i, dtype_name(im.dtype), im.shape[0], im.shape[1],
                                 im.shape[2], im.shape[3], layout_name(im.layout)));
        const auto expected_bad = std::find_if(bad.begin(), bad.end(), [&](const auto& b) { return b.first == i; });
        if (expected_bad != bad.end()) {
            EXPECT_FALSE(items[i].ok);
            EXPECT_NE(items[i].error.find(expected_bad->second), std::string::npos) << items[i].error;
            continue;
        }
        ASSERT_TRUE(items[i].ok) << items[i].error;
        const TensorSpec& os = items[i].output_spec;
        const Tensor got = Tensor::borrow(host.data() + offset[i], os.dtype, os.shape, os.strides);
        const Tensor want = reference->prepare(p, inputs[i].spec())->run(inputs[i]);
        EXPECT_LE(test::max_difference(got, want), want.dtype() == DType::UInt8 ? 0.0 : 1e-4);
        // The single-image launch of the same size.
        auto single = prepare_cuda(p, inputs[i].spec(), EngineOptions{}, 0);
        std::vector<unsigned char> one_data(static_cast<std::size_t>(os.numel()) * dtype_size(os.dtype));
        const Tensor one = Tensor::borrow(one_data.data(), os.dtype, os.shape, os.strides);
        cuda::DeviceBuffer dout(dev, std::max<std::size_t>(one.nbytes(), 1));
        single->run_device(items[i].input, reinterpret_cast<void*>(dout.pointer()), one.strides(), stream.handle());
        stream.synchronize();
        if (one.nbytes() > 0) dout.copy_to_host(one.data(), one.nbytes());
        EXPECT_TRUE(test::identical(got, one)) << "the batch and the single-image launch differ";
    }
}

Dims random_shape(std::mt19937& rng, std::int64_t max_side, std::int64_t channels) {
    auto pick = [&](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); };
    switch (pick(0, 5)) {
        case 0: return {1, channels, 1, 1};
        case 1: return {1, channels, 1, pick(1, max_side)};
        case 2: return {1, channels, pick(1, max_side), pick(1, 3)};
        case 3: return {2, channels, pick(1, max_side), pick(1, max_side)};
        default: return {1, channels, pick(1, max_side), pick(1, max_side)};
    }
}

// The eval transform: every result is 224 x 224, written into one stacked buffer; the
// smaller edge below or above 256 (up- or downscale) and a square image of 256 (no
// resize) fall into different groups.
TEST(CudaBatch, EvalTransformOfRandomSizesMatchesEachImage) {
    if (const std::string why = test::cuda_unavailable(); !why.empty()) GTEST_SKIP() << "no CUDA device: " << why;
    const std::string json =
        R"([{"op": "resize", "mode": "bilinear", "antialias": true, "smaller_edge": 256},
            {"op": "center_crop", "size": 224}, {"op": "convert", "dtype": "float32", "scale": true},
            {"op": "normalize", "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}])";
    std::mt19937 rng(912);
    for (Layout layout : {Layout::ChannelsLast, Layout::Contiguous}) {
        std::vector<Image> images;
        for (const Dims& s : {Dims{1, 3, 256, 256}, Dims{1, 3, 1, 1}, Dims{1, 3, 1, 400}, Dims{1, 3, 300, 2}})
            images.push_back({s, DType::UInt8, layout});
        for (int i = 0; i < 20; ++i) images.push_back({random_shape(rng, 520, 3), DType::UInt8, layout});
        check_batch(json, images, 100 + static_cast<std::uint32_t>(layout == Layout::Contiguous));
    }
}

// Fixed-size resizes of float32 and uint8 images, some of which keep an axis (a group of
// their own), bicubic and bilinear, plus a flip.
TEST(CudaBatch, ResizesOfRandomSizesMatchEachImage) {
    if (const std::string why = test::cuda_unavailable(); !why.empty()) GTEST_SKIP() << "no CUDA device: " << why;
    std::mt19937 rng(77);
    const char* jsons[] = {
        R"([{"op": "resize", "mode": "bicubic", "antialias": true, "size": [37, 53]}])",
        R"([{"op": "resize", "mode": "bilinear", "antialias": true, "size": [37, 53]}, {"op": "flip", "dims": [-1]}])",
    };
    std::uint32_t seed = 500;
    for (const char* json : jsons) {
        for (DType dt : {DType::Float32, DType::UInt8}) {
            std::vector<Image> images;
            for (int i = 0; i < 14; ++i) {
                const Layout layout = i % 2 ? Layout::ChannelsLast : Layout::Contiguous;
                Dims s = random_shape(rng, 300, i % 5 == 4 ? 1 : 3);
                if (i % 4 == 1) s[2] = 37;  // the vertical pass is the identity
                if (i % 4 == 2) s[3] = 53;
                if (i == 3) s = Dims{1, 3, 37, 53};
                images.push_back({s, dt, layout});
            }
            check_batch(json, images, seed);
            seed += 100;
        }
    }
}

// Whole-image reductions (a block of threads per output, schedule/block_reduce.h; equalize's
// histogram, a block per plane, schedule/histogram.h) over a batch of images of random sizes:
// each image's own extents bound its block's loops.
TEST(CudaBatch, WholeImageReductionsOfRandomSizesMatchEachImage) {
    if (const std::string why = test::cuda_unavailable(); !why.empty()) GTEST_SKIP() << "no CUDA device: " << why;
    std::mt19937 rng(91);
    const char* jsons[] = {
        R"([{"op": "adjust_contrast", "factor": 1.6}])",
        R"([{"op": "autocontrast"}])",
        R"([{"op": "equalize"}])",
        R"([{"op": "posterize", "bits": 3}, {"op": "equalize"}, {"op": "adjust_contrast", "factor": 0.4}])",
    };
    std::uint32_t seed = 1500;
    for (const char* json : jsons) {
        for (DType dt : {DType::UInt8, DType::Float32}) {
            std::vector<Image> images;
            for (int i = 0; i < 10; ++i) {
                Dims s = random_shape(rng, 700, i % 5 == 4 ? 1 : 3);
                if (i == 3) s = Dims{1, 3, 1, 1};
                images.push_back({s, dt, i % 2 ? Layout::ChannelsLast : Layout::Contiguous});
            }
            check_batch(json, images, seed);
            seed += 100;
        }
    }
}

// A center crop larger than some images (those read zero padding: another structure), and
// crops that read none.
TEST(CudaBatch, CropsThatReadPaddingFormTheirOwnGroup) {
    if (const std::string why = test::cuda_unavailable(); !why.empty()) GTEST_SKIP() << "no CUDA device: " << why;
    std::mt19937 rng(5);
    std::vector<Image> images;
    for (int i = 0; i < 16; ++i)
        images.push_back({random_shape(rng, 200, 3), i % 3 ? DType::Float32 : DType::UInt8,
                          i % 2 ? Layout::ChannelsLast : Layout::Contiguous});
    check_batch(R"([{"op": "center_crop", "size": [90, 120]}, {"op": "flip", "dims": [-2]}])", images, 900);
}

// Bad images are reported and skipped, the others finish: a channel count the normalize
// does not take, an output of the wrong shape.
TEST(CudaBatch, BadImagesAreReportedAndTheRestFinish) {
    if (const std::string why = test::cuda_unavailable(); !why.empty()) GTEST_SKIP() << "no CUDA device: " << why;
    const std::string json =
        R"([{"op": "resize", "mode": "bilinear", "antialias": true, "size": [40, 50]},
            {"op": "normalize", "mean": [0.5, 0.4, 0.3], "std": [0.2, 0.25, 0.3]}])";
    const std::vector<Image> images = {
        {{1, 3, 90, 120}, DType::Float32, Layout::ChannelsLast},
        {{1, 2, 90, 120}, DType::Float32, Layout::ChannelsLast},  // 2 channels, 3 means
        {{1, 3, 61, 33}, DType::Float32, Layout::ChannelsLast},
    };
    check_batch(json, images, 40, {{1, "channel"}});

    // An output whose shape is not the result's.
    const Pipeline p = parse_pipeline(json, ".");
    const cuda::Device& dev = cuda::Device::get(0);
    cuda::Stream stream(dev);
    const Dims in_shape{1, 3, 90, 120}, out_shape{1, 3, 40, 50}, wrong{1, 3, 41, 50};
    cuda::DeviceBuffer din(dev, 3 * 90 * 120 * 4), dout(dev, 2 * 3 * 41 * 50 * 4);
    din.memset(0);
    std::vector<CudaBatchItem> items(2);
    for (std::size_t i = 0; i < 2; ++i) {
        items[i].input = reinterpret_cast<const void*>(din.pointer());
        items[i].input_spec = TensorSpec{DType::Float32, in_shape, dense_strides(in_shape, Layout::Contiguous)};
        items[i].output = reinterpret_cast<void*>(dout.pointer() + i * 3 * 41 * 50 * 4);
        const Dims& s = i == 0 ? wrong : out_shape;
        items[i].output_spec = TensorSpec{DType::Float32, s, dense_strides(s, Layout::Contiguous)};
    }
    run_batch_cuda(p, items, EngineOptions{}, 0, stream.handle());
    stream.synchronize();
    EXPECT_FALSE(items[0].ok);
    EXPECT_NE(items[0].error.find("output is float32 (1, 3, 41, 50) but the result is float32 (1, 3, 40, 50)"),
              std::string::npos)
        << items[0].error;
    EXPECT_TRUE(items[1].ok) << items[1].error;
}

}  // namespace
}  // namespace toroid
