// `toroid apply` on bad input: for every kind of mistake the command must exit 2, print
// exactly one line starting "toroid: error:" that names the problem, not crash, and
// leave no output file behind.
#include "core/tensor.h"
#include "io/file.h"
#include "io/npy.h"

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

namespace toroid {
namespace {

namespace fs = std::filesystem;

struct Result {
    int exit_code;
    std::string stderr_text;
};

std::string shell_quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) {
        if (c == '\'') out += "'\\''";
        else out += c;
    }
    return out + "'";
}

class ApplyErrors : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::path(::testing::TempDir()) /
               ("toroid_cli_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        Tensor img = Tensor::empty(DType::UInt8, {1, 3, 8, 10});
        for (std::int64_t i = 0; i < img.numel(); ++i) img.data_as<std::uint8_t>()[i] = static_cast<std::uint8_t>(i * 7);
        write("in.npy", io::encode_npy(img));
        Tensor f = Tensor::empty(DType::Float32, {1, 3, 8, 10});
        for (std::int64_t i = 0; i < f.numel(); ++i) f.data_as<float>()[i] = static_cast<float>(i) * 0.01f;
        write("in_f32.npy", io::encode_npy(f));
    }
    void TearDown() override { fs::remove_all(dir_); }

    fs::path path(const std::string& name) const { return dir_ / name; }
    void write(const std::string& name, const std::string& bytes) const {
        std::ofstream(path(name), std::ios::binary) << bytes;
    }

    Result run(const std::vector<std::string>& args) const {
        std::string cmd = shell_quote(TOROID_BINARY);
        for (const auto& a : args) {
            cmd += ' ';
            cmd += shell_quote(a);
        }
        cmd += " 2>";
        cmd += shell_quote(path("stderr.txt").string());
        cmd += " >/dev/null";
        int status = std::system(cmd.c_str());
        std::ifstream f(path("stderr.txt"));
        std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
        return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text};
    }

    // Runs apply and checks the bad-input contract; `needle` must appear in the message.
    void expect_error(const std::string& pipeline, const std::string& needle, const std::string& input = "in.npy",
                      const std::string& out = "out.npy") {
        Result r = run({"apply", pipeline, path(input).string(), path(out).string(), "--engine", "reference"});
        EXPECT_EQ(r.exit_code, 2) << r.stderr_text;
        EXPECT_EQ(r.stderr_text.rfind("toroid: error: ", 0), 0u) << r.stderr_text;
        ASSERT_FALSE(r.stderr_text.empty());
        EXPECT_EQ(std::count(r.stderr_text.begin(), r.stderr_text.end(), '\n'), 1) << r.stderr_text;
        EXPECT_NE(r.stderr_text.find(needle), std::string::npos) << "expected '" << needle << "' in: " << r.stderr_text;
        for (const auto& e : fs::directory_iterator(dir_)) {
            std::string name = e.path().filename().string();
            EXPECT_TRUE(name.find("out") == std::string::npos) << "left behind: " << name;
        }
    }

    fs::path dir_;
};

const std::string kOk = R"([{"op": "flip", "dims": [-1]}])";

TEST_F(ApplyErrors, ValidPipelineSucceeds) {
    Result r = run({"apply", kOk, path("in.npy").string(), path("out.npy").string()});
    EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
    EXPECT_TRUE(fs::exists(path("out.npy")));
}

