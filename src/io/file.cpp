// Whole-file reads with messages a user can act on, atomic writes (a uniquely named
// temporary file beside the target, renamed over it; removed on any failure), and the
// image readers / writers chosen by file extension.
#include "io/file.h"

#include "core/error.h"
#include "io/jpeg.h"
#include "io/npy.h"
#include "io/png.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <random>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace toroid::io {
namespace {

namespace fs = std::filesystem;

// Closes a file descriptor on every path out of a scope.
class Fd {
public:
    explicit Fd(int fd) : fd_(fd) {}
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd() {
        if (fd_ >= 0) ::close(fd_);
    }
    int get() const { return fd_; }
    // Closes now and reports whether close succeeded (it can report a failed write).
    bool close() {
        int fd = fd_;
        fd_ = -1;
        return ::close(fd) == 0;
    }

private:
    int fd_;
};

std::string errno_text(int err) { return std::strerror(err); }

std::string lower_extension(const fs::path& path) {
    std::string ext = path.extension().string();
    for (char& ch : ext)
        if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
    return ext;
}

// ".NAME.tmp.PID.RANDOM": hidden, unique across processes and across threads of this one.
fs::path temp_path_for(const fs::path& target) {
    static std::atomic<std::uint64_t> counter{std::random_device{}()};
    std::uint64_t token = counter.fetch_add(0x9e3779b97f4a7c15ull) ^ static_cast<std::uint64_t>(::getpid()) << 32;
    std::string name = fmt::format(".{}.tmp.{}.{:016x}", target.filename().string(), ::getpid(), token);
    return target.parent_path() / name;
}

[[noreturn]] void remove_and_fail(const fs::path& temp, const std::string& name, int err) {
    ::unlink(temp.c_str());
    fail("cannot write '{}': {}", name, errno_text(err));
}

}  // namespace

std::string read_file(const std::filesystem::path& path) {
    const std::string name = printable(path.string());
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) {
        int err = errno;
        if (err == ENOENT) fail("cannot read '{}': file does not exist", name);
        fail("cannot read '{}': {}", name, errno_text(err));
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) fail("cannot read '{}': {}", name, errno_text(errno));
    if (S_ISDIR(st.st_mode)) fail("cannot read '{}': it is a directory, not a file", name);

    std::string bytes;
    if (S_ISREG(st.st_mode) && st.st_size > 0) bytes.reserve(static_cast<std::size_t>(st.st_size));
    char buffer[1 << 16];
    for (;;) {
        ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
        if (n == 0) break;
        if (n < 0) {
            if (errno == EINTR) continue;
            fail("cannot read '{}': {}", name, errno_text(errno));
        }
        bytes.append(buffer, static_cast<std::size_t>(n));
    }
    return bytes;
}

void write_file_atomic(const std::filesystem::path& path, const std::string& bytes) {
    const std::string name = printable(path.string());
    if (path.filename().empty()) fail("cannot write '{}': the path names a folder, not a file", name);
    fs::path dir = path.parent_path();
    std::error_code ec;
    if (!dir.empty() && !fs::is_directory(dir, ec)) {
        if (fs::exists(dir, ec)) fail("output folder '{}' is not a folder", printable(dir.string()));
        fail("output folder '{}' does not exist", printable(dir.string()));
    }
    if (fs::is_directory(path, ec)) fail("cannot write '{}': it is a directory", name);

    fs::path temp = temp_path_for(path);
    Fd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666));
    if (fd.get() < 0) fail("cannot write '{}': {}", name, errno_text(errno));

    // From here on, any failure removes the temporary file before reporting.
    const char* p = bytes.data();
    std::size_t left = bytes.size();
    while (left > 0) {
        ssize_t n = ::write(fd.get(), p, left);
        if (n < 0) {
            if (errno == EINTR) continue;
            int err = errno;
            fd.close();
            remove_and_fail(temp, name, err);
        }
        p += n;
        left -= static_cast<std::size_t>(n);
    }
    if (!fd.close()) remove_and_fail(temp, name, errno);
    if (::rename(temp.c_str(), path.c_str()) != 0) remove_and_fail(temp, name, errno);
}

std::optional<ImageFormat> image_format_of(const std::filesystem::path& path) {
    std::string ext = lower_extension(path);
    if (ext == ".npy") return ImageFormat::Npy;
    if (ext == ".png") return ImageFormat::Png;
    if (ext == ".jpg" || ext == ".jpeg") return ImageFormat::Jpeg;
    return std::nullopt;
}

ImageFormat parse_image_format(std::string_view name) {
    if (name == "npy") return ImageFormat::Npy;
    if (name == "png") return ImageFormat::Png;
    if (name == "jpg" || name == "jpeg") return ImageFormat::Jpeg;
    fail("unknown image format '{}' (use jpg, png or npy)", printable(name, 40));
}

std::string_view image_format_extension(ImageFormat f) {
    switch (f) {
        case ImageFormat::Npy: return ".npy";
        case ImageFormat::Png: return ".png";
        case ImageFormat::Jpeg: return ".jpg";
    }
    return ".npy";
}

Tensor read_image(const std::filesystem::path& path) {
    const std::optional<ImageFormat> f = image_format_of(path);
    if (f == ImageFormat::Npy) return read_npy_image(path);
    if (f == ImageFormat::Png) return read_png(path);
    if (f == ImageFormat::Jpeg) return read_jpeg(path);
    fail("cannot read '{}': unsupported extension '{}' (toroid reads .npy, .png, .jpg and .jpeg)",
         printable(path.string()), printable(lower_extension(path), 20));
}

std::string encode_image(const Tensor& t, ImageFormat format, int jpeg_quality) {
    switch (format) {
        case ImageFormat::Npy: return encode_npy(t);
        case ImageFormat::Png: return encode_png(t);
        case ImageFormat::Jpeg: return encode_jpeg(t, jpeg_quality);
    }
    fail("internal: unknown image format");
}

void write_image(const std::filesystem::path& path, const Tensor& t, const WriteOptions& options) {
    std::optional<ImageFormat> format = options.format ? options.format : image_format_of(path);
    if (!format)
        fail("cannot write '{}': unsupported extension '{}' (toroid writes .npy, .png, .jpg and .jpeg)",
             printable(path.string()), printable(lower_extension(path), 20));
    std::string bytes;
    try {
        bytes = encode_image(t, *format, options.jpeg_quality);
    } catch (const Error& e) {
        fail("cannot write '{}': {}", printable(path.string()), e.what());
    }
    write_file_atomic(path, bytes);
}

}  // namespace toroid::io
