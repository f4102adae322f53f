// `toroid apply` on folders: every image of a nested tree is processed in parallel and
// written under the same relative path; a corrupt file is reported by name and skipped
// (exit 1), other files are ignored and counted, bad usage exits 2, and progress lines
// reach a non-terminal stderr.
#include "../engine/engine_test_support.h"
#include "core/error.h"
#include "core/tensor.h"
#include "engine/engine.h"
#include "engine/files.h"
#include "io/file.h"
#include "io/jpeg.h"
#include "io/npy.h"
#include "io/png.h"
#include "ops/pipeline_json.h"

#include <gtest/gtest.h>
#include <webp/encode.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace toroid {
namespace {

namespace fs = std::filesystem;

const char* kResize = R"([{"op": "resize", "mode": "bilinear", "antialias": true, "size": [12, 16]}])";
const char* kToFloat = R"([{"op": "resize", "mode": "bilinear", "antialias": true, "size": [12, 16]},
                           {"op": "convert", "dtype": "float32", "scale": true}])";

struct Result {
    int exit_code;
    std::string out, err;
};

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

Tensor image(std::int64_t c, std::int64_t h, std::int64_t w, int seed) {
    Tensor t = Tensor::empty(DType::UInt8, {1, c, h, w});
    for (std::int64_t i = 0; i < t.numel(); ++i)
        t.data_as<std::uint8_t>()[i] = static_cast<std::uint8_t>((i * 3 + seed * 17 + (i / w) * 5) % 256);
    return t;
}

int count_lines(const std::string& text, const std::string& prefix) {
    int n = 0;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t end = text.find('\n', pos);
        if (end == std::string::npos) end = text.size();
        if (text.compare(pos, prefix.size(), prefix) == 0) ++n;
        pos = end + 1;
    }
    return n;
}

class Folder : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::path(::testing::TempDir()) /
               ("toroid_folder_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
        fs::remove_all(dir_);
        in_ = dir_ / "in";
        fs::create_directories(in_ / "a" / "b");
        fs::create_directories(in_ / "c");
        write(in_ / "top.jpg", io::encode_jpeg(image(3, 30, 40, 1), 90));
        write(in_ / "a" / "x.JPEG", io::encode_jpeg(image(1, 24, 20, 2), 90));
        write(in_ / "a" / "b" / "y.png", io::encode_png(image(3, 18, 22, 3)));
        write(in_ / "a" / "b" / "z.npy", io::encode_npy(image(3, 30, 40, 4)));
        std::string jpeg = io::encode_jpeg(image(3, 64, 64, 5), 90);
        write(in_ / "c" / "bad.jpg", jpeg.substr(0, jpeg.size() - 200));  // truncated
        write(in_ / "c" / "notes.txt", "not an image\n");
        write(in_ / "README", "neither\n");
    }
    void TearDown() override { fs::remove_all(dir_); }

    static void write(const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }

    Result run(const std::vector<std::string>& args) const {
        std::string cmd = shell_quote(TOROID_BINARY);
        for (const auto& a : args) cmd += ' ' + shell_quote(a);
        cmd += " >" + shell_quote((dir_ / "stdout.txt").string()) + " 2>" + shell_quote((dir_ / "stderr.txt").string());
        int status = std::system(cmd.c_str());
        return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir_ / "stdout.txt"), slurp(dir_ / "stderr.txt")};
    }

    std::vector<std::string> files_under(const fs::path& root) const {
        std::vector<std::string> out;
        for (const auto& e : fs::recursive_directory_iterator(root))
            if (e.is_regular_file()) out.push_back(e.path().lexically_relative(root).generic_string());
        std::sort(out.begin(), out.end());
        return out;
    }

    fs::path dir_, in_;
};

