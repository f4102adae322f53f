// libFuzzer target for the WebP reader: decodes arbitrary bytes through libwebp in the modes
// it takes, and checks that whatever decodes is uint8 (1, C, H, W) with the mode's channels,
// and that the RGBA decode's colours are the RGB decode's. Seeds (fuzz/corpus/fuzz_webp):
// small lossy and lossless files made by fuzz/make_corpus.py.
#include "fuzz_common.h"
#include "io/file.h"
#include "io/webp.h"

#include <cstdint>

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    toroid::io::set_max_image_pixels(toroid::fuzz::kImagePixels);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace toroid;
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    Tensor rgb, rgba;
    for (io::ImageMode mode : {io::ImageMode::Unchanged, io::ImageMode::Rgb, io::ImageMode::RgbAlpha}) {
        fuzz::expect_ok_or_error([&] {
            Tensor t = io::decode_image(bytes, "fuzz.webp", io::ImageFormat::Webp, {mode, true, {}});
            const Dims& d = t.shape();
            const bool channels_ok = mode == io::ImageMode::Rgb        ? d[1] == 3
                                     : mode == io::ImageMode::RgbAlpha ? d[1] == 4
                                                                       : d[1] == 3 || d[1] == 4;
            fuzz::check(t.dtype() == DType::UInt8 && d[0] == 1 && channels_ok && d[2] >= 1 && d[3] >= 1,
                        "decoded WebP is uint8 (1, C, H, W) with the mode's channels");
            if (mode == io::ImageMode::Rgb) rgb = t;
            if (mode == io::ImageMode::RgbAlpha) rgba = t;
        });
    }
    if (rgb.numel() > 0 && rgba.numel() > 0) {
        const Dims& d = rgb.shape();
        bool same = rgba.shape()[2] == d[2] && rgba.shape()[3] == d[3];
        for (std::int64_t c = 0; same && c < 3; ++c)
            for (std::int64_t y = 0; same && y < d[2]; ++y)
                for (std::int64_t x = 0; same && x < d[3]; ++x)
                    same = rgb.at<std::uint8_t>(0, c, y, x) == rgba.at<std::uint8_t>(0, c, y, x);
        fuzz::check(same, "the RGBA decode's colours are the RGB decode's");
    }
    // gray modes are refused, never decoded
    bool refused = false;
    try {
        io::decode_webp(bytes, "fuzz.webp", io::ImageMode::Gray);
    } catch (const Error&) {
        refused = true;
    }
    fuzz::check(refused, "gray is refused for WebP");
    return 0;
}
