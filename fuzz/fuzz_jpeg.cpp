// libFuzzer target for the JPEG reader: decodes arbitrary bytes in every mode with the EXIF
// orientation applied, and checks that whatever decodes has the mode's channels and a sane
// shape, that a region of it decoded alone (and in place, into an image of the whole size)
// has the same pixels, and that it survives a re-encode / decode; the GPU decoder's marker
// walk (io::jpeg_reaches_end_marker) runs on every input too. Seeds (fuzz/corpus/fuzz_jpeg)
// are copies of the Pillow-made files in tests/data/jpeg.
#include "fuzz_common.h"
#include "io/file.h"
#include "io/jpeg.h"

#include <array>
#include <cstdint>

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    toroid::io::set_max_image_pixels(toroid::fuzz::kImagePixels);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace toroid;
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    // The GPU decoder's marker walk: bounded, and never a read past the bytes, on any input.
    (void)io::jpeg_reaches_end_marker(bytes);
    for (io::ImageMode mode : {io::ImageMode::Unchanged, io::ImageMode::Rgb, io::ImageMode::Gray}) {
        fuzz::expect_ok_or_error([&] {
            Tensor t = io::decode_image(bytes, "fuzz.jpg", io::ImageFormat::Jpeg, {mode, true, {}});
            const Dims& d = t.shape();
            const bool channels_ok = mode == io::ImageMode::Rgb    ? d[1] == 3
                                     : mode == io::ImageMode::Gray ? d[1] == 1
                                                                   : d[1] == 1 || d[1] == 3 || d[1] == 4;
            fuzz::check(t.dtype() == DType::UInt8 && d[0] == 1 && channels_ok && d[2] >= 1 && d[3] >= 1,
                        "decoded JPEG is uint8 (1, C, H, W) with the mode's channels");
            // A region decoded alone (libjpeg's skipped rows and cropped columns) has the whole
            // decode's pixels; its place comes from the input's last bytes.
            if (size >= 4) {
                const std::int64_t h = d[2], w = d[3];
                const std::int64_t rh = 1 + data[size - 1] % h, rw = 1 + data[size - 2] % w;
                const std::int64_t top = data[size - 3] % (h - rh + 1), left = data[size - 4] % (w - rw + 1);
                io::DecodeOptions o{mode, true, {}};
                o.region = std::array<std::int64_t, 4>{top, left, rh, rw};
                Tensor r = io::decode_image(bytes, "fuzz.jpg", io::ImageFormat::Jpeg, o);
                fuzz::check(r.shape() == Dims{1, d[1], rh, rw}, "a region has the region's shape");
                for (std::int64_t c = 0; c < d[1]; ++c)
                    for (std::int64_t y = 0; y < rh; ++y)
                        for (std::int64_t x = 0; x < rw; ++x)
                            fuzz::check(r.at<std::uint8_t>(0, c, y, x) == t.at<std::uint8_t>(0, c, top + y, left + x),
                                        "a region has the whole decode's pixels");
                // The same region decoded into an image of the whole size: at its place.
                if (t.numel() <= (1 << 22)) {
                    Tensor canvas = Tensor::zeros(DType::UInt8, d, Layout::ChannelsLast);
                    io::decode_image_into(bytes, "fuzz.jpg", io::ImageFormat::Jpeg, o, canvas);
                    for (std::int64_t c = 0; c < d[1]; ++c)
                        for (std::int64_t y = 0; y < rh; ++y)
                            for (std::int64_t x = 0; x < rw; ++x)
                                fuzz::check(canvas.at<std::uint8_t>(0, c, top + y, left + x) ==
                                                t.at<std::uint8_t>(0, c, top + y, left + x),
                                            "a region decoded in place has the whole decode's pixels");
                }
            }
            // JPEG is lossy: the round trip keeps the shape, not the values (CMYK is not written).
            if (d[1] != 4 && t.numel() <= (1 << 20)) {
                Tensor u = io::decode_jpeg(io::encode_jpeg(t, 75), "roundtrip.jpg");
                fuzz::check(u.shape() == d, "round trip keeps the shape");
            }
        });
    }
    return 0;
}
