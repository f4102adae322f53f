// Inputs that once broke a reader, found by the fuzz targets (fuzz/) or while writing
// them: each must now end in toroid::Error with a one-line message, never a crash, a
// huge allocation, undefined behaviour or a message split over several lines.
#include "core/error.h"
#include "io/npy.h"
#include "io/png.h"
#include "ops/pipeline_json.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <string>

namespace toroid {
namespace {

using namespace std::string_literals;

// Runs `body`, which must throw toroid::Error; returns the message.
template <typename Body>
std::string error_of(Body&& body) {
    try {
        body();
    } catch (const Error& e) {
        return e.what();
    }
    ADD_FAILURE() << "no toroid::Error thrown";
    return {};
}

void expect_one_line(const std::string& msg, const std::string& part) {
    EXPECT_EQ(msg.find_first_of("\n\r"), std::string::npos) << msg;
    EXPECT_NE(msg.find(part), std::string::npos) << "expected '" << part << "' in: " << msg;
    EXPECT_LT(msg.size(), 400u) << msg;
}

std::string npy(const std::string& dict, const std::string& data = "") {
    std::string header = dict;
    header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
    header += '\n';
    std::string out = "\x93NUMPY\x01";
    out += '\0';
    out += static_cast<char>(header.size() & 0xff);
    out += static_cast<char>(header.size() >> 8);
    return out + header + data;
}

TEST(ReaderRegressions, PrintableEscapesControlBytesAndCuts) {
    EXPECT_EQ(printable("a\nb\tc\x01" "d"), "a\\nb\\tc\\x01d");
    EXPECT_EQ(printable("caf\xc3\xa9"), "caf\xc3\xa9");  // UTF-8 passes unchanged
    EXPECT_EQ(printable("abcdef", 3), "abc...");
}

// fuzz_npy: an unterminated-looking key ran to the next quote, newlines included, and
// the message quoted it raw.
TEST(ReaderRegressions, NpyKeyWithNewlineGivesOneLine) {
    std::string msg = error_of([] { io::parse_npy(npy("{'de\n\n\x01' 'descr': '|u1'}"), "k.npy"); });
    expect_one_line(msg, "k.npy");
    msg = error_of([] { io::parse_npy(npy("{'descr': '<i\n4', 'fortran_order': False, 'shape': (2,)}", "12345678"), "d.npy"); });
    expect_one_line(msg, "unsupported dtype");
}

// Review: only the product of the dims was bounded, and it is 0 when one dim is 0, so
// (0, 2^40, 2^40, 2^40) reached the dense-stride product and overflowed int64.
TEST(ReaderRegressions, NpyEmptyArrayWithHugeDimsIsRejected) {
    for (const char* shape : {"(0, 1099511627776, 1099511627776, 1099511627776)", "(1099511627776, 1099511627776, 0)"}) {
        std::string msg = error_of([&] {
            io::parse_npy(npy(std::string("{'descr': '<f4', 'fortran_order': True, 'shape': ") + shape + "}"), "e.npy");
        });
        expect_one_line(msg, "limit");
    }
    // Empty arrays whose other dims stay within the limit still parse.
    io::NpyArray a = io::parse_npy(npy("{'descr': '|u1', 'fortran_order': False, 'shape': (0, 1048576, 1048576)}"), "ok.npy");
    EXPECT_EQ(a.data.numel(), 0);
}

// A PNG with `chunk` (type + body, length and CRC added here) inserted after IHDR.
std::string png_with_chunk(const std::string& type, const std::string& body, std::uint32_t declared_length) {
    Tensor t = Tensor::empty(DType::UInt8, {1, 3, 2, 3});
    for (std::int64_t i = 0; i < t.numel(); ++i) t.data_as<std::uint8_t>()[i] = static_cast<std::uint8_t>(i * 13);
    std::string png = io::encode_png(t);
    std::string chunk;
    for (int shift = 24; shift >= 0; shift -= 8) chunk += static_cast<char>((declared_length >> shift) & 0xff);
    std::string typed = type + body;
    chunk += typed;
    uLong crc = crc32(0, reinterpret_cast<const Bytef*>(typed.data()), static_cast<uInt>(typed.size()));
    for (int shift = 24; shift >= 0; shift -= 8) chunk += static_cast<char>((crc >> shift) & 0xff);
    return png.insert(8 + 25, chunk);  // signature, then IHDR: length, type, 13 bytes, CRC
}

// fuzz_png: libpng 1.6.39 allocates an eXIf chunk's declared length before reading it,
// so a ~100-byte file asked for 2 GiB. Ancillary chunks are now skipped unread.
TEST(ReaderRegressions, PngAncillaryChunksAreSkipped) {
    Tensor plain = io::decode_png(png_with_chunk("tEXt", "Comment\0hi"s, 10), "plain.png");
    Tensor exif = io::decode_png(png_with_chunk("eXIf", "MM\0*"s, 4), "exif.png");
    ASSERT_EQ(plain.shape(), exif.shape());
    for (std::int64_t c = 0; c < 3; ++c)
        for (std::int64_t x = 0; x < 3; ++x)
            EXPECT_EQ(plain.at<std::uint8_t>(0, c, 1, x), exif.at<std::uint8_t>(0, c, 1, x));
    std::string msg = error_of([] { io::decode_png(png_with_chunk("eXIf", "MM\0*"s, 0x78000000), "huge.png"); });
    expect_one_line(msg, "huge.png");
}

Pipeline parse(const std::string& text) { return parse_pipeline(text, std::filesystem::temp_directory_path()); }

// Review: json::dump recursed once per nesting level when quoting a bad op, and a
// deeply nested file overflowed the stack.
TEST(ReaderRegressions, DeeplyNestedPipelineIsQuotedShortly) {
    std::string deep = std::string(200000, '[') + std::string(200000, ']');
    expect_one_line(error_of([&] { parse(deep); }), "must be a JSON object");
    std::string wide = "[{\"op\": \"flip\", \"dims\": \"" + std::string(5000, 'x') + "\"}]";
    expect_one_line(error_of([&] { parse(wide); }), "'dims'");
}

// Review: llabs(INT64_MIN) overflows, so that 'top' passed the +-2^31 check.
TEST(ReaderRegressions, CropOffsetInt64MinIsRejected) {
    expect_one_line(error_of([] { parse(R"([{"op": "crop", "top": -9223372036854775808, "left": 0, "height": 2, "width": 2}])"); }),
                    "within");
}

// Review: integers above INT64_MAX wrapped to negative values ("must be positive, got -1").
TEST(ReaderRegressions, IntegerAboveInt64MaxIsTooLarge) {
    expect_one_line(error_of([] { parse(R"([{"op": "resize", "size": [18446744073709551615, 4]}])"); }),
                    "'size' is too large");
}

// fuzz_pipeline_json / review: keys, op names and grid paths are user text.
TEST(ReaderRegressions, UserTextInMessagesStaysOnOneLine) {
    expect_one_line(error_of([] { parse(R"([{"op": "flip", "dims": [1], "a\nb": 1}])"); }), "unknown field 'a\\nb'");
    expect_one_line(error_of([] { parse(R"([{"op": "ro\r\ntate"}])"); }), "unknown op 'ro\\r\\ntate'");
    expect_one_line(error_of([] { parse(R"([{"op": "grid_sample", "grid": "no\nsuch.npy"}])"); }), "no\\nsuch.npy");
    expect_one_line(error_of([] { parse("[{\"op\": \"flip\", \"dims\": [1]}, \"" + std::string(3000, 'y')); }),
                    "not valid JSON");
}

TEST(ReaderRegressions, OverflowingNumberIsNotFinite) {
    expect_one_line(error_of([] { parse(R"([{"op": "resize", "scale_factor": [1e999, 2]}])"); }), "not finite");
}

}  // namespace
}  // namespace toroid
