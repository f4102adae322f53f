// Folder mode on a GPU (engine/files.h, process_folder_cuda): with the CPU decoders
// ("exact") every result is the CPU folder run's file, byte for byte; with nvJPEG ("fast")
// the JPEGs' results are within a few levels and the other files' exact; bad files are
// named and skipped while the rest of their batch is written; batches split under a small
// device budget; several runs at once on one GPU agree. Skipped without a GPU (CI).
#include "../engine/engine_test_support.h"
#include "core/error.h"
#include "engine/engine.h"
#include "engine/files.h"
#include "io/file.h"
#include "io/jpeg.h"
#include "io/npy.h"
#include "io/png.h"
#include "ops/pipeline_json.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace toroid {
namespace {

namespace fs = std::filesystem;

const char* kPipeline = R"([{"op": "resize", "mode": "bilinear", "antialias": true, "size": [24, 20]},
                            {"op": "flip", "dims": [3]}])";

std::string slurp(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

void write(const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }

// A photo-like image: smooth gradients and a gentle wave (JPEG's decoders differ most on
// noise; the pixels of nvJPEG and libjpeg-turbo on smooth images are within about 2 levels).
Tensor smooth(std::int64_t c, std::int64_t h, std::int64_t w, int seed) {
    Tensor t = Tensor::empty(DType::UInt8, {1, c, h, w});
    for (std::int64_t k = 0; k < c; ++k)
        for (std::int64_t y = 0; y < h; ++y)
            for (std::int64_t x = 0; x < w; ++x)
                t.data_as<std::uint8_t>()[(k * h + y) * w + x] = static_cast<std::uint8_t>(
                    40 + (150 * x) / w + (40 * y) / h + 20 * k + 10 * std::sin(0.2 * double(x + y + seed)));
    return t;
}

Tensor image(std::int64_t c, std::int64_t h, std::int64_t w, int seed) {
    Tensor t = Tensor::empty(DType::UInt8, {1, c, h, w});
    for (std::int64_t i = 0; i < t.numel(); ++i)
        t.data_as<std::uint8_t>()[i] = static_cast<std::uint8_t>((i * 7 + seed * 31 + (i / w) * 3) % 251);
    return t;
}

fs::path test_data() {
    const char* env = std::getenv("TOROID_TEST_DATA");
    return fs::path(env && *env ? env : TOROID_TEST_DATA);
}

std::vector<std::string> files_under(const fs::path& root) {
    std::vector<std::string> out;
    if (!fs::exists(root)) return out;
    for (const auto& e : fs::recursive_directory_iterator(root))
        if (e.is_regular_file()) out.push_back(e.path().lexically_relative(root).generic_string());
    std::sort(out.begin(), out.end());
    return out;
}

class CudaFolder : public ::testing::Test {
protected:
    void SetUp() override {
        if (!test::cuda_unavailable().empty()) GTEST_SKIP() << test::cuda_unavailable();
        dir_ = fs::path(::testing::TempDir()) /
               ("toroid_cuda_folder_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
        fs::remove_all(dir_);
        in_ = dir_ / "in";
        fs::create_directories(in_ / "sub");
        // JPEGs of several sizes (some sharing one), grey and colour, a PNG, an .npy, the
        // decoders' special files (CMYK, EXIF-rotated, progressive), a truncated JPEG and one
        // that is not a JPEG at all.
        for (int i = 0; i < 11; ++i)
            write(in_ / ("p" + std::to_string(i) + ".jpg"),
                  io::encode_jpeg(smooth(3, 40 + 8 * (i % 4), 50 + 6 * (i % 3), i), 85));
        write(in_ / "sub" / "grey.jpg", io::encode_jpeg(smooth(1, 33, 47, 20), 90));
        write(in_ / "sub" / "y.png", io::encode_png(image(3, 30, 28, 21)));
        write(in_ / "sub" / "z.npy", io::encode_npy(image(3, 36, 30, 22)));
        for (const char* name : {"cmyk.jpg", "exif6.jpg", "exif3.jpg"})
            fs::copy_file(test_data() / "decode" / name, in_ / "sub" / name);
        fs::copy_file(test_data() / "jpeg" / "rgb_progressive_pillow.jpg", in_ / "sub" / "progressive.jpg");
        const std::string jpeg = io::encode_jpeg(image(3, 64, 64, 23), 90);
        write(in_ / "bad_truncated.jpg", jpeg.substr(0, jpeg.size() - 300));
        write(in_ / "bad_not_a.jpg", "this is not a JPEG file at all");
        options_.file.format = io::ImageFormat::Npy;
        options_.file.decode.mode = io::ImageMode::Rgb;  // the CLI's folder default
        options_.jobs = 3;
        pipeline_ = parse_pipeline(kPipeline, ".");
    }
    void TearDown() override {
        if (!dir_.empty()) fs::remove_all(dir_);
    }

    // The CPU folder run (the compiled engine), into `out`.
    FolderResult cpu(const fs::path& out) {
        auto engine = make_engine("compiled", EngineOptions{});
        return process_folder(*engine, pipeline_, in_, out, options_);
    }
    FolderResult gpu(const fs::path& out, CudaFolderOptions cuda, std::vector<std::string>* errors = nullptr) {
        FolderOptions o = options_;
        if (errors) o.on_error = [errors](const std::string& m) { errors->push_back(m); };
        return process_folder_cuda(pipeline_, in_, out, o, cuda);
    }

    fs::path dir_, in_;
    FolderOptions options_;
    Pipeline pipeline_;
};

TEST_F(CudaFolder, ExactDecodeGivesTheCpuRunsFilesAndNamesTheBadOnes) {
    const FolderResult c = cpu(dir_ / "cpu");
    EXPECT_EQ(c.written, 18);
    EXPECT_EQ(c.failed, 2);
    CudaFolderOptions cuda;  // exact: the default
    cuda.batch = 7;  // three steps, the last one partial
    std::vector<std::string> errors;
    const FolderResult g = gpu(dir_ / "gpu", cuda, &errors);
    EXPECT_EQ(g.written, 18);
    EXPECT_EQ(g.failed, 2);
    ASSERT_EQ(errors.size(), 2u);
    std::sort(errors.begin(), errors.end());
    EXPECT_NE(errors[0].find("bad_not_a.jpg"), std::string::npos) << errors[0];
    EXPECT_NE(errors[1].find("bad_truncated.jpg"), std::string::npos) << errors[1];
    const std::vector<std::string> files = files_under(dir_ / "cpu");
    ASSERT_EQ(files_under(dir_ / "gpu"), files);
    for (const std::string& f : files) EXPECT_EQ(slurp(dir_ / "gpu" / f), slurp(dir_ / "cpu" / f)) << f;
}

TEST_F(CudaFolder, FastDecodeIsWithinAFewLevelsAndOtherFilesExact) {
    cpu(dir_ / "cpu");
    std::vector<std::string> errors;
    CudaFolderOptions fast;
    fast.gpu_decode = true;
    const FolderResult g = gpu(dir_ / "gpu", fast, &errors);
    EXPECT_EQ(g.written, 18);
    EXPECT_EQ(g.failed, 2) << ::testing::PrintToString(errors);
    const std::vector<std::string> files = files_under(dir_ / "cpu");
    ASSERT_EQ(files_under(dir_ / "gpu"), files);
    for (const std::string& f : files) {
        const Tensor a = io::read_npy_image(dir_ / "cpu" / f), b = io::read_npy_image(dir_ / "gpu" / f);
        ASSERT_EQ(a.shape(), b.shape()) << f;
        // PNG and .npy inputs decode on the CPU in both runs; CMYK and EXIF-turned JPEGs too
        // (nvJPEG cannot decode them as asked).
        const bool cpu_decoded = f == "sub/y.npy" || f == "sub/z.npy" || f == "sub/cmyk.npy" ||
                                 f == "sub/exif6.npy" || f == "sub/exif3.npy";
        double sum = 0;
        int worst = 0;
        for (std::int64_t c = 0; c < a.shape()[1]; ++c)
            for (std::int64_t y = 0; y < a.shape()[2]; ++y)
                for (std::int64_t x = 0; x < a.shape()[3]; ++x) {
                    const int d = std::abs(int(a.at<std::uint8_t>(0, c, y, x)) - int(b.at<std::uint8_t>(0, c, y, x)));
                    sum += d;
                    worst = std::max(worst, d);
                }
        if (cpu_decoded) {
            EXPECT_EQ(worst, 0) << f;
        } else {
            EXPECT_LE(sum / static_cast<double>(a.numel()), 2.0) << f;
            EXPECT_LE(worst, 40) << f;
        }
    }
}

TEST_F(CudaFolder, ASmallDeviceBudgetSplitsEachBatch) {
    cpu(dir_ / "cpu");
    CudaFolderOptions cuda;
    cuda.gpu_decode = false;
    cuda.device_budget = 4096;  // below two images' buffers: every image is a group of its own
    const FolderResult g = gpu(dir_ / "gpu", cuda);
    EXPECT_EQ(g.written, 18);
    EXPECT_EQ(g.failed, 2);
    const std::vector<std::string> files = files_under(dir_ / "cpu");
    ASSERT_EQ(files_under(dir_ / "gpu"), files);
    for (const std::string& f : files) EXPECT_EQ(slurp(dir_ / "gpu" / f), slurp(dir_ / "cpu" / f)) << f;
}

TEST_F(CudaFolder, RunsOnSeveralThreadsAtOnceAgree) {
    cpu(dir_ / "cpu");
    const std::vector<std::string> files = files_under(dir_ / "cpu");
    std::vector<std::thread> threads;
    std::vector<FolderResult> results(4);
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            CudaFolderOptions cuda;
            cuda.gpu_decode = false;
            cuda.batch = 5 + static_cast<std::size_t>(t);
            results[static_cast<std::size_t>(t)] = gpu(dir_ / ("gpu" + std::to_string(t)), cuda);
        });
    for (auto& th : threads) th.join();
    for (int t = 0; t < 4; ++t) {
        const fs::path out = dir_ / ("gpu" + std::to_string(t));
        EXPECT_EQ(results[static_cast<std::size_t>(t)].written, 18) << t;
        ASSERT_EQ(files_under(out), files) << t;
        for (const std::string& f : files) EXPECT_EQ(slurp(out / f), slurp(dir_ / "cpu" / f)) << t << " " << f;
    }
}

TEST_F(CudaFolder, ChecksComeBeforeAnyWrite) {
    // The output folder inside the input folder: refused, nothing created.
    EXPECT_THROW(gpu(in_ / "out", CudaFolderOptions{}), Error);
    EXPECT_FALSE(fs::exists(in_ / "out"));
    // A float result into PNG files: one error before the first file.
    const Pipeline to_float = parse_pipeline(
        R"([{"op": "resize", "size": [8, 8], "mode": "bilinear"}, {"op": "convert", "dtype": "float32"}])", ".");
    FolderOptions png = options_;
    png.file.format = io::ImageFormat::Png;
    EXPECT_THROW(process_folder_cuda(to_float, in_, dir_ / "png", png, CudaFolderOptions{}), Error);
    EXPECT_FALSE(fs::exists(dir_ / "png"));
}

}  // namespace
}  // namespace toroid
