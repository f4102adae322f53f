// The disk cache and the JIT when things go wrong around them: a lock held by a stopped
// process, an exit while a background build waits for a lock, folders and lock files that
// cannot be used, stale work folders of dead processes, the size cap's LRU eviction, a hung
// compiler, the sources an entry keeps, entries others could have written, and the count of
// background compiles.
#include "runtime/disk_cache.h"
#include "runtime/jit.h"

#include "core/error.h"
#include "core/interrupt.h"
#include "engine/engine.h"
#include "toroid/toroid.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace toroid {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

const std::string kAnswer = "extern \"C\" int answer(int x) { return x + 22; }\n";

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

int count_prefixed(const fs::path& dir, const std::string& prefix) {
    int n = 0;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->path().filename().string().rfind(prefix, 0) == 0) ++n;
    return n;
}

// Whether `pid` still runs (a zombie waiting for its reaper counts as gone).
bool running(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (stat.empty()) return false;
    const auto paren = stat.rfind(')');
    return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z' && stat[paren + 2] != 'X';
}

// A child process that takes an flock of `path` and stops itself (SIGSTOP) while holding it.
pid_t stopped_lock_holder(const fs::path& path) {
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int fd = ::open(path.c_str(), O_RDWR | O_CREAT, 0644);
        if (fd < 0 || ::flock(fd, LOCK_EX) != 0) ::_exit(1);
        ::raise(SIGSTOP);
        ::_exit(0);
    }
    // Until it has stopped, holding the lock.
    int status = 0;
    EXPECT_EQ(::waitpid(pid, &status, WUNTRACED), pid);
    EXPECT_TRUE(WIFSTOPPED(status)) << status;
    return pid;
}

void end_child(pid_t pid) {
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
}

class CacheRobustTest : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = fs::path(::testing::TempDir()) /
                ("toroid_robust_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
                 std::to_string(::getpid()));
        fs::remove_all(root_);
        fs::create_directories(root_);
        cache_ = root_ / "cache";
    }
    void TearDown() override {
        remove_private_builds();
        EXPECT_EQ(count_prefixed(cache_, ".tmp-"), 0);
        EXPECT_EQ(count_prefixed(cache_, ".trash-"), 0);
        std::error_code ec;
        fs::permissions(root_, fs::perms::owner_all, fs::perm_options::add, ec);
        fs::remove_all(root_, ec);
    }

    CacheOptions options(double lock_timeout = 30) const {
        CacheOptions o;
        o.lock_timeout = lock_timeout;
        return o;
    }

    // A recipe writing `payload` to data.bin and a source file the entry drops.
    static DiskCache::Recipe recipe(const std::string& key, const std::string& payload, int build_ms = 0) {
        DiskCache::Recipe r;
        r.key = key;
        r.checked_files = {"data.bin"};
        r.source_files = {"source.txt"};
        r.build = [payload, build_ms](const fs::path& dir) -> nlohmann::json {
            if (build_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(build_ms));
            write_file_bytes(dir / "source.txt", "source of " + payload);
            write_file_bytes(dir / "data.bin", payload);
            return nullptr;
        };
        return r;
    }

    CompilerConfig config(const fs::path& cache_dir) const {
        CompilerConfig c;
        c.cxx = TOROID_CXX_COMPILER;
        c.optimization_flags = {"-O0"};
        c.cache_dir = cache_dir;
        return c;
    }

    // A compiler script: `body` runs for compiles, --version asks the real compiler.
    fs::path compiler_script(const std::string& body) const {
        const fs::path path = root_ / "cxx.sh";
        std::ofstream(path) << "#!/bin/sh\n"
                               "[ \"$1\" = --version ] && exec '" TOROID_CXX_COMPILER "' --version\n"
                            << body << "\n";
        ::chmod(path.c_str(), 0755);
        return path;
    }

    fs::path root_, cache_;
};

// ---- locks ------------------------------------------------------------------------------------

