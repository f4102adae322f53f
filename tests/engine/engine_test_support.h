// Helpers the engine tests share: seeded random images and the largest difference between
// two results.
#pragma once

#include "core/tensor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>

namespace toroid::test {

// An image of `shape` in `layout` from a seeded generator: uint8 over 0..255, float32 over
// [-1, 3).
inline Tensor random_image(DType dt, const Dims& shape, Layout layout, std::uint32_t seed) {
    Tensor t = Tensor::empty(dt, shape, layout);
    std::mt19937 rng(seed);
    for (std::int64_t n = 0; n < shape[0]; ++n)
        for (std::int64_t c = 0; c < shape[1]; ++c)
            for (std::int64_t h = 0; h < shape[2]; ++h)
                for (std::int64_t w = 0; w < shape[3]; ++w) {
                    if (dt == DType::UInt8) t.at<std::uint8_t>(n, c, h, w) = static_cast<std::uint8_t>(rng() >> 24);
                    else t.at<float>(n, c, h, w) = static_cast<float>(rng() >> 8) / 16777216.0f * 4.0f - 1.0f;
                }
    return t;
}

// The largest difference between a and b (uint8 or float32); -1 (and a test failure) when
// their shapes or types differ.
inline double max_difference(const Tensor& a, const Tensor& b) {
    EXPECT_EQ(a.shape(), b.shape());
    EXPECT_EQ(a.dtype(), b.dtype());
    if (a.shape() != b.shape() || a.dtype() != b.dtype()) return -1;
    double worst = 0;
    const Dims& s = a.shape();
    auto at = [](const Tensor& t, std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) -> double {
        return t.dtype() == DType::UInt8 ? t.at<std::uint8_t>(n, c, h, w) : t.at<float>(n, c, h, w);
    };
    for (std::int64_t n = 0; n < s[0]; ++n)
        for (std::int64_t c = 0; c < s[1]; ++c)
            for (std::int64_t h = 0; h < s[2]; ++h)
                for (std::int64_t w = 0; w < s[3]; ++w) worst = std::max(worst, std::fabs(at(a, n, c, h, w) - at(b, n, c, h, w)));
    return worst;
}

}  // namespace toroid::test