TEST_F(ApplyErrors, MalformedJson) { expect_error(R"([{"op": "flip", "dims": [-1]})", "not valid JSON"); }
TEST_F(ApplyErrors, NotAList) {
    write("p.json", R"({"op": "flip", "dims": [-1]})");
    expect_error(path("p.json").string(), "must be a JSON list");
}
TEST_F(ApplyErrors, UnknownOp) { expect_error(R"([{"op": "rotate"}])", "unknown op 'rotate'"); }
TEST_F(ApplyErrors, UnknownField) {
    expect_error(R"([{"op": "flip", "dims": [-1], "axis": 2}])", "unknown field 'axis'");
}
TEST_F(ApplyErrors, UnknownResizeMode) {
    expect_error(R"([{"op": "resize", "mode": "lanczos", "size": [4, 4]}])", "unknown mode");
}
TEST_F(ApplyErrors, WrongFieldType) {
    expect_error(R"([{"op": "resize", "mode": "bilinear", "size": [4, 4], "antialias": "yes"}])",
                 "'antialias' must be true or false");
}
TEST_F(ApplyErrors, SizeAndScaleBoth) {
    expect_error(R"([{"op": "resize", "mode": "nearest", "size": [4, 4], "scale_factor": [2, 2]}])", "not several");
}
TEST_F(ApplyErrors, SizeAndScaleNeither) {
    expect_error(R"([{"op": "resize", "mode": "nearest"}])", "needs 'size', 'scale_factor'");
}
TEST_F(ApplyErrors, SizeNotPositive) {
    expect_error(R"([{"op": "resize", "mode": "nearest", "size": [0, 4]}])", "must be positive");
}
TEST_F(ApplyErrors, ResultTooLarge) {
    expect_error(R"([{"op": "resize", "mode": "nearest", "size": [3000000000, 3000000000]}])", "too large");
}
TEST_F(ApplyErrors, ResultTooLargeToAllocate) {
    // Each dim fits in int32, but 3 * 2e9 * 2000 elements are past the 2^40 limit.
    expect_error(R"([{"op": "resize", "mode": "nearest", "size": [2000000000, 2000]}])", "too large to allocate");
}
TEST_F(ApplyErrors, ScaleFactorTooLarge) {
    expect_error(R"([{"op": "resize", "mode": "nearest", "scale_factor": [1e12, 1e12]}])", "too large");
}
TEST_F(ApplyErrors, ScaleFactorNotPositive) {
    expect_error(R"([{"op": "resize", "mode": "nearest", "scale_factor": [-1, 2]}])", "must be positive");
}
TEST_F(ApplyErrors, ScaleFactorInfinite) {
    expect_error(R"([{"op": "resize", "mode": "nearest", "scale_factor": [1e999, 2]}])", "finite");
}
TEST_F(ApplyErrors, ScaleFactorNaN) {
    expect_error(R"([{"op": "resize", "mode": "nearest", "scale_factor": [NaN, 2]}])", "not valid JSON");
}
TEST_F(ApplyErrors, AntialiasWithNearest) {
    expect_error(R"([{"op": "resize", "mode": "nearest", "size": [4, 4], "antialias": true}])", "'antialias'");
}
TEST_F(ApplyErrors, AlignCornersWithNearest) {
    expect_error(R"([{"op": "resize", "mode": "nearest-exact", "size": [4, 4], "align_corners": true}])",
                 "'align_corners'");
}
TEST_F(ApplyErrors, ThetaNot2x3) {
    expect_error(R"([{"op": "affine", "theta": [[1, 0], [0, 1]]}])", "2x3", "in_f32.npy");
}
TEST_F(ApplyErrors, ThetaNotFinite) {
    expect_error(R"([{"op": "affine", "theta": [[1, 0, 1e999], [0, 1, 0]]}])", "finite", "in_f32.npy");
}
TEST_F(ApplyErrors, UnknownPaddingMode) {
    expect_error(R"([{"op": "affine", "theta": [[1, 0, 0], [0, 1, 0]], "padding_mode": "wrap"}])",
                 "unknown padding_mode", "in_f32.npy");
}
TEST_F(ApplyErrors, GridFileMissing) {
    write("p.json", R"([{"op": "grid_sample", "grid": "nope.npy"}])");
    expect_error(path("p.json").string(), "nope.npy", "in_f32.npy");
}
TEST_F(ApplyErrors, GridWrongShape) {
    write("grid.npy", io::encode_npy(Tensor::zeros(DType::Float32, {1, 4, 5, 3})));
    write("p.json", R"([{"op": "grid_sample", "grid": "grid.npy"}])");
    expect_error(path("p.json").string(), "(N, H, W, 2)", "in_f32.npy");
}
TEST_F(ApplyErrors, GridWrongDtype) {
    write("grid.npy", io::encode_npy(Tensor::zeros(DType::UInt8, {1, 4, 5, 2})));
    write("p.json", R"([{"op": "grid_sample", "grid": "grid.npy"}])");
    expect_error(path("p.json").string(), "must be float32", "in_f32.npy");
}
TEST_F(ApplyErrors, GridBatchMismatch) {
    write("grid.npy", io::encode_npy(Tensor::zeros(DType::Float32, {2, 4, 5, 2})));
    write("p.json", R"([{"op": "grid_sample", "grid": "grid.npy"}])");
    expect_error(path("p.json").string(), "batch", "in_f32.npy");
}
TEST_F(ApplyErrors, FlipDimOutOfRange) { expect_error(R"([{"op": "flip", "dims": [4]}])", "out of range"); }
TEST_F(ApplyErrors, FlipDimRepeated) { expect_error(R"([{"op": "flip", "dims": [3, -1]}])", "more than once"); }
TEST_F(ApplyErrors, NormalizeOnUint8) {
    expect_error(R"([{"op": "normalize", "mean": [0.5], "std": [0.2]}])", "needs float input");
}
TEST_F(ApplyErrors, InputMissing) { expect_error(kOk, "missing.npy", "missing.npy"); }
TEST_F(ApplyErrors, InputEmpty) {
    write("empty.npy", "");
    expect_error(kOk, "empty.npy", "empty.npy");
}
TEST_F(ApplyErrors, InputTruncated) {
    std::string bytes = io::encode_npy(Tensor::zeros(DType::Float32, {1, 3, 8, 10}));
    write("trunc.npy", bytes.substr(0, bytes.size() - 5));
    expect_error(kOk, "trunc.npy", "trunc.npy");
}
TEST_F(ApplyErrors, InputGarbage) {
    write("garbage.npy", "this is not a numpy file at all, just text\n");
    expect_error(kOk, "garbage.npy", "garbage.npy");
}
TEST_F(ApplyErrors, InputGarbagePng) {
    write("garbage.png", "\x89PNG\r\n\x1a\n but then nothing sensible");
    expect_error(kOk, "garbage.png", "garbage.png");
}