// A process stopped while it holds a key's lock delays a builder by the lock timeout only:
// the build is then made privately, serves this process, and is not installed.
TEST_F(CacheRobustTest, LockHeldByAStoppedProcessTimesOut) {
    fs::create_directories(cache_);
    const std::string key = cache_key("test", {"stopped"});
    const pid_t holder = stopped_lock_holder(cache_ / (key + ".lock"));
    DiskCache cache(cache_, options(0.5));
    const auto start = Clock::now();
    testing::internal::CaptureStderr();
    DiskCache::Result r = cache.get(recipe(key, "payload"));
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_LT(seconds_since(start), 5.0);
    EXPECT_TRUE(r.built);
    EXPECT_TRUE(r.is_private);
    EXPECT_EQ(read_file_bytes(r.directory / "data.bin"), "payload");
    EXPECT_FALSE(fs::exists(cache.entry(key)));
    EXPECT_NE(err.find("held by another process"), std::string::npos) << err;
    EXPECT_NE(err.find("building privately"), std::string::npos) << err;

    // The same process asks again: its private build answers at once, without a wait.
    const auto again = Clock::now();
    DiskCache::Result r2 = DiskCache(cache_, options(0.5)).get(recipe(key, "payload"));
    EXPECT_LT(seconds_since(again), 0.4);
    EXPECT_FALSE(r2.built);
    EXPECT_EQ(r2.directory, r.directory);
    end_child(holder);
    remove_private_builds();
    EXPECT_FALSE(fs::exists(r.directory));
}

// When the holder lets go while the private build runs, the build is installed after all.
TEST_F(CacheRobustTest, PrivateBuildIsInstalledWhenTheLockFreesUp) {
    fs::create_directories(cache_);
    const std::string key = cache_key("test", {"frees"});
    const int fd = ::open((cache_ / (key + ".lock")).c_str(), O_RDWR | O_CREAT, 0644);
    ASSERT_EQ(::flock(fd, LOCK_EX), 0);
    std::thread release([fd] {
        std::this_thread::sleep_for(std::chrono::milliseconds(700));
        ::flock(fd, LOCK_UN);
        ::close(fd);
    });
    DiskCache cache(cache_, options(0.3));
    testing::internal::CaptureStderr();
    DiskCache::Result r = cache.get(recipe(key, "late", 1000));
    testing::internal::GetCapturedStderr();
    release.join();
    EXPECT_TRUE(r.built);
    EXPECT_FALSE(r.is_private);
    EXPECT_EQ(r.directory, cache.entry(key));
    EXPECT_EQ(read_file_bytes(cache.entry(key) / "data.bin"), "late");
}

// The JIT with a stopped lock holder on its key: the load compiles privately within the
// timeout and the module works.
TEST_F(CacheRobustTest, JitLoadsPastAStoppedLockHolder) {
    CompilerConfig c = config(cache_);
    c.cache_options.lock_timeout = 0.5;
    JitCompiler probe(c);
    const std::string key = probe.key(kAnswer);
    fs::create_directories(cache_);
    const pid_t holder = stopped_lock_holder(cache_ / (key + ".lock"));
    const auto start = Clock::now();
    testing::internal::CaptureStderr();
    auto module = JitCompiler(c).load(kAnswer, "answer");
    testing::internal::GetCapturedStderr();
    EXPECT_LT(seconds_since(start), 30.0);
    EXPECT_EQ(module->lookup<int (*)(int)>("answer")(20), 42);
    EXPECT_FALSE(fs::exists(cache_ / key));
    end_child(holder);
}

