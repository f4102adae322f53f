// toroid_sweep: the differential sweep (compiled engine vs reference engine) as a tool,
// `toroid_sweep [--cases N] [--seed S] [--long] [--jobs J] [--minimize] [--dump DIR]`;
// each case runs in its own process; exits 1 when any case fails, listing every failing seed.
#include "sweep.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>

#include <unistd.h>

int main(int argc, char** argv) {
    namespace fs = std::filesystem;
    CLI::App app{"Random differential sweep: the compiled engine against the reference engine."};
    std::int64_t cases = 200;
    std::uint64_t seed = 1000;
    bool long_mode = false, minimize = false, verbose = false, in_process = false;
    double memory_gb = 4;
    int timeout = 300;
    int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    std::string dump_dir, cache_dir;
    app.add_option("--cases", cases, "number of cases (default 200)")->check(CLI::PositiveNumber);
    app.add_option("--seed", seed, "seed of the first case; case i uses seed + i (default 1000)");
    app.add_flag("--long", long_mode, "3000 cases (unless --cases is given)");
    app.add_option("--jobs,-j", jobs, "cases run at once (default: all cores)")->check(CLI::PositiveNumber);
    app.add_flag("--minimize", minimize, "shrink every failing case and report the smallest one found");
    app.add_option("--dump", dump_dir, "write each failing case (pipeline.json, input.npy, grids, results) under DIR");
    app.add_option("--cache-dir", cache_dir,
                   "JIT cache folder (default: $TOROID_CACHE_DIR, else a fresh temporary folder removed at exit)");
    app.add_flag("--in-process", in_process,
                 "run the cases in this process (default: each in a child process, so that a crash, hang or "
                 "runaway compile fails only its seed)");
    app.add_option("--max-memory-gb", memory_gb, "address-space limit of each case's process (default 4; 0 = none)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--timeout", timeout, "seconds each case's process may run (default 300, x20 with --minimize; 0 = none)")
        ->check(CLI::NonNegativeNumber);
    app.add_flag("--verbose,-v", verbose, "one line per case");
    CLI11_PARSE(app, argc, argv);
    if (long_mode && app.count("--cases") == 0) cases = 3000;

    // The JIT reads $TOROID_CACHE_DIR when it first compiles: set it before any case runs.
    fs::path temp_cache;
    if (!cache_dir.empty()) {
        ::setenv("TOROID_CACHE_DIR", cache_dir.c_str(), 1);
    } else if (const char* env = std::getenv("TOROID_CACHE_DIR"); !env || !*env) {
        std::string pattern = (fs::temp_directory_path() / "toroid_sweep.XXXXXX").string();
        if (!::mkdtemp(pattern.data())) {
            std::cerr << "toroid_sweep: cannot create a temporary cache folder\n";
            return 2;
        }
        temp_cache = pattern;
        ::setenv("TOROID_CACHE_DIR", pattern.c_str(), 1);
    }

    toroid::sweep::Options o;
    o.seed = seed;
    o.cases = cases;
    o.jobs = jobs;
    o.log = &std::cerr;
    o.verbose = verbose;
    o.minimize = minimize;
    o.dump_dir = dump_dir;
    o.isolate = !in_process;
    o.memory_limit_bytes = static_cast<std::int64_t>(memory_gb * 1024 * 1024 * 1024);
    o.timeout_seconds = timeout;
    std::cerr << fmt::format("toroid_sweep: {} cases from seed {} on {} jobs\n", cases, seed, jobs);
    const toroid::sweep::Summary s = toroid::sweep::run_sweep(o);
    if (!temp_cache.empty()) {
        std::error_code ec;
        fs::remove_all(temp_cache, ec);
    }
    std::cout << fmt::format("{} cases, {} failed, {:.1f} s\n", s.cases, s.failing_seeds.size(), s.seconds);
    if (s.failing_seeds.empty()) return 0;
    std::cout << fmt::format("failing seeds: {}\n", fmt::join(s.failing_seeds, " "));
    return 1;
}
