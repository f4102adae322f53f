// libFuzzer target for the PNG reader: decodes arbitrary bytes through libpng in every mode
// with the EXIF orientation applied, checks the mode's channels (uint8 samples, uint16 for a
// 16-bit PNG), and that whatever decodes survives an encode / decode round trip unchanged.
#include "fuzz_common.h"
#include "io/file.h"
#include "io/png.h"

#include <cstdint>

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    toroid::io::set_max_image_pixels(toroid::fuzz::kImagePixels);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace toroid;
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    for (io::ImageMode mode : {io::ImageMode::Unchanged, io::ImageMode::Gray, io::ImageMode::GrayAlpha,
                               io::ImageMode::Rgb, io::ImageMode::RgbAlpha}) {
        fuzz::expect_ok_or_error([&] {
            Tensor t = io::decode_image(bytes, "fuzz.png", io::ImageFormat::Png, {mode, true, {}});
            const Dims& d = t.shape();
            const std::int64_t want = mode == io::ImageMode::Gray        ? 1
                                      : mode == io::ImageMode::GrayAlpha ? 2
                                      : mode == io::ImageMode::Rgb       ? 3
                                      : mode == io::ImageMode::RgbAlpha  ? 4
                                                                         : 0;
            // uint8, or uint16 for a 16-bit PNG
            fuzz::check((t.dtype() == DType::UInt8 || t.dtype() == DType::UInt16) && d[0] == 1 && d[1] >= 1 &&
                            d[1] <= 4 && (want == 0 || d[1] == want) && d[2] >= 1 && d[3] >= 1,
                        "decoded PNG is uint8 or uint16 (1, C, H, W) with the mode's channels");
            Tensor u = io::decode_png(io::encode_png(t), "roundtrip.png");
            fuzz::check(u.shape() == d && u.dtype() == t.dtype(), "round trip keeps the shape and dtype");
            const bool wide = t.dtype() == DType::UInt16;
            for (std::int64_t c = 0; c < d[1]; ++c)
                for (std::int64_t y = 0; y < d[2]; ++y)
                    for (std::int64_t x = 0; x < d[3]; ++x)
                        if (wide ? t.at<std::uint16_t>(0, c, y, x) != u.at<std::uint16_t>(0, c, y, x)
                                 : t.at<std::uint8_t>(0, c, y, x) != u.at<std::uint8_t>(0, c, y, x))
                            fuzz::bug("round trip changed a pixel", "");
        });
    }
    return 0;
}
