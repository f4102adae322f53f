// Shared contract of the fuzz targets: bad input must end in toroid::Error with a
// one-line message. Anything else (another exception type, a multi-line message, a
// failed invariant) aborts, so libFuzzer records it as a crash with its input.
#pragma once

#include "core/error.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

namespace toroid::fuzz {

// The image decoders' pixel limit while fuzzing (io::set_max_image_pixels): headers above it
// still exercise the limit's error, and an image that decodes (a lossless WebP or PNG of a
// repeated pattern can declare a hundred million pixels and decode them) stays within the
// per-input time budget under the sanitizers, where the default limit (179 million) did not.
inline constexpr std::int64_t kImagePixels = std::int64_t{1} << 22;

[[noreturn]] inline void bug(const char* what, const std::string& detail) {
    std::fprintf(stderr, "FUZZ BUG: %s: %s\n", what, detail.c_str());
    std::abort();
}

inline void check(bool ok, const char* what) {
    if (!ok) bug("invariant failed", what);
}

// Runs `body`; toroid::Error is the expected outcome of bad input, checked to be one
// non-empty line. Every other exception is a bug.
template <typename Body>
void expect_ok_or_error(Body&& body) {
    try {
        body();
    } catch (const toroid::Error& e) {
        std::string msg = e.what();
        if (msg.empty()) bug("toroid::Error with an empty message", msg);
        if (msg.find_first_of("\n\r") != std::string::npos) bug("toroid::Error message is not one line", msg);
    } catch (const std::exception& e) {
        bug("exception other than toroid::Error", e.what());
    } catch (...) {
        bug("non-standard exception", "?");
    }
}

}  // namespace toroid::fuzz
