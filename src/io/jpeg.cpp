// JPEG decoding and encoding through TurboJPEG (libjpeg-turbo 2.1). TurboJPEG turns
// libjpeg's longjmp errors into return codes, so the calls here only check a status and
// turn a failure into toroid::Error with the library's own message. Decoding a region goes
// through libjpeg's own API (TurboJPEG 2.1 has no partial decoding): the same library, the
// same settings (accurate integer IDCT, fancy upsampling, warnings as errors, at most 500
// scans), with its errors caught by setjmp in one function that holds no C++ objects.
#include "io/jpeg.h"

#include "core/error.h"
#include "io/file.h"

#include <turbojpeg.h>
// jpeglib.h needs FILE and size_t declared before it.
#include <cstdio>
#include <jpeglib.h>

#include <algorithm>
#include <csetjmp>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace toroid::io {
namespace {

struct HandleCloser {
    void operator()(void* h) const { tjDestroy(h); }
};
using Handle = std::unique_ptr<void, HandleCloser>;

struct TjFree {
    void operator()(unsigned char* p) const { tjFree(p); }
};

std::string tj_message(tjhandle h) {
    std::string msg = tjGetErrorStr2(h);
    return msg.empty() ? "unknown error" : printable(msg, 200);
}

// The most decoded bytes toroid accepts per byte of file (plus a fixed allowance). Real
// photographs compress 10:1 to 100:1 and flat synthetic images a few hundred to one; a
// header claiming far more than this is corrupt or a decompression bomb, and is refused
// before the output is allocated.
constexpr double kMaxExpansion = 10000.0;
constexpr double kExpansionAllowance = 64.0 * 1024 * 1024;

// torchvision's CMYK conversion (Pillow's): a channel's ink `cmy` = 255 - c under black k.
std::uint8_t cmyk_channel(int k, int cmy) {
    int v = k * cmy + 128;
    v = ((v >> 8) + v) >> 8;
    return static_cast<std::uint8_t>(std::clamp(k - v, 0, 255));
}

std::uint8_t luma(int r, int g, int b) { return static_cast<std::uint8_t>((r * 19595 + g * 38470 + b * 7471 + 0x8000) >> 16); }

// CMYK pixels (4 bytes each, libjpeg's inverted Adobe convention) to RGB or gray, n pixels.
void cmyk_to(std::int64_t c, const std::uint8_t* in, std::uint8_t* out, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i, in += 4) {
        const int k = in[3];
        const std::uint8_t r = cmyk_channel(k, 255 - in[0]), g = cmyk_channel(k, 255 - in[1]),
                           b = cmyk_channel(k, 255 - in[2]);
        if (c == 3) {
            *out++ = r;
            *out++ = g;
            *out++ = b;
        } else {
            *out++ = luma(r, g, b);
        }
    }
}

// What the header says, checked: the file's size and colour space, and the channels the
// result has in `mode` (decoded_c: what libjpeg writes; CMYK is converted afterwards).
struct JpegHeader {
    int width = 0, height = 0, colorspace = 0;
    bool cmyk = false;
    std::int64_t c = 3, decoded_c = 3;
};

