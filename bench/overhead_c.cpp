// Per-call host cost of toroid's C API on a 1x1 uint8 image (flip along W, 1 thread):
// toroid_run_data and toroid_run on a function compiled once. bench/overhead.py builds and
// runs it; prints one line per round: "<run_data us> <run us>" (per call, interleaved).
#include "toroid/toroid.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 21;
    const int calls = argc > 2 ? std::atoi(argv[2]) : 20000;
    toroid_pipeline* p = nullptr;
    if (toroid_pipeline_from_json(R"([{"op": "flip", "dims": [-1]}])", nullptr, &p) != TOROID_OK) {
        std::fprintf(stderr, "%s\n", toroid_last_error());
        return 1;
    }
    toroid_tensor_desc d{};
    d.dtype = TOROID_UINT8;
    d.device = TOROID_CPU;
    d.ndim = 2;
    d.shape[0] = d.shape[1] = 1;
    d.strides[0] = d.strides[1] = 1;
    toroid_options o;
    toroid_options_init(&o);
    o.threads = 1;
    toroid_function* f = nullptr;
    if (toroid_compile(p, &d, &o, &f) != TOROID_OK) {
        std::fprintf(stderr, "%s\n", toroid_last_error());
        return 1;
    }
    unsigned char a = 7, b = 0;
    toroid_tensor in{&a, d}, out{&b, d};
    toroid_function_output_desc(f, &out.desc);
    using clock = std::chrono::steady_clock;
    for (int r = 0; r < rounds; ++r) {
        double us[2];
        for (int mode = 0; mode < 2; ++mode) {
            const auto t0 = clock::now();
            for (int i = 0; i < calls; ++i) {
                const toroid_status s = mode == 0 ? toroid_run_data(f, &a, &b) : toroid_run(f, &in, &out);
                if (s != TOROID_OK) {
                    std::fprintf(stderr, "%s\n", toroid_last_error());
                    return 1;
                }
            }
            us[mode] = std::chrono::duration<double>(clock::now() - t0).count() / calls * 1e6;
        }
        std::printf("%.4f %.4f\n", us[0], us[1]);
    }
    toroid_function_free(f);
    toroid_pipeline_free(p);
    return 0;
}
