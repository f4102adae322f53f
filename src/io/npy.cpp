// .npy reading and writing: a bounds-checked parser for the NumPy header (a Python dict
// literal) and data block, and a writer producing version 1.0 C-order files with the
// header padded to 64 bytes, as NumPy itself writes them.
#include "io/npy.h"

#include "core/error.h"
#include "io/file.h"

#include <bit>
#include <cstring>
#include <optional>
#include <string_view>

namespace toroid::io {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the .npy reader maps '<f4' and '=f4' onto native float32");

constexpr std::string_view kMagic = "\x93NUMPY";

std::string shape_text(const std::vector<std::int64_t>& shape) {
    std::string s = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i > 0) s += ", ";
        s += std::to_string(shape[i]);
    }
    if (shape.size() == 1) s += ",";
    return s + ")";
}

// A cursor over the header text. Every read is bounds-checked; every failure names the
// file and what was expected.
class HeaderParser {
public:
    HeaderParser(std::string_view text, const std::string& what) : s_(text), what_(what) {}

    std::optional<std::string> descr;
    std::optional<bool> fortran_order;
    std::optional<std::vector<std::int64_t>> shape;

    void parse() {
        skip_space();
        expect('{', "'{' at the start of the header");
        skip_space();
        while (!at('}')) {
            std::string key = string_literal("a quoted key");
            skip_space();
            expect(':', fmt::format("':' after key '{}'", printable(key, 40)));
            skip_space();
            if (key == "descr") {
                if (descr) bad(fmt::format("key '{}' appears twice", key));
                if (at('[')) bad("structured dtypes (a list 'descr') are not supported; toroid reads uint8, uint16, float16 or float32");
                descr = string_literal("a quoted dtype string for 'descr'");
            } else if (key == "fortran_order") {
                if (fortran_order) bad(fmt::format("key '{}' appears twice", key));
                fortran_order = boolean();
            } else if (key == "shape") {
                if (shape) bad(fmt::format("key '{}' appears twice", key));
                shape = tuple();
            } else {
                bad(fmt::format("unexpected key '{}' (expected 'descr', 'fortran_order', 'shape')",
                                printable(key, 40)));
            }
            skip_space();
            if (at(',')) {
                ++pos_;
                skip_space();
            } else if (!at('}')) {
                bad("expected ',' or '}' after a value");
            }
        }
        ++pos_;  // the closing brace
        skip_space();
        if (pos_ != s_.size()) bad("unexpected text after the closing '}'");
        if (!descr) bad("missing key 'descr'");
        if (!fortran_order) bad("missing key 'fortran_order'");
        if (!shape) bad("missing key 'shape'");
    }

private:
    [[noreturn]] void bad(const std::string& problem) const {
        fail("{}: malformed .npy header: {}", what_, problem);
    }
    bool at(char c) const { return pos_ < s_.size() && s_[pos_] == c; }
    void skip_space() {
        while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
            ++pos_;
    }
    void expect(char c, const std::string& expected) {
        if (!at(c)) bad("expected " + expected);
        ++pos_;
    }
    std::string string_literal(const std::string& expected) {
        if (!at('\'') && !at('"')) bad("expected " + expected);
        char quote = s_[pos_++];
        std::size_t start = pos_;
        while (pos_ < s_.size() && s_[pos_] != quote) {
            if (s_[pos_] == '\\') bad("escape sequences in header strings are not supported");
            ++pos_;
        }
        if (pos_ >= s_.size()) bad("unterminated string");
        std::string value(s_.substr(start, pos_ - start));
        ++pos_;
        return value;
    }
    bool boolean() {
        if (s_.substr(pos_, 4) == "True") {
            pos_ += 4;
            return true;
        }
        if (s_.substr(pos_, 5) == "False") {
            pos_ += 5;
            return false;
        }
        bad("'fortran_order' must be True or False");
    }
    std::int64_t integer() {
        if (at('-')) bad("negative dimension in 'shape'");
        if (pos_ >= s_.size() || s_[pos_] < '0' || s_[pos_] > '9') bad("expected an integer in 'shape'");
        std::int64_t v = 0;
        while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
            int digit = s_[pos_++] - '0';
            if (v > (kMaxElements - digit) / 10)
                fail("{}: dimension in 'shape' is larger than toroid's limit of {} elements", what_,
                     kMaxElements);
            v = v * 10 + digit;
        }
        if (at('L')) ++pos_;  // Python 2 long literal, as old NumPy wrote it
        return v;
    }
    std::vector<std::int64_t> tuple() {
        expect('(', "a tuple '(...)' for 'shape'");
        std::vector<std::int64_t> dims;
        skip_space();
        while (!at(')')) {
            if (dims.size() >= 32) bad("'shape' has too many dimensions");
            dims.push_back(integer());
            skip_space();
            if (at(',')) {
                ++pos_;
                skip_space();
            } else if (!at(')')) {
                bad("expected ',' or ')' in 'shape'");
            }
        }
        ++pos_;
        return dims;
    }

    std::string_view s_;
    const std::string& what_;
    std::size_t pos_ = 0;
};