JpegHeader read_header(const std::string& bytes, const std::string& what, ImageMode mode) {
    if (bytes.empty()) fail("{}: file is empty (expected a JPEG file)", what);
    if (bytes.size() < 3 || static_cast<unsigned char>(bytes[0]) != 0xFF ||
        static_cast<unsigned char>(bytes[1]) != 0xD8)
        fail("{}: not a JPEG file (no start-of-image marker)", what);
    if (mode == ImageMode::GrayAlpha || mode == ImageMode::RgbAlpha)
        fail("{}: a JPEG has no alpha channel: mode '{}' is not supported for JPEG files (use rgb, gray or unchanged)",
             what, image_mode_name(mode));
    Handle h(tjInitDecompress());
    if (!h) fail("{}: cannot initialize libjpeg-turbo", what);
    JpegHeader hd;
    int subsamp = 0;
    if (tjDecompressHeader3(h.get(), reinterpret_cast<const unsigned char*>(bytes.data()),
                            static_cast<unsigned long>(bytes.size()), &hd.width, &hd.height, &subsamp,
                            &hd.colorspace) != 0)
        fail("{}: invalid JPEG: {}", what, tj_message(h.get()));
    if (hd.width < 1 || hd.height < 1) fail("{}: invalid JPEG: empty image ({}x{})", what, hd.width, hd.height);
    check_image_pixels(std::int64_t{hd.width} * hd.height, what, fmt::format("JPEG of {}x{}", hd.width, hd.height));
    hd.cmyk = hd.colorspace == TJCS_CMYK || hd.colorspace == TJCS_YCCK;
    const bool file_gray = hd.colorspace == TJCS_GRAY;
    if (mode == ImageMode::Gray || (mode == ImageMode::Unchanged && file_gray)) hd.c = 1;
    if (mode == ImageMode::Unchanged && hd.cmyk) hd.c = 4;
    hd.decoded_c = hd.cmyk ? 4 : hd.c;
    return hd;
}

void check_expansion(const std::string& bytes, const std::string& what, std::int64_t w, std::int64_t h,
                     std::int64_t c) {
    if (static_cast<double>(w * h * c) > kMaxExpansion * static_cast<double>(bytes.size()) + kExpansionAllowance)
        fail("{}: invalid JPEG: a {}x{} image cannot fit in {} bytes (truncated or corrupt)", what, w, h,
             bytes.size());
}

// libjpeg's error manager with a jump back to the decoding function.
struct JumpingErrors {
    jpeg_error_mgr mgr;
    std::jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
};

void error_exit(j_common_ptr cinfo) {
    auto* e = reinterpret_cast<JumpingErrors*>(cinfo->err);
    (*cinfo->err->format_message)(cinfo, e->message);
    std::longjmp(e->jump, 1);
}

// A warning (truncated data, a corrupt segment) stops the decode, as TJFLAG_STOPONWARNING.
void emit_message(j_common_ptr cinfo, int level) {
    if (level < 0) error_exit(cinfo);
}

// At most 500 scans (a many-scan progressive file takes unbounded time), as TJFLAG_LIMITSCANS.
void limit_scans(j_common_ptr cinfo) {
    if (!cinfo->is_decompressor) return;
    if (reinterpret_cast<j_decompress_ptr>(cinfo)->input_scan_number > 500) {
        auto* e = reinterpret_cast<JumpingErrors*>(cinfo->err);
        std::snprintf(e->message, sizeof e->message, "Progressive JPEG image has more than 500 scans");
        std::longjmp(e->jump, 1);
    }
}

// Where decoded rows go: the image's pixel (y, x) at data + (y - top) * stride + (x - left) *
// channels, for rows [top, top + rows) and columns [left, left + cols). Rows outside those, and
// every row where libjpeg's columns do not fit in them (or CMYK, converted after), land in
// `scratch`: rows of the image's whole width, one per decoded row, or a single row that every
// discarded row shares where the target's columns are the whole width (libjpeg's always fit).
// Plain data only (decode_rows).
struct RowTarget {
    unsigned char* data;
    std::size_t stride;
    std::int64_t top, left, rows, cols;
    bool convert;  // CMYK decoded, converted after: every row through the scratch
    unsigned char* scratch;
    std::size_t scratch_stride;
    bool one_scratch_row;
};

