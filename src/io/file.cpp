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
#include <climits>
#include <csignal>
#include <ctime>
#include <cstdlib>
#include <cstring>
#include <limits>
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
    Fd(Fd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
    Fd& operator=(Fd&&) = delete;
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


// ---- temporary files of writes in progress, for the signal handler ----
//
// A fixed table of slots (no allocation, no locks): a writer claims a free slot (0 -> 1),
// copies the temporary's path in and publishes it (1 -> 2); the handler unlinks the paths
// of published slots. A path too long for a slot, or a write when every slot is taken, is
// not registered (it is still removed on every failure that is not a signal).

constexpr int kTempSlots = 128;
struct TempSlot {
    std::atomic<int> state{0};  // 0 free, 1 being filled, 2 published
    char path[PATH_MAX];
};
TempSlot g_temp_slots[kTempSlots];

// The slot index, or -1 when not registered.
int register_temp(const fs::path& temp) {
    const std::string& p = temp.native();
    if (p.size() >= PATH_MAX) return -1;
    for (int i = 0; i < kTempSlots; ++i) {
        int expected = 0;
        if (!g_temp_slots[i].state.compare_exchange_strong(expected, 1)) continue;
        std::memcpy(g_temp_slots[i].path, p.c_str(), p.size() + 1);
        g_temp_slots[i].state.store(2);
        return i;
    }
    return -1;
}

void unregister_temp(int slot) {
    if (slot >= 0) g_temp_slots[slot].state.store(0);
}

// Unregisters the slot on every path out of write_file_atomic.
struct TempRegistration {
    int slot;
    ~TempRegistration() { unregister_temp(slot); }
};

std::atomic<void (*)()> g_on_signal{nullptr};
// Set by the handler: no write starts a temporary file after it, and one that opened its
// file as the signal came removes it itself.
std::atomic<bool> g_dying{false};

extern "C" void remove_temps_and_reraise(int sig) {
    g_dying.store(true);
    if (void (*also)() = g_on_signal.load()) also();
    // Other threads go on writing until the process ends: a few passes, 10 ms apart, so a
    // temporary another thread published just after the first pass is removed too.
    for (int pass = 0; pass < 3; ++pass) {
        for (TempSlot& slot : g_temp_slots)
            if (slot.state.load() == 2) ::unlink(slot.path);
        struct timespec pause {0, 10 * 1000 * 1000};
        ::nanosleep(&pause, nullptr);
    }
    ::signal(sig, SIG_DFL);
    ::raise(sig);
}

// ---- the pixel limit ----

std::atomic<std::int64_t> g_max_pixels{-1};  // < 0: from the environment

[[noreturn]] void remove_and_fail(const fs::path& temp, const std::string& name, int err) {
    ::unlink(temp.c_str());
    fail("cannot write '{}': {}", name, errno_text(err));
}

// What a file that is not a regular file is, for "cannot read 'x': it is ...".
const char* kind_of(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

// Opens a regular file for reading. The path is checked before it is opened (opening a
// device or FIFO can block or have effects), and the descriptor after (the path may have
// been swapped meanwhile); O_NONBLOCK keeps a FIFO swapped in from blocking the open.
Fd open_regular(const fs::path& path, const std::string& name) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        int err = errno;
        if (err == ENOENT) fail("cannot read '{}': file does not exist", name);
        fail("cannot read '{}': {}", name, errno_text(err));
    }
    if (S_ISDIR(st.st_mode)) fail("cannot read '{}': it is a directory, not a file", name);
    if (!S_ISREG(st.st_mode)) fail("cannot read '{}': it is {}, not a regular file", name, kind_of(st.st_mode));
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
    if (fd.get() < 0) {
        int err = errno;
        if (err == ENOENT) fail("cannot read '{}': file does not exist", name);
        fail("cannot read '{}': {}", name, errno_text(err));
    }
    if (::fstat(fd.get(), &st) != 0) fail("cannot read '{}': {}", name, errno_text(errno));
    if (!S_ISREG(st.st_mode)) fail("cannot read '{}': it is {}, not a regular file", name, kind_of(st.st_mode));
    return fd;
}

}  // namespace

std::string read_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
    const std::string name = printable(path.string());
    Fd fd = open_regular(path, name);
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) fail("cannot read '{}': {}", name, errno_text(errno));
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size > max_bytes)
        fail("cannot read '{}': the file has {} bytes, more than the limit of {} bytes", name, size, max_bytes);

    std::string bytes;
    bytes.reserve(static_cast<std::size_t>(size));
    char buffer[1 << 16];
    for (;;) {
        ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
        if (n == 0) break;
        if (n < 0) {
            if (errno == EINTR) continue;
            fail("cannot read '{}': {}", name, errno_text(errno));
        }
        bytes.append(buffer, static_cast<std::size_t>(n));
        // The file grew while it was read.
        if (bytes.size() > max_bytes)
            fail("cannot read '{}': the file has more than the limit of {} bytes", name, max_bytes);
    }
    return bytes;
}

