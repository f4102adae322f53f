// The shared disk cache on its own: install and hit, manifest checks, failed builds kept,
// rejected fresh builds, and processes that miss one key at once building it only once.
#include "runtime/disk_cache.h"

#include "core/error.h"
#include "runtime/sha256.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace toroid {
namespace {

namespace fs = std::filesystem;

class DiskCacheTest : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = fs::path(::testing::TempDir()) /
                ("toroid_disk_cache_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) +
                 "_" + std::to_string(::getpid()));
        fs::remove_all(root_);
        marker_ = root_.string() + ".builds";
        fs::remove(marker_);
    }
    void TearDown() override {
        if (fs::exists(root_)) {
            for (const auto& e : fs::directory_iterator(root_)) {
                const std::string name = e.path().filename().string();
                EXPECT_NE(name.rfind(".tmp-", 0), 0u) << name;
                EXPECT_NE(name.rfind(".trash-", 0), 0u) << name;
            }
        }
        fs::remove_all(root_);
        fs::remove(marker_);
    }

    // A recipe writing `payload` to data.bin; each build appends one line to the marker
    // file (O_APPEND, so lines from several processes do not mix).
    DiskCache::Recipe recipe(const std::string& key, const std::string& payload, int build_ms = 0) const {
        DiskCache::Recipe r;
        r.key = key;
        r.checked_files = {"data.bin"};
        std::string marker = marker_;
        r.build = [payload, marker, build_ms](const fs::path& dir) -> nlohmann::json {
            int fd = ::open(marker.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
            std::string line = std::to_string(::getpid()) + "\n";
            EXPECT_EQ(::write(fd, line.data(), line.size()), static_cast<ssize_t>(line.size()));
            ::close(fd);
            // A slow build widens the window in which other processes miss the entry.
            if (build_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(build_ms));
            write_file_bytes(dir / "data.bin", payload);
            return {{"note", "test"}};
        };
        return r;
    }

    int builds() const {
        std::ifstream in(marker_);
        int n = 0;
        for (std::string line; std::getline(in, line);) ++n;
        return n;
    }

    fs::path root_;
    std::string marker_;
};

TEST_F(DiskCacheTest, BuildsThenHits) {
    DiskCache cache(root_);
    auto first = cache.get(recipe("k1", "hello"));
    EXPECT_TRUE(first.built);
    EXPECT_EQ(first.directory, fs::absolute(root_) / "k1");
    EXPECT_EQ(read_file_bytes(first.directory / "data.bin"), "hello");
    auto manifest = nlohmann::json::parse(read_file_bytes(first.directory / "manifest.json"));
    EXPECT_EQ(manifest["key"], "k1");
    EXPECT_EQ(manifest["note"], "test");
    EXPECT_EQ(manifest["data_bin"]["size"], 5);
    EXPECT_EQ(manifest["data_bin"]["sha256"], sha256_hex("hello"));

    auto second = DiskCache(root_).get(recipe("k1", "other"));
    EXPECT_FALSE(second.built);
    EXPECT_EQ(read_file_bytes(second.directory / "data.bin"), "hello");
    EXPECT_EQ(builds(), 1);
}

TEST_F(DiskCacheTest, DamagedEntryIsRebuilt) {
    DiskCache cache(root_);
    auto first = cache.get(recipe("k", "payload"));
    write_file_bytes(first.directory / "data.bin", "payloaX");  // same size, other digest
    auto second = cache.get(recipe("k", "payload"));
    EXPECT_TRUE(second.built);
    EXPECT_EQ(second.corrupt_entries, 1);
    EXPECT_EQ(read_file_bytes(second.directory / "data.bin"), "payload");

    fs::remove(second.directory / "manifest.json");
    auto third = cache.get(recipe("k", "payload"));
    EXPECT_TRUE(third.built);
    EXPECT_EQ(third.corrupt_entries, 1);
    EXPECT_EQ(builds(), 3);
}

TEST_F(DiskCacheTest, FailedBuildIsKept) {
    DiskCache cache(root_);
    DiskCache::Recipe r;
    r.key = "bad";
    r.checked_files = {"data.bin"};
    r.build = [](const fs::path& dir) -> nlohmann::json {
        write_file_bytes(dir / "log.txt", "it broke\n");
        throw BuildFailure{[](const fs::path& kept) { return "build failed, see " + kept.string(); }};
    };
    try {
        cache.get(r);
        FAIL() << "no exception";
    } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()), "build failed, see " + cache.failed("bad").string());
    }
    EXPECT_EQ(read_file_bytes(cache.failed("bad") / "log.txt"), "it broke\n");
    EXPECT_FALSE(fs::exists(cache.entry("bad")));
}