// Decodes `rows` rows from row y0, of the columns [*x, *x + *w) widened as libjpeg aligns
// them (to whole iMCU columns), into the rows `target` gives (row_pointers: room for `rows`);
// *direct tells whether the columns went straight to the target's rows. Only plain data
// here: libjpeg's errors longjmp back to the setjmp below.
bool decode_rows(const unsigned char* src, unsigned long size, J_COLOR_SPACE space, JDIMENSION y0, JDIMENSION rows,
                 JDIMENSION* x, JDIMENSION* w, const RowTarget* target, JSAMPROW* row_pointers, bool* direct,
                 JumpingErrors* err) {
    jpeg_decompress_struct cinfo;
    jpeg_progress_mgr progress;
    std::memset(&cinfo, 0, sizeof cinfo);
    cinfo.err = jpeg_std_error(&err->mgr);
    err->mgr.error_exit = error_exit;
    err->mgr.emit_message = emit_message;
    if (setjmp(err->jump)) {
        jpeg_destroy_decompress(&cinfo);
        return false;
    }
    jpeg_create_decompress(&cinfo);
    progress.progress_monitor = limit_scans;
    cinfo.progress = &progress;
    jpeg_mem_src(&cinfo, src, size);
    jpeg_read_header(&cinfo, TRUE);
    cinfo.out_color_space = space;
    cinfo.dct_method = JDCT_ISLOW;
    cinfo.do_fancy_upsampling = TRUE;
    jpeg_start_decompress(&cinfo);
    if (*x == 0 && *w >= cinfo.output_width) {
        *w = cinfo.output_width;
    } else {
        jpeg_crop_scanline(&cinfo, x, w);
    }
    const auto channels = static_cast<std::size_t>(cinfo.output_components);
    *direct = !target->convert && static_cast<std::int64_t>(*x) >= target->left &&
              static_cast<std::int64_t>(*x + *w) <= target->left + target->cols;
    for (JDIMENSION r = 0; r < rows; ++r) {
        const std::int64_t y = static_cast<std::int64_t>(y0 + r);
        row_pointers[r] = *direct && y >= target->top && y < target->top + target->rows
                              ? target->data + static_cast<std::size_t>(y - target->top) * target->stride +
                                    static_cast<std::size_t>(static_cast<std::int64_t>(*x) - target->left) * channels
                              : target->scratch + (target->one_scratch_row ? 0 : static_cast<std::size_t>(r)) *
                                                      target->scratch_stride;
    }
    if (y0 > 0) jpeg_skip_scanlines(&cinfo, y0);
    for (JDIMENSION r = 0; r < rows;) {
        const JDIMENSION got = jpeg_read_scanlines(&cinfo, row_pointers + r, rows - r);
        if (got == 0) error_exit(reinterpret_cast<j_common_ptr>(&cinfo));  // no suspension from memory
        r += got;
    }
    jpeg_abort_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    return true;
}

void check_region(const std::string& what, const JpegHeader& hd, const std::array<std::int64_t, 4>& region) {
    const auto [top, left, height, width] = region;
    if (top < 0 || left < 0 || height < 1 || width < 1 || top + height > hd.height || left + width > hd.width)
        fail("{}: the region {}x{} at ({}, {}) is not inside the {}x{} image", what, width, height, left, top,
             hd.width, hd.height);
}