std::string npy_with_header(const std::string& descr, const std::string& shape, std::size_t data_bytes) {
    std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
    std::size_t total = 10 + header.size() + 1;
    header.append((64 - total % 64) % 64, ' ');
    header += '\n';
    std::string out = "\x93NUMPY";
    out += '\x01';
    out += '\x00';
    out += static_cast<char>(header.size() & 0xff);
    out += static_cast<char>(header.size() >> 8);
    return out + header + std::string(data_bytes, '\0');
}

TEST_F(ApplyErrors, InputUnsupportedDtype) {
    write("i32.npy", npy_with_header("<i4", "(1, 3, 4, 4)", 4 * 48));
    expect_error(kOk, "<i4", "i32.npy");
}
TEST_F(ApplyErrors, InputBigEndian) {
    write("be.npy", npy_with_header(">f4", "(1, 3, 4, 4)", 4 * 48));
    expect_error(kOk, ">f4", "be.npy");
}
TEST_F(ApplyErrors, InputRankOne) {
    write("r1.npy", npy_with_header("|u1", "(16,)", 16));
    expect_error(kOk, "rank", "r1.npy");
}
TEST_F(ApplyErrors, InputRankFive) {
    write("r5.npy", npy_with_header("|u1", "(1, 1, 2, 2, 2)", 8));
    expect_error(kOk, "rank", "r5.npy");
}
TEST_F(ApplyErrors, InputZeroDimension) {
    write("z.npy", npy_with_header("|u1", "(1, 0, 4, 4)", 0));
    expect_error(kOk, "zero", "z.npy");
}
TEST_F(ApplyErrors, OutputFolderMissing) { expect_error(kOk, "does not exist", "in.npy", "no_such_dir/out.npy"); }
TEST_F(ApplyErrors, OutputUnknownExtension) { expect_error(kOk, ".npy", "in.npy", "out.bmp"); }
TEST_F(ApplyErrors, UnknownEngine) {
    Result r = run({"apply", kOk, path("in.npy").string(), path("out.npy").string(), "--engine", "magic"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.stderr_text.find("unknown engine 'magic'"), std::string::npos) << r.stderr_text;
}
TEST_F(ApplyErrors, UnknownLayout) {
    Result r = run({"apply", kOk, path("in.npy").string(), path("out.npy").string(), "--layout", "nhwc"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.stderr_text.find("unknown layout 'nhwc'"), std::string::npos) << r.stderr_text;
}
TEST_F(ApplyErrors, ExistingOutputUntouchedOnError) {
    write("out.npy", "previous contents");
    Result r = run({"apply", R"([{"op": "rotate"}])", path("in.npy").string(), path("out.npy").string()});
    EXPECT_EQ(r.exit_code, 2);
    std::ifstream f(path("out.npy"));
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text, "previous contents");
}

}  // namespace
}  // namespace toroid