TEST_F(DiskCacheTest, OtherBuildErrorsLeaveNothing) {
    DiskCache cache(root_);
    DiskCache::Recipe r;
    r.key = "boom";
    r.build = [](const fs::path&) -> nlohmann::json { fail("disk full"); };
    EXPECT_THROW(cache.get(r), Error);
    EXPECT_FALSE(fs::exists(cache.entry("boom")));
    EXPECT_FALSE(fs::exists(cache.failed("boom")));
}

TEST_F(DiskCacheTest, RejectedFreshBuildGoesToFailed) {
    DiskCache cache(root_);
    DiskCache::Recipe r = recipe("k", "x");
    r.open = [](const fs::path&) { fail("cannot open it"); };
    try {
        cache.get(r);
        FAIL() << "no exception";
    } catch (const Error& e) {
        std::string message = e.what();
        EXPECT_NE(message.find("cannot open it"), std::string::npos) << message;
        EXPECT_NE(message.find(cache.failed("k").string()), std::string::npos) << message;
    }
    EXPECT_TRUE(fs::exists(cache.failed("k") / "data.bin"));
    EXPECT_FALSE(fs::exists(cache.entry("k")));
}

// A child forked while a build holds its key's lock inherits the lock's descriptor; the
// lock is still given up when the build ends, so the next builder of the key (here, after a
// failed build) does not wait for the child to exit.
TEST_F(DiskCacheTest, AForkedChildDoesNotKeepTheLock) {
    DiskCache cache(root_);
    DiskCache::Recipe failing = recipe("forked", "x", 600);
    failing.build = [inner = failing.build](const fs::path& dir) -> nlohmann::json {
        inner(dir);
        throw BuildFailure{[](const fs::path&) { return std::string("refused"); }};
    };
    int release[2];
    ASSERT_EQ(::pipe(release), 0);
    std::thread builder([&] { EXPECT_THROW(cache.get(failing), Error); });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // inside the build: the lock held
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {  // keeps the inherited descriptors until told to go
        char c = 0;
        (void)!::read(release[0], &c, 1);
        ::_exit(0);
    }
    builder.join();
    auto next = std::async(std::launch::async, [&] { return cache.get(recipe("forked", "y")); });
    EXPECT_EQ(next.wait_for(std::chrono::seconds(10)), std::future_status::ready)
        << "the key stayed locked while the forked child lived";
    const char c = 1;
    (void)!::write(release[1], &c, 1);
    EXPECT_TRUE(next.get().built);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ::close(release[0]);
    ::close(release[1]);
}

TEST_F(DiskCacheTest, KeyIsStableAndSeparatesParts) {
    const std::string k = cache_key("d", {"ab", "c"});
    EXPECT_EQ(k.size(), 32u);
    EXPECT_EQ(k, cache_key("d", {"ab", "c"}));
    EXPECT_NE(k, cache_key("d", {"a", "bc"}));
    EXPECT_NE(k, cache_key("e", {"ab", "c"}));
}

TEST_F(DiskCacheTest, ProcessesBuildOneKeyOnce) {
    // Children wait on one pipe so that they all miss the entry at the same moment; the
    // builders' lock must let exactly one build while the others wait and then hit.
    constexpr int kProcesses = 6;
    int go[2];
    ASSERT_EQ(::pipe(go), 0);
    std::vector<pid_t> children;
    for (int i = 0; i < kProcesses; ++i) {
        pid_t pid = ::fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            ::close(go[1]);
            char c;
            while (::read(go[0], &c, 1) > 0) {
            }
            int code = 3;
            try {
                auto result = DiskCache(root_).get(recipe("shared", "same bytes", 300));
                code = read_file_bytes(result.directory / "data.bin") == "same bytes" ? (result.built ? 10 : 11) : 1;
            } catch (...) {
                code = 2;
            }
            ::_exit(code);
        }
        children.push_back(pid);
    }
    ::close(go[0]);
    ::close(go[1]);
    int built = 0, hit = 0;
    for (pid_t pid : children) {
        int status = 0;
        ASSERT_EQ(::waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(WIFEXITED(status)) << status;
        if (WEXITSTATUS(status) == 10) ++built;
        else if (WEXITSTATUS(status) == 11) ++hit;
        else ADD_FAILURE() << "child exit status " << WEXITSTATUS(status);
    }
    EXPECT_EQ(builds(), 1);
    EXPECT_EQ(built, 1);
    EXPECT_EQ(hit, kProcesses - 1);
    EXPECT_TRUE(fs::exists(root_ / "shared.lock"));
}

}  // namespace
}  // namespace toroid