DType parse_descr(const std::string& descr, const std::string& what) {
    if (descr == "|u1" || descr == "<u1" || descr == ">u1" || descr == "=u1" || descr == "u1")
        return DType::UInt8;
    if (descr == "<f4" || descr == "=f4") return DType::Float32;
    if (descr == "<u2" || descr == "=u2") return DType::UInt16;
    if (descr == "<f2" || descr == "=f2") return DType::Float16;
    if (descr == ">f4" || descr == ">u2" || descr == ">f2")
        fail("{}: unsupported dtype '{}' (big-endian); toroid reads uint8 and little-endian uint16, float16, float32",
             what, descr);
    fail("{}: unsupported dtype '{}'; toroid reads uint8 ('|u1'), and little-endian uint16 ('<u2'), float16 ('<f2') "
         "and float32 ('<f4')",
         what, printable(descr, 40));
}

std::uint32_t read_le(const std::string& bytes, std::size_t at, std::size_t n) {
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < n; ++i)
        v |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
    return v;
}

}  // namespace

namespace {

// The most header bytes toroid reads (NumPy itself refuses more than 10000 by default).
constexpr std::size_t kMaxHeaderBytes = 65536;

struct NpyHeader {
    DType dtype = DType::UInt8;
    std::vector<std::int64_t> shape;
    bool fortran_order = false;
    std::size_t data_offset = 0;  // where the data starts
    std::size_t needed = 0;       // data bytes the shape needs
};

// The header of .npy bytes; `bytes` may hold only the file's first bytes (the data is not
// looked at).
NpyHeader parse_header(const std::string& bytes, const std::string& what) {
    if (bytes.empty()) fail("{}: file is empty (expected a .npy file)", what);
    if (bytes.size() < kMagic.size() || std::string_view(bytes).substr(0, kMagic.size()) != kMagic)
        fail("{}: not a .npy file (bad magic bytes)", what);
    if (bytes.size() < kMagic.size() + 2) fail("{}: truncated .npy file (no version)", what);
    int major = static_cast<unsigned char>(bytes[6]);
    int minor = static_cast<unsigned char>(bytes[7]);
    if (minor != 0 || major < 1 || major > 3)
        fail("{}: unsupported .npy format version {}.{} (toroid reads 1.0, 2.0 and 3.0)", what, major,
             minor);
    std::size_t len_bytes = major == 1 ? 2 : 4;
    std::size_t prefix = 8 + len_bytes;
    if (bytes.size() < prefix) fail("{}: truncated .npy file (no header length)", what);
    std::size_t header_len = read_le(bytes, 8, len_bytes);
    if (header_len > kMaxHeaderBytes)
        fail("{}: .npy header of {} bytes is longer than toroid's limit of {}", what, header_len, kMaxHeaderBytes);
    if (header_len > bytes.size() - prefix)
        fail("{}: truncated .npy file (header of {} bytes, only {} present)", what, header_len,
             bytes.size() - prefix);

    HeaderParser header(std::string_view(bytes).substr(prefix, header_len), what);
    header.parse();

    NpyHeader out;
    out.dtype = parse_descr(*header.descr, what);
    out.shape = *header.shape;
    out.fortran_order = *header.fortran_order;
    std::size_t rank = out.shape.size();
    if (rank == 0) fail("{}: rank-0 (scalar) arrays are not supported", what);
    if (rank > 4)
        fail("{}: array of shape {} has rank {}; toroid reads rank 1 to 4", what, shape_text(out.shape),
             rank);

    // The product of the non-zero dims is bounded too: an empty array of shape
    // (0, 2^40, 2^40) holds nothing, but its strides would overflow int64.
    std::int64_t extent = 1;
    bool empty = false;
    for (std::int64_t d : out.shape) {
        if (d == 0) {
            empty = true;
            continue;
        }
        if (extent > kMaxElements / d)
            fail("{}: array of shape {} has more than toroid's limit of {} elements", what,
                 shape_text(out.shape), kMaxElements);
        extent *= d;
    }
    std::int64_t numel = empty ? 0 : extent;
    // numel <= 2^40, so numel * 4 cannot overflow size_t.
    out.needed = static_cast<std::size_t>(numel) * dtype_size(out.dtype);
    out.data_offset = prefix + header_len;
    return out;
}

// The pixel limit on an array: an image's pixels are N x H x W ((H, W), (C, H, W) or
// (N, C, H, W)); another array's (a grid's (N, H, W, 2)) are its elements over its last dim.
void check_pixels(const NpyHeader& h, const std::string& what, bool image) {
    std::int64_t pixels = 1;
    const std::size_t rank = h.shape.size();
    for (std::size_t i = 0; i < rank; ++i) {
        const bool channels = image ? (rank == 3 && i == 0) || (rank == 4 && i == 1) : i + 1 == rank;
        if (!channels) pixels *= h.shape[i];  // bounded by kMaxElements: no overflow
    }
    check_image_pixels(pixels, what, "array of shape " + shape_text(h.shape));
}

NpyArray parse_checked(const std::string& bytes, const std::string& what, bool image) {
    const NpyHeader h = parse_header(bytes, what);
    const std::size_t present = bytes.size() - h.data_offset;
    if (present < h.needed)
        fail("{}: truncated .npy data: shape {} {} needs {} bytes, the file holds {}", what,
             shape_text(h.shape), dtype_name(h.dtype), h.needed, present);
    if (present > h.needed)
        fail("{}: {} unexpected bytes after the .npy data (shape {} {} needs {} bytes)", what,
             present - h.needed, shape_text(h.shape), dtype_name(h.dtype), h.needed);
    check_pixels(h, what, image);

    NpyArray out;
    out.dtype = h.dtype;
    out.shape = h.shape;
    const std::size_t rank = h.shape.size();
    const std::size_t needed = h.needed;
    Dims dims{1, 1, 1, 1};
    for (std::size_t i = 0; i < rank; ++i) dims[4 - rank + i] = out.shape[i];
    out.data = Tensor::empty(out.dtype, dims);
    if (needed == 0) return out;
    const char* src = bytes.data() + h.data_offset;
    if (!h.fortran_order) {
        std::memcpy(out.data.data(), src, needed);
    } else {
        // Fortran order: the first axis varies fastest. Copy the bytes as they are, then
        // read them back through column-major strides into the C-order result.
        Tensor raw = Tensor::empty(out.dtype, dims);
        std::memcpy(raw.data(), src, needed);
        Dims strides{1, dims[0], dims[0] * dims[1], dims[0] * dims[1] * dims[2]};
        out.data.copy_from(Tensor::borrow(raw.data(), out.dtype, dims, strides));
    }
    return out;
}

// Reads the header first and applies the pixel limit to it, then reads the file, at most
// as many bytes as the header's shape needs (and some, for a clear message).
std::string read_npy_bytes(const std::filesystem::path& path, const std::string& what, bool image) {
    const NpyHeader h = parse_header(read_file_head(path, 12 + kMaxHeaderBytes), what);
    check_pixels(h, what, image);
    return read_file(path, h.data_offset + h.needed + 4096);
}

Tensor image_of(NpyArray a, const std::string& what) {
    if (a.shape.size() < 2)
        fail("{}: an image needs rank 2, 3 or 4 ((H, W), (C, H, W) or (N, C, H, W)); got shape {}", what,
             shape_text(a.shape));
    for (std::int64_t d : a.shape)
        if (d == 0) fail("{}: image of shape {} has a zero-size dimension", what, shape_text(a.shape));
    return a.data;
}

}  // namespace

