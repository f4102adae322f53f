// libFuzzer target for the .npy reader: parses arbitrary bytes as an array and as an
// image, and checks that whatever parses survives an encode / parse round trip.
#include "fuzz_common.h"
#include "io/npy.h"

#include <cstdint>
#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace toroid;
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    fuzz::expect_ok_or_error([&] {
        io::NpyArray a = io::parse_npy(bytes, "fuzz.npy");
        fuzz::check(a.data.dtype() == a.dtype, "tensor dtype matches the header");
        fuzz::check(a.data.nbytes() <= bytes.size(), "data is no larger than the file");
    });
    fuzz::expect_ok_or_error([&] {
        Tensor t = io::parse_npy_image(bytes, "fuzz.npy");
        // Written back as C-order (N, C, H, W), it must read back bit for bit.
        std::string again = io::encode_npy(t);
        Tensor u = io::parse_npy_image(again, "roundtrip.npy");
        fuzz::check(u.dtype() == t.dtype() && u.shape() == t.shape(), "round trip keeps dtype and shape");
        fuzz::check(t.is_dense(Layout::Contiguous) && u.is_dense(Layout::Contiguous), "results are dense");
        fuzz::check(std::memcmp(t.data(), u.data(), t.nbytes()) == 0, "round trip keeps the values");
    });
    return 0;
}
