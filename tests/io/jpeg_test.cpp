// JPEG reading and writing: encode / decode round trips (RGB and gray, both layouts),
// bit-exact decoding of foreign-made files against Pillow's pixels, the decode modes (CMYK
// kept or converted, gray and RGB either way), and
// a one-line toroid::Error for every truncated, corrupt or unwritable case.
#include "io/jpeg.h"

#include "core/error.h"
#include "io/file.h"
#include "io/npy.h"

#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

namespace toroid::io {
namespace {

namespace fs = std::filesystem;

std::string jpeg_data(const std::string& name) { return std::string(TOROID_TEST_DATA) + "/jpeg/" + name; }

// A smooth photographic-like test image: gradients plus a little deterministic texture.
Tensor test_image(std::int64_t c, std::int64_t h, std::int64_t w, Layout layout = Layout::Contiguous) {
    Tensor t = Tensor::empty(DType::UInt8, {1, c, h, w}, layout);
    for (std::int64_t k = 0; k < c; ++k)
        for (std::int64_t y = 0; y < h; ++y)
            for (std::int64_t x = 0; x < w; ++x) {
                double v = 40 + 150.0 * (x + k * 7) / w + 50.0 * y / h + 6 * std::sin(0.9 * x + 1.3 * y + k);
                t.at<std::uint8_t>(0, k, y, x) = static_cast<std::uint8_t>(std::lround(std::clamp(v, 0.0, 255.0)));
            }
    return t;
}

struct Diff {
    int max = 0;
    double mean = 0;
};

Diff diff(const Tensor& a, const Tensor& b) {
    Diff d;
    const Dims& s = a.shape();
    for (std::int64_t c = 0; c < s[1]; ++c)
        for (std::int64_t y = 0; y < s[2]; ++y)
            for (std::int64_t x = 0; x < s[3]; ++x) {
                int e = std::abs(int(a.at<std::uint8_t>(0, c, y, x)) - int(b.at<std::uint8_t>(0, c, y, x)));
                d.max = std::max(d.max, e);
                d.mean += e;
            }
    d.mean /= static_cast<double>(a.numel());
    return d;
}

// Runs `body`, expecting a toroid::Error with one line that contains `needle`.
template <typename F>
void expect_error(F&& body, const std::string& needle) {
    try {
        body();
        ADD_FAILURE() << "no error; expected one containing '" << needle << "'";
    } catch (const Error& e) {
        std::string msg = e.what();
        EXPECT_NE(msg.find(needle), std::string::npos) << msg;
        EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
}

TEST(Jpeg, RgbRoundTripAtQuality95) {
    // Odd sizes: partial 16x16 MCUs at the right and bottom edges.
    Tensor img = test_image(3, 37, 53);
    Tensor back = decode_jpeg(encode_jpeg(img, 95), "rt.jpg");
    ASSERT_EQ(back.dtype(), DType::UInt8);
    ASSERT_EQ(back.shape(), (Dims{1, 3, 37, 53}));
    // RGB is written with 4:2:0 chroma: the texture's colour detail is halved.
    Diff d = diff(img, back);
    EXPECT_LE(d.max, 16);
    EXPECT_LT(d.mean, 3.0);
}

TEST(Jpeg, GrayRoundTripAtQuality95) {
    Tensor img = test_image(1, 30, 41);
    Tensor back = decode_jpeg(encode_jpeg(img, 95), "rt.jpg");
    ASSERT_EQ(back.shape(), (Dims{1, 1, 30, 41}));
    Diff d = diff(img, back);
    EXPECT_LE(d.max, 6);
    EXPECT_LT(d.mean, 1.0);
}

TEST(Jpeg, LayoutDoesNotChangeTheBytes) {
    Tensor nchw = test_image(3, 24, 32, Layout::Contiguous);
    Tensor nhwc = nchw.to_layout(Layout::ChannelsLast);
    EXPECT_EQ(encode_jpeg(nchw, 90), encode_jpeg(nhwc, 90));
}

TEST(Jpeg, QualityTradesSizeForError) {
    Tensor img = test_image(3, 64, 64);
    std::string low = encode_jpeg(img, 10), high = encode_jpeg(img, 98);
    EXPECT_LT(low.size(), high.size());
    EXPECT_GT(diff(img, decode_jpeg(low, "low.jpg")).mean, diff(img, decode_jpeg(high, "high.jpg")).mean);
}

TEST(Jpeg, DecodesForeignFilesExactlyAsPillow) {
    for (const char* name : {"rgb_pillow", "rgb_progressive_pillow", "gray_pillow"}) {
        SCOPED_TRACE(name);
        Tensor got = read_jpeg(jpeg_data(std::string(name) + ".jpg"));
        Tensor want = read_npy_image(jpeg_data(std::string(name) + ".npy"));
        ASSERT_EQ(got.shape(), want.shape());
        Diff d = diff(got, want);
        EXPECT_EQ(d.max, 0);
    }
}

TEST(Jpeg, CmykIsKeptOrConvertedByMode) {
    const std::string bytes = read_file(jpeg_data("cmyk_pillow.jpg"));
    const Tensor cmyk = decode_jpeg(bytes, "cmyk.jpg");
    ASSERT_EQ(cmyk.shape()[1], 4);
    const Tensor rgb = decode_jpeg(bytes, "cmyk.jpg", ImageMode::Rgb);
    const Tensor gray = decode_jpeg(bytes, "cmyk.jpg", ImageMode::Gray);
    ASSERT_EQ(rgb.shape(), (Dims{1, 3, cmyk.shape()[2], cmyk.shape()[3]}));
    ASSERT_EQ(gray.shape(), (Dims{1, 1, cmyk.shape()[2], cmyk.shape()[3]}));
    // Each ink under black k: k - round(k * (255 - ink) / 255); grey from those by BT.601 in
    // 16-bit fixed point. Checked on every pixel, written out in floating point here.
    int checked = 0;
    for (std::int64_t y = 0; y < cmyk.shape()[2]; ++y)
        for (std::int64_t x = 0; x < cmyk.shape()[3]; ++x) {
            const int k = cmyk.at<std::uint8_t>(0, 3, y, x);
            int want[3];
            for (int ch = 0; ch < 3; ++ch) {
                const int ink = 255 - cmyk.at<std::uint8_t>(0, ch, y, x);
                want[ch] = std::clamp(k - static_cast<int>(std::lround(k * ink / 255.0)), 0, 255);
                EXPECT_NEAR(rgb.at<std::uint8_t>(0, ch, y, x), want[ch], 0) << y << "," << x;
            }
            const double luma = 0.299 * want[0] + 0.587 * want[1] + 0.114 * want[2];
            EXPECT_NEAR(gray.at<std::uint8_t>(0, 0, y, x), luma, 0.51) << y << "," << x;
            ++checked;
        }
    EXPECT_GT(checked, 0);
}

TEST(Jpeg, ModesOfGrayAndColorFiles) {
    const std::string gray = read_file(jpeg_data("gray_pillow.jpg")), rgb = read_file(jpeg_data("rgb_pillow.jpg"));
    const Tensor g1 = decode_jpeg(gray, "g"), g3 = decode_jpeg(gray, "g", ImageMode::Rgb);
    ASSERT_EQ(g1.shape()[1], 1);
    ASSERT_EQ(g3.shape()[1], 3);
    for (std::int64_t y = 0; y < g1.shape()[2]; ++y)
        for (std::int64_t x = 0; x < g1.shape()[3]; ++x)
            for (int ch = 0; ch < 3; ++ch) ASSERT_EQ(g3.at<std::uint8_t>(0, ch, y, x), g1.at<std::uint8_t>(0, 0, y, x));
    EXPECT_EQ(decode_jpeg(gray, "g", ImageMode::Gray).shape()[1], 1);
    EXPECT_EQ(decode_jpeg(rgb, "c", ImageMode::Gray).shape()[1], 1);  // libjpeg's luma (the Y channel)
    EXPECT_EQ(decode_jpeg(rgb, "c", ImageMode::Rgb).shape()[1], 3);
    expect_error([&] { decode_jpeg(rgb, "c.jpg", ImageMode::RgbAlpha); }, "c.jpg: a JPEG has no alpha channel");
    expect_error([&] { decode_jpeg(gray, "g.jpg", ImageMode::GrayAlpha); }, "g.jpg: a JPEG has no alpha channel");
}

TEST(Jpeg, EveryTruncationIsAnError) {
    const std::string full = encode_jpeg(test_image(3, 40, 48), 90);
    for (std::size_t n = 0; n + 2 < full.size(); n += 7) {
        SCOPED_TRACE(n);
        expect_error([&] { decode_jpeg(full.substr(0, n), "cut.jpg"); }, "cut.jpg");
    }
    // Cut inside the entropy-coded data (the headers take the first ~600 bytes).
    expect_error([&] { decode_jpeg(full.substr(0, full.size() - 100), "cut.jpg"); },
                 "cut.jpg: invalid JPEG: Premature end of JPEG file");
}

TEST(Jpeg, CorruptBytesNeverCrash) {
    // Flipped bytes after the headers either still decode (JPEG has no checksum) or give a
    // one-line error; flipped bytes in the headers mostly give errors.
    const std::string full = encode_jpeg(test_image(3, 40, 48), 90);
    int errors = 0;
    for (std::size_t i = 2; i < full.size(); i += 5) {
        std::string bad = full;
        bad[i] = static_cast<char>(bad[i] ^ 0x5a);
        try {
            Tensor t = decode_jpeg(bad, "flip.jpg");
            EXPECT_EQ(t.dim(0), 1);
        } catch (const Error& e) {
            ++errors;
            EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
        }
    }
    EXPECT_GT(errors, 0);
}

// Draft decoding: the smallest DCT scale (1/8, 1/4, 1/2) still at least the size asked for,
// close to the full decode shrunk; {0, 0} or a size the image cannot reach decodes whole.
TEST(Jpeg, DraftDecodesAtTheSmallestScaleThatKeepsTheSize) {
    const std::string bytes = encode_jpeg(test_image(3, 96, 128, Layout::ChannelsLast), 95);
    EXPECT_EQ(jpeg_size(bytes), (std::array<std::int64_t, 2>{96, 128}));
    EXPECT_EQ(decode_jpeg(bytes, "t.jpg", ImageMode::Rgb, {0, 0}).shape(), (Dims{1, 3, 96, 128}));
    EXPECT_EQ(decode_jpeg(bytes, "t.jpg", ImageMode::Rgb, {10, 10}).shape(), (Dims{1, 3, 12, 16}));   // 1/8
    EXPECT_EQ(decode_jpeg(bytes, "t.jpg", ImageMode::Rgb, {13, 10}).shape(), (Dims{1, 3, 24, 32}));   // 1/4
    EXPECT_EQ(decode_jpeg(bytes, "t.jpg", ImageMode::Rgb, {30, 60}).shape(), (Dims{1, 3, 48, 64}));   // 1/2
    EXPECT_EQ(decode_jpeg(bytes, "t.jpg", ImageMode::Rgb, {97, 10}).shape(), (Dims{1, 3, 96, 128}));  // whole
    // The 1/2-scale image is the full one averaged over 2x2 blocks, give or take the
    // frequencies the scaled IDCT leaves out.
    const Tensor full = decode_jpeg(bytes, "t.jpg", ImageMode::Rgb), half = decode_jpeg(bytes, "t.jpg", ImageMode::Rgb, {48, 64});
    double err = 0;
    for (std::int64_t c = 0; c < 3; ++c)
        for (std::int64_t y = 0; y < 48; ++y)
            for (std::int64_t x = 0; x < 64; ++x) {
                double avg = 0;
                for (int dy = 0; dy < 2; ++dy)
                    for (int dx = 0; dx < 2; ++dx) avg += full.at<std::uint8_t>(0, c, 2 * y + dy, 2 * x + dx) / 4.0;
                err += std::fabs(avg - half.at<std::uint8_t>(0, c, y, x));
            }
    EXPECT_LT(err / (3 * 48 * 64), 3.0);
}

// The draft rule sees the image as the EXIF orientation turns it (exif6.jpg: stored 22 wide
// and 13 tall, turned to 13 wide and 22 tall).
TEST(Jpeg, DraftSeesTheOrientedSize) {
    const std::string bytes = read_file(std::string(TOROID_TEST_DATA) + "/decode/exif6.jpg");
    std::array<std::int64_t, 2> seen{0, 0};
    DecodeOptions o;
    o.draft = [&](std::int64_t h, std::int64_t w) {
        seen = {h, w};
        return std::array<std::int64_t, 2>{0, 0};
    };
    const Tensor t = decode_image(bytes, "exif6.jpg", ImageFormat::Jpeg, o);
    EXPECT_EQ(seen, (std::array<std::int64_t, 2>{22, 13}));
    EXPECT_EQ(t.shape(), (Dims{1, 3, 22, 13}));
}

// A JPEG encoded by TurboJPEG with the chroma subsampling and coding asked for.
std::string encode_with(const Tensor& t, int subsamp, bool progressive, int quality = 85) {
    const Tensor hwc = t.to_layout(Layout::ChannelsLast);
    tjhandle h = tjInitCompress();
    unsigned char* out = nullptr;
    unsigned long size = 0;
    const int flags = TJFLAG_ACCURATEDCT | (progressive ? TJFLAG_PROGRESSIVE : 0);
    const bool gray = t.dim(1) == 1;
    EXPECT_EQ(tjCompress2(h, hwc.data_as<unsigned char>(), static_cast<int>(t.dim(3)), 0, static_cast<int>(t.dim(2)),
                          gray ? TJPF_GRAY : TJPF_RGB, &out, &size, gray ? TJSAMP_GRAY : subsamp, quality, flags),
              0);
    std::string bytes(reinterpret_cast<const char*>(out), size);
    tjFree(out);
    tjDestroy(h);
    return bytes;
}

// The whole image as TurboJPEG decodes it (accurate IDCT, fancy upsampling): an independent
// path to the pixels decode_jpeg and decode_jpeg_region give through libjpeg's own API.
Tensor turbojpeg_whole(const std::string& bytes, bool gray) {
    tjhandle h = tjInitDecompress();
    int w = 0, hgt = 0, subsamp = 0, cs = 0;
    EXPECT_EQ(tjDecompressHeader3(h, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), &w, &hgt,
                                  &subsamp, &cs),
              0);
    const std::int64_t c = gray ? 1 : 3;
    Tensor t = Tensor::empty(DType::UInt8, {1, c, hgt, w}, Layout::ChannelsLast);
    EXPECT_EQ(tjDecompress2(h, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(),
                            t.data_as<unsigned char>(), w, static_cast<int>(w * c), hgt, gray ? TJPF_GRAY : TJPF_RGB,
                            TJFLAG_ACCURATEDCT),
              0);
    tjDestroy(h);
    return t;
}

void expect_same_region(const Tensor& whole, const Tensor& region, const std::array<std::int64_t, 4>& r) {
    ASSERT_EQ(region.shape(), (Dims{1, whole.dim(1), r[2], r[3]}));
    for (std::int64_t c = 0; c < whole.dim(1); ++c)
        for (std::int64_t y = 0; y < r[2]; ++y)
            for (std::int64_t x = 0; x < r[3]; ++x)
                ASSERT_EQ(region.at<std::uint8_t>(0, c, y, x), whole.at<std::uint8_t>(0, c, r[0] + y, r[1] + x))
                    << "channel " << c << " row " << y << " column " << x;
}

// The region decoded into an image of the whole size (decode_jpeg_region_into at origin 0, 0)
// is at its place with the whole decode's pixels; only pixels within libjpeg's reach around it
// (an iMCU margin of 16 and the alignment to iMCU columns, up to 32 wide at 4:1:1, to the
// left) are written.
void expect_region_in_canvas(const Tensor& whole, const std::string& bytes, ImageMode mode,
                             const std::array<std::int64_t, 4>& r) {
    constexpr std::uint8_t kUnwritten = 0xA5;
    const std::int64_t c = whole.dim(1), h = whole.dim(2), w = whole.dim(3);
    Tensor canvas = Tensor::empty(DType::UInt8, {1, c, h, w}, Layout::ChannelsLast);
    std::memset(canvas.data(), kUnwritten, canvas.nbytes());
    decode_jpeg_region_into(bytes, "t.jpg", mode, r, canvas, {0, 0});
    expect_same_region(whole, canvas.slice(2, r[0], r[2]).slice(3, r[1], r[3]), r);
    for (std::int64_t y = 0; y < h; ++y)
        for (std::int64_t x = 0; x < w; ++x) {
            if (y >= r[0] - 16 && y < r[0] + r[2] && x >= r[1] - 48 && x < r[1] + r[3] + 16) continue;
            for (std::int64_t ch = 0; ch < c; ++ch)
                ASSERT_EQ(canvas.at<std::uint8_t>(0, ch, y, x), kUnwritten) << "row " << y << " column " << x;
        }
}

// A region decoded alone (and the whole image) has the pixels TurboJPEG's whole decode has,
// for every chroma subsampling, baseline and progressive, every mode, regions at the edges
// and inside, any alignment.
TEST(Jpeg, RegionsDecodeToTheWholeImagesPixels) {
    std::uint64_t seed = 12345;
    auto next = [&](std::int64_t n) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<std::int64_t>((seed >> 33) % static_cast<std::uint64_t>(n));
    };
    const int subsamplings[] = {TJSAMP_444, TJSAMP_422, TJSAMP_420, TJSAMP_440, TJSAMP_411};
    for (int s : subsamplings)
        for (bool progressive : {false, true})
            for (std::int64_t c : {3, 1}) {
                const std::int64_t h = 37 + next(90), w = 41 + next(120);
                const std::string bytes = encode_with(test_image(c, h, w), s, progressive);
                for (ImageMode mode : {ImageMode::Rgb, ImageMode::Gray, ImageMode::Unchanged}) {
                    const Tensor whole =
                        turbojpeg_whole(bytes, mode == ImageMode::Gray || (mode == ImageMode::Unchanged && c == 1));
                    expect_same_region(whole, decode_jpeg(bytes, "t.jpg", mode), {0, 0, h, w});
                    std::vector<std::array<std::int64_t, 4>> regions = {
                        {0, 0, h, w}, {0, 0, 1, 1}, {h - 1, w - 1, 1, 1}, {0, w - 17, h, 17}, {h - 9, 0, 9, w}};
                    for (int k = 0; k < 12; ++k) {
                        const std::int64_t rh = 1 + next(h), rw = 1 + next(w);
                        regions.push_back({next(h - rh + 1), next(w - rw + 1), rh, rw});
                    }
                    for (const auto& r : regions) {
                        SCOPED_TRACE(testing::Message() << "subsampling " << s << " progressive " << progressive
                                                        << " channels " << c << " mode " << image_mode_name(mode)
                                                        << " region " << r[0] << "," << r[1] << " " << r[2] << "x"
                                                        << r[3]);
                        expect_same_region(whole, decode_jpeg_region(bytes, "t.jpg", mode, r), r);
                        expect_region_in_canvas(whole, bytes, mode, r);
                    }
                }
            }
}

// The files made elsewhere (Pillow's baseline, progressive, CMYK and gray; EXIF-rotated ones go
// through a whole decode and a crop) give their whole decode's pixels too.
TEST(Jpeg, RegionsOfForeignAndRotatedFiles) {
    for (const char* name : {"jpeg/rgb_pillow.jpg", "jpeg/rgb_progressive_pillow.jpg", "jpeg/cmyk_pillow.jpg",
                             "jpeg/gray_pillow.jpg", "decode/rgb_420.jpg", "decode/exif6.jpg", "decode/exif3.jpg"}) {
        SCOPED_TRACE(name);
        const std::string bytes = read_file(std::string(TOROID_TEST_DATA) + "/" + name);
        for (ImageMode mode : {ImageMode::Rgb, ImageMode::Unchanged}) {
            DecodeOptions o;
            o.mode = mode;
            const Tensor whole = decode_image(bytes, name, ImageFormat::Jpeg, o);
            const std::int64_t h = whole.dim(2), w = whole.dim(3);
            EXPECT_EQ(image_info(bytes, name, ImageFormat::Jpeg, o), (std::array<std::int64_t, 3>{whole.dim(1), h, w}));
            for (const std::array<std::int64_t, 4> r : {std::array<std::int64_t, 4>{h / 3, w / 4, h / 2, w / 2},
                                                        std::array<std::int64_t, 4>{1, 2, h - 1, w - 2}}) {
                o.region = r;
                expect_same_region(whole, decode_image(bytes, name, ImageFormat::Jpeg, o), r);
                // Into an image of the whole size: the region at its place.
                Tensor canvas = Tensor::zeros(DType::UInt8, whole.shape(), Layout::ChannelsLast);
                decode_image_into(bytes, name, ImageFormat::Jpeg, o, canvas);
                expect_same_region(whole, canvas.slice(2, r[0], r[2]).slice(3, r[1], r[3]), r);
            }
        }
    }
}

TEST(Jpeg, RegionsOutsideTheImageOrOfBrokenFilesAreErrors) {
    const std::string bytes = encode_jpeg(test_image(3, 40, 48), 90);
    expect_error([&] { decode_jpeg_region(bytes, "r.jpg", ImageMode::Rgb, {0, 0, 41, 48}); },
                 "r.jpg: the region 48x41 at (0, 0) is not inside the 48x40 image");
    expect_error([&] { decode_jpeg_region(bytes, "r.jpg", ImageMode::Rgb, {-1, 0, 4, 4}); }, "not inside");
    expect_error([&] { decode_jpeg_region(bytes, "r.jpg", ImageMode::Rgb, {0, 0, 0, 4}); }, "not inside");
    // Truncated data inside the region's rows: libjpeg's warning is an error, as for a whole decode.
    expect_error([&] { decode_jpeg_region(bytes.substr(0, bytes.size() - 100), "cut.jpg", ImageMode::Rgb, {30, 0, 10, 48}); },
                 "cut.jpg: invalid JPEG: Premature end of JPEG file");
    for (std::size_t n = 0; n + 2 < bytes.size(); n += 11) {
        SCOPED_TRACE(n);
        try {
            const Tensor t = decode_jpeg_region(bytes.substr(0, n), "cut.jpg", ImageMode::Rgb, {0, 0, 8, 8});
            EXPECT_EQ(t.dim(2), 8);  // the rows above the cut may decode
        } catch (const Error& e) {
            EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
        }
    }
}

TEST(Jpeg, NotAJpeg) {
    expect_error([] { decode_jpeg("", "e.jpg"); }, "e.jpg: file is empty");
    expect_error([] { decode_jpeg("\x89PNG\r\n\x1a\n....", "p.jpg"); }, "p.jpg: not a JPEG file");
    expect_error([] { decode_jpeg(std::string("\xff\xd8\xff", 3) + std::string(64, '\0'), "z.jpg"); },
                 "z.jpg: invalid JPEG");
}

TEST(Jpeg, HugeHeaderInATinyFileIsRefusedBeforeAllocating) {
    std::string bytes = encode_jpeg(test_image(3, 16, 16), 90);
    // Patch the frame header (SOF0: FF C0, length, precision, height, width) to 60000x60000.
    std::size_t sof = bytes.find("\xff\xc0");
    ASSERT_NE(sof, std::string::npos);
    for (std::size_t k : {sof + 5, sof + 7}) {
        bytes[k] = static_cast<char>(0xEA);
        bytes[k + 1] = static_cast<char>(0x60);
    }
    // The pixel limit refuses it first; without the limit, the header's size against the
    // file's still does.
    expect_error([&] { decode_jpeg(bytes, "bomb.jpg"); }, "JPEG of 60000x60000 has 3600000000 pixels, more than the limit");
    set_max_image_pixels(0);
    expect_error([&] { decode_jpeg(bytes, "bomb.jpg"); }, "cannot fit");
    set_max_image_pixels(-1);
}

TEST(Jpeg, EncoderRejectsWhatJpegCannotHold) {
    Tensor f = Tensor::zeros(DType::Float32, {1, 3, 8, 8});
    expect_error([&] { encode_jpeg(f, 90); }, "uint8");
    expect_error([] { encode_jpeg(Tensor::zeros(DType::UInt8, {2, 3, 8, 8}), 90); }, "batch of 2");
    expect_error([] { encode_jpeg(Tensor::zeros(DType::UInt8, {1, 2, 8, 8}), 90); }, "got 2");
    expect_error([] { encode_jpeg(Tensor::zeros(DType::UInt8, {1, 4, 8, 8}), 90); }, "got 4");
    expect_error([] { encode_jpeg(Tensor::zeros(DType::UInt8, {1, 3, 8, 8}), 0); }, "quality");
    expect_error([] { encode_jpeg(Tensor::zeros(DType::UInt8, {1, 3, 8, 8}), 101); }, "quality");
}

TEST(Jpeg, FilesByExtensionAnyCase) {
    fs::path dir = fs::path(::testing::TempDir()) / "toroid_jpeg_files";
    fs::remove_all(dir);
    fs::create_directories(dir);
    Tensor img = test_image(3, 20, 24);
    for (const char* name : {"a.jpg", "b.JPG", "c.jpeg", "d.JpEg"}) {
        SCOPED_TRACE(name);
        write_image(dir / name, img, WriteOptions{std::nullopt, 95});
        Tensor back = read_image(dir / name);
        EXPECT_EQ(back.shape(), img.shape());
        EXPECT_LE(diff(img, back).max, 16);
    }
    // An explicit format wins over the extension.
    write_image(dir / "e.bin", img, WriteOptions{ImageFormat::Jpeg, 90});
    EXPECT_EQ(read_file(dir / "e.bin").substr(0, 2), "\xff\xd8");
    // A failed encode writes nothing.
    expect_error([&] { write_image(dir / "f.jpg", Tensor::zeros(DType::Float32, {1, 3, 4, 4})); }, "f.jpg");
    EXPECT_FALSE(fs::exists(dir / "f.jpg"));
    fs::remove_all(dir);
}

TEST(Jpeg, FormatNames) {
    EXPECT_EQ(parse_image_format("jpg"), ImageFormat::Jpeg);
    EXPECT_EQ(parse_image_format("jpeg"), ImageFormat::Jpeg);
    EXPECT_EQ(parse_image_format("png"), ImageFormat::Png);
    EXPECT_EQ(parse_image_format("npy"), ImageFormat::Npy);
    expect_error([] { parse_image_format("gif"); }, "unknown image format 'gif'");
    EXPECT_EQ(image_format_of("x/y.JPEG"), ImageFormat::Jpeg);
    EXPECT_EQ(image_format_of("x/y.txt"), std::nullopt);
}

}  // namespace
}  // namespace toroid::io
