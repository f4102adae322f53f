// JitCompiler::load_tiered: a quick build serves while the full build compiles in the
// background, then the full one swaps in; failures of either build; the disk cache's entries
// when a process exits or dies mid-build; fork while a build runs. The compiler is a wrapper
// script that sleeps before full builds (-O2) so that the quick build (-O0) is reliably
// first, and that refuses a tier when a marker file says so.
#include "runtime/jit.h"

#include "core/error.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace toroid {
namespace {

namespace fs = std::filesystem;

const std::string kFull = "extern \"C\" int tier() { return 2; }\n";
const std::string kQuick = "extern \"C\" int tier() { return 1; }\n";

int count_prefixed(const fs::path& dir, const std::string& prefix) {
    int n = 0;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().filename().string().rfind(prefix, 0) == 0) ++n;
    return n;
}

// Installed entries: folders with a manifest naming their key.
int count_entries(const fs::path& dir) {
    int n = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
        if (!e.is_directory() || !fs::exists(e.path() / "manifest.json")) continue;
        std::ifstream in(e.path() / "manifest.json");
        const auto m = nlohmann::json::parse(in);
        EXPECT_EQ(m["key"], e.path().filename().string());
        EXPECT_EQ(m["kernel_so"]["size"].get<std::uintmax_t>(), fs::file_size(e.path() / "kernel.so"));
        ++n;
    }
    return n;
}

class TiersTest : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = fs::path(::testing::TempDir()) /
                ("toroid_tiers_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
                 std::to_string(::getpid()));
        fs::remove_all(root_);
        fs::create_directories(root_ / "cache");
        wrapper_ = root_ / "slow-c++";
        std::ofstream(wrapper_) << "#!/bin/sh\n"
                                   "for a in \"$@\"; do\n"
                                   "  case \"$a\" in\n"
                                   "    -O2) [ -e '" << (root_ / "fail-full").string() << "' ] && { echo 'error: full build refused'; exit 1; }\n"
                                   "         sleep 1.5 ;;\n"
                                   "    -O0) [ -e '" << (root_ / "fail-quick").string() << "' ] && { echo 'error: quick build refused'; exit 1; } ;;\n"
                                   "  esac\n"
                                   "done\n"
                                   "exec '" TOROID_CXX_COMPILER "' \"$@\"\n";
        ::chmod(wrapper_.c_str(), 0755);
    }
    void TearDown() override {
        EXPECT_EQ(count_prefixed(root_ / "cache", ".tmp-"), 0);
        EXPECT_EQ(count_prefixed(root_ / "cache", ".trash-"), 0);
        fs::remove_all(root_);
    }

    CompilerConfig config() const {
        CompilerConfig c;
        c.cxx = wrapper_.string();
        c.optimization_flags = {"-O2"};
        c.quick_optimization_flags = {"-O0"};
        c.cache_dir = root_ / "cache";
        return c;
    }
    void refuse(const char* tier) const { std::ofstream(root_ / tier) << ""; }

    static int call(const TieredModule& m) { return m.entry_as<int (*)()>()(); }

    fs::path root_, wrapper_;
};

TEST_F(TiersTest, QuickServesThenFullSwapsIn) {
    JitCompiler jit(config());
    auto m = jit.load_tiered(kFull, kQuick, "tier");
    EXPECT_EQ(call(*m), 1);
    EXPECT_FALSE(m->full());
    EXPECT_FALSE(m->settled());
    EXPECT_EQ(jit.stats().quick_loads, 1);
    m->wait();
    EXPECT_EQ(call(*m), 2);
    EXPECT_TRUE(m->full());
    EXPECT_GT(m->full_seconds(), 1.0);  // the wrapper's sleep
    ASSERT_NE(m->quick_module(), nullptr);
    EXPECT_EQ(m->quick_module()->command(), jit.command(true));
    EXPECT_EQ(m->module()->command(), jit.command());
    EXPECT_EQ(m->module()->key(), jit.key(kFull));
    EXPECT_EQ(m->quick_module()->key(), jit.key(kQuick, true));
    EXPECT_NE(jit.key(kFull), jit.key(kFull, true));
    JitStats s = jit.stats();
    EXPECT_EQ(s.compiled, 2);
    EXPECT_EQ(count_entries(root_ / "cache"), 2);

    // The same compiler again: the full build from memory. Another: from disk, at once.
    auto again = jit.load_tiered(kFull, kQuick, "tier");
    EXPECT_TRUE(again->full());
    EXPECT_EQ(call(*again), 2);
    EXPECT_EQ(jit.stats().memory_hits, 1);
    JitCompiler other(config());
    auto loaded = other.load_tiered(kFull, kQuick, "tier");
    EXPECT_TRUE(loaded->full());
    EXPECT_TRUE(loaded->settled());
    EXPECT_EQ(loaded->quick_module(), nullptr);
    EXPECT_EQ(call(*loaded), 2);
    EXPECT_EQ(other.stats().disk_hits, 1);
    EXPECT_EQ(other.stats().compiled, 0);
    EXPECT_EQ(other.stats().quick_loads, 0);
}

