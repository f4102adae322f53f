// Case definitions of the benchmark suites. The "seeds" rows follow the anchor
// measurement tables row for row (same shapes, dtypes, layouts, modes and op
// parameters), so toroid's numbers can be set beside PyTorch's.
#include "bench/suite.h"

#include "core/error.h"
#include "ops/pipeline_json.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

namespace toroid::bench {
namespace {

using Size2 = std::array<std::int64_t, 2>;

struct Shape2 {
    Dims in;
    Size2 out;
};

std::string layout_tag(Layout l) { return l == Layout::Contiguous ? "CF" : "CL"; }

std::string case_name(std::string_view op, const Dims& in, const Size2& out, DType dtype, Layout l) {
    return fmt::format("{} ({}, {}, {}, {}) -> ({}, {}) {} {}", op, in[0], in[1], in[2], in[3], out[0],
                       out[1], dtype_name(dtype), layout_tag(l));
}

constexpr std::array<Layout, 2> kLayouts{Layout::Contiguous, Layout::ChannelsLast};

void add_resize(std::vector<BenchCase>& cases, std::string_view device, ResizeMode mode, bool antialias,
                const Shape2& s, DType dtype, Layout layout) {
    std::string op = fmt::format("interpolate {}{}", resize_mode_name(mode), antialias ? " AA" : "");
    ResizeOp r;
    r.mode = mode;
    r.size = s.out;
    r.align_corners = false;
    r.antialias = antialias;
    BenchCase c;
    c.name = case_name(op, s.in, s.out, dtype, layout);
    c.title = op;
    c.device = std::string(device);
    c.pipeline.ops.emplace_back(std::move(r));
    c.dtype = dtype;
    c.shape = s.in;
    c.layout = layout;
    cases.push_back(std::move(c));
}

// Antialiased bilinear (every shape) and bicubic (only batch 1 at the listed output sizes).
void add_resize_aa(std::vector<BenchCase>& cases, std::string_view device, const std::vector<Shape2>& shapes,
                   const std::vector<DType>& dtypes, const std::vector<Size2>& bicubic_sizes) {
    for (const Shape2& s : shapes)
        for (DType dt : dtypes)
            for (Layout l : kLayouts)
                for (ResizeMode m : {ResizeMode::Bilinear, ResizeMode::Bicubic}) {
                    bool bicubic_row = s.in[0] == 1 && std::find(bicubic_sizes.begin(), bicubic_sizes.end(),
                                                                 s.out) != bicubic_sizes.end();
                    if (m == ResizeMode::Bicubic && !bicubic_row) continue;
                    add_resize(cases, device, m, true, s, dt, l);
                }
}

void add_resize_plain(std::vector<BenchCase>& cases, std::string_view device, const std::vector<DType>& dtypes,
                      const std::vector<ResizeMode>& modes) {
    const std::vector<Shape2> shapes{{{1, 3, 500, 400}, {256, 256}},
                                     {{4, 3, 500, 400}, {256, 256}},
                                     {{1, 3, 300, 400}, {600, 700}},
                                     {{4, 3, 300, 400}, {600, 700}}};
    for (const Shape2& s : shapes)
        for (Layout l : kLayouts)
            for (DType dt : dtypes)
                for (ResizeMode m : modes) {
                    if (dt == DType::UInt8 && m == ResizeMode::Bicubic) continue;
                    add_resize(cases, device, m, false, s, dt, l);
                }
}

// affine_grid + grid_sample with one fixed rotation-and-shear theta, zeros padding,
// output the input's size.
void add_affine(std::vector<BenchCase>& cases, std::string_view device) {
    const Dims shape{2, 3, 345, 456};
    for (bool ac : {true, false})
        for (GridMode m : {GridMode::Bilinear, GridMode::Nearest, GridMode::Bicubic})
            for (Layout l : kLayouts) {
                AffineOp a;
                a.theta = {{{0.8, -0.3, 0.1}, {0.25, 0.9, -0.05}}};
                a.mode = m;
                a.padding_mode = PaddingMode::Zeros;
                a.align_corners = ac;
                std::string op = fmt::format("affine_grid+grid_sample {} ac={}", grid_mode_name(m),
                                             ac ? "True" : "False");
                BenchCase c;
                c.name = case_name(op, shape, {shape[2], shape[3]}, DType::Float32, l);
                c.title = "affine_grid+grid_sample";
                c.device = std::string(device);
                c.pipeline.ops.emplace_back(std::move(a));
                c.dtype = DType::Float32;
                c.shape = shape;
                c.layout = l;
                cases.push_back(std::move(c));
            }
}

// hflip flips the last dim (W), vflip the one before (H).
void add_flips(std::vector<BenchCase>& cases, std::string_view device) {
    for (std::int64_t size : {224, 256})
        for (Layout l : kLayouts)
            for (auto [dim, op] : {std::pair{3, "hflip"}, std::pair{2, "vflip"}}) {
                const Dims shape{1, 3, size, size};
                BenchCase c;
                c.name = case_name(op, shape, {size, size}, DType::UInt8, l);
                c.title = "flip";
                c.device = std::string(device);
                c.pipeline.ops.emplace_back(FlipOp{{dim}});
                c.dtype = DType::UInt8;
                c.shape = shape;
                c.layout = l;
                cases.push_back(std::move(c));
            }
}

// An eval-style preprocessing pipeline (resize, center crop, flip, scale to float,
// normalize) on a decoded photo's uint8 pixels: several ops fused into few kernels, and the
// case whose first prepare (compile latency) matters most to a data loader.
void add_preprocess(std::vector<BenchCase>& cases, std::string_view device) {
    const Dims shape{1, 3, 480, 640};
    for (Layout l : kLayouts) {
        ResizeOp r;
        r.mode = ResizeMode::Bilinear;
        r.size = Size2{256, 256};
        r.antialias = true;
        BenchCase c;
        c.title = "resize AA+crop+flip+normalize";
        c.name = case_name(c.title, shape, {224, 224}, DType::UInt8, l);
        c.device = std::string(device);
        c.pipeline.ops.emplace_back(std::move(r));
        c.pipeline.ops.emplace_back(CropOp{16, 16, 224, 224, false});  // the center 224 x 224
        c.pipeline.ops.emplace_back(FlipOp{{3}});  // W
        c.pipeline.ops.emplace_back(ConvertOp{DType::Float32, true});
        c.pipeline.ops.emplace_back(NormalizeOp{{0.485, 0.456, 0.406}, {0.229, 0.224, 0.225}});
        c.dtype = DType::UInt8;
        c.shape = shape;
        c.layout = l;
        cases.push_back(std::move(c));
    }
}

// The work preprocessing services and data loaders do, beside the seed rows: a 4K frame to a
// 640 x 360 thumbnail, a decoded 1080p frame to a normalized 224 x 224 tensor (torchvision's
// Resize(256) -> CenterCrop(224) -> to float -> Normalize: 256 x 455, crop at (16, 116)), and
// a training batch of 32 photos (resize, crop, flip, normalize) and a uint8 training sample
// (crop, resize, flip). uint8 channels-last, as decoders hand frames over.
std::vector<BenchCase> workloads_on(std::string_view device) {
    std::vector<BenchCase> cases;
    add_resize(cases, device, ResizeMode::Bilinear, true, {{1, 3, 2160, 3840}, {360, 640}}, DType::UInt8,
               Layout::ChannelsLast);
    struct Chain {
        std::string title;
        Dims in;
        Size2 resize;
        CropOp crop;
        bool flip;
    };
    for (const Chain& k : {Chain{"resize AA+crop+normalize", {1, 3, 1080, 1920}, {256, 455}, CropOp{16, 116, 224, 224, false}, false},
                           Chain{"resize AA+crop+flip+normalize", {32, 3, 375, 500}, {256, 256}, CropOp{16, 16, 224, 224, false}, true}}) {
        ResizeOp r;
        r.mode = ResizeMode::Bilinear;
        r.size = k.resize;
        r.antialias = true;
        BenchCase c;
        c.title = k.title;
        c.name = case_name(c.title, k.in, {224, 224}, DType::UInt8, Layout::ChannelsLast);
        c.device = std::string(device);
        c.pipeline.ops.emplace_back(std::move(r));
        c.pipeline.ops.emplace_back(k.crop);
        if (k.flip) c.pipeline.ops.emplace_back(FlipOp{{3}});
        c.pipeline.ops.emplace_back(ConvertOp{DType::Float32, true});
        c.pipeline.ops.emplace_back(NormalizeOp{{0.485, 0.456, 0.406}, {0.229, 0.224, 0.225}});
        c.dtype = DType::UInt8;
        c.shape = k.in;
        c.layout = Layout::ChannelsLast;
        cases.push_back(std::move(c));
    }
    {
        // A uint8 training sample: RandomResizedCrop's crop and resize, then the flip drawn
        // (the result stays uint8, converted later or on the GPU).
        ResizeOp r;
        r.mode = ResizeMode::Bilinear;
        r.size = {224, 224};
        r.antialias = true;
        BenchCase c;
        c.title = "crop+resize AA+flip";
        const Dims in{1, 3, 480, 640};
        c.name = case_name(c.title, in, {224, 224}, DType::UInt8, Layout::ChannelsLast);
        c.device = std::string(device);
        c.pipeline.ops.emplace_back(CropOp{40, 100, 360, 420, false});
        c.pipeline.ops.emplace_back(std::move(r));
        c.pipeline.ops.emplace_back(FlipOp{{3}});
        c.dtype = DType::UInt8;
        c.shape = in;
        c.layout = Layout::ChannelsLast;
        cases.push_back(std::move(c));
    }
    return cases;
}

std::vector<BenchCase> workloads() {
    std::vector<BenchCase> cases = workloads_on("cpu");
    for (BenchCase& c : workloads_on("cuda")) cases.push_back(std::move(c));
    return cases;
}

std::vector<BenchCase> seeds_cpu() {
    std::vector<BenchCase> cases;
    add_resize_aa(cases, "cpu",
                  {{{1, 3, 345, 456}, {270, 270}},
                   {{4, 3, 345, 456}, {270, 270}},
                   {{1, 3, 500, 400}, {256, 256}},
                   {{4, 3, 500, 400}, {256, 256}},
                   {{1, 3, 1200, 1300}, {200, 300}},
                   {{4, 3, 1200, 1300}, {200, 300}},
                   {{1, 3, 300, 400}, {600, 700}},
                   {{4, 3, 300, 400}, {600, 700}},
                   {{1, 3, 345, 456}, {123, 124}},
                   {{1, 3, 345, 456}, {567, 678}}},
                  {DType::UInt8, DType::Float32}, {{256, 256}, {270, 270}});
    add_resize_plain(cases, "cpu", {DType::Float32, DType::UInt8},
                     {ResizeMode::Nearest, ResizeMode::NearestExact});
    add_affine(cases, "cpu");
    add_flips(cases, "cpu");
    add_preprocess(cases, "cpu");
    return cases;
}

std::vector<BenchCase> seeds_cuda() {
    std::vector<BenchCase> cases;
    add_resize_aa(cases, "cuda",
                  {{{1, 3, 500, 400}, {256, 256}},
                   {{4, 3, 500, 400}, {256, 256}},
                   {{1, 3, 1200, 1300}, {200, 300}},
                   {{4, 3, 1200, 1300}, {200, 300}},
                   {{1, 3, 300, 400}, {600, 700}},
                   {{4, 3, 300, 400}, {600, 700}},
                   {{1, 3, 2345, 2456}, {1234, 1345}},
                   {{4, 3, 2345, 2456}, {1234, 1345}},
                   {{1, 3, 1234, 1345}, {2345, 2456}},
                   {{4, 3, 1234, 1345}, {2345, 2456}},
                   {{1, 3, 2345, 2456}, {120, 200}},
                   {{4, 3, 2345, 2456}, {120, 200}},
                   {{4, 3, 3456, 4567}, {2345, 3456}},
                   {{1, 3, 345, 456}, {271, 272}},
                   {{4, 3, 345, 456}, {567, 678}}},
                  {DType::Float32}, {{256, 256}, {270, 270}, {1234, 1345}});
    add_resize_plain(cases, "cuda", {DType::Float32},
                     {ResizeMode::Nearest, ResizeMode::NearestExact, ResizeMode::Bilinear, ResizeMode::Bicubic});
    add_affine(cases, "cuda");
    return cases;
}

std::vector<BenchCase> seeds() {
    std::vector<BenchCase> cases = seeds_cpu();
    for (BenchCase& c : seeds_cuda()) cases.push_back(std::move(c));
    return cases;
}

// One row of each kind a CI smoke run should exercise, all small CPU rows of "seeds".
std::vector<BenchCase> quick() {
    const std::vector<std::string> names{
        "interpolate bilinear AA (1, 3, 345, 456) -> (270, 270) uint8 CL",
        "interpolate bilinear AA (1, 3, 345, 456) -> (123, 124) float32 CF",
        "interpolate nearest (1, 3, 500, 400) -> (256, 256) uint8 CF",
        "interpolate bicubic AA (1, 3, 345, 456) -> (270, 270) uint8 CF",
        "affine_grid+grid_sample bilinear ac=False (2, 3, 345, 456) -> (345, 456) float32 CF",
        "hflip (1, 3, 224, 224) -> (224, 224) uint8 CL",
        "resize AA+crop+flip+normalize (1, 3, 480, 640) -> (224, 224) uint8 CL",
    };
    std::vector<BenchCase> all = seeds_cpu(), cases;
    for (const std::string& n : names) {
        auto it = std::find_if(all.begin(), all.end(), [&](const BenchCase& c) { return c.name == n; });
        if (it == all.end()) fail("internal: quick suite row '{}' is not a seeds row", n);
        cases.push_back(*it);
    }
    return cases;
}

}  // namespace

std::vector<std::string> suite_names() { return {"seeds", "quick", "workloads"}; }

std::vector<BenchCase> suite_cases(std::string_view suite) {
    if (suite == "seeds") return seeds();
    if (suite == "quick") return quick();
    if (suite == "workloads") return workloads();
    fail("unknown benchmark suite '{}' (available: seeds, quick, workloads)", suite);
}

std::string row_label(std::string_view name, std::string_view title) {
    if (name.size() > title.size() && name.substr(0, title.size()) == title && name[title.size()] == ' ')
        return std::string(name.substr(title.size() + 1));
    return std::string(name);
}

std::size_t case_bytes(const BenchCase& c) {
    ShapeInfo out = infer_shape(c.pipeline, ShapeInfo{c.dtype, c.shape});
    auto count = [](const Dims& d) { return static_cast<std::size_t>(d[0] * d[1] * d[2] * d[3]); };
    std::size_t bytes = count(c.shape) * dtype_size(c.dtype) + count(out.shape) * dtype_size(out.dtype);
    for (const Op& op : c.pipeline.ops)
        if (const auto* g = std::get_if<GridSampleOp>(&op)) bytes += g->grid.nbytes();
    return bytes;
}

std::string suites_to_json(const std::vector<std::string>& suites) {
    using json = nlohmann::ordered_json;
    auto dims = [](const Dims& d) { return json::array({d[0], d[1], d[2], d[3]}); };
    json list = json::array();
    for (const std::string& suite : suites) {
        json cases = json::array();
        for (const BenchCase& c : suite_cases(suite)) {
            ShapeInfo out = infer_shape(c.pipeline, ShapeInfo{c.dtype, c.shape});
            json j;
            j["label"] = c.name;
            j["op"] = c.title;
            j["row"] = row_label(c.name, c.title);
            j["device"] = c.device;
            j["pipeline"] = json::parse(pipeline_to_json(c.pipeline));
            j["input"] = {{"dtype", std::string(dtype_name(c.dtype))},
                          {"shape", dims(c.shape)},
                          {"layout", std::string(layout_name(c.layout))}};
            j["output"] = {{"dtype", std::string(dtype_name(out.dtype))}, {"shape", dims(out.shape)}};
            j["bytes"] = case_bytes(c);
            cases.push_back(std::move(j));
        }
        list.push_back({{"name", suite}, {"cases", std::move(cases)}});
    }
    return json{{"suites", std::move(list)}}.dump() + "\n";
}

Tensor make_input(const BenchCase& c) {
    if (!c.error.empty()) throw Error(c.error);
    if (c.data) return *c.data;
    Tensor t = Tensor::empty(c.dtype, c.shape, c.layout);
    // splitmix64: cheap, well mixed, and identical on every platform.
    std::uint64_t state = 0x9E3779B97F4A7C15ULL;
    auto next = [&state] {
        std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    };
    auto n = static_cast<std::size_t>(t.numel());
    switch (c.dtype) {
        case DType::UInt8: {
            auto* p = t.data_as<std::uint8_t>();
            for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::uint8_t>(next() >> 56);
            break;
        }
        case DType::Float32: {
            auto* p = t.data_as<float>();
            // 24 random bits scaled by 2^-24: exactly representable, in [0, 1).
            for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<float>(next() >> 40) * 0x1p-24f;
            break;
        }
        case DType::UInt16: {
            auto* p = t.data_as<std::uint16_t>();
            for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::uint16_t>(next() >> 48);
            break;
        }
        case DType::Float16:
        case DType::BFloat16: {
            // 8 random bits scaled by 2^-8: exact in both, in [0, 1).
            auto* p = t.data_as<std::uint16_t>();
            for (std::size_t i = 0; i < n; ++i) {
                const float f = static_cast<float>(next() >> 56) * 0x1p-8f;
                p[i] = c.dtype == DType::Float16 ? Half(f).bits : BFloat16(f).bits;
            }
            break;
        }
    }
    return t;
}

}  // namespace toroid::bench
