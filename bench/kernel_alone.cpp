// Times generated kernels alone, outside any engine: the toroid_entry of each kernel.so given
// (kernel.cpp compiled by hand, e.g. from `toroid apply --debug-dir` of the compiled and the
// specialized engine) on one uint8 (1, 3, H, W) contiguous input, each into its own output
// placed OFFO bytes past a page boundary, interleaved over 40 rounds; prints min and median
// microseconds per call and whether the results equal the first kernel's. Where a benchmark
// row's engines differ by the placement of their buffers (4K aliasing between a flip's reads
// and writes), this shows what the code itself costs.
//
//   g++ -O2 -o kernel_alone bench/kernel_alone.cpp -ldl
//   OFFO=64 ./kernel_alone flip 224 224 generic/kernel.so specialized/kernel.so
//   ./kernel_alone flip_cl 224 224 generic/kernel.so specialized/kernel.so   (channels-last)
//   ./kernel_alone nearest 500 400 256 256 generic/kernel.so specialized/kernel.so
//
// flip: params of the flip kernels (n, h, w, input strides n c h, output strides h c n);
// flip_cl: the same on channels-last memory (n, h, w, input strides n h, output strides h n);
// nearest: resize nearest to OH x OW (index tables floor(i * in / out); params n, h, w,
// input strides n c h, out_h, out_w, output strides h c n).
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using Entry = void (*)(void* const*, const std::int64_t*, int);

int main(int argc, char** argv) {
    if (argc < 5) {
        std::fprintf(stderr, "usage: kernel_alone flip|flip_cl H W SO... | nearest H W OH OW SO...\n");
        return 2;
    }
    const std::string mode = argv[1];
    const bool nearest = mode == "nearest", cl = mode == "flip_cl";
    if (!nearest && !cl && mode != "flip") {
        std::fprintf(stderr, "kernel_alone: mode is flip, flip_cl or nearest\n");
        return 2;
    }
    const long H = std::atol(argv[2]), W = std::atol(argv[3]);
    const long OH = nearest ? std::atol(argv[4]) : H, OW = nearest ? std::atol(argv[5]) : W;
    const int first_so = nearest ? 6 : 4;
    std::vector<Entry> fns;
    for (int i = first_so; i < argc; ++i) {
        void* h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
        if (h == nullptr) {
            std::fprintf(stderr, "kernel_alone: %s\n", dlerror());
            return 1;
        }
        fns.push_back(reinterpret_cast<Entry>(dlsym(h, "toroid_entry")));
    }
    const std::size_t n = 3ul * H * W, on = 3ul * OH * OW;
    const long offo = std::getenv("OFFO") ? std::atol(std::getenv("OFFO")) : 0;
    auto* in = static_cast<std::uint8_t*>(std::aligned_alloc(4096, (n + 8191) / 4096 * 4096));
    for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<std::uint8_t>(i * 2654435761u >> 13);
    std::vector<std::int32_t> hi(OH), wi(OW);
    for (long i = 0; i < OH; ++i) hi[i] = static_cast<std::int32_t>(std::min(H - 1, i * H / OH));
    for (long i = 0; i < OW; ++i) wi[i] = static_cast<std::int32_t>(std::min(W - 1, i * W / OW));
    std::vector<std::uint8_t*> outs;
    for (std::size_t i = 0; i < fns.size(); ++i)
        outs.push_back(static_cast<std::uint8_t*>(std::aligned_alloc(4096, (on + offo + 8191) / 4096 * 4096)) + offo);
    std::vector<std::int64_t> params;
    if (nearest) params = {1, H, W, 3 * H * W, H * W, W, OH, OW, OW, OH * OW, 3 * OH * OW};
    else if (cl) params = {1, H, W, 3 * H * W, 3 * W, 3 * W, 3 * H * W};
    else params = {1, H, W, 3 * H * W, H * W, W, W, H * W, 3 * H * W};
    std::vector<std::vector<double>> t(fns.size());
    const int reps = 100;
    for (int round = 0; round < 40; ++round)
        for (std::size_t i = 0; i < fns.size(); ++i) {
            std::vector<void*> bufs = nearest ? std::vector<void*>{in, hi.data(), wi.data(), outs[i]}
                                              : std::vector<void*>{in, outs[i]};
            fns[i](bufs.data(), params.data(), 1);
            const auto a = std::chrono::steady_clock::now();
            for (int r = 0; r < reps; ++r) fns[i](bufs.data(), params.data(), 1);
            const auto b = std::chrono::steady_clock::now();
            t[i].push_back(std::chrono::duration<double, std::micro>(b - a).count() / reps);
        }
    for (std::size_t i = 0; i < fns.size(); ++i) {
        std::sort(t[i].begin(), t[i].end());
        const bool same = std::memcmp(outs[i], outs[0], on) == 0;
        std::printf("%-40s min %7.2f  med %7.2f us%s\n", argv[first_so + static_cast<int>(i)], t[i][0],
                    t[i][t[i].size() / 2], same ? "" : "  DIFFERS from the first");
    }
    return 0;
}
