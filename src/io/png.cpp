// PNG decoding and encoding through libpng's in-memory callbacks. libpng reports errors
// with longjmp, so every libpng call runs inside a small function that holds only plain
// data and returns a status; the C++ code around it owns the buffers and turns a failed
// status into toroid::Error.
#include "io/png.h"

#include "core/error.h"
#include "io/file.h"

#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace toroid::io {
namespace {

// ---- shared plain-data state and callbacks (no destructors cross a longjmp) ----

struct PngState {
    png_structp png = nullptr;
    png_infop info = nullptr;
    char message[256] = {};
};

void on_error(png_structp png, png_const_charp msg) {
    auto* state = static_cast<PngState*>(png_get_error_ptr(png));
    std::snprintf(state->message, sizeof state->message, "%s", msg != nullptr ? msg : "unknown error");
    png_longjmp(png, 1);
}

void on_warning(png_structp, png_const_charp) {}  // benign; a PNG that decodes is accepted

// ---- reading ----

struct ReadState : PngState {
    const unsigned char* data = nullptr;
    std::size_t size = 0;
    std::size_t pos = 0;
    png_uint_32 width = 0;
    png_uint_32 height = 0;
    int bit_depth = 0;
    int color_type = 0;
    int channels = 0;          // after the transforms
    std::size_t rowbytes = 0;  // after the transforms
};

void on_read(png_structp png, png_bytep out, std::size_t n) {
    auto* state = static_cast<ReadState*>(png_get_io_ptr(png));
    if (n > state->size - state->pos) png_error(png, "file is truncated");
    std::memcpy(out, state->data + state->pos, n);
    state->pos += n;
}

// Reads the chunks up to the image data and records the header fields.
bool read_info(ReadState* s) {
    if (setjmp(png_jmpbuf(s->png))) return false;
    png_set_read_fn(s->png, s, on_read);
    // Only IHDR, PLTE, tRNS, IDAT and IEND shape the pixels toroid reads; every other
    // chunk is skipped unread. libpng 1.6.39 allocates an eXIf chunk's full declared
    // length (up to 2 GiB) before reading it, so a 100-byte file could demand that much.
    png_set_keep_unknown_chunks(s->png, PNG_HANDLE_CHUNK_NEVER, nullptr, -1);
    png_read_info(s->png, s->info);
    int interlace = 0;
    png_get_IHDR(s->png, s->info, &s->width, &s->height, &s->bit_depth, &s->color_type, &interlace,
                 nullptr, nullptr);
    return true;
}

// Asks libpng for rows of 8-bit samples (16-bit ones for a 16-bit image, in the host's byte
// order) in the channels `mode` asks for (the conversions torchvision's decode_png asks of
// libpng) and records their size.
bool set_transforms(ReadState* s, ImageMode mode) {
    if (setjmp(png_jmpbuf(s->png))) return false;
    const int type = s->color_type;
    const bool palette = type == PNG_COLOR_TYPE_PALETTE;
    const bool color = (type & PNG_COLOR_MASK_COLOR) != 0;
    bool alpha = (type & PNG_COLOR_MASK_ALPHA) != 0;
    if (type == PNG_COLOR_TYPE_GRAY && s->bit_depth < 8) png_set_expand_gray_1_2_4_to_8(s->png);
    if (s->bit_depth == 16) png_set_swap(s->png);  // PNG stores big-endian samples; this host is little-endian
    const bool want_color = mode == ImageMode::Rgb || mode == ImageMode::RgbAlpha;
    const bool want_gray = mode == ImageMode::Gray || mode == ImageMode::GrayAlpha;
    const bool want_alpha = mode == ImageMode::GrayAlpha || mode == ImageMode::RgbAlpha;
    if (palette) {
        // libpng expands a palette's transparency (tRNS) to alpha with the colours; the
        // modes without alpha strip it.
        png_set_palette_to_rgb(s->png);
        alpha = png_get_valid(s->png, s->info, PNG_INFO_tRNS) != 0;
    }
    if (mode != ImageMode::Unchanged) {
        if (want_color && !color) png_set_gray_to_rgb(s->png);
        // Added alpha is opaque (torchvision fills 2^depth - 1 of the stored depth: 1 for a
        // 1-bit gray image, 65535 for a 16-bit one; and gives palettes no alpha channel at
        // all in the alpha modes).
        if (want_alpha && !alpha) png_set_add_alpha(s->png, s->bit_depth == 16 ? 0xFFFF : 0xFF, PNG_FILLER_AFTER);
        if (!want_alpha && alpha) png_set_strip_alpha(s->png);
        if (want_gray && color) png_set_rgb_to_gray(s->png, 1, 0.2989, 0.587);
    }
    png_set_interlace_handling(s->png);
    png_read_update_info(s->png, s->info);
    s->channels = png_get_channels(s->png, s->info);
    s->rowbytes = png_get_rowbytes(s->png, s->info);
    return true;
}

bool read_rows(ReadState* s, png_bytepp rows) {
    if (setjmp(png_jmpbuf(s->png))) return false;
    png_read_image(s->png, rows);
    png_read_end(s->png, nullptr);
    return true;
}

struct ReadGuard {
    ReadState& s;
    ~ReadGuard() { png_destroy_read_struct(&s.png, s.info != nullptr ? &s.info : nullptr, nullptr); }
};

int channels_of(int color_type) {
    switch (color_type) {
        case PNG_COLOR_TYPE_GRAY: return 1;
        case PNG_COLOR_TYPE_GRAY_ALPHA: return 2;
        case PNG_COLOR_TYPE_RGB: return 3;
        case PNG_COLOR_TYPE_RGB_ALPHA: return 4;
        case PNG_COLOR_TYPE_PALETTE: return 1;
        default: return 4;
    }
}

// ---- writing ----

struct WriteState : PngState {
    unsigned char* out = nullptr;  // malloc'ed, grown by on_write
    std::size_t size = 0;
    std::size_t capacity = 0;
};

void on_write(png_structp png, png_bytep data, std::size_t n) {
    auto* s = static_cast<WriteState*>(png_get_io_ptr(png));
    if (n > s->capacity - s->size) {
        std::size_t capacity = s->capacity == 0 ? 4096 : s->capacity;
        while (capacity - s->size < n) {
            if (capacity > SIZE_MAX / 2) png_error(png, "output too large");
            capacity *= 2;
        }
        void* grown = std::realloc(s->out, capacity);
        if (grown == nullptr) png_error(png, "out of memory");
        s->out = static_cast<unsigned char*>(grown);
        s->capacity = capacity;
    }
    std::memcpy(s->out + s->size, data, n);
    s->size += n;
}

void on_flush(png_structp) {}

bool write_png_rows(WriteState* s, png_uint_32 width, png_uint_32 height, int bit_depth, int color_type,
                    png_bytepp rows) {
    if (setjmp(png_jmpbuf(s->png))) return false;
    png_set_write_fn(s->png, s, on_write, on_flush);
    png_set_IHDR(s->png, s->info, width, height, bit_depth, color_type, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(s->png, s->info);
    if (bit_depth == 16) png_set_swap(s->png);  // the host's little-endian samples, stored big-endian
    png_write_image(s->png, rows);
    png_write_end(s->png, nullptr);
    return true;
}

struct WriteGuard {
    WriteState& s;
    ~WriteGuard() {
        png_destroy_write_struct(&s.png, s.info != nullptr ? &s.info : nullptr);
        std::free(s.out);
    }
};

}  // namespace

Tensor decode_png(const std::string& bytes, const std::string& what, ImageMode mode) {
    if (bytes.empty()) fail("{}: file is empty (expected a PNG file)", what);
    if (bytes.size() < 8 || png_sig_cmp(reinterpret_cast<png_const_bytep>(bytes.data()), 0, 8) != 0)
        fail("{}: not a PNG file (bad signature)", what);

    ReadState s;
    s.data = reinterpret_cast<const unsigned char*>(bytes.data());
    s.size = bytes.size();
    s.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, static_cast<PngState*>(&s), on_error, on_warning);
    if (s.png == nullptr) fail("{}: cannot initialize libpng", what);
    ReadGuard guard{s};
    s.info = png_create_info_struct(s.png);
    if (s.info == nullptr) fail("{}: cannot initialize libpng", what);

