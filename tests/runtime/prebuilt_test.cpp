// Prebuilt modules (runtime/prebuilt.h): built ahead of time into a folder, found there by
// another JitCompiler (another process's) before it compiles; only at levels this CPU has,
// never from a broken entry (which stays: the folder is read-only to its users), and not when
// the user chose the compiler flags.
#include "runtime/prebuilt.h"

#include "core/error.h"
#include "runtime/jit.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <unistd.h>

namespace toroid {
namespace {

namespace fs = std::filesystem;

const std::string kSource = "extern \"C\" int answer(int x) { return x + 40; }\n";

// Sets an environment variable for a scope, restoring the old value after.
class EnvVar {
public:
    EnvVar(const char* name, const char* value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old;
        if (value) ::setenv(name, value, 1);
        else ::unsetenv(name);
    }
    ~EnvVar() {
        if (old_) ::setenv(name_, old_->c_str(), 1);
        else ::unsetenv(name_);
    }
    EnvVar(const EnvVar&) = delete;
    EnvVar& operator=(const EnvVar&) = delete;

private:
    const char* name_;
    std::optional<std::string> old_;
};

int entries(const fs::path& dir) {
    int n = 0;
    if (!fs::exists(dir)) return 0;
    for (const auto& e : fs::directory_iterator(dir)) n += e.is_directory() && fs::exists(e.path() / "kernel.so");
    return n;
}

class PrebuiltTest : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = fs::path(::testing::TempDir()) /
                ("toroid_prebuilt_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) +
                 "_" + std::to_string(::getpid()));
        fs::remove_all(root_);
        fs::create_directories(root_);
    }
    void TearDown() override { fs::remove_all(root_); }

    CompilerConfig config(const std::string& cache, std::vector<fs::path> prebuilt = {}) const {
        CompilerConfig c;
        c.cxx = "c++";
        c.optimization_flags = {"-O0"};
        c.cache_dir = root_ / cache;
        c.prebuilt_dirs = std::move(prebuilt);
        return c;
    }
    // The best level this CPU runs, or null (not x86-64-v3 or better).
    static const IsaLevel* best_level() {
        for (const IsaLevel& l : isa_levels())
            if (isa_supported(l.name)) return &l;
        return nullptr;
    }

    fs::path root_;
};

TEST_F(PrebuiltTest, LevelsAreNamedAndCheckedAgainstThisCpu) {
    ASSERT_EQ(isa_levels().size(), 3u);
    EXPECT_EQ(isa_levels().front().name, "x86-64-v4-vbmi-vnni");
    EXPECT_EQ(isa_level("x86-64-v3").flags.front(), "-march=x86-64-v3");
    EXPECT_THROW(isa_level("pentium"), Error);
    EXPECT_FALSE(isa_supported("pentium"));
    // A better level implies the ones below it.
    if (isa_supported("x86-64-v4-vbmi-vnni")) {
        EXPECT_TRUE(isa_supported("x86-64-v4"));
    }
    if (isa_supported("x86-64-v4")) {
        EXPECT_TRUE(isa_supported("x86-64-v3"));
    }
#if defined(__x86_64__)
    __builtin_cpu_init();
    EXPECT_EQ(isa_supported("x86-64-v3"), static_cast<bool>(__builtin_cpu_supports("avx2")) &&
                                              static_cast<bool>(__builtin_cpu_supports("fma")));
    EXPECT_EQ(isa_supported("x86-64-v4"), static_cast<bool>(__builtin_cpu_supports("avx512bw")) &&
                                              static_cast<bool>(__builtin_cpu_supports("avx512vl")));
#endif
}

TEST_F(PrebuiltTest, KeyDependsOnSourceLevelAndFlagsOnly) {
    const IsaLevel& v3 = isa_level("x86-64-v3");
    const IsaLevel& v4 = isa_level("x86-64-v4");
    EXPECT_EQ(prebuilt_key(kSource, v3, {"-fopenmp"}), prebuilt_key(kSource, v3, {"-fopenmp"}));
    EXPECT_NE(prebuilt_key(kSource, v3, {"-fopenmp"}), prebuilt_key(kSource, v4, {"-fopenmp"}));
    EXPECT_NE(prebuilt_key(kSource, v3, {"-fopenmp"}), prebuilt_key(kSource, v3, {}));
    EXPECT_NE(prebuilt_key(kSource, v3, {}), prebuilt_key(kSource + " ", v3, {}));
}

