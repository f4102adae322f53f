// The benchmark library behind `toroid bench`: runs a suite's cases on one or more
// engines (interleaved per case), prints torch.utils.benchmark-style tables with GB/s,
// writes/reads JSON results, and compares two result files side by side.
#pragma once

#include "bench/suite.h"

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace toroid {

struct BenchOptions {
    std::string suite = "seeds";
    std::vector<std::string> engines = {"reference", "compiled"};
    int threads = 1;
    std::string filter;     // ECMAScript regex searched in each case name; empty: all
    std::string json_path;  // where to write the results; empty: none
    std::string device = "cpu";  // only the suite's rows of this device run
    double min_time_s = 0.2;     // timed runs continue until this much time and min_runs runs...
    int min_runs = 10;
    double max_time_s = 5.0;     // ...or until this much time (raised to min_time_s if below)
    // A user's pipeline instead of a suite (`toroid bench PIPELINE [IMAGE...]`): a JSON file,
    // or inline JSON starting with '['. Its cases: the images (files, or folders of them: at
    // most kMaxFolderImages each, the first by name), decoded in `mode`, and inputs of
    // `input_class` (dtype:channels:layout) made for each of `sizes` ("HxW").
    std::string pipeline;
    std::vector<std::string> images;
    std::vector<std::string> sizes;
    std::string input_class = "uint8:3:channels_last";
    std::string mode = "rgb";
};

// Runs the benchmark and prints one table per op family to `out`; writes JSON when
// asked. Returns 0, or 1 when some engine failed on some case (the failures are listed
// and kept out of the tables). Throws toroid::Error for bad options (unknown suite,
// engine or device, invalid regex, no matching case, bad numbers).
int run_bench(const BenchOptions& options, std::ostream& out);

// Prints result files `a` and `b` side by side with per-case and geometric-mean
// speed-ups. Throws toroid::Error when a file is missing or not a bench result.
int compare_bench(const std::string& a, const std::string& b, std::ostream& out);

namespace bench {

inline constexpr std::size_t kMaxFolderImages = 64;

// An input class "dtype:channels:layout" (uint8:3:channels_last): the dtype, channel count
// and layout of inputs made for a benchmark or a prebuild. Throws toroid::Error naming
// `option` when `text` is not one.
struct InputClass {
    DType dtype = DType::UInt8;
    std::int64_t channels = 3;
    Layout layout = Layout::ChannelsLast;
    std::string text;
};
InputClass parse_input_class(const std::string& text, const std::string& option = "--input");

// The cases of options.pipeline (see BenchOptions): one per image and per size, each named
// by its source and input. A file that cannot be read is a case that fails.
std::vector<BenchCase> pipeline_cases(const BenchOptions& options);

// Median and quartiles (linear interpolation between order statistics, as numpy's
// default percentile) of a sample; throws toroid::Error when it is empty.
struct Stats {
    double median = 0, q25 = 0, q75 = 0;
    double iqr() const { return q75 - q25; }
};
Stats summarize(std::vector<double> samples);

// exp(mean(log(x))); throws toroid::Error on an empty list or a value <= 0.
double geometric_mean(const std::vector<double>& values);

struct Machine {
    std::string cpu;  // "model name" of /proc/cpuinfo, or "unknown"
    int cores = 0;
    std::string compiler;  // the compiler this library was built with, id and version
    std::string toroid_version;
    // GPU runs: bytes read + written per second by a device-to-device copy measured in the
    // same run (0: not measured); the tables give each GPU row's share of it.
    double device_copy_gbps = 0;
};
Machine this_machine();

// One (case, engine) measurement. A failed one has `error` set and no timings.
struct Record {
    std::string case_name, title, device, engine;
    int threads = 1;
    double median_us = 0, iqr_us = 0;
    std::int64_t runs = 0;
    double prepare_s = 0, gbps = 0;
    // The first prepare of the case, with the process's in-memory caches bypassed
    // (EngineOptions::cold_prepare): prepare_s is the compile latency a new process sees.
    // prepare_cache says where the code came from: "compiled" (the C++ compiler or NVRTC
    // ran), "disk" (a disk-cache hit), "memory", or "" for engines that compile nothing;
    // compile_s is the compiler's share of prepare_s.
    std::string prepare_cache;
    double compile_s = 0;
    // Compiled engine: prepare returned with the quick build (EngineOptions::tiers); then
    // first_result_s is prepare plus the first run (on the quick build) and full_s the time
    // from prepare's start until the full build was loaded (the runs timed are on it).
    // Without a quick build full_s = prepare_s.
    bool quick = false;
    double first_result_s = 0, full_s = 0;
    std::string error;
};

struct Results {
    Machine machine;
    std::string suite;
    std::vector<Record> records;
};

std::string results_to_json(const Results& results);
// `origin` names the source in error messages (a path).
Results results_from_json(const std::string& text, const std::string& origin);
Results load_results(const std::string& path);

// Selected cases of `options` (suite, device, filter), grouped so that the cases of one
// table (title, device) are adjacent, tables in order of first appearance.
std::vector<BenchCase> select_cases(const BenchOptions& options);

// One table per (title, device) in order of first appearance; engines as columns in
// order of first appearance; failed records are left out. With copy_gbps > 0, cuda rows also
// show their GB/s as a percentage of it.
std::string format_tables(const std::vector<Record>& records, double copy_gbps = 0);

// The side-by-side comparison printed by compare_bench.
std::string format_compare(const Results& a, const Results& b, const std::string& name_a,
                           const std::string& name_b);

}  // namespace bench
}  // namespace toroid