    if (!read_info(&s)) fail("{}: invalid PNG: {}", what, s.message);
    check_image_pixels(static_cast<std::int64_t>(s.width) * s.height, what,
                       fmt::format("PNG of {}x{}", s.width, s.height));
    // Deflate expands at most about 1032:1, so a header whose pixels need far more bytes
    // than the file could ever hold is corrupt; rejecting it here avoids allocating for it.
    double packed = static_cast<double>(s.width) * static_cast<double>(s.height) *
                    channels_of(s.color_type) * s.bit_depth / 8.0;
    if (packed > 1100.0 * static_cast<double>(bytes.size()) + 4096.0)
        fail("{}: invalid PNG: a {}x{} image cannot fit in {} bytes (truncated or corrupt)", what,
             s.width, s.height, bytes.size());
    if (!set_transforms(&s, mode)) fail("{}: invalid PNG: {}", what, s.message);

    std::int64_t h = s.height;
    std::int64_t w = s.width;
    std::int64_t c = s.channels;
    // A 16-bit PNG decodes to uint16 samples, as torchvision's decode_png gives them.
    const DType dtype = s.bit_depth == 16 ? DType::UInt16 : DType::UInt8;
    const auto item = static_cast<std::int64_t>(dtype_size(dtype));
    if (c < 1 || c > 4 || s.rowbytes != static_cast<std::size_t>(w * c * item))
        fail("{}: unsupported PNG pixel format (color type {}, bit depth {})", what, s.color_type, s.bit_depth);
    if (w * h > kMaxElements / c)
        fail("{}: PNG of {}x{}x{} exceeds toroid's limit of {} elements", what, w, h, c, kMaxElements);