// The region of a JPEG whose header `hd` was read into `out` (decode_jpeg_region_into).
void decode_region_into(const std::string& bytes, const std::string& what, const JpegHeader& hd,
                        const std::array<std::int64_t, 4>& region, const Tensor& out,
                        std::array<std::int64_t, 2> origin) {
    check_region(what, hd, region);
    const auto [top, left, height, width] = region;
    if (out.dtype() != DType::UInt8 || out.dim(0) != 1 || out.dim(1) != hd.c || !out.is_dense(Layout::ChannelsLast) ||
        top < origin[0] || left < origin[1] || top + height > origin[0] + out.dim(2) ||
        left + width > origin[1] + out.dim(3))
        fail("{}: the decode's output does not hold the region {}x{} at ({}, {}) in {} channels", what, width, height,
             left, top, hd.c);
    check_expansion(bytes, what, hd.width, hd.height, hd.decoded_c);
    // A margin of an iMCU (at most 16 pixels at 2x2 chroma) around the region where the image
    // has it: the pixels kept are interior ones, computed as in a whole decode (fancy
    // upsampling reads one sample beyond its own).
    constexpr std::int64_t kMargin = 16;
    const std::int64_t y0 = std::max<std::int64_t>(0, top - kMargin);
    const std::int64_t rows = top + height - y0;
    const std::int64_t x_first = std::max<std::int64_t>(0, left - kMargin);
    const std::int64_t x_last = std::min<std::int64_t>(hd.width, left + width + kMargin);
    auto x = static_cast<JDIMENSION>(x_first);
    auto w = static_cast<JDIMENSION>(x_last - x_first);
    // Rows libjpeg's columns cannot go to straight are decoded into rows of the whole width
    // and copied (or converted) after. A target of whole rows takes every column libjpeg
    // decodes: only the margin rows above it are discarded, all into one scratch row.
    const bool whole_rows = hd.decoded_c == hd.c && origin[1] == 0 && out.dim(3) == hd.width;
    const std::size_t scratch_stride = static_cast<std::size_t>(hd.width * hd.decoded_c);
    const std::size_t scratch_rows = whole_rows ? 1 : static_cast<std::size_t>(rows);
    const std::unique_ptr<unsigned char[]> scratch(new unsigned char[scratch_rows * scratch_stride]);
    const RowTarget target{out.data_as<unsigned char>(),
                           static_cast<std::size_t>(out.dim(3) * hd.c),
                           origin[0],
                           origin[1],
                           out.dim(2),
                           out.dim(3),
                           hd.decoded_c != hd.c,
                           scratch.get(),
                           scratch_stride,
                           whole_rows};
    std::vector<JSAMPROW> row_pointers(static_cast<std::size_t>(rows));
    const J_COLOR_SPACE space = hd.cmyk ? JCS_CMYK : hd.c == 1 ? JCS_GRAYSCALE : JCS_RGB;
    JumpingErrors err{};
    bool direct = false;
    if (!decode_rows(reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<unsigned long>(bytes.size()),
                     space, static_cast<JDIMENSION>(y0), static_cast<JDIMENSION>(rows), &x, &w, &target,
                     row_pointers.data(), &direct, &err))
        fail("{}: invalid JPEG: {}", what, printable(err.message, 200));
    if (static_cast<std::int64_t>(x) > left || static_cast<std::int64_t>(x + w) < left + width)
        fail("{}: libjpeg decoded columns {}..{}, not the region's {}..{}", what, x, x + w, left, left + width);
    if (direct) return;
    if (whole_rows) fail("{}: internal: libjpeg's columns {}..{} are not inside the image's rows", what, x, x + w);

    const std::int64_t skip = left - static_cast<std::int64_t>(x);
    for (std::int64_t r = 0; r < height; ++r) {
        const std::uint8_t* in =
            scratch.get() + static_cast<std::size_t>(top - y0 + r) * scratch_stride + static_cast<std::size_t>(skip * hd.decoded_c);
        std::uint8_t* dst = out.data_as<std::uint8_t>() + static_cast<std::size_t>(top - origin[0] + r) * target.stride +
                            static_cast<std::size_t>((left - origin[1]) * hd.c);
        if (hd.decoded_c == hd.c)
            std::memcpy(dst, in, static_cast<std::size_t>(width * hd.c));
        else
            cmyk_to(hd.c, in, dst, width);
    }
}

// The region alone, in a tensor of its own.
Tensor decode_region(const std::string& bytes, const std::string& what, const JpegHeader& hd,
                     const std::array<std::int64_t, 4>& region) {
    check_region(what, hd, region);
    Tensor t = Tensor::empty(DType::UInt8, {1, hd.c, region[2], region[3]}, Layout::ChannelsLast);
    decode_region_into(bytes, what, hd, region, t, {region[0], region[1]});
    return t;
}

}  // namespace

std::array<std::int64_t, 3> jpeg_info(const std::string& bytes, const std::string& what, ImageMode mode) {
    const JpegHeader hd = read_header(bytes, what, mode);
    return {hd.c, hd.height, hd.width};
}

