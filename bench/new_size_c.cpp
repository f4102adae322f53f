// What a new image size costs a C API caller over a size seen before: the ImageNet eval
// transform (or the pipeline in argv[3]) on HWC uint8 images of distinct random sizes
// (180-900 px per side, viewed as CHW: channels-last strides), 1 thread. Per image,
// interleaved: toroid_compile for its size (a new size: decompose, bind, no compile after
// the first), then toroid_run_data through that function (the seen-size call), then
// toroid_run_data again. bench/new_size.py builds and runs it; it prints one line per
// image after a warm-up: "<compile us> <first run us> <seen run us>".
#include "toroid/toroid.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <set>
#include <utility>
#include <vector>

int main(int argc, char** argv) {
    const int images = argc > 1 ? std::atoi(argv[1]) : 200;
    const unsigned seed = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 0u;
    const char* json = argc > 3 ? argv[3]
                                : R"([{"op": "resize", "mode": "bilinear", "antialias": true, "smaller_edge": 256},
                                      {"op": "center_crop", "size": 224},
                                      {"op": "convert", "dtype": "float32", "scale": true},
                                      {"op": "normalize", "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}])";
    toroid_pipeline* p = nullptr;
    if (toroid_pipeline_from_json(json, nullptr, &p) != TOROID_OK) {
        std::fprintf(stderr, "%s\n", toroid_last_error());
        return 1;
    }
    toroid_options o;
    toroid_options_init(&o);
    o.threads = 1;
    // Distinct sizes: a size seen before would be an instance-cache hit, not a new size.
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> side(180, 900);
    std::set<std::pair<int, int>> seen;
    std::vector<std::pair<int, int>> sizes;
    const int warmup = 3;
    while (static_cast<int>(sizes.size()) < images + warmup) {
        const std::pair<int, int> s{side(rng), side(rng)};
        if (seen.insert(s).second) sizes.push_back(s);
    }
    std::vector<std::uint8_t> data(900 * 900 * 3);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(rng());
    std::vector<float> out;
    using clock = std::chrono::steady_clock;
    auto us = [](clock::time_point a, clock::time_point b) { return std::chrono::duration<double>(b - a).count() * 1e6; };
    for (std::size_t k = 0; k < sizes.size(); ++k) {
        const auto [h, w] = sizes[k];
        toroid_tensor_desc d{};
        d.dtype = TOROID_UINT8;
        d.device = TOROID_CPU;
        d.ndim = 3;
        d.shape[0] = 3;
        d.shape[1] = h;
        d.shape[2] = w;
        d.strides[0] = 1;
        d.strides[1] = 3 * static_cast<std::int64_t>(w);
        d.strides[2] = 3;
        toroid_function* f = nullptr;
        const auto t0 = clock::now();
        if (toroid_compile(p, &d, &o, &f) != TOROID_OK) {
            std::fprintf(stderr, "%s\n", toroid_last_error());
            return 1;
        }
        const auto t1 = clock::now();
        {
            // Room for this size's result (untimed: the ImageNet transform's is always the
            // crop's, a pipeline from argv[3] may grow with the image).
            toroid_tensor_desc od{};
            if (toroid_function_output_desc(f, &od) != TOROID_OK) {
                std::fprintf(stderr, "%s\n", toroid_last_error());
                return 1;
            }
            std::size_t n = 1;
            for (int i = 0; i < od.ndim; ++i) n *= static_cast<std::size_t>(od.shape[i]);
            if (out.size() < n) out.resize(n);  // floats: room for uint8 results too
        }
        const auto t1_run = clock::now();
        if (toroid_run_data(f, data.data(), out.data()) != TOROID_OK) {
            std::fprintf(stderr, "%s\n", toroid_last_error());
            return 1;
        }
        const auto t2 = clock::now();
        if (toroid_run_data(f, data.data(), out.data()) != TOROID_OK) {
            std::fprintf(stderr, "%s\n", toroid_last_error());
            return 1;
        }
        const auto t3 = clock::now();
        toroid_function_free(f);
        // The first compile runs a quick build while the full one compiles in the
        // background: the sizes are timed on the full build.
        if (k == 0) toroid_wait_for_background_builds();
        if (static_cast<int>(k) >= warmup) std::printf("%.2f %.2f %.2f\n", us(t0, t1), us(t1_run, t2), us(t2, t3));
    }
    toroid_pipeline_free(p);
    return 0;
}
