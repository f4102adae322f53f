// .npy parsing and writing: round trips, every rank, C- and Fortran-order, format
// versions 1-3, accepted and rejected dtypes, and each kind of malformed file, built
// byte by byte here so that the expected values never come from the code under test.
#include "io/npy.h"

#include "core/error.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

namespace toroid::io {
namespace {

// A .npy file: magic, version, little-endian header length, `dict` padded with spaces to a
// multiple of 64 bytes and ending in '\n', then `data`.
std::string make_npy(const std::string& dict, const std::string& data, int major = 1) {
    std::size_t len_bytes = major == 1 ? 2 : 4;
    std::string header = dict;
    std::size_t total = 8 + len_bytes + header.size() + 1;
    header.append((64 - total % 64) % 64, ' ');
    header += '\n';
    std::string out = "\x93NUMPY";
    out += static_cast<char>(major);
    out += '\0';
    for (std::size_t i = 0; i < len_bytes; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
    return out + header + data;
}

std::string dict_for(const std::string& descr, const std::string& shape, bool fortran = false) {
    return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
           ", 'shape': " + shape + ", }";
}

std::string bytes_of(const std::vector<std::uint8_t>& v) { return std::string(v.begin(), v.end()); }
std::string bytes_of(const std::vector<float>& v) {
    std::string s(v.size() * 4, '\0');
    std::memcpy(s.data(), v.data(), s.size());
    return s;
}

std::vector<std::uint8_t> iota_u8(std::size_t n) {
    std::vector<std::uint8_t> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(i * 7 + 3);
    return v;
}

// Expects parse_npy to throw a toroid::Error whose message names the file and contains `part`.
void expect_rejected(const std::string& bytes, const std::string& part) {
    try {
        parse_npy(bytes, "bad.npy");
        FAIL() << "accepted a file that should fail with '" << part << "'";
    } catch (const Error& e) {
        std::string msg = e.what();
        EXPECT_NE(msg.find("bad.npy"), std::string::npos) << msg;
        EXPECT_NE(msg.find(part), std::string::npos) << msg;
    }
}

TEST(Npy, ParsesEachRankLeftPaddingTheTensorShape) {
    struct Case {
        std::string shape;
        std::vector<std::int64_t> dims;
        Dims padded;
    };
    std::vector<Case> cases = {{"(6,)", {6}, {1, 1, 1, 6}},
                               {"(2, 3)", {2, 3}, {1, 1, 2, 3}},
                               {"(2, 1, 3)", {2, 1, 3}, {1, 2, 1, 3}},
                               {"(1, 2, 1, 3)", {1, 2, 1, 3}, {1, 2, 1, 3}}};
    auto values = iota_u8(6);
    for (const auto& c : cases) {
        NpyArray a = parse_npy(make_npy(dict_for("|u1", c.shape), bytes_of(values)), "x.npy");
        EXPECT_EQ(a.dtype, DType::UInt8);
        EXPECT_EQ(a.shape, c.dims);
        EXPECT_EQ(a.data.shape(), c.padded);
        // C-order: the flat data is the row-major walk of the padded tensor.
        std::size_t i = 0;
        for (std::int64_t n = 0; n < c.padded[0]; ++n)
            for (std::int64_t ch = 0; ch < c.padded[1]; ++ch)
                for (std::int64_t h = 0; h < c.padded[2]; ++h)
                    for (std::int64_t w = 0; w < c.padded[3]; ++w)
                        EXPECT_EQ(a.data.at<std::uint8_t>(n, ch, h, w), values[i++]) << c.shape;
    }
}

TEST(Npy, ParsesFloat32AndAllUint8Spellings) {
    std::vector<float> f = {1.5f, -2.25f, 3e-8f, 1e30f};
    NpyArray a = parse_npy(make_npy(dict_for("<f4", "(2, 2)"), bytes_of(f)), "f.npy");
    EXPECT_EQ(a.dtype, DType::Float32);
    EXPECT_EQ(a.data.at<float>(0, 0, 0, 0), 1.5f);
    EXPECT_EQ(a.data.at<float>(0, 0, 0, 1), -2.25f);
    EXPECT_EQ(a.data.at<float>(0, 0, 1, 0), 3e-8f);
    EXPECT_EQ(a.data.at<float>(0, 0, 1, 1), 1e30f);
    EXPECT_EQ(parse_npy(make_npy(dict_for("=f4", "(4,)"), bytes_of(f)), "f.npy").dtype, DType::Float32);
    for (const char* d : {"|u1", "<u1", "=u1", ">u1"})
        EXPECT_EQ(parse_npy(make_npy(dict_for(d, "(3,)"), "abc"), "u.npy").dtype, DType::UInt8) << d;
}

TEST(Npy, AcceptsDoubleQuotesPython2LongsAndNoTrailingComma) {
    std::string dict = "{\"descr\": \"|u1\", \"shape\": (2L, 3L), \"fortran_order\": False}";
    NpyArray a = parse_npy(make_npy(dict, bytes_of(iota_u8(6))), "q.npy");
    EXPECT_EQ(a.shape, (std::vector<std::int64_t>{2, 3}));
    EXPECT_EQ(a.data.at<std::uint8_t>(0, 0, 1, 2), iota_u8(6)[5]);
}

TEST(Npy, FortranOrderIsReadColumnMajor) {
    // shape (2, 3, 4): element (i, j, k) sits at flat index i + 2*j + 6*k in the file.
    std::vector<float> flat(24);
    auto value = [](int i, int j, int k) { return static_cast<float>(100 * i + 10 * j + k); };
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j)
            for (int k = 0; k < 4; ++k) flat[static_cast<std::size_t>(i + 2 * j + 6 * k)] = value(i, j, k);
    NpyArray a = parse_npy(make_npy(dict_for("<f4", "(2, 3, 4)", true), bytes_of(flat)), "f.npy");
    ASSERT_EQ(a.data.shape(), (Dims{1, 2, 3, 4}));
    EXPECT_TRUE(a.data.is_dense(Layout::Contiguous));
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j)
            for (int k = 0; k < 4; ++k) EXPECT_EQ(a.data.at<float>(0, i, j, k), value(i, j, k));