NpyArray parse_npy(const std::string& bytes, const std::string& what) { return parse_checked(bytes, what, false); }

NpyArray read_npy(const std::filesystem::path& path) {
    const std::string what = printable(path.string());
    return parse_checked(read_npy_bytes(path, what, false), what, false);
}

Tensor parse_npy_image(const std::string& bytes, const std::string& what) {
    return image_of(parse_checked(bytes, what, true), what);
}

Tensor read_npy_image(const std::filesystem::path& path) {
    const std::string what = printable(path.string());
    return image_of(parse_checked(read_npy_bytes(path, what, true), what, true), what);
}

std::string encode_npy(const Tensor& t) {
    const Dims& s = t.shape();
    const char* descr = "|u1";
    switch (t.dtype()) {
        case DType::UInt8: descr = "|u1"; break;
        case DType::Float32: descr = "<f4"; break;
        case DType::UInt16: descr = "<u2"; break;
        case DType::Float16: descr = "<f2"; break;
        case DType::BFloat16:
            fail(".npy has no bfloat16 dtype: convert the result to float32 (add {{\"op\": \"convert\", \"dtype\": "
                 "\"float32\"}}) to write it");
    }
    std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}, {}, {}, {}), }}", descr,
                                   s[0], s[1], s[2], s[3]);
    // Pad with spaces so that magic + version + length + header is a multiple of 64 and
    // the header ends in a newline.
    std::size_t total = 10 + dict.size() + 1;
    std::size_t padded = (total + 63) / 64 * 64;
    dict.append(padded - total, ' ');
    dict += '\n';
    std::size_t header_len = dict.size();
    if (header_len > 0xffff) fail("encode_npy: header too long");

    std::string out;
    out.reserve(10 + header_len + t.nbytes());
    out.append(kMagic);
    out += '\x01';
    out += '\x00';
    out += static_cast<char>(header_len & 0xff);
    out += static_cast<char>(header_len >> 8);
    out += dict;
    if (t.numel() == 0) return out;
    if (t.is_dense(Layout::Contiguous)) {
        out.append(static_cast<const char*>(t.data()), t.nbytes());
    } else {
        Tensor dense = t.to_layout(Layout::Contiguous);
        out.append(static_cast<const char*>(dense.data()), dense.nbytes());
    }
    return out;
}

}  // namespace toroid::io