std::string read_file_head(const std::filesystem::path& path, std::size_t n) {
    const std::string name = printable(path.string());
    Fd fd = open_regular(path, name);
    std::string bytes(n, '\0');
    std::size_t got = 0;
    while (got < n) {
        ssize_t r = ::read(fd.get(), bytes.data() + got, n - got);
        if (r == 0) break;
        if (r < 0) {
            if (errno == EINTR) continue;
            fail("cannot read '{}': {}", name, errno_text(errno));
        }
        got += static_cast<std::size_t>(r);
    }
    bytes.resize(got);
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
    // Registered before it exists: a signal between open and registration would leave it.
    TempRegistration registration{register_temp(temp)};
    if (g_dying.load()) fail("cannot write '{}': interrupted", name);
    Fd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666));
    if (fd.get() < 0) fail("cannot write '{}': {}", name, errno_text(errno));
    if (g_dying.load()) {
        ::unlink(temp.c_str());
        fail("cannot write '{}': interrupted", name);
    }

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

void remove_temp_files_on_signal(void (*also)()) {
    g_on_signal.store(also);
    struct sigaction action {};
    action.sa_handler = remove_temps_and_reraise;
    sigemptyset(&action.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
        struct sigaction old {};
        // A signal the caller's parent set to be ignored (nohup, a shell's background job)
        // stays ignored.
        if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
        ::sigaction(sig, &action, nullptr);
    }
}

std::int64_t max_image_pixels() {
    const std::int64_t set = g_max_pixels.load();
    if (set >= 0) return set;
    const char* env = std::getenv("TOROID_MAX_IMAGE_PIXELS");
    if (env == nullptr || *env == '\0') return kDefaultMaxImagePixels;
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(env, &end, 10);
    if (errno != 0 || end == env || *end != '\0' || v < 0)
        fail("TOROID_MAX_IMAGE_PIXELS must be a whole number of pixels (0: no limit), got '{}'", printable(env, 40));
    return v;
}

void set_max_image_pixels(std::int64_t pixels) { g_max_pixels.store(pixels < 0 ? -1 : pixels); }

void check_image_pixels(std::int64_t pixels, const std::string& what, const std::string& description) {
    const std::int64_t limit = max_image_pixels();
    if (limit > 0 && pixels > limit)
        fail("{}: {} has {} pixels, more than the limit of {} (a decompression bomb?); raise it with --max-pixels "
             "or TOROID_MAX_IMAGE_PIXELS (0: no limit)",
             what, description, pixels, limit);
}

std::uint64_t max_image_file_bytes() {
    const std::int64_t limit = max_image_pixels();
    if (limit == 0 || limit > (std::numeric_limits<std::int64_t>::max() >> 4)) return UINT64_MAX;
    return static_cast<std::uint64_t>(limit) * 8 + (std::uint64_t{16} << 20);
}

std::optional<ImageFormat> image_format_of(const std::filesystem::path& path) {
    std::string ext = lower_extension(path);
    if (ext == ".npy") return ImageFormat::Npy;
    if (ext == ".png") return ImageFormat::Png;
    if (ext == ".jpg" || ext == ".jpeg") return ImageFormat::Jpeg;
    if (ext == ".webp") return ImageFormat::Webp;
    return std::nullopt;
}

ImageFormat parse_image_format(std::string_view name) {
    if (name == "npy") return ImageFormat::Npy;
    if (name == "png") return ImageFormat::Png;
    if (name == "jpg" || name == "jpeg") return ImageFormat::Jpeg;
    if (name == "webp") fail("toroid reads WebP files but does not write them (use png, jpg or npy)");
    fail("unknown image format '{}' (use jpg, png or npy)", printable(name, 40));
}

std::string_view image_format_extension(ImageFormat f) {
    switch (f) {
        case ImageFormat::Npy: return ".npy";
        case ImageFormat::Png: return ".png";
        case ImageFormat::Jpeg: return ".jpg";
        case ImageFormat::Webp: return ".webp";
    }
    return ".npy";
}

ImageFormat result_format(ImageFormat f) { return f == ImageFormat::Webp ? ImageFormat::Png : f; }

Tensor read_image(const std::filesystem::path& path, const DecodeOptions& options) {
    const std::optional<ImageFormat> f = image_format_of(path);
    if (f == ImageFormat::Npy) return read_npy_image(path);
    if (f) return decode_image(read_file(path, max_image_file_bytes()), printable(path.string()), *f, options);
    fail("cannot read '{}': unsupported extension '{}' (toroid reads .npy, .png, .jpg, .jpeg and .webp)",
         printable(path.string()), printable(lower_extension(path), 20));
}

std::string encode_image(const Tensor& t, ImageFormat format, int jpeg_quality) {
    switch (format) {
        case ImageFormat::Npy: return encode_npy(t);
        case ImageFormat::Png: return encode_png(t);
        case ImageFormat::Jpeg: return encode_jpeg(t, jpeg_quality);
        case ImageFormat::Webp: fail("toroid reads WebP files but does not write them (write .png, .jpg or .npy)");
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
