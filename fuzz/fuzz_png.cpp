// libFuzzer target for the PNG reader: decodes arbitrary bytes through libpng, and
// checks that whatever decodes survives an encode / decode round trip unchanged.
#include "fuzz_common.h"
#include "io/png.h"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace toroid;
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    fuzz::expect_ok_or_error([&] {
        Tensor t = io::decode_png(bytes, "fuzz.png");
        const Dims& d = t.shape();
        fuzz::check(t.dtype() == DType::UInt8 && d[0] == 1 && d[1] >= 1 && d[1] <= 4 && d[2] >= 1 && d[3] >= 1,
                    "decoded PNG is uint8 (1, 1..4, H, W)");
        Tensor u = io::decode_png(io::encode_png(t), "roundtrip.png");
        fuzz::check(u.shape() == d, "round trip keeps the shape");
        for (std::int64_t c = 0; c < d[1]; ++c)
            for (std::int64_t y = 0; y < d[2]; ++y)
                for (std::int64_t x = 0; x < d[3]; ++x)
                    if (t.at<std::uint8_t>(0, c, y, x) != u.at<std::uint8_t>(0, c, y, x))
                        fuzz::bug("round trip changed a pixel", "");
    });
    return 0;
}