    // Rank 4 and rank 2, uint8.
    std::vector<std::uint8_t> f4(2 * 3 * 2 * 2);
    for (int n = 0; n < 2; ++n)
        for (int c = 0; c < 3; ++c)
            for (int h = 0; h < 2; ++h)
                for (int w = 0; w < 2; ++w)
                    f4[static_cast<std::size_t>(n + 2 * c + 6 * h + 12 * w)] =
                        static_cast<std::uint8_t>(n * 64 + c * 16 + h * 4 + w);
    NpyArray b = parse_npy(make_npy(dict_for("|u1", "(2, 3, 2, 2)", true), bytes_of(f4)), "f.npy");
    for (int n = 0; n < 2; ++n)
        for (int c = 0; c < 3; ++c)
            for (int h = 0; h < 2; ++h)
                for (int w = 0; w < 2; ++w) EXPECT_EQ(b.data.at<std::uint8_t>(n, c, h, w), n * 64 + c * 16 + h * 4 + w);
    NpyArray m = parse_npy(make_npy(dict_for("|u1", "(2, 3)", true), bytes_of(std::vector<std::uint8_t>{1, 4, 2, 5, 3, 6})), "f.npy");
    for (int h = 0; h < 2; ++h)
        for (int w = 0; w < 3; ++w) EXPECT_EQ(m.data.at<std::uint8_t>(0, 0, h, w), 1 + 3 * h + w);
}

TEST(Npy, ReadsFormatVersions2And3) {
    auto values = iota_u8(4);
    for (int major : {2, 3}) {
        NpyArray a = parse_npy(make_npy(dict_for("|u1", "(2, 2)"), bytes_of(values), major), "v.npy");
        EXPECT_EQ(a.data.at<std::uint8_t>(0, 0, 1, 1), values[3]) << major;
    }
    std::string v4 = make_npy(dict_for("|u1", "(2, 2)"), bytes_of(values), 2);
    v4[6] = 4;
    expect_rejected(v4, "version 4.0");
    std::string v11 = make_npy(dict_for("|u1", "(2, 2)"), bytes_of(values));
    v11[7] = 1;
    expect_rejected(v11, "version 1.1");
}

TEST(Npy, EmptyArraysParseButAreNotImages) {
    NpyArray a = parse_npy(make_npy(dict_for("<f4", "(0, 3)"), ""), "e.npy");
    EXPECT_EQ(a.data.numel(), 0);
    EXPECT_EQ(a.shape, (std::vector<std::int64_t>{0, 3}));
}

TEST(Npy, EncodeWritesNumpyStyleHeader) {
    Tensor t = Tensor::empty(DType::UInt8, {2, 3, 4, 5});
    std::string bytes = encode_npy(t);
    ASSERT_GE(bytes.size(), 10u);
    EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
    std::size_t header_len = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
    EXPECT_EQ((10 + header_len) % 64, 0u);
    std::string header = bytes.substr(10, header_len);
    EXPECT_EQ(header.back(), '\n');
    EXPECT_EQ(header.rfind("{'descr': '|u1', 'fortran_order': False, 'shape': (2, 3, 4, 5), }", 0), 0u) << header;
    EXPECT_EQ(bytes.size(), 10 + header_len + 120);

    Tensor f = Tensor::zeros(DType::Float32, {1, 1, 1, 1});
    std::string fb = encode_npy(f);
    EXPECT_NE(fb.find("'descr': '<f4'"), std::string::npos);
    EXPECT_EQ(fb.find("'shape': (1, 1, 1, 1)"), fb.find("'shape'"));
}

TEST(Npy, RoundTripsStridedAndChannelsLastTensors) {
    Tensor t = Tensor::empty(DType::Float32, {2, 3, 5, 7}, Layout::ChannelsLast);
    for (std::int64_t n = 0; n < 2; ++n)
        for (std::int64_t c = 0; c < 3; ++c)
            for (std::int64_t h = 0; h < 5; ++h)
                for (std::int64_t w = 0; w < 7; ++w)
                    t.at<float>(n, c, h, w) = static_cast<float>(n * 1000 + c * 100 + h * 10 + w) * 0.5f - 7.f;
    Tensor view = t.slice(2, 1, 3).slice(3, 2, 4);
    for (const Tensor* src : {&t, &view}) {
        NpyArray back = parse_npy(encode_npy(*src), "rt.npy");
        ASSERT_EQ(back.data.shape(), src->shape());
        EXPECT_EQ(back.shape, (std::vector<std::int64_t>(src->shape().begin(), src->shape().end())));
        for (std::int64_t n = 0; n < src->dim(0); ++n)
            for (std::int64_t c = 0; c < src->dim(1); ++c)
                for (std::int64_t h = 0; h < src->dim(2); ++h)
                    for (std::int64_t w = 0; w < src->dim(3); ++w)
                        ASSERT_EQ(back.data.at<float>(n, c, h, w), src->at<float>(n, c, h, w));
    }
    Tensor u = Tensor::empty(DType::UInt8, {1, 2, 3, 4});
    for (std::int64_t i = 0; i < u.numel(); ++i) u.data_as<std::uint8_t>()[i] = static_cast<std::uint8_t>(255 - i);
    NpyArray ub = parse_npy(encode_npy(u), "u.npy");
    EXPECT_EQ(ub.dtype, DType::UInt8);
    EXPECT_EQ(std::memcmp(ub.data.data(), u.data(), 24), 0);
}

TEST(Npy, RoundTripsUint16AndFloat16AndRefusesToWriteBfloat16) {
    for (const DType t : {DType::UInt16, DType::Float16}) {
        Tensor x = Tensor::empty(t, {1, 2, 3, 4});
        for (std::int64_t i = 0; i < x.numel(); ++i) x.data_as<std::uint16_t>()[i] = static_cast<std::uint16_t>(i * 2741);
        const std::string bytes = encode_npy(x);
        EXPECT_NE(bytes.find(t == DType::UInt16 ? "'<u2'" : "'<f2'"), std::string::npos);
        NpyArray back = parse_npy(bytes, "n.npy");
        EXPECT_EQ(back.dtype, t);
        EXPECT_EQ(std::memcmp(back.data.data(), x.data(), x.nbytes()), 0);
    }
    EXPECT_THROW(encode_npy(Tensor::empty(DType::BFloat16, {1, 1, 1, 1})), Error);
}

TEST(Npy, RejectsUnsupportedDtypesByName) {
    expect_rejected(make_npy(dict_for(">f4", "(1,)"), "abcd"), "'>f4' (big-endian)");
    for (const char* d : {"<f8", "<i4", "|b1", "|i1", "<i2"})
        expect_rejected(make_npy(dict_for(d, "(1,)"), "abcdefgh"), std::string("'") + d + "'");
    expect_rejected(make_npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", "abcd"),
                    "structured");
}

TEST(Npy, RejectsBrokenPreambles) {
    expect_rejected("", "empty");
    expect_rejected("PK\x03\x04 this is a zip", "bad magic");
    expect_rejected("\x93NUM", "bad magic");
    expect_rejected(std::string("\x93NUMPY", 6), "truncated");
    expect_rejected(std::string("\x93NUMPY\x01\x00\x10", 9), "truncated");
    std::string good = make_npy(dict_for("|u1", "(2,)"), "ab");
    expect_rejected(good.substr(0, 40), "truncated");
    std::string long_header = good;
    long_header[8] = '\xff';
    long_header[9] = '\x7f';
    expect_rejected(long_header, "truncated");
    std::string v2 = make_npy(dict_for("|u1", "(2,)"), "ab", 2);
    v2[11] = '\x80';  // header length near 2^31: refused before looking for it
    expect_rejected(v2, "longer than toroid's limit of 65536");
}

TEST(Npy, RejectsMalformedHeaderDicts) {
    const std::string data = "ab";
    struct Case {
        std::string dict;
        std::string part;
    };
    std::vector<Case> cases = {
        {"'descr': '|u1', 'fortran_order': False, 'shape': (2,)}", "expected '{'"},
        {"{'descr': '|u1', 'fortran_order': False, 'shape': (2,)", "expected ',' or '}'"},
        {"{'descr' '|u1', 'fortran_order': False, 'shape': (2,)}", "expected ':'"},
        {"{descr: '|u1', 'fortran_order': False, 'shape': (2,)}", "quoted key"},
        {"{'descr': '|u1, 'fortran_order': False, 'shape': (2,)}", "expected ',' or '}'"},
        {"{'descr': '|u1', 'fortran_order': false, 'shape': (2,)}", "True or False"},
        {"{'descr': '|u1', 'fortran_order': False, 'shape': [2]}", "tuple"},
        {"{'descr': '|u1', 'fortran_order': False, 'shape': (2, x)}", "integer"},
        {"{'descr': '|u1', 'fortran_order': False, 'shape': (2 3)}", "expected ',' or ')'"},
        {"{'descr': '|u1', 'fortran_order': False, 'shape': (2,}", "integer"},
        {"{'descr': '|u1', 'fortran_order': False}", "missing key 'shape'"},
        {"{'fortran_order': False, 'shape': (2,)}", "missing key 'descr'"},
        {"{'descr': '|u1', 'shape': (2,)}", "missing key 'fortran_order'"},
        {"{'descr': '|u1', 'descr': '|u1', 'fortran_order': False, 'shape': (2,)}", "appears twice"},
        {"{'descr': '|u1', 'fortran_order': False, 'shape': (2,), 'extra': 1}", "unexpected key 'extra'"},
        {"{'descr': '|u1', 'fortran_order': False, 'shape': (2,)} junk", "after the closing"},
        {"{'descr': '|\\u1', 'fortran_order': False, 'shape': (2,)}", "escape"},
        {"{'descr': '|u1", "unterminated"},
        {"", "expected '{'"},
    };
    for (const auto& c : cases) expect_rejected(make_npy(c.dict, data), c.part);
}

TEST(Npy, RejectsBadShapes) {
    expect_rejected(make_npy(dict_for("|u1", "()"), "a"), "rank-0");
    expect_rejected(make_npy(dict_for("|u1", "(1, 1, 1, 1, 2)"), "ab"), "rank 5");
    expect_rejected(make_npy(dict_for("|u1", "(-2,)"), "ab"), "negative");
    expect_rejected(make_npy(dict_for("|u1", "(99999999999999999999999,)"), "ab"), "limit");
    // Each dimension is fine, the product overflows 64 bits.
    expect_rejected(make_npy(dict_for("|u1", "(1099511627776, 1099511627776, 1099511627776)"), "ab"), "limit");
    expect_rejected(make_npy(dict_for("<f4", "(1048576, 1048577)"), "ab"), "limit");
}

TEST(Npy, RejectsTruncatedAndTrailingData) {
    expect_rejected(make_npy(dict_for("<f4", "(2, 3)"), std::string(23, 'x')), "truncated .npy data");
    expect_rejected(make_npy(dict_for("|u1", "(1048576, 1048576)"), "ab"), "truncated .npy data");
    expect_rejected(make_npy(dict_for("|u1", "(2, 3)"), std::string(7, 'x')), "unexpected bytes");
    expect_rejected(make_npy(dict_for("|u1", "(0,)"), "x"), "unexpected bytes");
}

TEST(Npy, ReadsImagesAndGridsFromTheConformanceData) {
    std::filesystem::path dir = std::filesystem::path(TOROID_TEST_DATA) / "conformance" / "case0008";
    NpyArray grid = read_npy(dir / "grid.npy");
    EXPECT_EQ(grid.dtype, DType::Float32);
    ASSERT_EQ(grid.shape.size(), 4u);
    EXPECT_EQ(grid.shape[3], 2);
    EXPECT_EQ(grid.data.shape(), (Dims{grid.shape[0], grid.shape[1], grid.shape[2], 2}));
    Tensor image = read_npy_image(dir / "input.npy");
    EXPECT_GT(image.numel(), 0);
    EXPECT_TRUE(image.is_dense(Layout::Contiguous));
}

class NpyFiles : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() /
               ("toroid_npy_test_" + std::to_string(::getpid()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::remove_all(dir_);
        std::filesystem::create_directories(dir_);
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }
    std::filesystem::path put(const std::string& name, const std::string& bytes) {
        std::filesystem::path p = dir_ / name;
        FILE* f = std::fopen(p.c_str(), "wb");
        std::fwrite(bytes.data(), 1, bytes.size(), f);
        std::fclose(f);
        return p;
    }
    std::filesystem::path dir_;
};

TEST_F(NpyFiles, ReadNpyImageMapsRanksToNCHW) {
    auto v = iota_u8(24);
    Tensor hw = read_npy_image(put("hw.npy", make_npy(dict_for("|u1", "(4, 6)"), bytes_of(v))));
    EXPECT_EQ(hw.shape(), (Dims{1, 1, 4, 6}));
    EXPECT_EQ(hw.at<std::uint8_t>(0, 0, 3, 5), v[23]);
    Tensor chw = read_npy_image(put("chw.npy", make_npy(dict_for("|u1", "(3, 2, 4)"), bytes_of(v))));
    EXPECT_EQ(chw.shape(), (Dims{1, 3, 2, 4}));
    EXPECT_EQ(chw.at<std::uint8_t>(0, 2, 0, 1), v[17]);
    Tensor nchw = read_npy_image(put("nchw.npy", make_npy(dict_for("|u1", "(2, 3, 2, 2)"), bytes_of(v))));
    EXPECT_EQ(nchw.shape(), (Dims{2, 3, 2, 2}));
    EXPECT_EQ(nchw.at<std::uint8_t>(1, 0, 1, 0), v[14]);
}

TEST_F(NpyFiles, ReadNpyImageRejectsRank1AndZeroSizes) {
    auto check = [&](const std::string& name, const std::string& bytes, const std::string& part) {
        std::filesystem::path p = put(name, bytes);
        try {
            read_npy_image(p);
            FAIL() << name;
        } catch (const Error& e) {
            std::string msg = e.what();
            EXPECT_NE(msg.find(p.string()), std::string::npos) << msg;
            EXPECT_NE(msg.find(part), std::string::npos) << msg;
        }
    };
    check("r1.npy", make_npy(dict_for("|u1", "(3,)"), "abc"), "rank 2, 3 or 4");
    check("z.npy", make_npy(dict_for("|u1", "(1, 0, 3)"), ""), "zero-size");
    check("bad.npy", "garbage", "bad magic");
    check("empty.npy", "", "empty");
}

}  // namespace
}  // namespace toroid::io