Tensor decode_jpeg_region(const std::string& bytes, const std::string& what, ImageMode mode,
                          const std::array<std::int64_t, 4>& region) {
    return decode_region(bytes, what, read_header(bytes, what, mode), region);
}

void decode_jpeg_region_into(const std::string& bytes, const std::string& what, ImageMode mode,
                             const std::optional<std::array<std::int64_t, 4>>& region, const Tensor& out,
                             std::array<std::int64_t, 2> origin) {
    const JpegHeader hd = read_header(bytes, what, mode);
    decode_region_into(bytes, what, hd, region.value_or(std::array<std::int64_t, 4>{0, 0, hd.height, hd.width}), out,
                       origin);
}

bool jpeg_reaches_end_marker(std::string_view b) {
    const auto* d = reinterpret_cast<const unsigned char*>(b.data());
    const std::size_t n = b.size();
    std::size_t pos = 2;  // after the start-of-image marker
    while (pos + 1 < n) {
        if (d[pos] != 0xFF) return false;  // not at a marker: the stream is broken
        const unsigned char m = d[pos + 1];
        if (m == 0xFF) {  // fill byte
            ++pos;
            continue;
        }
        if (m == 0xD9) return true;
        if (m == 0x01 || (m >= 0xD0 && m <= 0xD8)) {  // markers without a length
            pos += 2;
            continue;
        }
        if (pos + 3 >= n) return false;
        const std::size_t length = (std::size_t{d[pos + 2]} << 8) | d[pos + 3];
        if (length < 2) return false;
        pos += 2 + length;
        if (m != 0xDA) continue;
        // Entropy-coded data: the next 0xFF followed by neither 0 nor a restart marker.
        for (;;) {
            if (pos >= n) return false;
            const void* ff = std::memchr(d + pos, 0xFF, n - pos);
            if (ff == nullptr) return false;
            pos = static_cast<std::size_t>(static_cast<const unsigned char*>(ff) - d);
            if (pos + 1 >= n) return false;
            const unsigned char next = d[pos + 1];
            if (next == 0x00 || (next >= 0xD0 && next <= 0xD7) || next == 0xFF) {
                pos += next == 0xFF ? 1 : 2;
                continue;
            }
            break;
        }
    }
    return false;
}

std::optional<std::array<std::int64_t, 2>> jpeg_size(const std::string& bytes) {
    Handle h(tjInitDecompress());
    if (!h) return std::nullopt;
    int width = 0, height = 0, subsamp = 0, colorspace = 0;
    if (tjDecompressHeader3(h.get(), reinterpret_cast<const unsigned char*>(bytes.data()),
                            static_cast<unsigned long>(bytes.size()), &width, &height, &subsamp, &colorspace) != 0)
        return std::nullopt;
    return std::array<std::int64_t, 2>{height, width};
}

