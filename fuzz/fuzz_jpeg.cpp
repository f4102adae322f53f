// libFuzzer target for the JPEG reader: decodes arbitrary bytes through TurboJPEG in every
// mode with the EXIF orientation applied, and checks that whatever decodes has the mode's
// channels and a sane shape, and survives a re-encode / decode. Seeds (fuzz/corpus/fuzz_jpeg)
// are copies of the Pillow-made files in tests/data/jpeg.
#include "fuzz_common.h"
#include "io/file.h"
#include "io/jpeg.h"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace toroid;
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    for (io::ImageMode mode : {io::ImageMode::Unchanged, io::ImageMode::Rgb, io::ImageMode::Gray}) {
        fuzz::expect_ok_or_error([&] {
            Tensor t = io::decode_image(bytes, "fuzz.jpg", io::ImageFormat::Jpeg, {mode, true, {}});
            const Dims& d = t.shape();
            const bool channels_ok = mode == io::ImageMode::Rgb    ? d[1] == 3
                                     : mode == io::ImageMode::Gray ? d[1] == 1
                                                                   : d[1] == 1 || d[1] == 3 || d[1] == 4;
            fuzz::check(t.dtype() == DType::UInt8 && d[0] == 1 && channels_ok && d[2] >= 1 && d[3] >= 1,
                        "decoded JPEG is uint8 (1, C, H, W) with the mode's channels");
            // JPEG is lossy: the round trip keeps the shape, not the values (CMYK is not written).
            if (d[1] != 4 && t.numel() <= (1 << 20)) {
                Tensor u = io::decode_jpeg(io::encode_jpeg(t, 75), "roundtrip.jpg");
                fuzz::check(u.shape() == d, "round trip keeps the shape");
            }
        });
    }
    return 0;
}