// Threads calling the entry point while the full build swaps in get one build's answer
// or the other's, never a torn one (run under TSan: the swap is the atomic entry pointer).
TEST_F(TiersTest, CallsDuringTheSwapRunOneBuildOrTheOther) {
    JitCompiler jit(config());
    auto m = jit.load_tiered(kFull, kQuick, "tier");
    std::atomic<int> bad{0}, quick_calls{0}, full_calls{0};
    std::vector<std::thread> callers;
    for (int t = 0; t < 3; ++t)
        callers.emplace_back([&] {
            for (;;) {
                const bool settled = m->settled();
                const int v = call(*m);
                if (v == 1) ++quick_calls;
                else if (v == 2) ++full_calls;
                else ++bad;
                if (settled) break;  // at least one call after the swap
            }
        });
    m->wait();
    for (auto& c : callers) c.join();
    EXPECT_EQ(bad.load(), 0);
    EXPECT_GT(quick_calls.load(), 0);
    EXPECT_GE(full_calls.load(), 3);
    EXPECT_EQ(call(*m), 2);
}

// wait_for_background_builds() (toroid_wait_for_background_builds in C) returns once every
// full build in flight is loaded.
TEST_F(TiersTest, WaitingForBackgroundBuildsSettlesThem) {
    JitCompiler jit(config());
    auto m = jit.load_tiered(kFull, kQuick, "tier");
    EXPECT_FALSE(m->settled());
    wait_for_background_builds();
    EXPECT_TRUE(m->settled());
    EXPECT_TRUE(m->full());
    EXPECT_EQ(call(*m), 2);
}

TEST_F(TiersTest, ForegroundCountsLeaveTheBackgroundOut) {
    JitCompiler jit(config());
    JitStats own;
    LoadOptions lo;
    lo.stats = &own;
    auto m = jit.load_tiered(kFull, kQuick, "tier", lo);
    m->wait();
    EXPECT_EQ(own.compiled, 1);  // the quick build only
    EXPECT_EQ(own.quick_loads, 1);
    EXPECT_EQ(jit.stats().compiled, 2);
}

TEST_F(TiersTest, TheBuildOutlivesItsCompiler) {
    std::shared_ptr<TieredModule> m;
    {
        JitCompiler jit(config());
        m = jit.load_tiered(kFull, kQuick, "tier");
    }
    m->wait();
    EXPECT_EQ(call(*m), 2);
}

TEST_F(TiersTest, FailedFullBuildKeepsTheQuickOne) {
    refuse("fail-full");
    JitCompiler jit(config());
    auto m = jit.load_tiered(kFull, kQuick, "tier");
    EXPECT_EQ(call(*m), 1);
    try {
        m->wait();
        ADD_FAILURE() << "the full build's failure was not reported";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("full build refused"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(m->settled());
    EXPECT_FALSE(m->full());
    EXPECT_EQ(call(*m), 1);
    EXPECT_EQ(count_entries(root_ / "cache"), 1);
    EXPECT_TRUE(fs::exists(root_ / "cache" / "failed" / jit.key(kFull)));
}

TEST_F(TiersTest, FailedQuickBuildWaitsForTheFullOne) {
    refuse("fail-quick");
    JitCompiler jit(config());
    auto m = jit.load_tiered(kFull, kQuick, "tier");
    EXPECT_TRUE(m->full());
    EXPECT_EQ(call(*m), 2);
    EXPECT_EQ(jit.stats().quick_loads, 0);
}

TEST_F(TiersTest, BothFailingIsTheFullBuildsError) {
    refuse("fail-full");
    refuse("fail-quick");
    JitCompiler jit(config());
    try {
        jit.load_tiered(kFull, kQuick, "tier");
        ADD_FAILURE() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("full build refused"), std::string::npos) << e.what();
    }
}

// A process that exits while its full build runs waits for it: the entry is installed
// whole, and nothing is left in flight.
TEST_F(TiersTest, ExitWaitsForTheFullBuild) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        int code = 3;
        try {
            JitCompiler jit(config());
            auto m = jit.load_tiered(kFull, kQuick, "tier");
            code = call(*m) == 1 && !m->settled() ? 0 : 1;
        } catch (...) {
            code = 2;
        }
        std::exit(code);  // atexit handlers run: the full build is waited for
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
    EXPECT_EQ(count_entries(root_ / "cache"), 2);
    JitCompiler jit(config());
    auto m = jit.load_tiered(kFull, kQuick, "tier");
    EXPECT_TRUE(m->full());
    EXPECT_EQ(jit.stats().compiled, 0);
}