TEST_F(PrebuiltTest, AnotherCompilerLoadsThePrebuiltModuleWithoutCompiling) {
    const IsaLevel* level = best_level();
    if (!level) GTEST_SKIP() << "this CPU has no x86-64-v3 level";
    const fs::path folder = root_ / "prebuilt";
    {
        JitCompiler maker(config("maker-cache"));
        auto m = maker.prebuild(kSource, "answer", folder, level->name);
        EXPECT_EQ(m->lookup<int (*)(int)>("answer")(2), 42);
        EXPECT_EQ(maker.stats().compiled, 1);
        // Asked again (another run of the build): found, not compiled.
        maker.prebuild(kSource, "answer", folder, level->name);
        EXPECT_EQ(maker.stats().compiled, 1);
        EXPECT_EQ(maker.stats().prebuilt_hits, 1);
        EXPECT_EQ(entries(root_ / "maker-cache"), 0);  // nothing in the JIT cache
    }
    EXPECT_EQ(entries(folder), 1);

    JitCompiler user(config("user-cache", {folder}));
    auto m = user.load(kSource, "answer");
    EXPECT_EQ(m->lookup<int (*)(int)>("answer")(0), 40);
    EXPECT_EQ(user.stats().compiled, 0);
    EXPECT_EQ(user.stats().prebuilt_hits, 1);
    EXPECT_EQ(entries(root_ / "user-cache"), 0);

    // Tiers: the prebuilt full build serves at once, no quick build.
    JitCompiler tiered(config("tiered-cache", {folder}));
    auto t = tiered.load_tiered(kSource, kSource + "// quick\n", "answer");
    EXPECT_TRUE(t->full());
    EXPECT_EQ(t->entry_as<int (*)(int)>()(1), 41);
    EXPECT_EQ(tiered.stats().quick_loads, 0);
    EXPECT_EQ(tiered.stats().compiled, 0);
    EXPECT_EQ(tiered.stats().prebuilt_hits, 1);

    // Another source is not there: compiled into the user's cache as before.
    auto other = user.load(kSource + "// other\n", "answer");
    EXPECT_EQ(user.stats().compiled, 1);
    EXPECT_EQ(entries(root_ / "user-cache"), 1);
}

TEST_F(PrebuiltTest, ALevelThisCpuLacksIsNotUsed) {
    const IsaLevel* missing = nullptr;
    for (const IsaLevel& l : isa_levels())
        if (!isa_supported(l.name)) missing = &l;
    if (!missing) GTEST_SKIP() << "this CPU has every level";
    const fs::path folder = root_ / "prebuilt";
    JitCompiler maker(config("maker-cache"));
    maker.prebuild(kSource, "answer", folder, missing->name);  // compiles and loads; must not run
    EXPECT_EQ(entries(folder), 1);
    JitCompiler user(config("user-cache", {folder}));
    auto m = user.load(kSource, "answer");
    EXPECT_EQ(m->lookup<int (*)(int)>("answer")(2), 42);
    EXPECT_EQ(user.stats().prebuilt_hits, 0);
    EXPECT_EQ(user.stats().compiled, 1);
}

TEST_F(PrebuiltTest, ABrokenEntryIsSkippedAndLeftInPlace) {
    const IsaLevel* level = best_level();
    if (!level) GTEST_SKIP() << "this CPU has no x86-64-v3 level";
    const fs::path folder = root_ / "prebuilt";
    {
        JitCompiler maker(config("maker-cache"));
        maker.prebuild(kSource, "answer", folder, level->name);
    }
    const fs::path so = folder / prebuilt_key(kSource, *level, {}) / "kernel.so";
    ASSERT_TRUE(fs::exists(so));
    fs::resize_file(so, 100);
    JitCompiler user(config("user-cache", {folder}));
    auto m = user.load(kSource, "answer");
    EXPECT_EQ(m->lookup<int (*)(int)>("answer")(2), 42);
    EXPECT_EQ(user.stats().prebuilt_hits, 0);
    EXPECT_EQ(user.stats().compiled, 1);
    EXPECT_TRUE(fs::exists(so));  // not the user's to mend
}

TEST_F(PrebuiltTest, FoldersComeFromTheEnvironment) {
    const fs::path a = root_ / "a", b = root_ / "b";
    fs::create_directories(a);
    fs::create_directories(b);
    {
        EnvVar pre("TOROID_PREBUILT", (a.string() + ":" + (root_ / "missing").string() + ":" + b.string()).c_str());
        const auto dirs = prebuilt_dirs_from_environment();
        ASSERT_EQ(dirs.size(), 2u);  // existing folders only, in order
        EXPECT_EQ(dirs[0], fs::weakly_canonical(a));
        EXPECT_EQ(dirs[1], fs::weakly_canonical(b));
        EnvVar cache("TOROID_CACHE_DIR", (root_ / "c").c_str());
        EnvVar flags("TOROID_CXXFLAGS", nullptr);
        EXPECT_EQ(CompilerConfig::from_environment().prebuilt_dirs.size(), 2u);
        EnvVar chosen("TOROID_CXXFLAGS", "-O2");  // the user's flags: their own builds only
        EXPECT_TRUE(CompilerConfig::from_environment().prebuilt_dirs.empty());
    }
    {
        EnvVar pre("TOROID_PREBUILT", "none");
        EXPECT_TRUE(prebuilt_dirs_from_environment().empty());
    }
    {
        EnvVar pre("TOROID_PREBUILT", "");
        EXPECT_TRUE(prebuilt_dirs_from_environment().empty());
    }
}

}  // namespace
}  // namespace toroid
