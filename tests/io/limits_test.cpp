// Reads are bounded: only regular files are read (a device, FIFO, socket or folder is
// refused at once, without blocking), a file over its size cap is refused, and every
// decoder (PNG, JPEG, .npy) applies the pixel limit to the header before allocating.
// Grid paths in a pipeline stay inside the pipeline's folder. An interrupted write leaves
// no temporary file behind.
#include "core/error.h"
#include "core/tensor.h"
#include "io/file.h"
#include "io/jpeg.h"
#include "io/npy.h"
#include "io/paths.h"
#include "io/png.h"
#include "ops/pipeline_json.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace toroid::io {
namespace {

namespace fs = std::filesystem;

class Limits : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::path(::testing::TempDir()) /
               ("toroid_limits_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override {
        set_max_image_pixels(-1);
        fs::remove_all(dir_);
    }
    void write(const fs::path& p, const std::string& bytes) const { std::ofstream(p, std::ios::binary) << bytes; }

    fs::path dir_;
};

// Runs `body`, expecting a one-line toroid::Error containing `needle`, within `seconds`.
template <typename F>
std::string expect_error(F&& body, const std::string& needle, double seconds = 5) {
    const auto start = std::chrono::steady_clock::now();
    std::string msg;
    try {
        body();
        ADD_FAILURE() << "no error; expected one containing '" << needle << "'";
    } catch (const Error& e) {
        msg = e.what();
        EXPECT_NE(msg.find(needle), std::string::npos) << msg;
        EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), seconds) << needle;
    return msg;
}

Tensor image(std::int64_t c, std::int64_t h, std::int64_t w) {
    Tensor t = Tensor::empty(DType::UInt8, {1, c, h, w});
    for (std::int64_t i = 0; i < t.numel(); ++i) t.data_as<std::uint8_t>()[i] = static_cast<std::uint8_t>(i * 7);
    return t;
}

std::string be32(std::uint32_t v) {
    return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
}

std::string chunk(const std::string& type, const std::string& data) {
    std::string body = type + data;
    const auto crc = static_cast<std::uint32_t>(
        crc32(0, reinterpret_cast<const Bytef*>(body.data()), static_cast<uInt>(body.size())));
    return be32(static_cast<std::uint32_t>(data.size())) + body + be32(crc);
}

// A PNG of side x side 8-bit gray zeros whose file is about side^2 / 1030 bytes: a
// decompression bomb (50000^2 = 2.5 GB of pixels in about 2.4 MB). The zlib stream is one
// compressed block of zero rows repeated (each ends with a full flush, so every copy
// after the first compresses to the same bytes); it stops short of the last rows.
std::string png_bomb(std::uint32_t side) {
    const std::size_t row = side + 1;  // filter byte + pixels
    const std::size_t rows_per_block = 256;
    const std::string zeros(row * rows_per_block, '\0');
    z_stream z{};
    EXPECT_EQ(deflateInit(&z, 9), Z_OK);
    std::string out;
    auto run = [&](int flush) {
        z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(zeros.data()));
        z.avail_in = static_cast<uInt>(zeros.size());
        std::string buf(zeros.size() / 100 + 1024, '\0');
        std::string produced;
        do {
            z.next_out = reinterpret_cast<Bytef*>(buf.data());
            z.avail_out = static_cast<uInt>(buf.size());
            deflate(&z, flush);
            produced.append(buf.data(), buf.size() - z.avail_out);
        } while (z.avail_out == 0);
        return produced;
    };
    const std::string first = run(Z_FULL_FLUSH);  // with the zlib header
    const std::string again = run(Z_FULL_FLUSH);
    const std::size_t blocks = side / rows_per_block;
    std::string idat = first;
    for (std::size_t i = 1; i + 1 < blocks; ++i) idat += again;
    deflateEnd(&z);
    std::string ihdr = be32(side) + be32(side) + std::string("\x08\x00\x00\x00\x00", 5);
    // No adler32 trailer: the bomb is refused at the header, and a decoder without a limit
    // would spend its memory long before reaching the end of the stream.
    return std::string("\x89PNG\r\n\x1a\n", 8) + chunk("IHDR", ihdr) + chunk("IDAT", idat) + chunk("IEND", "");
}

