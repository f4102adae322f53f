// The float16 and bfloat16 conversions of core/half.h: every float16 pattern widens as the
// compiler's own _Float16 does, narrowing rounds to nearest even as it does (floats of every
// exponent, ties and subnormals included), bfloat16 round trips and rounds ties to even;
// and the dtype table's names parse back.
#include "core/dtype.h"
#include "core/error.h"
#include "core/half.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace toroid {
namespace {

#if defined(__FLT16_MAX__)
TEST(Half, WidensEveryPatternAsTheCompilerDoes) {
    for (std::uint32_t b = 0; b < 65536; ++b) {
        const auto bits = static_cast<std::uint16_t>(b);
        _Float16 h;
        std::memcpy(&h, &bits, 2);
        const float want = static_cast<float>(h), got = half_bits_to_float(bits);
        if (std::isnan(want)) EXPECT_TRUE(std::isnan(got)) << b;
        else EXPECT_EQ(std::memcmp(&want, &got, 4), 0) << b;
    }
}

TEST(Half, NarrowsToNearestEvenAsTheCompilerDoes) {
    long bad = 0;
    for (std::uint64_t u = 0; u < (std::uint64_t{1} << 32); u += 997) {  // every exponent, spread significands
        for (const std::uint32_t tie : {0u, 0x1000u, 0x0fffu, 0x1001u}) {
            const std::uint32_t x = (static_cast<std::uint32_t>(u) & ~0x1fffu) | tie;
            float f;
            std::memcpy(&f, &x, 4);
            if (std::isnan(f)) continue;
            const _Float16 h = static_cast<_Float16>(f);
            std::uint16_t want;
            std::memcpy(&want, &h, 2);
            bad += want != float_to_half_bits(f);
        }
    }
    EXPECT_EQ(bad, 0);
    EXPECT_EQ(float_to_half_bits(65504.0f), 0x7bff);
    EXPECT_EQ(float_to_half_bits(65520.0f), 0x7c00);  // the tie above the largest rounds to inf
    EXPECT_EQ(float_to_half_bits(-0.0f), 0x8000);
    EXPECT_TRUE(std::isnan(half_bits_to_float(float_to_half_bits(NAN))));
}
#endif

TEST(BFloat16, RoundTripsAndRoundsTiesToEven) {
    for (std::uint32_t b = 0; b < 65536; ++b) {
        const float f = bfloat16_bits_to_float(static_cast<std::uint16_t>(b));
        if (std::isnan(f)) EXPECT_EQ(float_to_bfloat16_bits(f), 0x7fc0);
        else EXPECT_EQ(float_to_bfloat16_bits(f), b);
    }
    // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: even (1); 1 + 3 * 2^-8: up.
    EXPECT_EQ(float_to_bfloat16_bits(1.0f + 0x1p-8f), 0x3f80);
    EXPECT_EQ(float_to_bfloat16_bits(1.0f + 3 * 0x1p-8f), 0x3f82);
    EXPECT_EQ(float_to_bfloat16_bits(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);
    EXPECT_EQ(float_to_bfloat16_bits(3.4028235e38f), 0x7f80);  // rounds up to inf
}

TEST(DTypeTable, NamesParseBackAndSizesMatchTheElementTypes) {
    for (const DType t : kAllDTypes) {
        EXPECT_EQ(parse_dtype(dtype_name(t)), t);
        dispatch_dtype(t, [&](auto tag) { EXPECT_EQ(sizeof(tag), dtype_size(t)) << dtype_name(t); });
    }
    EXPECT_THROW(parse_dtype("float64"), Error);
    EXPECT_EQ(dtype_list(), "uint8, float32, uint16, float16 or bfloat16");
    EXPECT_TRUE(dtype_is_float(DType::BFloat16));
    EXPECT_FALSE(dtype_is_float(DType::UInt16));
    EXPECT_EQ(dtype_max_value(DType::UInt16), 65535.0);
}

}  // namespace
}  // namespace toroid