// A process killed mid-build leaves no entry of the full build (only its private folder),
// and the next process builds it.
TEST_F(TiersTest, KilledMidBuildLeavesNoEntry) {
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        ::close(ready[0]);
        try {
            JitCompiler jit(config());
            auto m = jit.load_tiered(kFull, kQuick, "tier");
            const char c = call(*m) == 1 ? 'q' : 'x';
            (void)!::write(ready[1], &c, 1);
            ::pause();
        } catch (...) {
        }
        ::_exit(2);
    }
    ::close(ready[1]);
    char c = 0;
    ASSERT_EQ(::read(ready[0], &c, 1), 1);
    ::close(ready[0]);
    EXPECT_EQ(c, 'q');
    ::kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    JitCompiler jit(config());
    EXPECT_FALSE(fs::exists(root_ / "cache" / jit.key(kFull)));
    EXPECT_EQ(count_entries(root_ / "cache"), 1);  // the quick build's
    // The killed process's compiler goes on in its private folder, which nothing reads.
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    EXPECT_FALSE(fs::exists(root_ / "cache" / jit.key(kFull)));
    for (const auto& e : fs::directory_iterator(root_ / "cache"))
        if (e.path().filename().string().rfind(".tmp-", 0) == 0) fs::remove_all(e.path());

    auto m = jit.load_tiered(kFull, kQuick, "tier");
    EXPECT_EQ(call(*m), 1);
    m->wait();
    EXPECT_EQ(call(*m), 2);
    EXPECT_EQ(count_entries(root_ / "cache"), 2);
}

// fork waits for the build in flight: the child has the full build and no thread.
TEST_F(TiersTest, ForkWaitsForTheBuildInFlight) {
    JitCompiler jit(config());
    auto m = jit.load_tiered(kFull, kQuick, "tier");
    EXPECT_FALSE(m->settled());
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) ::_exit(m->settled() && m->full() && call(*m) == 2 ? 0 : 1);
    EXPECT_TRUE(m->settled());
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
    EXPECT_EQ(call(*m), 2);
}

// fork also waits for a load another thread has in flight: the child, which has not that
// thread, finds the module loaded instead of waiting for it forever.
TEST_F(TiersTest, ForkWaitsForALoadInAnotherThread) {
    JitCompiler jit(config());
    std::thread loader([&] { EXPECT_EQ(jit.load(kFull, "tier")->lookup<int (*)()>("tier")(), 2); });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // inside the full build's 1.5 s
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        ::alarm(20);  // a child waiting forever fails the test instead of hanging it
        int code = 1;
        try {
            JitStats before = jit.stats();
            code = jit.load(kFull, "tier")->lookup<int (*)()>("tier")() == 2 &&
                           jit.stats().memory_hits == before.memory_hits + 1
                       ? 0
                       : 1;
        } catch (...) {
            code = 2;
        }
        ::_exit(code);
    }
    loader.join();
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
}

TEST(JitQuickFlags, FromTheOptimizationFlags) {
    EXPECT_EQ(quick_flags_from({"-O3", "-march=native"}), (std::vector<std::string>{"-march=native", "-O1"}));
    EXPECT_EQ(quick_flags_from({}), (std::vector<std::string>{"-O1"}));
    EXPECT_EQ(quick_flags_from({"-Ofast", "-g", "-O2"}), (std::vector<std::string>{"-g", "-O1"}));
}

}  // namespace
}  // namespace toroid