TEST_F(Folder, MirrorsTheTreeSkipsTheCorruptFileAndCounts) {
    fs::path out = dir_ / "out" / "deeper";  // created, parents too
    Result r = run({"apply", kResize, in_.string(), out.string(), "--format", "npy", "--jobs", "2", "--engine",
                    "reference"});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(files_under(out), (std::vector<std::string>{"a/b/y.npy", "a/b/z.npy", "a/x.npy", "top.npy"}));
    // One error line naming the corrupt file.
    EXPECT_EQ(count_lines(r.err, "toroid: error: "), 1) << r.err;
    EXPECT_NE(r.err.find("toroid: error: " + (in_ / "c" / "bad.jpg").string() + ": invalid JPEG"), std::string::npos)
        << r.err;
    EXPECT_NE(r.out.find("4 written, 1 failed, 2 ignored (not images)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("images/s"), std::string::npos) << r.out;
    // Progress lines on a non-terminal stderr: at least the final one.
    EXPECT_NE(r.err.find("toroid: 5/5 images, 1 failed"), std::string::npos) << r.err;

    // Each result is what a single-file run gives; a gray JPEG decodes to RGB (folder mode's
    // default --mode rgb).
    Tensor x = io::read_npy_image(out / "a" / "x.npy");
    EXPECT_EQ(x.shape(), (Dims{1, 3, 12, 16}));
    Tensor y = io::read_npy_image(out / "a" / "b" / "y.npy");
    EXPECT_EQ(y.shape(), (Dims{1, 3, 12, 16}));
    fs::path single = dir_ / "single.npy";
    Result s = run({"apply", kResize, (in_ / "a" / "b" / "y.png").string(), single.string(), "--engine", "reference"});
    ASSERT_EQ(s.exit_code, 0) << s.err;
    EXPECT_EQ(slurp(single), slurp(out / "a" / "b" / "y.npy"));
}

TEST_F(Folder, CompiledEngineManyJobsSameSizeImages) {
    fs::remove(in_ / "c" / "bad.jpg");
    for (int i = 0; i < 12; ++i)
        write(in_ / "c" / ("s" + std::to_string(i) + ".jpg"), io::encode_jpeg(image(3, 30, 40, 10 + i), 90));
    fs::path out = dir_ / "out";
    Result r = run({"apply", kResize, in_.string(), out.string(), "--format", "png", "--jobs", "4"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(count_lines(r.err, "toroid: error: "), 0) << r.err;
    EXPECT_NE(r.out.find("16 written, 0 failed, 2 ignored"), std::string::npos) << r.out;
    // Compiled results equal the reference engine's, file by file.
    fs::path ref = dir_ / "ref";
    Result q = run({"apply", kResize, in_.string(), ref.string(), "--format", "png", "--jobs", "1", "--engine",
                    "reference"});
    ASSERT_EQ(q.exit_code, 0) << q.err;
    ASSERT_EQ(files_under(out), files_under(ref));
    EXPECT_EQ(files_under(out).size(), 16u);
    for (const std::string& f : files_under(out)) EXPECT_EQ(slurp(out / f), slurp(ref / f)) << f;
}

TEST_F(Folder, DefaultFormatKeepsTheInputsAndFloatNeedsNpy) {
    // A float32 result cannot go to the .jpg / .png inputs' own formats: one usage error
    // before the first file, nothing written (not "1 written, 4 failed").
    fs::path out = dir_ / "out";
    Result r = run({"apply", kToFloat, in_.string(), out.string(), "--engine", "reference", "--jobs", "3"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err.rfind("toroid: error: the pipeline's result is float32 for uint8 images", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("--format npy"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out));
    // The same with an explicit --format png or jpg.
    for (const char* format : {"png", "jpg"}) {
        Result f = run({"apply", kToFloat, in_.string(), out.string(), "--format", format, "--engine", "reference"});
        EXPECT_EQ(f.exit_code, 2) << f.err;
        const std::string holds = std::string(format) == "png" ? "uint8 and uint16" : "uint8";
        EXPECT_NE(f.err.find(std::string("the output format (") + format + ") holds " + holds + " only"),
                  std::string::npos)
            << f.err;
        EXPECT_FALSE(fs::exists(out));
    }
    // --format npy holds it: every readable file is written.
    Result npy = run({"apply", kToFloat, in_.string(), out.string(), "--format", "npy", "--engine", "reference"});
    EXPECT_EQ(npy.exit_code, 1) << npy.err;  // c/bad.jpg
    EXPECT_NE(npy.out.find("4 written, 1 failed"), std::string::npos) << npy.out;
    // Only .npy inputs (whose dtype is not known before reading them): each file decides.
    fs::path npy_in = dir_ / "npy_in";
    fs::create_directories(npy_in);
    write(npy_in / "z.npy", io::encode_npy(image(3, 30, 40, 4)));
    Result own = run({"apply", kToFloat, npy_in.string(), (dir_ / "out3").string(), "--engine", "reference"});
    EXPECT_EQ(own.exit_code, 0) << own.err;

    // With uint8 results each file keeps its extension (case included).
    fs::path out2 = dir_ / "out2";
    fs::remove(in_ / "c" / "bad.jpg");
    Result ok = run({"apply", kResize, in_.string(), out2.string(), "--engine", "reference", "--quality", "50"});
    EXPECT_EQ(ok.exit_code, 0) << ok.err;
    EXPECT_EQ(files_under(out2), (std::vector<std::string>{"a/b/y.png", "a/b/z.npy", "a/x.JPEG", "top.jpg"}));
    EXPECT_EQ(io::read_image(out2 / "a" / "x.JPEG").shape(), (Dims{1, 3, 12, 16}));
    // --mode unchanged keeps the gray file gray.
    fs::path out4 = dir_ / "out4";
    Result kept = run({"apply", kResize, in_.string(), out4.string(), "--engine", "reference", "--mode", "unchanged"});
    EXPECT_EQ(kept.exit_code, 0) << kept.err;
    EXPECT_EQ(io::read_image(out4 / "a" / "x.JPEG").shape(), (Dims{1, 1, 12, 16}));
    Result bad_mode = run({"apply", kResize, in_.string(), (dir_ / "out5").string(), "--mode", "cmyk"});
    EXPECT_EQ(bad_mode.exit_code, 2) << bad_mode.err;
    EXPECT_NE(bad_mode.err.find("unknown image mode 'cmyk'"), std::string::npos) << bad_mode.err;
    EXPECT_FALSE(fs::exists(dir_ / "out5"));
}

// A WebP input (read, not written) gives a .png result unless --format names another; a
// float result for it needs --format npy, as for PNG inputs.
TEST_F(Folder, WebpInputsGivePngResults) {
    fs::path in = dir_ / "webp_in";
    fs::create_directories(in / "s");
    std::vector<std::uint8_t> px(30 * 20 * 3);
    for (std::size_t i = 0; i < px.size(); ++i) px[i] = static_cast<std::uint8_t>(i * 13 % 256);
    std::uint8_t* enc = nullptr;
    const std::size_t n = WebPEncodeLosslessRGB(px.data(), 30, 20, 30 * 3, &enc);
    write(in / "s" / "p.webp", std::string(reinterpret_cast<const char*>(enc), n));
    WebPFree(enc);
    Result ok = run({"apply", kResize, in.string(), (dir_ / "w1").string(), "--engine", "reference"});
    EXPECT_EQ(ok.exit_code, 0) << ok.err;
    EXPECT_EQ(files_under(dir_ / "w1"), (std::vector<std::string>{"s/p.png"}));
    EXPECT_EQ(io::read_image(dir_ / "w1" / "s" / "p.png").shape(), (Dims{1, 3, 12, 16}));
    Result jpg = run({"apply", kResize, in.string(), (dir_ / "w2").string(), "--format", "jpg", "--engine", "reference"});
    EXPECT_EQ(jpg.exit_code, 0) << jpg.err;
    EXPECT_EQ(files_under(dir_ / "w2"), (std::vector<std::string>{"s/p.jpg"}));
    Result flt = run({"apply", kToFloat, in.string(), (dir_ / "w3").string(), "--engine", "reference"});
    EXPECT_EQ(flt.exit_code, 2) << flt.err;
    EXPECT_NE(flt.err.find("the .png inputs' own format (png)"), std::string::npos) << flt.err;
    Result wr = run({"apply", kResize, in.string(), (dir_ / "w4").string(), "--format", "webp"});
    EXPECT_EQ(wr.exit_code, 2) << wr.err;
    EXPECT_NE(wr.err.find("does not write them"), std::string::npos) << wr.err;
}

// --draft: a JPEG the pipeline's first resize shrinks at least 2x decodes at a DCT scale, so
// its result has the same shape and is close to, not equal to, the full decode's; PNG, .npy
// and JPEGs the resize does not shrink 2x decode whole (equal results). The rule itself:
// draft_for.
TEST_F(Folder, DraftDecodesShrunkJpegsSmallerAndLeavesTheRest) {
    const fs::path full = dir_ / "full", draft = dir_ / "draft";
    Result a = run({"apply", kToFloat, in_.string(), full.string(), "--format", "npy", "--jobs", "2"});
    Result b = run({"apply", kToFloat, in_.string(), draft.string(), "--format", "npy", "--jobs", "2", "--draft"});
    EXPECT_EQ(a.exit_code, 1) << a.err;  // the truncated JPEG, in both
    EXPECT_EQ(b.exit_code, 1) << b.err;
    for (const char* f : {"top.npy", "a/x.npy", "a/b/y.npy", "a/b/z.npy"}) {
        SCOPED_TRACE(f);
        const Tensor x = io::read_npy_image(full / f), y = io::read_npy_image(draft / f);
        ASSERT_EQ(x.shape(), y.shape());
        double diff = 0;
        for (std::int64_t i = 0; i < x.numel(); ++i) diff = std::max(diff, double(std::fabs(x.data_as<float>()[i] - y.data_as<float>()[i])));
        // top.jpg (30x40 -> 12x16) decodes at 1/2 (15x20); x.JPEG (24x20 -> 12x16) is not
        // shrunk 2x in width, so it decodes whole, as do the PNG and the .npy.
        if (std::string(f) == "top.npy") EXPECT_GT(diff, 0.0);
        else EXPECT_EQ(diff, 0.0);
        EXPECT_LT(diff, 0.35);
    }
    Pipeline p = parse_pipeline(R"([{"op": "resize", "mode": "bilinear", "smaller_edge": 50}, {"op": "flip", "dims": [-1]}])", fs::path());
    EXPECT_EQ(draft_for(p)(100, 300), (std::array<std::int64_t, 2>{50, 150}));
    EXPECT_EQ(draft_for(p)(40, 300), (std::array<std::int64_t, 2>{0, 0}));  // enlarged: decode whole
    EXPECT_FALSE(draft_for(parse_pipeline(R"([{"op": "resize", "scale_factor": [0.5, 0.5]}])", fs::path())));
    EXPECT_FALSE(draft_for(parse_pipeline(R"([{"op": "flip", "dims": [-1]}])", fs::path())));
}

TEST_F(Folder, SameOutputNameFromTwoInputsIsAnErrorForTheSecond) {
    fs::remove(in_ / "c" / "bad.jpg");
    write(in_ / "top.png", io::encode_png(image(3, 10, 10, 9)));  // top.jpg and top.png -> top.npy
    fs::path out = dir_ / "out";
    Result r = run({"apply", kResize, in_.string(), out.string(), "--format", "npy", "--engine", "reference"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("top.png: output"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("is already written from"), std::string::npos) << r.err;
    // The first in sorted order (top.jpg) wins.
    EXPECT_EQ(io::read_npy_image(out / "top.npy").dim(1), 3);
}

// Every file under `root` with its bytes.
std::map<std::string, std::string> snapshot(const fs::path& root) {
    std::map<std::string, std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(root))
        if (e.is_regular_file()) out[e.path().lexically_relative(root).generic_string()] = slurp(e.path());
    return out;
}

TEST_F(Folder, OutputAtOrInsideTheInputFolderIsRefusedAndNothingIsTouched) {
    fs::create_directory_symlink(in_, dir_ / "link_to_in");
    const std::map<std::string, std::string> before = snapshot(in_);
    ASSERT_EQ(before.size(), 7u);
    struct Case {
        std::string out, needle;
    };
    const std::vector<Case> cases = {
        {in_.string(), "is the input folder"},
        {(in_ / ".").string(), "is the input folder"},
        {(in_ / "a" / "..").string(), "is the input folder"},
        {(dir_ / "link_to_in").string(), "is the input folder"},
        {(in_ / "results").string(), "lies inside the input folder"},
        {(in_ / "a" / "b").string(), "lies inside the input folder"},
        {(dir_ / "link_to_in" / "new").string(), "lies inside the input folder"},
    };
    for (const Case& c : cases) {
        for (const char* format : {"npy", ""}) {
            SCOPED_TRACE(c.out + " format " + format);
            std::vector<std::string> args = {"apply", kResize, in_.string(), c.out, "--engine", "reference"};
            if (*format) args.insert(args.end(), {"--format", format});
            Result r = run(args);
            EXPECT_EQ(r.exit_code, 2) << r.err;
            EXPECT_EQ(r.err.rfind("toroid: error: output folder '", 0), 0u) << r.err;
            EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
            EXPECT_NE(r.err.find(c.needle), std::string::npos) << r.err;
            EXPECT_EQ(snapshot(in_), before);  // byte-identical, nothing added
        }
    }
    EXPECT_FALSE(fs::exists(in_ / "results"));
    // The library refuses too, before writing.
    auto engine = make_engine("reference", EngineOptions{});
    EXPECT_THROW(process_folder(*engine, parse_pipeline(kResize, "."), in_, in_ / ".", FolderOptions{}), Error);
    EXPECT_EQ(snapshot(in_), before);
}

TEST_F(Folder, AnInputFolderInsideTheOutputFolderNeverHasItsFilesOverwritten) {
    // OUT = dir_, IN = dir_/in: the input in/in/top.jpg would be written to in/top.jpg,
    // which is an input too.
    fs::create_directories(in_ / "in");
    write(in_ / "in" / "top.jpg", io::encode_jpeg(image(3, 30, 40, 7), 90));
    const std::map<std::string, std::string> before = snapshot(in_);
    Result r = run({"apply", kResize, in_.string(), dir_.string(), "--engine", "reference"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("is one of the input files"), std::string::npos) << r.err;
    EXPECT_EQ(snapshot(in_), before);
    EXPECT_FALSE(fs::exists(dir_ / "top.jpg"));  // nothing written at all

    // A hard link in the output folder to an input: same inode, refused too.
    fs::path out = dir_ / "out";
    fs::create_directories(out);
    fs::create_hard_link(in_ / "top.jpg", out / "top.jpg");
    fs::remove_all(in_ / "in");
    Result h = run({"apply", kResize, in_.string(), out.string(), "--engine", "reference"});
    EXPECT_EQ(h.exit_code, 2) << h.err;
    EXPECT_NE(h.err.find("is one of the input files"), std::string::npos) << h.err;
    EXPECT_EQ(slurp(in_ / "top.jpg"), before.at("top.jpg"));
}

TEST_F(Folder, OneFileWhoseOutputIsItsInputIsRefused) {
    const std::string bytes = slurp(in_ / "top.jpg");
    fs::create_symlink(in_ / "top.jpg", dir_ / "alias.jpg");
    fs::create_hard_link(in_ / "top.jpg", dir_ / "hard.jpg");
    for (const fs::path& out : {in_ / "top.jpg", in_ / "a" / ".." / "top.jpg", dir_ / "alias.jpg", dir_ / "hard.jpg"}) {
        SCOPED_TRACE(out.string());
        Result r = run({"apply", kResize, (in_ / "top.jpg").string(), out.string(), "--engine", "reference"});
        EXPECT_EQ(r.exit_code, 2) << r.err;
        EXPECT_NE(r.err.find("is the input file"), std::string::npos) << r.err;
        EXPECT_EQ(slurp(in_ / "top.jpg"), bytes);
    }
    auto engine = make_engine("reference", EngineOptions{});
    EXPECT_THROW(process_file(*engine, parse_pipeline(kResize, "."), in_ / "top.jpg", dir_ / "alias.jpg", FileOptions{}),
                 Error);
    EXPECT_EQ(slurp(in_ / "top.jpg"), bytes);
}

TEST_F(Folder, BadUsageExitsTwoAndWritesNothing) {
    fs::path out = dir_ / "out";
    struct Case {
        std::vector<std::string> args;
        std::string needle;
    };
    const std::vector<Case> cases = {
        {{"apply", kResize, (dir_ / "missing").string(), out.string()}, "input '"},
        {{"apply", kResize, in_.string(), out.string(), "--format", "gif"}, "unknown image format 'gif'"},
        {{"apply", kResize, in_.string(), out.string(), "--quality", "0"}, "--quality must be 1..100"},
        {{"apply", kResize, in_.string(), out.string(), "--quality", "101"}, "--quality must be 1..100"},
        {{"apply", kResize, in_.string(), out.string(), "--jobs", "-1"}, "--jobs must be at least 1"},
        {{"apply", "[{\"op\": \"spin\"}]", in_.string(), out.string()}, "spin"},
        {{"apply", kResize, in_.string(), (in_ / "top.jpg").string()}, "is not a folder"},
        {{"apply", kResize, in_.string(), out.string(), "--stats"}, "apply to a single file, not to folder mode"},
        {{"apply", kResize, in_.string(), out.string(), "--prepare-only"}, "--prepare-only apply to a single file"},
        {{"apply", kResize, (in_ / "top.jpg").string(), out.string(), "--jobs", "2"}, "--jobs applies to folder mode"},
        {{"apply", kResize, in_.string(), out.string(), "--decode", "fast"}, "--decode applies to --device cuda"},
        {{"apply", kResize, in_.string(), out.string(), "--device", "cuda", "--decode", "best"},
         "--decode must be fast or exact (got 'best')"},
        {{"apply", kResize, (in_ / "top.jpg").string(), (dir_ / "one.png").string(), "--device", "cuda", "--decode",
          "exact"},
         "--decode and --batch apply to folder mode with --device cuda"},
        {{"apply", kResize, in_.string(), out.string(), "--batch", "8"}, "--batch applies to --device cuda"},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.needle);
        Result r = run(c.args);
        EXPECT_EQ(r.exit_code, 2) << r.err;
        EXPECT_EQ(r.err.rfind("toroid: error: ", 0), 0u) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        EXPECT_NE(r.err.find(c.needle), std::string::npos) << r.err;
        EXPECT_FALSE(fs::exists(out));
    }
}

TEST_F(Folder, WithoutAGpuDeviceCudaIsOneErrorAndWritesNothing) {
    if (test::cuda_unavailable().empty()) GTEST_SKIP() << "a GPU is here: tests/cli/cuda_folder_test.cpp runs folder mode on it";
    fs::path out = dir_ / "out";
    Result r = run({"apply", kResize, in_.string(), out.string(), "--device", "cuda"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err.rfind("toroid: error: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(out));
}

TEST_F(Folder, ScanIsSortedRecursiveAndCountsOtherFiles) {
    FolderScan scan = scan_image_folder(in_);
    std::vector<std::string> names;
    for (const auto& p : scan.images) names.push_back(p.generic_string());
    EXPECT_EQ(names, (std::vector<std::string>{"a/b/y.png", "a/b/z.npy", "a/x.JPEG", "c/bad.jpg", "top.jpg"}));
    EXPECT_EQ(scan.ignored, 2);
}

TEST_F(Folder, ProcessFileWritesNothingOnFailure) {
    auto engine = make_engine("reference", EngineOptions{});
    Pipeline p = parse_pipeline(kToFloat, ".");
    fs::path out = dir_ / "new" / "sub" / "x.jpg";
    EXPECT_THROW(process_file(*engine, p, in_ / "top.jpg", out, FileOptions{}), Error);
    EXPECT_FALSE(fs::exists(out));
    FileOptions npy;
    npy.format = io::ImageFormat::Npy;  // the name is used as is
    process_file(*engine, p, in_ / "top.jpg", out, npy);
    EXPECT_EQ(io::parse_npy_image(slurp(out), "x").dtype(), DType::Float32);
}

}  // namespace
}  // namespace toroid