long max_rss_kb() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

TEST_F(Limits, OnlyRegularFilesAreRead) {
    // /dev/zero through names that pass the extension checks.
    fs::create_symlink("/dev/zero", dir_ / "zero.npy");
    fs::create_symlink("/dev/zero", dir_ / "zero.png");
    fs::create_symlink("/dev/zero", dir_ / "zero.jpg");
    expect_error([] { read_file("/dev/zero"); }, "'/dev/zero': it is a character device, not a regular file");
    for (const char* name : {"zero.npy", "zero.png", "zero.jpg"})
        expect_error([&] { read_image(dir_ / name); }, "it is a character device, not a regular file");
    expect_error([&] { read_npy(dir_ / "zero.npy"); }, "character device");
    expect_error([&] { read_file_head(dir_ / "zero.npy", 16); }, "character device");

    // A FIFO with no writer: refused at once (opening it for reading would block forever).
    ASSERT_EQ(::mkfifo((dir_ / "fifo.png").c_str(), 0600), 0);
    expect_error([&] { read_image(dir_ / "fifo.png"); }, "it is a FIFO (named pipe), not a regular file", 2);
    expect_error([&] { read_npy(dir_ / "fifo.png"); }, "FIFO", 2);

    // A socket, and a folder.
    const int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
    ASSERT_GE(sock, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    const std::string sock_path = (dir_ / "s.npy").string();
    ASSERT_LT(sock_path.size(), sizeof addr.sun_path);
    std::strcpy(addr.sun_path, sock_path.c_str());
    ASSERT_EQ(::bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    expect_error([&] { read_image(dir_ / "s.npy"); }, "it is a socket, not a regular file");
    ::close(sock);
    fs::create_directories(dir_ / "d.png");
    expect_error([&] { read_image(dir_ / "d.png"); }, "it is a directory");

    // A regular file through a symlink is fine.
    write(dir_ / "real.png", encode_png(image(3, 4, 5)));
    fs::create_symlink(dir_ / "real.png", dir_ / "alias.png");
    EXPECT_EQ(read_image(dir_ / "alias.png").shape(), (Dims{1, 3, 4, 5}));
}

TEST_F(Limits, FilesOverTheirSizeCapAreRefused) {
    write(dir_ / "big.json", std::string(1000, ' '));
    EXPECT_EQ(read_file(dir_ / "big.json", 1000).size(), 1000u);
    expect_error([&] { read_file(dir_ / "big.json", 999); }, "the file has 1000 bytes, more than the limit of 999");
    // A pipeline file over 16 MiB is refused before it is parsed.
    {
        std::ofstream f(dir_ / "huge.json", std::ios::binary);
        f << '[';
        const std::string pad(1 << 20, ' ');
        for (int i = 0; i < 17; ++i) f << pad;
        f << ']';
    }
    expect_error([&] { load_pipeline((dir_ / "huge.json").string()); }, "more than the limit of 16777216 bytes");
    // The header's pixels are checked before an image file is read whole.
    set_max_image_pixels(1000);
    EXPECT_EQ(max_image_file_bytes(), 1000u * 8 + (16u << 20));
    set_max_image_pixels(0);
    EXPECT_EQ(max_image_file_bytes(), UINT64_MAX);
}

TEST_F(Limits, PngBombFailsFastWithSmallMemory) {
    const std::string bomb = png_bomb(50000);
    // Past the decoder's own "cannot fit in N bytes" bound (deflate's 1032:1 at most).
    EXPECT_GT(bomb.size(), 2'300'000u);
    EXPECT_LT(bomb.size(), 3'000'000u);
    write(dir_ / "bomb.png", bomb);
    const long rss_before = max_rss_kb();
    expect_error([&] { read_image(dir_ / "bomb.png"); },
                 "bomb.png: PNG of 50000x50000 has 2500000000 pixels, more than the limit of 178956970", 2);
    expect_error([&] { decode_png(bomb, "mem.png"); }, "more than the limit", 2);
    // The 2.5 GB of pixels were never allocated (the file itself is read: a few MB).
    EXPECT_LT(max_rss_kb() - rss_before, 64 * 1024);
}

TEST_F(Limits, JpegAndNpyHeadersAreCheckedBeforeAllocating) {
    std::string jpeg = encode_jpeg(image(3, 16, 16), 90);
    const std::size_t sof = jpeg.find("\xff\xc0");
    ASSERT_NE(sof, std::string::npos);
    for (std::size_t k : {sof + 5, sof + 7}) {  // 65000 x 65000
        jpeg[k] = static_cast<char>(0xFD);
        jpeg[k + 1] = static_cast<char>(0xE8);
    }
    write(dir_ / "bomb.jpg", jpeg);
    expect_error([&] { read_image(dir_ / "bomb.jpg"); }, "JPEG of 65000x65000 has 4225000000 pixels, more than the limit");

    // A .npy header declaring 20000 x 20000 x 3 without the data: the limit speaks before
    // the file is read whole (a truncated file would say "truncated" otherwise).
    std::string npy = encode_npy(image(3, 2, 2));
    const std::size_t shape = npy.find("(1, 3, 2, 2)");
    ASSERT_NE(shape, std::string::npos);
    npy.replace(shape, 12, "(1, 3, 20000, 20000)");
    write(dir_ / "bomb.npy", npy);
    expect_error([&] { read_image(dir_ / "bomb.npy"); },
                 "bomb.npy: array of shape (1, 3, 20000, 20000) has 400000000 pixels, more than the limit");
    set_max_image_pixels(0);
    expect_error([&] { read_image(dir_ / "bomb.npy"); }, "truncated .npy data");
}

TEST_F(Limits, PixelLimitIsSettableAndCountsPixelsNotChannels) {
    write(dir_ / "a.png", encode_png(image(3, 20, 30)));
    write(dir_ / "a.jpg", encode_jpeg(image(3, 20, 30), 90));
    write(dir_ / "a.npy", encode_npy(image(3, 20, 30)));
    EXPECT_EQ(max_image_pixels(), kDefaultMaxImagePixels);
    set_max_image_pixels(600);  // exactly 20 x 30: allowed
    for (const char* name : {"a.png", "a.jpg", "a.npy"}) EXPECT_EQ(read_image(dir_ / name).dim(1), 3) << name;
    set_max_image_pixels(599);
    for (const char* name : {"a.png", "a.jpg", "a.npy"})
        expect_error([&] { read_image(dir_ / name); }, "has 600 pixels, more than the limit of 599");
    // A grid's pixels: (N, H, W, 2) counts N x H x W.
    write(dir_ / "g.npy", encode_npy(Tensor::zeros(DType::Float32, {1, 20, 30, 2})));
    expect_error([&] { read_npy(dir_ / "g.npy"); }, "has 600 pixels");
    set_max_image_pixels(0);  // no limit
    EXPECT_EQ(read_image(dir_ / "a.png").dim(2), 20);

    // The environment variable, when no override is set.
    set_max_image_pixels(-1);
    ::setenv("TOROID_MAX_IMAGE_PIXELS", "599", 1);
    EXPECT_EQ(max_image_pixels(), 599);
    expect_error([&] { read_image(dir_ / "a.jpg"); }, "more than the limit of 599");
    ::setenv("TOROID_MAX_IMAGE_PIXELS", "0", 1);
    EXPECT_EQ(read_image(dir_ / "a.jpg").dim(3), 30);
    ::setenv("TOROID_MAX_IMAGE_PIXELS", "lots", 1);
    expect_error([] { max_image_pixels(); }, "TOROID_MAX_IMAGE_PIXELS must be a whole number");
    ::unsetenv("TOROID_MAX_IMAGE_PIXELS");
    EXPECT_EQ(max_image_pixels(), kDefaultMaxImagePixels);
}

TEST_F(Limits, GridPathsStayInThePipelinesFolder) {
    const fs::path base = dir_ / "pipes";
    fs::create_directories(base / "sub");
    // A file outside with the wrong shape: reading it would say "must have shape".
    write(dir_ / "secret.npy", encode_npy(Tensor::zeros(DType::Float32, {1, 4, 5, 3})));
    write(base / "grid.npy", encode_npy(Tensor::zeros(DType::Float32, {1, 4, 5, 2})));
    fs::create_symlink(dir_ / "secret.npy", base / "link.npy");
    fs::create_directory_symlink(dir_, base / "up");

    auto parse = [&](const std::string& grid, bool allow) {
        return parse_pipeline(R"([{"op": "grid_sample", "grid": ")" + grid + R"("}])", base, allow);
    };
    for (const std::string& bad : {(dir_ / "secret.npy").string(), std::string("../secret.npy"),
                                  std::string("sub/../../secret.npy"), std::string("link.npy"),
                                  std::string("up/secret.npy"), std::string("/dev/zero")}) {
        SCOPED_TRACE(bad);
        const std::string msg = expect_error([&] { parse(bad, false); }, "a pipeline may name files in its folder only");
        EXPECT_NE(msg.find("op 0 (grid_sample)"), std::string::npos) << msg;
        EXPECT_NE(msg.find("--allow-paths"), std::string::npos) << msg;
        EXPECT_EQ(msg.find("shape"), std::string::npos) << msg;  // nothing of the file's content
        EXPECT_EQ(msg.find("character device"), std::string::npos) << msg;
    }
    // Inside the folder, however written.
    for (const char* good : {"grid.npy", "./grid.npy", "sub/../grid.npy"})
        EXPECT_EQ(parse(good, false).ops.size(), 1u) << good;
    // allow_paths: any path, read as before (and then checked as a grid).
    expect_error([&] { parse("../secret.npy", true); }, "must have shape (N, H, W, 2)");
    expect_error([&] { parse("/dev/zero", true); }, "character device");
    EXPECT_EQ(parse((base / "grid.npy").string(), true).ops.size(), 1u);

    // The policy on its own.
    EXPECT_EQ(resolve_pipeline_path("grid.npy", base, false, "x"), base / "grid.npy");
    expect_error([&] { resolve_pipeline_path("", base, false, "x"); }, "x: the path is empty");
    EXPECT_TRUE(is_within(base / "sub" / ".." / "grid.npy", base));
    EXPECT_FALSE(is_within(base / "up" / "x", base));
    EXPECT_FALSE(is_within(dir_ / "pipes2", base));  // a name prefix is not a folder prefix
}

// A child process writes a large file over and over through write_file_atomic and is
// interrupted mid-write: with the handler, its temporary file is gone and it died of the
// signal.
TEST_F(Limits, InterruptedWriteLeavesNoTemporaryFile) {
    for (int sig : {SIGINT, SIGTERM}) {
        SCOPED_TRACE(sig);
        const fs::path target = dir_ / "out.npy";
        const pid_t child = ::fork();
        ASSERT_GE(child, 0);
        if (child == 0) {
            remove_temp_files_on_signal();
            const std::string big(64 << 20, 'x');
            for (;;) write_file_atomic(target, big);
        }
        // Wait for the first complete file, then a bit into later writes.
        for (int i = 0; i < 2000 && !fs::exists(target); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        std::this_thread::sleep_for(std::chrono::milliseconds(150));
        ::kill(child, sig);
        int status = 0;
        ASSERT_EQ(::waitpid(child, &status, 0), child);
        EXPECT_TRUE(WIFSIGNALED(status));
        if (WIFSIGNALED(status)) {
            EXPECT_EQ(WTERMSIG(status), sig);
        }
        for (const auto& e : fs::directory_iterator(dir_))
            EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
        EXPECT_EQ(fs::file_size(target), std::size_t{64} << 20);  // the last complete write
        fs::remove(target);
    }
}

}  // namespace
}  // namespace toroid::io
