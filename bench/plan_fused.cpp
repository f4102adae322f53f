// Host cost of a fused launch's plan (schedule::plan_fused_launch: tile sizes, per-tile
// ranges of the intermediate, shared memory) for a new image size, without a GPU: the part
// of a CUDA prepare for a new size that grows with the image. Prints, per case, the median
// of the plan's time over repeats, the tiles chosen and a checksum of the ranges (so that
// two builds can be compared for the same plan).
//
//     build/toroid_plan_bench [repeats]
#include "decomp/decompose.h"
#include "ops/pipeline_json.h"
#include "schedule/bind.h"
#include "schedule/gpu_fuse.h"
#include "schedule/schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

using namespace toroid;

int main(int argc, char** argv) {
    const int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
    struct Case {
        const char* json;
        Dims in;
        DType dtype;
    };
    const char* aa = R"([{"op": "resize", "mode": "bilinear", "antialias": true, "size": [%H, %W]}])";
    const auto resize = [&](std::int64_t h, std::int64_t w) {
        std::string s = aa;
        s.replace(s.find("%H"), 2, std::to_string(h));
        s.replace(s.find("%W"), 2, std::to_string(w));
        return s;
    };
    struct Row {
        std::string json;
        Dims in;
        DType dtype;
        Layout layout;
    };
    std::vector<Row> rows;
    for (Layout l : {Layout::Contiguous, Layout::ChannelsLast}) {
        rows.push_back({resize(2345, 3456), {4, 3, 3456, 4567}, DType::Float32, l});
        rows.push_back({resize(1234, 1345), {4, 3, 2345, 2456}, DType::Float32, l});
        rows.push_back({resize(2345, 2456), {4, 3, 1234, 1345}, DType::Float32, l});
        rows.push_back({resize(120, 200), {4, 3, 2345, 2456}, DType::Float32, l});
        rows.push_back({resize(120, 200), {1, 3, 2345, 2456}, DType::UInt8, l});
    }
    rows.push_back({R"([{"op": "resize", "mode": "bilinear", "antialias": true, "smaller_edge": 256},
                        {"op": "center_crop", "size": 224}, {"op": "convert", "dtype": "float32", "scale": true},
                        {"op": "normalize", "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}])",
                    {1, 3, 1080, 1920}, DType::UInt8, Layout::ChannelsLast});
    rows.push_back({R"([{"op": "resize", "mode": "bilinear", "antialias": true, "smaller_edge": 256},
                        {"op": "center_crop", "size": 224}, {"op": "convert", "dtype": "float32", "scale": true},
                        {"op": "normalize", "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}])",
                    {1, 3, 375, 500}, DType::UInt8, Layout::ChannelsLast});
    fmt::print("| case | layout | plan (ms) | tiles | in a batch (tiles) | checksum |\n"
               "| --- | --- | ---: | --- | --- | ---: |\n");
    for (const Row& r : rows) {
        const TensorSpec spec{r.dtype, r.in, dense_strides(r.in, r.layout)};
        const ir::Graph g = decomp::decompose(parse_pipeline(r.json, "."), spec);
        schedule::Options o;
        o.target = Target::cuda("sm_90");
        o.index_width = ir::IndexWidth::I32;
        const ir::Program p = schedule::schedule(g, o);
        if (p.gpu_fusions.empty()) {
            fmt::print("| {} | {} | - | no fused pair | | |\n", r.json.substr(0, 60), layout_name(r.layout));
            continue;
        }
        const schedule::Binding b = schedule::bind(p, g);
        schedule::FusedLimits limits;
        limits.shared_limit = 227 * 1024;
        std::vector<double> ms;
        schedule::FusedLaunch L;
        for (int i = 0; i < repeats; ++i) {
            const auto t0 = std::chrono::steady_clock::now();
            L = schedule::plan_fused_launch(p, p.gpu_fusions[0], b, limits);
            ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        }
        std::sort(ms.begin(), ms.end());
        schedule::FusedLimits batch = limits;
        batch.multiprocessors = 1;  // as the engine plans an image of a batch
        const schedule::FusedLaunch B = schedule::plan_fused_launch(p, p.gpu_fusions[0], b, batch);
        const auto tiles = [](const schedule::FusedLaunch& l) {
            return l.fused ? fmt::format("{}x{}, {} blocks, {} bytes", l.tile_x, l.tile_y, l.tiles_x * l.tiles_y * l.blocks_z,
                                         l.shared_bytes)
                           : l.why;
        };
        std::uint64_t sum = 1469598103934665603ull;
        for (const std::int32_t v : L.ranges) sum = (sum ^ static_cast<std::uint32_t>(v)) * 1099511628211ull;
        fmt::print("| {} {} ({}, {}, {}, {}) | {} | {:.3f} | {} | {} | {:016x} |\n", dtype_name(r.dtype),
                   r.json.find("smaller_edge") != std::string::npos ? "eval" : r.json.substr(r.json.find("\"size\"") + 8, 11), r.in[0], r.in[1],
                   r.in[2], r.in[3], layout_name(r.layout), ms[ms.size() / 2],
                   tiles(L), tiles(B), sum);
    }
}
