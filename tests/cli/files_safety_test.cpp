// `toroid apply` on files that are not what they claim: /dev/zero, a FIFO, a decompression
// bomb or a grid path leaving the pipeline's folder each end in one clean error line with
// exit 2, within seconds (the command runs under `timeout`: a hang fails the test).
#include "core/tensor.h"
#include "io/file.h"
#include "io/jpeg.h"
#include "io/npy.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace toroid {
namespace {

namespace fs = std::filesystem;

std::string shell_quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) {
        if (c == '\'') out += "'\\''";
        else out += c;
    }
    return out + "'";
}

std::string slurp(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

class FilesSafety : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::path(::testing::TempDir()) /
               ("toroid_safety_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
        fs::remove_all(dir_);
        fs::create_directories(dir_ / "pipes");
        write(dir_ / "in.npy", io::encode_npy(Tensor::zeros(DType::UInt8, {1, 3, 20, 30})));
    }
    void TearDown() override { fs::remove_all(dir_); }
    static void write(const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }

    // Runs the CLI under `timeout 20` in dir_; expects exit 2 and one line with `needle`.
    void expect_error(const std::vector<std::string>& args, const std::string& needle) const {
        std::string cmd = "cd " + shell_quote(dir_.string()) + " && timeout -k 5 20 " + shell_quote(TOROID_BINARY);
        for (const auto& a : args) cmd += ' ' + shell_quote(a);
        cmd += " >/dev/null 2>" + shell_quote((dir_ / "err.txt").string());
        const auto start = std::chrono::steady_clock::now();
        const int status = std::system(cmd.c_str());
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        const std::string err = slurp(dir_ / "err.txt");
        EXPECT_NE(code, 124) << "timed out: " << needle;
        EXPECT_EQ(code, 2) << err;
        EXPECT_EQ(err.rfind("toroid: error: ", 0), 0u) << err;
        EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
        EXPECT_NE(err.find(needle), std::string::npos) << err;
        EXPECT_LT(s, 15) << needle;
        EXPECT_FALSE(fs::exists(dir_ / "out.npy"));
    }

    fs::path dir_;
};

const char* kFlip = R"([{"op": "flip", "dims": [3]}])";

TEST_F(FilesSafety, DevZeroAsInputPipelineOrGridIsRefused) {
    fs::create_symlink("/dev/zero", dir_ / "zero.npy");
    fs::create_symlink("/dev/zero", dir_ / "zero.jpg");
    fs::create_symlink("/dev/zero", dir_ / "pipes" / "grid.npy");
    write(dir_ / "pipes" / "p.json", R"([{"op": "grid_sample", "grid": "grid.npy"}])");
    expect_error({"apply", kFlip, "zero.npy", "out.npy"}, "'zero.npy': it is a character device, not a regular file");
    expect_error({"apply", kFlip, "zero.jpg", "out.npy"}, "character device");
    expect_error({"apply", "/dev/zero", "in.npy", "out.npy"}, "'/dev/zero': it is a character device");
    // The grid's symlink leads out of the pipeline's folder; allowed, it is still not read.
    expect_error({"apply", "pipes/p.json", "in.npy", "out.npy"}, "leaves the pipeline's folder");
    expect_error({"apply", "pipes/p.json", "in.npy", "out.npy", "--allow-paths"}, "character device");
}

TEST_F(FilesSafety, FifoNeverHangs) {
    ASSERT_EQ(::mkfifo((dir_ / "fifo.npy").c_str(), 0600), 0);
    ASSERT_EQ(::mkfifo((dir_ / "fifo.json").c_str(), 0600), 0);
    ASSERT_EQ(::mkfifo((dir_ / "pipes" / "grid.npy").c_str(), 0600), 0);
    write(dir_ / "pipes" / "p.json", R"([{"op": "grid_sample", "grid": "grid.npy"}])");
    expect_error({"apply", kFlip, "fifo.npy", "out.npy"}, "it is a FIFO (named pipe), not a regular file");
    expect_error({"apply", "fifo.json", "in.npy", "out.npy"}, "FIFO");
    expect_error({"apply", "pipes/p.json", "in.npy", "out.npy"}, "FIFO");
}

TEST_F(FilesSafety, GridPathsLeavingThePipelinesFolderAreRefusedWithoutReadingThem) {
    // Outside the folder: a file whose shape a read would report.
    write(dir_ / "secret.npy", io::encode_npy(Tensor::zeros(DType::Float32, {1, 4, 5, 3})));
    write(dir_ / "pipes" / "up.json", R"([{"op": "grid_sample", "grid": "../secret.npy"}])");
    write(dir_ / "pipes" / "abs.json", R"([{"op": "grid_sample", "grid": ")" + (dir_ / "secret.npy").string() + R"("}])");
    for (const char* p : {"pipes/up.json", "pipes/abs.json"}) {
        SCOPED_TRACE(p);
        expect_error({"apply", p, "in.npy", "out.npy"}, "a pipeline may name files in its folder only");
        EXPECT_EQ(slurp(dir_ / "err.txt").find("shape"), std::string::npos);
    }
    expect_error({"apply", "pipes/up.json", "in.npy", "out.npy", "--allow-paths"}, "must have shape (N, H, W, 2)");
}

TEST_F(FilesSafety, PixelLimitOptionAndBombs) {
    std::string jpeg = io::encode_jpeg(Tensor::zeros(DType::UInt8, {1, 3, 16, 16}), 90);
    const std::size_t sof = jpeg.find("\xff\xc0");
    ASSERT_NE(sof, std::string::npos);
    for (std::size_t k : {sof + 5, sof + 7}) {  // 50000 x 50000
        jpeg[k] = static_cast<char>(0xC3);
        jpeg[k + 1] = static_cast<char>(0x50);
    }
    write(dir_ / "bomb.jpg", jpeg);
    expect_error({"apply", kFlip, "bomb.jpg", "out.npy"}, "JPEG of 50000x50000 has 2500000000 pixels, more than the limit of 178956970");
    expect_error({"apply", kFlip, "in.npy", "out.npy", "--max-pixels", "599"}, "has 600 pixels, more than the limit of 599");
    expect_error({"apply", kFlip, "in.npy", "out.npy", "--max-pixels", "-1"}, "--max-pixels");
    const std::string cmd = "cd " + shell_quote(dir_.string()) + " && " + shell_quote(TOROID_BINARY) + " apply " +
                            shell_quote(kFlip) + " in.npy out.npy --max-pixels 600 2>/dev/null";
    EXPECT_EQ(std::system(cmd.c_str()), 0);
    EXPECT_TRUE(fs::exists(dir_ / "out.npy"));
}

}  // namespace
}  // namespace toroid