Tensor decode_jpeg(const std::string& bytes, const std::string& what, ImageMode mode,
                   std::array<std::int64_t, 2> at_least) {
    const JpegHeader hd = read_header(bytes, what, mode);
    // The whole image as a region: libjpeg's API reading all rows in one call is the faster
    // path to the same pixels; TurboJPEG below serves the scaled draft decodes.
    if (at_least[0] <= 0 && at_least[1] <= 0) return decode_region(bytes, what, hd, {0, 0, hd.height, hd.width});
    Handle h(tjInitDecompress());
    if (!h) fail("{}: cannot initialize libjpeg-turbo", what);
    const auto* src = reinterpret_cast<const unsigned char*>(bytes.data());
    const auto size = static_cast<unsigned long>(bytes.size());
    int width = hd.width, height = hd.height;
    const std::int64_t c = hd.c, decoded_c = hd.decoded_c;
    const int pixel_format = hd.cmyk ? TJPF_CMYK : c == 1 ? TJPF_GRAY : TJPF_RGB;
    // Draft: the smallest DCT scale whose image is still at least `at_least` (TurboJPEG picks
    // the scaling factor from the size asked for).
    int n = 0;
    const tjscalingfactor* factors = tjGetScalingFactors(&n);
    int best_w = width, best_h = height;
    for (int i = 0; factors != nullptr && i < n; ++i) {
        const tjscalingfactor f = factors[i];
        if (f.num != 1) continue;  // 1/2, 1/4, 1/8: the scales that skip work
        const int sw = TJSCALED(width, f), sh = TJSCALED(height, f);
        if (sw >= at_least[1] && sh >= at_least[0] && std::int64_t{sw} * sh < std::int64_t{best_w} * best_h) {
            best_w = sw;
            best_h = sh;
        }
    }
    width = best_w;
    height = best_h;
    const std::int64_t w = width, hgt = height;
    check_expansion(bytes, what, w, hgt, decoded_c);

    // TurboJPEG writes interleaved rows: exactly a dense channels-last (1, C, H, W) tensor.
    Tensor decoded = Tensor::empty(DType::UInt8, {1, decoded_c, hgt, w}, Layout::ChannelsLast);
    // STOPONWARNING: libjpeg reports truncated data and corrupt segments as warnings and
    // fills the rest with gray; toroid treats them as failures. LIMITSCANS bounds the
    // number of progressive scans (a many-scan file takes unbounded time otherwise).
    const int flags = TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS | TJFLAG_ACCURATEDCT;
    if (tjDecompress2(h.get(), src, size, decoded.data_as<unsigned char>(), width, static_cast<int>(w * decoded_c),
                      height, pixel_format, flags) != 0)
        fail("{}: invalid JPEG: {}", what, tj_message(h.get()));
    if (decoded_c == c) return decoded;

    Tensor t = Tensor::empty(DType::UInt8, {1, c, hgt, w}, Layout::ChannelsLast);
    cmyk_to(c, decoded.data_as<const std::uint8_t>(), t.data_as<std::uint8_t>(), w * hgt);
    return t;
}

Tensor read_jpeg(const std::filesystem::path& path, ImageMode mode) {
    return decode_jpeg(read_file(path, max_image_file_bytes()), printable(path.string()), mode);
}

std::string encode_jpeg(const Tensor& t, int quality) {
    const Dims& d = t.shape();
    if (quality < 1 || quality > 100) fail("JPEG quality must be 1..100 (got {})", quality);
    if (t.dtype() != DType::UInt8)
        fail("JPEG holds uint8 pixels, got a {} tensor (write .npy for float32 data)", dtype_name(t.dtype()));
    if (d[0] != 1) fail("JPEG holds one image, got a batch of {} (write .npy for batches)", d[0]);
    if (d[1] != 1 && d[1] != 3) fail("JPEG holds 1 (gray) or 3 (RGB) channels, got {} (write .png or .npy)", d[1]);
    if (d[2] < 1 || d[3] < 1) fail("JPEG cannot hold an empty image ({}x{})", d[3], d[2]);
    if (d[2] > 65535 || d[3] > 65535) fail("image of {}x{} is too large for JPEG (at most 65535x65535)", d[3], d[2]);

    Tensor hwc = t.is_dense(Layout::ChannelsLast) ? t : t.to_layout(Layout::ChannelsLast);
    Handle h(tjInitCompress());
    if (!h) fail("cannot initialize libjpeg-turbo for writing");
    const bool gray = d[1] == 1;
    unsigned char* out = nullptr;
    unsigned long out_size = 0;
    const int rc = tjCompress2(h.get(), hwc.data_as<unsigned char>(), static_cast<int>(d[3]),
                               static_cast<int>(d[3] * d[1]), static_cast<int>(d[2]), gray ? TJPF_GRAY : TJPF_RGB,
                               &out, &out_size, gray ? TJSAMP_GRAY : TJSAMP_420, quality, TJFLAG_ACCURATEDCT);
    std::unique_ptr<unsigned char, TjFree> owned(out);
    if (rc != 0) fail("cannot encode JPEG: {}", tj_message(h.get()));
    return std::string(reinterpret_cast<const char*>(out), out_size);
}

}  // namespace toroid::io
