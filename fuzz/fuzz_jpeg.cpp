// libFuzzer target for the JPEG reader: decodes arbitrary bytes through TurboJPEG, and
// checks that whatever decodes has a sane shape and survives a re-encode / decode.
#include "fuzz_common.h"
#include "io/jpeg.h"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace toroid;
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    fuzz::expect_ok_or_error([&] {
        Tensor t = io::decode_jpeg(bytes, "fuzz.jpg");
        const Dims& d = t.shape();
        fuzz::check(t.dtype() == DType::UInt8 && d[0] == 1 && (d[1] == 1 || d[1] == 3) && d[2] >= 1 && d[3] >= 1,
                    "decoded JPEG is uint8 (1, 1 or 3, H, W)");
        // JPEG is lossy: the round trip keeps the shape, not the values.
        if (t.numel() <= (1 << 20)) {
            Tensor u = io::decode_jpeg(io::encode_jpeg(t, 75), "roundtrip.jpg");
            fuzz::check(u.shape() == d, "round trip keeps the shape");
        }
    });
    return 0;
}