    // libpng writes interleaved rows: exactly a dense channels-last (1, C, H, W) tensor.
    Tensor t = Tensor::empty(dtype, {1, c, h, w}, Layout::ChannelsLast);
    std::vector<png_bytep> rows(static_cast<std::size_t>(h));
    auto* base = static_cast<std::uint8_t*>(t.data());
    for (std::int64_t y = 0; y < h; ++y) rows[static_cast<std::size_t>(y)] = base + y * w * c * item;
    if (!read_rows(&s, rows.data())) fail("{}: invalid PNG: {}", what, s.message);
    return t;
}

Tensor read_png(const std::filesystem::path& path, ImageMode mode) {
    return decode_png(read_file(path, max_image_file_bytes()), printable(path.string()), mode);
}

std::string encode_png(const Tensor& t) {
    const Dims& d = t.shape();
    if (t.dtype() != DType::UInt8 && t.dtype() != DType::UInt16)
        fail("PNG holds uint8 or uint16 pixels, got a {} tensor (write .npy for float data)", dtype_name(t.dtype()));
    if (d[0] != 1) fail("PNG holds one image, got a batch of {} (write .npy for batches)", d[0]);
    if (d[1] < 1 || d[1] > 4)
        fail("PNG holds 1 to 4 channels (gray, gray+alpha, RGB, RGBA), got {} (write .npy instead)", d[1]);
    if (d[2] < 1 || d[3] < 1) fail("PNG cannot hold an empty image ({}x{})", d[3], d[2]);
    if (d[2] > PNG_UINT_31_MAX || d[3] > PNG_UINT_31_MAX)
        fail("image of {}x{} is too large for PNG", d[3], d[2]);

    static constexpr int kColorTypes[] = {PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                          PNG_COLOR_TYPE_RGB_ALPHA};
    Tensor hwc = t.is_dense(Layout::ChannelsLast) ? t : t.to_layout(Layout::ChannelsLast);
    const auto item = static_cast<std::int64_t>(dtype_size(t.dtype()));
    std::int64_t row_stride = d[1] * d[3] * item;
    std::vector<png_bytep> rows(static_cast<std::size_t>(d[2]));
    auto* base = static_cast<std::uint8_t*>(hwc.data());
    for (std::int64_t y = 0; y < d[2]; ++y) rows[static_cast<std::size_t>(y)] = base + y * row_stride;

    WriteState s;
    s.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, static_cast<PngState*>(&s), on_error, on_warning);
    if (s.png == nullptr) fail("cannot initialize libpng for writing");
    WriteGuard guard{s};
    s.info = png_create_info_struct(s.png);
    if (s.info == nullptr) fail("cannot initialize libpng for writing");
    if (!write_png_rows(&s, static_cast<png_uint_32>(d[3]), static_cast<png_uint_32>(d[2]), static_cast<int>(8 * item),
                        kColorTypes[d[1] - 1], rows.data()))
        fail("cannot encode PNG: {}", s.message);
    return std::string(reinterpret_cast<const char*>(s.out), s.size);
}

}  // namespace toroid::io