// A process exiting while its background build waits for another process's lock does not
// wait for it: exit cancels the build, and its work folder goes with it.
TEST_F(CacheRobustTest, ExitDoesNotWaitForALock) {
    const std::string kFull = "extern \"C\" int tier() { return 2; }\n";
    const std::string kQuick = "extern \"C\" int tier() { return 1; }\n";
    CompilerConfig c = config(cache_);
    c.cache_options.lock_timeout = 60;
    const std::string full_key = JitCompiler(c).key(kFull);
    fs::create_directories(cache_);
    const int fd = ::open((cache_ / (full_key + ".lock")).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    ASSERT_EQ(::flock(fd, LOCK_EX), 0);
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        ::close(ready[0]);
        int code = 3;
        try {
            JitCompiler jit(c);
            auto m = jit.load_tiered(kFull, kQuick, "tier");
            code = m->entry_as<int (*)()>()() == 1 && !m->settled() ? 0 : 1;
            std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the full build waits for the lock
        } catch (...) {
            code = 2;
        }
        (void)!::write(ready[1], "x", 1);
        std::exit(code);  // atexit: the waiting background build is cancelled
    }
    ::close(ready[1]);
    char x = 0;
    ASSERT_EQ(::read(ready[0], &x, 1), 1);
    ::close(ready[0]);
    const auto exiting = Clock::now();
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_LT(seconds_since(exiting), 5.0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    ::flock(fd, LOCK_UN);
    ::close(fd);
    EXPECT_FALSE(fs::exists(cache_ / full_key));
    EXPECT_EQ(count_prefixed(cache_, ".tmp-"), 0);
}

// ---- folders that cannot be used --------------------------------------------------------------

// A cache folder under a regular file cannot be made (as a read-only one cannot be written,
// even by root): builds are private, with one warning for all of them.
TEST_F(CacheRobustTest, UnusableCacheFolderBuildsPrivately) {
    write_file_bytes(root_ / "file", "not a folder");
    const fs::path bad = root_ / "file" / "cache";
    DiskCache cache(bad, options());
    testing::internal::CaptureStderr();
    DiskCache::Result a = cache.get(recipe(cache_key("t", {"a"}), "a"));
    DiskCache::Result b = cache.get(recipe(cache_key("t", {"b"}), "b"));
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_TRUE(a.is_private && b.is_private);
    EXPECT_EQ(read_file_bytes(a.directory / "data.bin"), "a");
    EXPECT_EQ(read_file_bytes(b.directory / "data.bin"), "b");
    std::size_t warnings = 0;
    for (std::size_t at = err.find("toroid: warning:"); at != std::string::npos; at = err.find("toroid: warning:", at + 1))
        ++warnings;
    EXPECT_EQ(warnings, 1u) << err;
    EXPECT_NE(err.find("cannot use the cache folder"), std::string::npos) << err;

    // And the JIT works there too.
    testing::internal::CaptureStderr();
    auto module = JitCompiler(config(bad)).load(kAnswer, "answer");
    testing::internal::GetCapturedStderr();
    EXPECT_EQ(module->lookup<int (*)(int)>("answer")(1), 23);
    remove_private_builds();
    EXPECT_FALSE(fs::exists(a.directory));
}

// A read-only cache folder (where permissions apply: not as root).
TEST_F(CacheRobustTest, ReadOnlyCacheFolderBuildsPrivately) {
    if (::geteuid() == 0) GTEST_SKIP() << "root writes to read-only folders";
    fs::create_directories(cache_);
    fs::permissions(cache_, fs::perms::owner_read | fs::perms::owner_exec);
    testing::internal::CaptureStderr();
    DiskCache::Result r = DiskCache(cache_, options()).get(recipe(cache_key("t", {"ro"}), "ro"));
    const std::string err = testing::internal::GetCapturedStderr();
    fs::permissions(cache_, fs::perms::owner_all);
    EXPECT_TRUE(r.is_private);
    EXPECT_EQ(read_file_bytes(r.directory / "data.bin"), "ro");
    EXPECT_NE(err.find("building privately"), std::string::npos) << err;
}

// A lock that is a folder, or a FIFO, is not waited on or failed on: private builds.
TEST_F(CacheRobustTest, LockThatIsNotARegularFileBuildsPrivately) {
    fs::create_directories(cache_);
    const std::string k1 = cache_key("t", {"dir"}), k2 = cache_key("t", {"fifo"});
    fs::create_directory(cache_ / (k1 + ".lock"));
    ASSERT_EQ(::mkfifo((cache_ / (k2 + ".lock")).c_str(), 0644), 0);
    DiskCache cache(cache_, options());
    testing::internal::CaptureStderr();
    const auto start = Clock::now();
    DiskCache::Result a = cache.get(recipe(k1, "a"));
    DiskCache::Result b = cache.get(recipe(k2, "b"));
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_LT(seconds_since(start), 5.0);
    EXPECT_TRUE(a.is_private && b.is_private);
    EXPECT_EQ(read_file_bytes(b.directory / "data.bin"), "b");
    EXPECT_NE(err.find("cannot use the cache lock"), std::string::npos) << err;
    EXPECT_FALSE(fs::exists(cache.entry(k1)));
}

// ---- stale work folders -----------------------------------------------------------------------

std::string host_tag() {
    char buffer[256] = {};
    ::gethostname(buffer, sizeof buffer - 1);
    std::string out;
    for (const char* c = buffer; *c != '\0' && out.size() < 64; ++c)
        out += std::isalnum(static_cast<unsigned char>(*c)) || *c == '.' || *c == '_' ? *c : '_';
    return out.empty() ? "unknown" : out;
}

// The first build of a process removes the .tmp-/.trash- folders of processes that are gone
// once they are over a minute old; a live owner's folders, and fresh ones, stay.
TEST_F(CacheRobustTest, StaleWorkFoldersAreRemoved) {
    fs::create_directories(cache_);
    const pid_t dead = ::fork();
    if (dead == 0) ::_exit(0);
    ASSERT_EQ(::waitpid(dead, nullptr, 0), dead);
    const std::string host = host_tag();
    const std::string hex = "0123456789abcdef";
    auto make = [&](const std::string& name, std::chrono::seconds age) {
        fs::create_directories(cache_ / name / "sub");
        write_file_bytes(cache_ / name / "sub" / "f", "x");
        fs::last_write_time(cache_ / name, fs::file_time_type::clock::now() - age);
        return cache_ / name;
    };
    using std::chrono::seconds;
    const fs::path dead_tmp = make(".tmp-" + hex + "-" + std::to_string(dead) + ".0-" + host, seconds(120));
    const fs::path dead_trash = make(".trash-" + hex + "-" + std::to_string(dead) + ".0-" + host, seconds(120));
    const fs::path dead_fresh = make(".tmp-" + hex + "-" + std::to_string(dead) + ".1-" + host, seconds(5));
    const fs::path live = make(".tmp-" + hex + "-" + std::to_string(::getppid()) + ".0-" + host, seconds(120));
    // The parent's pid, but another start time: the pid was reused, the owner is gone.
    const fs::path reused = make(".tmp-" + hex + "-" + std::to_string(::getppid()) + ".1-" + host, seconds(120));
    const fs::path legacy = make(".tmp-" + hex.substr(0, 8), seconds(7200));
    const fs::path other_host = make(".tmp-" + hex + "-" + std::to_string(dead) + ".0-another-host", seconds(120));

    DiskCache(cache_, options()).get(recipe(cache_key("t", {"x"}), "x"));
    EXPECT_FALSE(fs::exists(dead_tmp));
    EXPECT_FALSE(fs::exists(dead_trash));
    EXPECT_FALSE(fs::exists(legacy));
    EXPECT_TRUE(fs::exists(dead_fresh));
    EXPECT_TRUE(fs::exists(live));
    EXPECT_TRUE(fs::exists(other_host));
    if (::getppid() != 1) {  // init's own start time is the boot's: a "reused" 1 may match
        EXPECT_FALSE(fs::exists(reused));
    }
    for (const fs::path& p : {dead_fresh, live, other_host, reused}) fs::remove_all(p);
}

// ---- size cap ----------------------------------------------------------------------------------

std::uint64_t entries_bytes(const fs::path& root) {
    std::uint64_t total = 0;
    for (const auto& e : fs::directory_iterator(root)) {
        if (!e.is_directory() || e.path().filename().string()[0] == '.') continue;
        for (const auto& f : fs::recursive_directory_iterator(e.path()))
            if (f.is_regular_file()) total += f.file_size();
    }
    return total;
}

// Past the cap, the least recently used entries go (a hit counts as a use); entries this
// process has in use stay.
TEST_F(CacheRobustTest, EvictionKeepsTheCacheUnderItsCap) {
    CacheOptions o = options();
    o.max_bytes = 40000;
    DiskCache cache(cache_, o);
    const std::string payload(10000, 'p');
    std::vector<std::string> keys;
    for (int i = 0; i < 8; ++i) keys.push_back(cache_key("t", {std::to_string(i)}));
    auto build = [&](int i) {
        cache.get(recipe(keys[i], payload));
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // distinct stamps
    };
    build(0);
    build(1);
    build(2);
    EXPECT_TRUE(fs::exists(cache.entry(keys[0])));
    EXPECT_FALSE(cache.get(recipe(keys[0], payload)).built);  // a hit: 0 is now the newest
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    build(3);  // over the cap: 1, the least recently used, goes
    EXPECT_TRUE(fs::exists(cache.entry(keys[0])));
    EXPECT_FALSE(fs::exists(cache.entry(keys[1])));
    EXPECT_FALSE(fs::exists(cache_ / (keys[1] + ".lock")));
    EXPECT_TRUE(fs::exists(cache.entry(keys[2])));
    EXPECT_TRUE(fs::exists(cache.entry(keys[3])));
    EXPECT_LE(entries_bytes(cache_), o.max_bytes);

    mark_entry_in_use(cache.entry(keys[2]));  // the oldest now, but loaded
    for (int i = 4; i < 8; ++i) {
        build(i);
        EXPECT_LE(entries_bytes(cache_), o.max_bytes) << i;
    }
    EXPECT_TRUE(fs::exists(cache.entry(keys[2])));
    EXPECT_TRUE(fs::exists(cache.entry(keys[7])));
    EXPECT_FALSE(fs::exists(cache.entry(keys[0])));
    unmark_entry_in_use(cache.entry(keys[2]));
    EXPECT_LE(cache.evict_to(12000), 12000u);
    EXPECT_TRUE(fs::exists(cache.entry(keys[7])));
    EXPECT_FALSE(fs::exists(cache.entry(keys[2])));
}

// A long-lived process loads more modules than the cap holds: their entries go too, the
// least recently used first, once the entries of no loaded module are gone.
TEST_F(CacheRobustTest, EvictionKeepsTheCapWhenEveryEntryIsLoaded) {
    CacheOptions o = options();
    o.max_bytes = 40000;
    DiskCache cache(cache_, o);
    const std::string payload(10000, 'p');
    std::vector<std::string> keys;
    for (int i = 0; i < 8; ++i) {
        keys.push_back(cache_key("loaded", {std::to_string(i)}));
        DiskCache::Recipe r = recipe(keys.back(), payload);
        r.open = [](const fs::path& dir) { mark_entry_in_use(dir); };  // loaded as the JIT loads it
        cache.get(r);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // distinct stamps
        EXPECT_LE(entries_bytes(cache_), o.max_bytes) << i;
    }
    EXPECT_FALSE(fs::exists(cache.entry(keys[0])));
    EXPECT_TRUE(fs::exists(cache.entry(keys[7])));
    for (const std::string& k : keys) unmark_entry_in_use(cache.entry(k));
}

TEST(CacheSizes, Parse) {
    EXPECT_EQ(parse_byte_size("2G", "X"), std::uint64_t{2} << 30);
    EXPECT_EQ(parse_byte_size("500m", "X"), std::uint64_t{500} << 20);
    EXPECT_EQ(parse_byte_size("64KiB", "X"), std::uint64_t{64} << 10);
    EXPECT_EQ(parse_byte_size("1.5K", "X"), 1536u);
    EXPECT_EQ(parse_byte_size("123456", "X"), 123456u);
    EXPECT_EQ(parse_byte_size("0", "X"), 0u);
    for (const char* bad : {"", "G", "-1G", "2X", "2GG", "abc", "1e30"}) EXPECT_THROW(parse_byte_size(bad, "X"), Error) << bad;
    EXPECT_DOUBLE_EQ(parse_seconds("2.5", "X"), 2.5);
    for (const char* bad : {"", "0", "-3", "soon", "1s", "inf"}) EXPECT_THROW(parse_seconds(bad, "X"), Error) << bad;
}

// ---- compiler timeout --------------------------------------------------------------------------

// A compiler that hangs is killed, with its own children, at the timeout: a clear error in
// bounded time, no process left behind.
TEST_F(CacheRobustTest, HungCompilerTimesOut) {
    const fs::path pid_file = root_ / "child.pid";
    CompilerConfig c = config(cache_);
    c.cxx = compiler_script("sleep 60 &\necho $! > '" + pid_file.string() + "'\nwait\n").string();
    c.compile_timeout = 1;
    const auto start = Clock::now();
    try {
        JitCompiler(c).load(kAnswer, "answer");
        ADD_FAILURE() << "no error";
    } catch (const Error& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find("did not finish within 1 s"), std::string::npos) << message;
        EXPECT_NE(message.find("TOROID_COMPILE_TIMEOUT"), std::string::npos) << message;
    }
    EXPECT_LT(seconds_since(start), 10.0);
    const pid_t child = std::stoi(read_file_bytes(pid_file));
    for (int i = 0; i < 50 && running(child); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_FALSE(running(child)) << "the compiler's child " << child << " outlived the timeout";
}

// A process killed (SIGKILL: no handler runs) while its compiler runs takes the compiler
// and the compiler's own children with it.
TEST_F(CacheRobustTest, CompilerDiesWithItsParent) {
    const fs::path driver_file = root_ / "driver.pid", child_file = root_ / "child.pid";
    CompilerConfig c = config(cache_);
    c.cxx = compiler_script("echo $$ > '" + driver_file.string() + "'\nsleep 60 &\necho $! > '" +
                            child_file.string() + "'\nwait\n")
                .string();
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        try {
            JitCompiler(c).load(kAnswer, "answer");
        } catch (...) {
        }
        ::_exit(0);
    }
    for (int i = 0; i < 500 && read_file_or_empty(child_file).empty(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const pid_t driver = std::stoi(read_file_bytes(driver_file));
    const pid_t child = std::stoi(read_file_bytes(child_file));
    EXPECT_TRUE(running(driver));
    EXPECT_TRUE(running(child));
    ::kill(pid, SIGKILL);
    ASSERT_EQ(::waitpid(pid, nullptr, 0), pid);
    for (int i = 0; i < 250 && (running(driver) || running(child)); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_FALSE(running(driver)) << "the compiler outlived its parent";
    EXPECT_FALSE(running(child)) << "the compiler's child outlived its parent";
    for (const auto& e : fs::directory_iterator(cache_))
        if (e.path().filename().string().rfind(".tmp-", 0) == 0) fs::remove_all(e.path());  // the killed one's
}

TEST_F(CacheRobustTest, HungCompilerVersionTimesOut) {
    const fs::path path = root_ / "hang.sh";
    std::ofstream(path) << "#!/bin/sh\nexec sleep 60\n";
    ::chmod(path.c_str(), 0755);
    CompilerConfig c = config(cache_);
    c.cxx = path.string();
    c.compile_timeout = 0.5;
    const auto start = Clock::now();
    try {
        JitCompiler(c).key(kAnswer);
        ADD_FAILURE() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("--version' did not finish"), std::string::npos) << e.what();
    }
    EXPECT_LT(seconds_since(start), 10.0);
}

// ---- interrupts -------------------------------------------------------------------------------

// Runs `load` on a thread of its own inside an InterruptScope (as a prepare does), calls
// interrupt_prepares() once `started` says the wait has begun; returns the error the load
// ended with and the seconds from the interrupt to its end.
std::pair<std::string, double> interrupted_load(const std::function<void()>& load, const std::function<bool()>& started) {
    std::string error = "no error";
    std::atomic<bool> done{false};
    std::thread t([&] {
        const InterruptScope scope;
        try {
            load();
        } catch (const Error& e) {
            error = e.what();
        }
        done = true;
    });
    for (int i = 0; i < 500 && !started(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_TRUE(started()) << "the load never began its wait";
    EXPECT_FALSE(done.load()) << "the load ended before the interrupt: " << error;
    const auto interrupted = Clock::now();
    interrupt_prepares();
    t.join();
    return {error, seconds_since(interrupted)};
}

// An interrupted prepare does not wait for its compiler: the compiler and its children are
// killed at once, the prepare fails with "interrupted", and nothing is left in the cache.
TEST_F(CacheRobustTest, InterruptKillsTheCompiler) {
    const fs::path pid_file = root_ / "child.pid";
    CompilerConfig c = config(cache_);
    c.cxx = compiler_script("sleep 60 &\necho $! > '" + pid_file.string() + "'\nwait\n").string();
    const auto [error, took] = interrupted_load([&] { JitCompiler(c).load(kAnswer, "answer"); },
                                                [&] { return !read_file_or_empty(pid_file).empty(); });
    EXPECT_EQ(error, "interrupted");
    EXPECT_LT(took, 2.0);
    const pid_t child = std::stoi(read_file_bytes(pid_file));
    for (int i = 0; i < 50 && running(child); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_FALSE(running(child)) << "the compiler's child " << child << " outlived the interrupt";
    EXPECT_EQ(count_prefixed(cache_, ".tmp-"), 0);
    // The next prepare, not interrupted, compiles as usual.
    c.cxx = config(cache_).cxx;
    EXPECT_EQ(JitCompiler(c).load(kAnswer, "answer")->lookup<int (*)(int)>("answer")(20), 42);
}

// Nor for another process's cache lock on its key.
TEST_F(CacheRobustTest, InterruptEndsAWaitForALock) {
    CompilerConfig c = config(cache_);
    c.cache_options.lock_timeout = 60;
    const std::string key = JitCompiler(c).key(kAnswer);
    fs::create_directories(cache_);
    const pid_t holder = stopped_lock_holder(cache_ / (key + ".lock"));
    const auto begun = Clock::now();
    const auto [error, took] = interrupted_load([&] { JitCompiler(c).load(kAnswer, "answer"); },
                                                [&] { return seconds_since(begun) > 0.3; });
    EXPECT_EQ(error, "interrupted");
    EXPECT_LT(took, 2.0);
    EXPECT_FALSE(fs::exists(cache_ / key));
    end_child(holder);
}

TEST(JitTimeoutConfig, FromEnvironment) {
    ::setenv("TOROID_CACHE_DIR", "/tmp/toroid-env-test", 1);
    ::setenv("TOROID_COMPILE_TIMEOUT", "7.5", 1);
    ::setenv("TOROID_LOCK_TIMEOUT", "3", 1);
    ::setenv("TOROID_CACHE_SIZE", "10M", 1);
    CompilerConfig c = CompilerConfig::from_environment();
    EXPECT_DOUBLE_EQ(c.compile_timeout, 7.5);
    EXPECT_DOUBLE_EQ(c.cache_options.lock_timeout, 3);
    EXPECT_EQ(c.cache_options.max_bytes, std::uint64_t{10} << 20);
    ::setenv("TOROID_COMPILE_TIMEOUT", "never", 1);
    try {
        CompilerConfig::from_environment();
        ADD_FAILURE() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("TOROID_COMPILE_TIMEOUT='never'"), std::string::npos) << e.what();
    }
    for (const char* v : {"TOROID_CACHE_DIR", "TOROID_COMPILE_TIMEOUT", "TOROID_LOCK_TIMEOUT", "TOROID_CACHE_SIZE"})
        ::unsetenv(v);
}

// ---- sources -----------------------------------------------------------------------------------

TEST_F(CacheRobustTest, SourcesAreKeptOnlyWhenAsked) {
    auto module = JitCompiler(config(cache_)).load(kAnswer, "answer");
    EXPECT_TRUE(fs::exists(module->directory() / "kernel.so"));
    EXPECT_FALSE(fs::exists(module->directory() / "kernel.cpp"));

    CompilerConfig keep = config(root_ / "kept");
    keep.cache_options.keep_sources = true;
    auto kept = JitCompiler(keep).load(kAnswer, "answer");
    EXPECT_EQ(read_file_bytes(kept->directory() / "kernel.cpp"), kAnswer);

    LoadOptions debug;
    debug.debug_dir = root_ / "debug";
    auto dumped = JitCompiler(config(root_ / "debugged")).load(kAnswer, "answer", debug);
    EXPECT_EQ(read_file_bytes(dumped->directory() / "kernel.cpp"), kAnswer);
    EXPECT_EQ(read_file_bytes(root_ / "debug" / "kernel.cpp"), kAnswer);

    // The disk cache on its own: the recipe's sources stay in failed builds only.
    DiskCache cache(root_ / "plain", options());
    EXPECT_FALSE(fs::exists(cache.get(recipe(cache_key("t", {"s"}), "s")).directory / "source.txt"));
}

// ---- trust -------------------------------------------------------------------------------------

// An entry others may write is not loaded: one of our own is replaced by a fresh build.
TEST_F(CacheRobustTest, WorldWritableEntryIsNotLoaded) {
    auto first = JitCompiler(config(cache_)).load(kAnswer, "answer");
    const fs::path dir = first->directory();
    first.reset();
    fs::permissions(dir / "kernel.so", fs::perms::others_write, fs::perm_options::add);
    CacheOptions o = options();
    DiskCache::Recipe probe;
    probe.key = dir.filename().string();
    probe.checked_files = {"kernel.so"};
    testing::internal::CaptureStderr();
    EXPECT_FALSE(DiskCache(cache_, o).find(probe).has_value());

    JitCompiler jit(config(cache_));
    auto again = jit.load(kAnswer, "answer");
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(jit.stats().compiled, 1);
    EXPECT_EQ(jit.stats().corrupt_entries, 1);
    EXPECT_NE(err.find("writable by others"), std::string::npos) << err;
    EXPECT_EQ(again->lookup<int (*)(int)>("answer")(0), 22);
    const auto perms = fs::status(again->directory() / "kernel.so").permissions();
    EXPECT_EQ(perms & (fs::perms::others_write | fs::perms::group_write), fs::perms::none);
    EXPECT_TRUE(DiskCache(cache_, o).find(probe).has_value());

    // Group-writable: trusted only when its group is named.
    fs::permissions(dir, fs::perms::group_write, fs::perm_options::add);
    EXPECT_FALSE(DiskCache(cache_, o).find(probe).has_value());
    struct stat st {};
    ASSERT_EQ(::stat(dir.c_str(), &st), 0);
    o.group = static_cast<long long>(st.st_gid);
    EXPECT_TRUE(DiskCache(cache_, o).find(probe).has_value());
}

// Someone else's entry (as root: chown to nobody) is neither loaded nor touched: the build
// is private.
TEST_F(CacheRobustTest, ForeignEntryIsLeftAlone) {
    if (::geteuid() != 0) GTEST_SKIP() << "making an entry of another user takes root";
    DiskCache cache(cache_, options());
    const std::string key = cache_key("t", {"foreign"});
    DiskCache::Result first = cache.get(recipe(key, "theirs"));
    ASSERT_EQ(::chown(first.directory.c_str(), 65534, 65534), 0);
    ASSERT_EQ(::chown((first.directory / "data.bin").c_str(), 65534, 65534), 0);
    testing::internal::CaptureStderr();
    DiskCache::Result second = DiskCache(cache_, options()).get(recipe(key, "mine"));
    testing::internal::GetCapturedStderr();
    EXPECT_TRUE(second.is_private);
    EXPECT_EQ(read_file_bytes(second.directory / "data.bin"), "mine");
    EXPECT_EQ(read_file_bytes(cache.entry(key) / "data.bin"), "theirs");
}

// Root-owned files writable by nobody else are trusted where the options say so (installed
// prebuilt folders); otherwise only the user's own are.
TEST(CacheTrust, RootOwnedReadOnlyInstalls) {
    struct stat st {};
    ASSERT_EQ(::lstat("/etc/passwd", &st), 0);
    ASSERT_EQ(st.st_uid, 0u);
    CacheOptions prebuilt;
    prebuilt.trust_root = true;
    EXPECT_TRUE(trusted_path("/etc/passwd", prebuilt));
    if (::geteuid() != 0) {
        EXPECT_FALSE(trusted_path("/etc/passwd", CacheOptions{}));
    }
    EXPECT_FALSE(trusted_path("/tmp", prebuilt));  // writable by all
}

// ---- counts ------------------------------------------------------------------------------------

// Background full builds are counted, apart and in the total.
TEST_F(CacheRobustTest, BackgroundCompilesAreCounted) {
    const std::int64_t before = background_compiles();
    const CacheStats s_before = cache_stats();
    JitCompiler jit(config(cache_));
    auto m = jit.load_tiered("extern \"C\" int f() { return 2; }\n", "extern \"C\" int f() { return 1; }\n", "f");
    m->wait();
    EXPECT_EQ(jit.stats().compiled, 2);
    EXPECT_EQ(jit.stats().background_compiled, 1);
    EXPECT_EQ(background_compiles(), before + 1);
    const CacheStats s_after = cache_stats();
    EXPECT_EQ(s_after.background_compiles, s_before.background_compiles + 1);
    EXPECT_EQ(s_after.compiles, s_before.compiles + 1);  // the quick build is no prepare's here

    // The C API (the library's own counters): the field, within the total.
    toroid_cache_counts counts{};
    ASSERT_EQ(toroid_cache_stats(&counts), TOROID_OK);
    EXPECT_GE(counts.compiles, counts.background_compiles);
    EXPECT_GE(counts.background_compiles, 0);
    // An older caller's struct, without the field, is left alone past its size.
    toroid_cache_counts old{};
    old.struct_size = offsetof(toroid_cache_counts, background_compiles);
    old.background_compiles = -7;
    ASSERT_EQ(toroid_cache_stats(&old), TOROID_OK);
    EXPECT_EQ(old.background_compiles, -7);
}

}  // namespace
}  // namespace toroid
