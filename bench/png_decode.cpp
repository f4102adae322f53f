// Decode time of one PNG (a 1920x1080 RGB image, say) through toroid's reader (libpng)
// and through libspng, alternating, each into a fresh buffer as a real reader would:
// the measurement behind keeping libpng (both spend their time in zlib's inflate).
// Build and run from the repository root (needs libspng-dev, not a toroid dependency):
//   g++ -O2 -std=c++20 -Isrc bench/png_decode.cpp build/libtoroid.a -lfmt -lpng -lspng \
//       -lturbojpeg -lcrypto -o /tmp/png_decode && /tmp/png_decode FILE.png
#include "io/file.h"
#include "io/png.h"

#include <spng.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <vector>

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: png_decode FILE.png\n");
        return 2;
    }
    const std::string bytes = toroid::io::read_file(argv[1]);
    auto libpng = [&] { toroid::io::decode_png(bytes, "x"); };
    auto libspng = [&] {
        spng_ctx* ctx = spng_ctx_new(0);
        spng_set_png_buffer(ctx, bytes.data(), bytes.size());
        std::size_t n = 0;
        spng_decoded_image_size(ctx, SPNG_FMT_RGB8, &n);
        std::unique_ptr<unsigned char[]> out(new unsigned char[n]);
        if (spng_decode_image(ctx, out.get(), n, SPNG_FMT_RGB8, 0) != 0) std::puts("libspng: decode error");
        spng_ctx_free(ctx);
    };
    std::vector<double> t_png, t_spng;
    auto time = [](auto&& f, std::vector<double>& ts) {
        auto s = std::chrono::steady_clock::now();
        f();
        ts.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - s).count() * 1e3);
    };
    for (int i = 0; i < 21; ++i) {
        time(libpng, t_png);
        time(libspng, t_spng);
    }
    for (auto* ts : {&t_png, &t_spng}) std::sort(ts->begin(), ts->end());
    std::printf("toroid reader (libpng): median %.2f ms, min %.2f ms\n", t_png[10], t_png[0]);
    std::printf("libspng:                median %.2f ms, min %.2f ms\n", t_spng[10], t_spng[0]);
}
