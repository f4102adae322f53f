// The benchmark runner (prepare once, warm up, timed runs until enough runs and time),
// its statistics, the table and comparison printers, and the JSON result format.
#include "bench/bench.h"

#include "core/error.h"
#include "engine/cuda_engine.h"
#include "engine/engine.h"
#include "engine/files.h"
#include "io/decode.h"
#include "ops/pipeline_json.h"
#include "runtime/cuda/cuda.h"
#include "io/file.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <ostream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>
#include <utility>

namespace toroid {
namespace bench {
namespace {

using json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
}

// ---- text layout -------------------------------------------------------------------

// Columns count characters, not bytes: "±" is two bytes of UTF-8 but one column.
std::size_t display_width(std::string_view s) {
    std::size_t n = 0;
    for (char ch : s)
        if ((static_cast<unsigned char>(ch) & 0xC0) != 0x80) ++n;
    return n;
}

std::string pad_left(std::string_view s, std::size_t width) {
    std::size_t w = display_width(s);
    return std::string(width > w ? width - w : 0, ' ') + std::string(s);
}

std::string pad_right(std::string_view s, std::size_t width) {
    std::size_t w = display_width(s);
    return std::string(s) + std::string(width > w ? width - w : 0, ' ');
}

std::string center(std::string_view s, std::size_t width) {
    std::size_t w = display_width(s);
    if (w >= width) return std::string(s);
    std::size_t left = (width - w) / 2;
    return std::string(left, ' ') + std::string(s) + std::string(width - w - left, ' ');
}

// "[------ text ------]" exactly `width` columns wide (wider when the text needs it).
std::string title_line(std::string_view text, std::size_t width) {
    std::size_t inner = display_width(text) + 2;
    std::size_t dashes = width > inner + 2 ? width - inner - 2 : 2;
    std::size_t left = dashes / 2;
    return "[" + std::string(left, '-') + " " + std::string(text) + " " + std::string(dashes - left, '-') + "]";
}

// Microseconds with the digits that matter at their scale.
std::string format_us(double us) { return us < 10.0 ? fmt::format("{:.2f}", us) : fmt::format("{:.1f}", us); }

std::string time_cell(const Record& r) {
    return fmt::format("{} (±{})", format_us(r.median_us), format_us(r.iqr_us));
}

// The first prepare's time and, unless the compiler ran, where the code came from.
std::string prepare_cell(const Record& r) {
    const std::string from = r.prepare_cache == "compiled" ? "" : " " + r.prepare_cache;
    if (r.quick) return fmt::format("{:.0f} ms{}, full {:.0f} ms", r.prepare_s * 1e3, from, r.full_s * 1e3);
    return fmt::format("{:.0f} ms{}", r.prepare_s * 1e3, from);
}

struct TableKey {
    std::string title, device;
    bool operator==(const TableKey&) const = default;
};

// Groups items by (title, device) in order of first appearance.
template <typename T, typename KeyOf>
std::vector<std::pair<TableKey, std::vector<T>>> group_by_table(const std::vector<T>& items, KeyOf key_of) {
    std::vector<std::pair<TableKey, std::vector<T>>> groups;
    for (const T& item : items) {
        TableKey k = key_of(item);
        auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == k; });
        if (it == groups.end()) {
            groups.emplace_back(k, std::vector<T>{});
            it = std::prev(groups.end());
        }
        it->second.push_back(item);
    }
    return groups;
}

template <typename T>
void add_unique(std::vector<T>& list, const T& value) {
    if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
}

// One line per compiling engine: the first-prepare times (compile latency) of the table's
// cases, and how many compiled and how many the disk cache answered.
std::string format_prepare_summary(const std::vector<std::string>& engines, const std::vector<const Record*>& records) {
    std::string text;
    for (const std::string& e : engines) {
        std::vector<double> times, firsts, fulls;
        int compiled = 0, disk = 0, memory = 0, quick = 0;
        for (const Record* r : records) {
            if (r->engine != e || r->prepare_cache.empty()) continue;
            times.push_back(r->prepare_s);
            if (r->quick) {  // the quick line summarizes the cases that ran a quick build only
                firsts.push_back(r->first_result_s);
                fulls.push_back(r->full_s);
                ++quick;
            }
            compiled += r->prepare_cache == "compiled";
            disk += r->prepare_cache == "disk";
            memory += r->prepare_cache == "memory";
        }
        if (times.empty()) continue;
        const Stats st = summarize(times);
        text += fmt::format("First prepare, {}: median {:.0f} ms, max {:.0f} ms over {} case{} ({} compiled, {} disk hit{}{})\n",
                            e, st.median * 1e3, *std::max_element(times.begin(), times.end()) * 1e3, times.size(),
                            times.size() == 1 ? "" : "s", compiled, disk, disk == 1 ? "" : "s",
                            memory ? fmt::format(", {} memory hits", memory) : std::string());
        if (quick > 0)
            text += fmt::format("  {} quick build{} first: first result median {:.0f} ms, max {:.0f} ms; full build "
                                "loaded after median {:.0f} ms, max {:.0f} ms\n",
                                quick, quick == 1 ? "" : "s", summarize(firsts).median * 1e3,
                                *std::max_element(firsts.begin(), firsts.end()) * 1e3, summarize(fulls).median * 1e3,
                                *std::max_element(fulls.begin(), fulls.end()) * 1e3);
    }
    return text;
}

std::string format_one_table(const TableKey& key, const std::vector<const Record*>& records, double copy_gbps) {
    std::vector<std::string> engines, cases;
    for (const Record* r : records) {
        add_unique(engines, r->engine);
        add_unique(cases, r->case_name);
    }
    auto find = [&](const std::string& c, const std::string& e) -> const Record* {
        for (const Record* r : records)
            if (r->case_name == c && r->engine == e) return r;
        return nullptr;
    };

    std::size_t label_w = 0;
    for (const std::string& c : cases) label_w = std::max(label_w, display_width(row_label(c, key.title)));
    // Compiling engines get a third column: each case's first prepare (compile latency).
    std::vector<std::size_t> time_w(engines.size()), gbps_w(engines.size()), prep_w(engines.size(), 0);
    const bool share = copy_gbps > 0 && key.device == "cuda";  // a "% copy" column after GB/s
    auto share_cell = [&](const Record* r) { return r ? fmt::format("{:.0f}%", 100.0 * r->gbps / copy_gbps) : std::string(); };
    for (std::size_t e = 0; e < engines.size(); ++e) {
        time_w[e] = std::max<std::size_t>(display_width(engines[e]), 1);
        gbps_w[e] = 4;  // "GB/s"
        for (const std::string& c : cases)
            if (const Record* r = find(c, engines[e])) {
                time_w[e] = std::max(time_w[e], display_width(time_cell(*r)));
                gbps_w[e] = std::max(gbps_w[e], fmt::format("{:.2f}", r->gbps).size());
                if (!r->prepare_cache.empty())
                    prep_w[e] = std::max({prep_w[e], std::string_view("prepare").size(), prepare_cell(*r).size()});
            }
    }

    std::string header = "  " + std::string(label_w, ' ');
    for (std::size_t e = 0; e < engines.size(); ++e) {
        header += " | " + center(engines[e], time_w[e]) + "  " + pad_left("GB/s", gbps_w[e]);
        if (share) header += "  % copy";
        if (prep_w[e] > 0) header += "  " + pad_left("prepare", prep_w[e]);
    }
    std::vector<std::string> rows;
    for (const std::string& c : cases) {
        std::string line = "  " + pad_right(row_label(c, key.title), label_w);
        for (std::size_t e = 0; e < engines.size(); ++e) {
            const Record* r = find(c, engines[e]);
            line += " | " + pad_left(r ? time_cell(*r) : "-", time_w[e]) + "  " +
                    pad_left(r ? fmt::format("{:.2f}", r->gbps) : "", gbps_w[e]);
            if (share) line += "  " + pad_left(share_cell(r), 6);
            if (prep_w[e] > 0)
                line += "  " + pad_left(r && !r->prepare_cache.empty() ? prepare_cell(*r) : "", prep_w[e]);
        }
        rows.push_back(std::move(line));
    }
    std::size_t width = display_width(header);
    std::string thread_head = fmt::format("{} threads: ", records.front()->threads);
    std::string text = title_line(fmt::format("{}, {}", key.title, key.device), width) + "\n";
    text += header + "\n";
    text += thread_head + std::string(width > thread_head.size() ? width - thread_head.size() : 3, '-') + "\n";
    for (const std::string& row : rows) text += row + "\n";
    text += "\nTimes are in microseconds (us).";
    if (share)
        text += fmt::format(" GB/s: input + output bytes over the median time; % copy: of the {:.0f} GB/s a "
                            "device-to-device copy moved in this run (read + written).",
                            copy_gbps);
    if (std::any_of(prep_w.begin(), prep_w.end(), [](std::size_t w) { return w > 0; }))
        text += " prepare: the case's first prepare, a compile unless marked \"disk\" (a disk-cache hit); \"full\": "
                "when the full build was loaded, where prepare returned a quick build.";
    text += "\n";
    text += format_prepare_summary(engines, records);
    return text + "\n";
}

// ---- JSON ----------------------------------------------------------------------------

const json& require_field(const json& obj, const char* key, const std::string& where) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) fail("{}: missing field '{}'", where, key);
    return *it;
}

std::string string_field(const json& obj, const char* key, const std::string& where) {
    const json& v = require_field(obj, key, where);
    if (!v.is_string()) fail("{}: field '{}' must be a string, got {}", where, key, v.dump());
    return v.get<std::string>();
}

std::string optional_string(const json& obj, const char* key, const std::string& where) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return {};
    if (!it->is_string()) fail("{}: field '{}' must be a string, got {}", where, key, it->dump());
    return it->get<std::string>();
}

double number_field(const json& obj, const char* key, const std::string& where, bool required, double fallback = 0) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) {
        if (required) fail("{}: missing field '{}'", where, key);
        return fallback;
    }
    if (!it->is_number()) fail("{}: field '{}' must be a number, got {}", where, key, it->dump());
    double d = it->get<double>();
    if (!std::isfinite(d) || d < 0) fail("{}: field '{}' must be a finite number >= 0, got {}", where, key, d);
    return d;
}

// ---- running -------------------------------------------------------------------------

std::string this_compiler() {
#if defined(__clang__)
    return __VERSION__;  // "Clang 14.0.6" or a vendor's "Debian Clang 14.0.6"
#elif defined(__GNUC__)
    return "GCC " __VERSION__;
#else
    return "unknown compiler";
#endif
}

// The median and spread of the timed runs, and the bandwidth they reach.
void set_timing(Record& r, const std::vector<double>& times_us, std::size_t bytes) {
    Stats st = summarize(times_us);
    r.median_us = st.median;
    r.iqr_us = st.iqr();
    r.runs = static_cast<std::int64_t>(times_us.size());
    r.gbps = st.median > 0 ? static_cast<double>(bytes) / (st.median * 1e3) : 0.0;
}

// Where the prepared code came from; engines that compile nothing report no cache at all.
void set_prepare_source(Record& r, const PrepareStats& st) {
    r.compile_s = st.compile_seconds;
    if (st.compiled > 0) r.prepare_cache = "compiled";
    else if (st.disk_hits > 0) r.prepare_cache = "disk";
    else if (st.prebuilt_hits > 0) r.prepare_cache = "prebuilt";
    else if (st.memory_hits > 0) r.prepare_cache = "memory";
}

Record measure(const BenchCase& c, Engine& engine, const Tensor& input, std::size_t bytes,
               const BenchOptions& o) {
    Record r;
    r.case_name = c.name;
    r.title = c.title;
    r.device = c.device;
    r.engine = std::string(engine.name());
    r.threads = o.threads;

    auto t0 = Clock::now();
    std::unique_ptr<PreparedPipeline> prepared = engine.prepare(c.pipeline, input.spec());
    r.prepare_s = seconds_between(t0, Clock::now());
    set_prepare_source(r, prepared->stats());
    r.quick = prepared->stats().quick;

    // The first result, on whatever prepare returned; it is checked for the shape the op
    // catalogue promises. Then the full build, which the timed runs use.
    const ShapeInfo expected = infer_shape(c.pipeline, ShapeInfo{c.dtype, c.shape});
    {
        Tensor y = prepared->run(input);
        r.first_result_s = seconds_between(t0, Clock::now());
        if (y.dtype() != expected.dtype || y.shape() != expected.shape) {
            const Dims& s = y.shape();
            fail("engine returned a ({}, {}, {}, {}) {} tensor, expected ({}, {}, {}, {}) {}", s[0], s[1], s[2],
                 s[3], dtype_name(y.dtype()), expected.shape[0], expected.shape[1], expected.shape[2],
                 expected.shape[3], dtype_name(expected.dtype));
        }
    }
    prepared->wait_full();
    r.full_s = r.quick ? seconds_between(t0, Clock::now()) : r.prepare_s;

    // Warm-up: caches, page faults and lazy initialization out of the way.
    double warm_s = 0;
    for (int runs = 0; runs < 3 && (runs == 0 || warm_s < o.min_time_s / 4); ++runs) {
        auto a = Clock::now();
        Tensor y = prepared->run(input);
        warm_s += seconds_between(a, Clock::now());
        if (runs == 0 && (y.dtype() != expected.dtype || y.shape() != expected.shape)) {
            const Dims& s = y.shape();
            fail("engine returned a ({}, {}, {}, {}) {} tensor, expected ({}, {}, {}, {}) {}", s[0], s[1], s[2],
                 s[3], dtype_name(y.dtype()), expected.shape[0], expected.shape[1], expected.shape[2],
                 expected.shape[3], dtype_name(expected.dtype));
        }
    }

    // Each timed run includes freeing its result, as a caller that drops it would.
    const double cap_s = std::max(o.max_time_s, o.min_time_s);
    std::vector<double> times_us;
    double total_s = 0;
    while (true) {
        auto a = Clock::now();
        { Tensor y = prepared->run(input); }
        double s = seconds_between(a, Clock::now());
        times_us.push_back(s * 1e6);
        total_s += s;
        bool enough = static_cast<int>(times_us.size()) >= o.min_runs && total_s >= o.min_time_s;
        if (enough || total_s >= cap_s) break;
    }
    set_timing(r, times_us, bytes);
    return r;
}

const cuda::Stream& bench_stream() {
    static const cuda::Stream* s = new cuda::Stream(cuda::Device::get(0));  // kept to the process's end
    return *s;
}

// A device-to-device copy of 1 GiB on the benchmark's stream (CUDA events, median of 20
// after warm-up): bytes read + written per second, in GB/s.
double measure_device_copy_gbps() {
    const cuda::Device& dev = cuda::Device::get(0);
    constexpr std::size_t bytes = std::size_t{1} << 30;
    cuda::DeviceBuffer src(dev, bytes), dst(dev, bytes);
    src.memset(1);
    const cuda::Stream& stream = bench_stream();
    cuda::Event start(dev), stop(dev);
    for (int i = 0; i < 3; ++i) cuda::copy_device_async(dst.pointer(), src.pointer(), bytes, stream.handle());
    std::vector<double> ms;
    for (int i = 0; i < 20; ++i) {
        start.record(stream);
        cuda::copy_device_async(dst.pointer(), src.pointer(), bytes, stream.handle());
        stop.record(stream);
        ms.push_back(static_cast<double>(cuda::elapsed_ms(start, stop)));
    }
    const double median = summarize(ms).median;
    return median > 0 ? 2.0 * static_cast<double>(bytes) / (median * 1e-3) / 1e9 : 0.0;
}

// The cuda engine on device memory: the input copied to the GPU once, each run's kernels
// timed with CUDA events on one stream (launch to completion, no copies), median of runs.
Record measure_cuda(const BenchCase& c, const Tensor& input, std::size_t bytes, const BenchOptions& o) {
    Record r;
    r.case_name = c.name;
    r.title = c.title;
    r.device = c.device;
    r.engine = "cuda";
    r.threads = o.threads;
    auto t0 = Clock::now();
    std::unique_ptr<CudaPipeline> p = prepare_cuda(c.pipeline, input.spec(), EngineOptions{}, 0);
    r.prepare_s = seconds_between(t0, Clock::now());
    set_prepare_source(r, p->stats());
    const cuda::Device& dev = cuda::Device::get(0);
    std::int64_t span = 1;
    for (std::size_t d = 0; d < 4; ++d) span += (input.shape()[d] - 1) * input.strides()[d];
    cuda::DeviceBuffer din(dev, static_cast<std::size_t>(span) * dtype_size(input.dtype()));
    din.copy_from_host(input.data(), din.size());
    const ShapeInfo out = p->output();
    const Dims out_strides = dense_strides(out.shape, p->output_layout());
    std::size_t out_elems = 1;
    for (auto d : out.shape) out_elems *= static_cast<std::size_t>(d);
    cuda::DeviceBuffer dout(dev, std::max<std::size_t>(out_elems * dtype_size(out.dtype), 1));
    // One stream for every case, as a caller keeps its stream: intermediates then stay in the
    // workspace that stream owns (a stream of its own per case would allocate them per run).
    const cuda::Stream& stream = bench_stream();
    cuda::Event start(dev), stop(dev);
    auto run = [&] {
        p->run_device(reinterpret_cast<const void*>(din.pointer()), reinterpret_cast<void*>(dout.pointer()), out_strides,
                      stream.handle());
    };
    for (int i = 0; i < 5; ++i) run();
    stream.synchronize();
    const double cap_s = std::max(o.max_time_s, o.min_time_s);
    std::vector<double> times_us;
    double total_s = 0;
    while (true) {
        start.record(stream);
        run();
        stop.record(stream);
        const double us = static_cast<double>(cuda::elapsed_ms(start, stop)) * 1e3;
        times_us.push_back(us);
        total_s += us * 1e-6 + 5e-6;  // count host overhead too, so tiny rows still end
        if ((static_cast<int>(times_us.size()) >= std::max(o.min_runs, 20) && total_s >= o.min_time_s / 4) ||
            total_s >= cap_s)
            break;
    }
    set_timing(r, times_us, bytes);
    return r;
}

void check_options(const BenchOptions& o) {
    if (o.threads < 1) fail("--threads must be at least 1 (got {})", o.threads);
    if (!std::isfinite(o.min_time_s) || o.min_time_s <= 0)
        fail("min_time_s must be a positive number of seconds (got {})", o.min_time_s);
    if (!std::isfinite(o.max_time_s) || o.max_time_s <= 0)
        fail("max_time_s must be a positive number of seconds (got {})", o.max_time_s);
    if (o.min_runs < 1) fail("min_runs must be at least 1 (got {})", o.min_runs);
    if (o.engines.empty()) fail("--engine needs at least one engine name");
    std::set<std::string> seen;
    for (const std::string& e : o.engines)
        if (!seen.insert(e).second) fail("engine '{}' is listed twice in --engine", e);
}

}  // namespace

// ---- public pieces ----------------------------------------------------------------------

Stats summarize(std::vector<double> samples) {
    if (samples.empty()) fail("no samples to summarize");
    std::sort(samples.begin(), samples.end());
    auto quantile = [&](double p) {
        double pos = p * static_cast<double>(samples.size() - 1);
        auto lo = static_cast<std::size_t>(std::floor(pos));
        std::size_t hi = std::min(lo + 1, samples.size() - 1);
        double frac = pos - static_cast<double>(lo);
        return samples[lo] + (samples[hi] - samples[lo]) * frac;
    };
    return Stats{quantile(0.5), quantile(0.25), quantile(0.75)};
}

double geometric_mean(const std::vector<double>& values) {
    if (values.empty()) fail("geometric mean of an empty list");
    double sum = 0;
    for (double v : values) {
        if (!(v > 0) || !std::isfinite(v)) fail("geometric mean needs positive values, got {}", v);
        sum += std::log(v);
    }
    return std::exp(sum / static_cast<double>(values.size()));
}

Machine this_machine() {
    Machine m;
    m.cpu = "unknown";
    std::ifstream info("/proc/cpuinfo");
    for (std::string line; std::getline(info, line);) {
        if (line.rfind("model name", 0) != 0) continue;
        auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string v = line.substr(colon + 1);
        v.erase(0, v.find_first_not_of(" \t"));
        if (!v.empty()) m.cpu = v;
        break;
    }
    m.cores = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
    m.compiler = this_compiler();
    m.toroid_version = TOROID_VERSION;
    return m;
}

std::string results_to_json(const Results& res) {
    json root;
    root["machine"] = {{"cpu", res.machine.cpu},
                       {"cores", res.machine.cores},
                       {"compiler", res.machine.compiler},
                       {"toroid_version", res.machine.toroid_version}};
    if (res.machine.device_copy_gbps > 0) root["machine"]["device_copy_gbps"] = res.machine.device_copy_gbps;
    root["suite"] = res.suite;
    json records = json::array();
    for (const Record& r : res.records) {
        json j;
        j["case"] = r.case_name;
        j["title"] = r.title;
        j["device"] = r.device;
        j["engine"] = r.engine;
        j["threads"] = r.threads;
        if (!r.error.empty()) {
            j["error"] = r.error;
        } else {
            j["median_us"] = r.median_us;
            j["iqr_us"] = r.iqr_us;
            j["runs"] = r.runs;
            j["prepare_s"] = r.prepare_s;
            if (!r.prepare_cache.empty()) {
                j["prepare_cache"] = r.prepare_cache;
                j["compile_s"] = r.compile_s;
                j["quick"] = r.quick;
                j["first_result_s"] = r.first_result_s;
                j["full_s"] = r.full_s;
            }
            j["gbps"] = r.gbps;
        }
        records.push_back(std::move(j));
    }
    root["records"] = std::move(records);
    return root.dump(1) + "\n";
}

Results results_from_json(const std::string& text, const std::string& origin) {
    json root;
    try {
        root = json::parse(text);
    } catch (const json::exception& e) {
        fail("'{}' is not valid JSON ({})", origin, e.what());
    }
    if (!root.is_object() || !root.contains("records"))
        fail("'{}' is not a toroid bench result (expected an object with 'records')", origin);
    Results res;
    if (auto it = root.find("machine"); it != root.end() && !it->is_null()) {
        if (!it->is_object()) fail("'{}': 'machine' must be an object", origin);
        std::string where = fmt::format("'{}': machine", origin);
        res.machine.cpu = optional_string(*it, "cpu", where);
        res.machine.cores = static_cast<int>(number_field(*it, "cores", where, false));
        res.machine.compiler = optional_string(*it, "compiler", where);
        res.machine.toroid_version = optional_string(*it, "toroid_version", where);
        res.machine.device_copy_gbps = number_field(*it, "device_copy_gbps", where, false);
    }
    res.suite = optional_string(root, "suite", fmt::format("'{}'", origin));
    const json& records = root["records"];
    if (!records.is_array()) fail("'{}': 'records' must be a list", origin);
    for (std::size_t i = 0; i < records.size(); ++i) {
        const json& j = records[i];
        std::string where = fmt::format("'{}': record {}", origin, i);
        if (!j.is_object()) fail("{}: must be an object, got {}", where, j.dump());
        Record r;
        r.case_name = string_field(j, "case", where);
        r.title = string_field(j, "title", where);
        r.device = string_field(j, "device", where);
        r.engine = string_field(j, "engine", where);
        r.threads = static_cast<int>(number_field(j, "threads", where, false, 1));
        r.error = optional_string(j, "error", where);
        bool ok = r.error.empty();
        r.median_us = number_field(j, "median_us", where, ok);
        if (ok && !(r.median_us > 0)) fail("{}: 'median_us' must be positive", where);
        r.iqr_us = number_field(j, "iqr_us", where, false);
        r.runs = static_cast<std::int64_t>(number_field(j, "runs", where, false));
        r.prepare_s = number_field(j, "prepare_s", where, false);
        r.prepare_cache = optional_string(j, "prepare_cache", where);
        r.compile_s = number_field(j, "compile_s", where, false);
        r.quick = j.contains("quick") && j["quick"].is_boolean() && j["quick"].get<bool>();
        r.first_result_s = number_field(j, "first_result_s", where, false);
        r.full_s = number_field(j, "full_s", where, false);
        r.gbps = number_field(j, "gbps", where, false);
        res.records.push_back(std::move(r));
    }
    return res;
}

Results load_results(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        fail("cannot read bench results '{}': no such file", path);
    return results_from_json(io::read_file(path), path);
}

InputClass parse_input_class(const std::string& text, const std::string& option) {
    std::vector<std::string> parts;
    std::stringstream ss(text);
    for (std::string p; std::getline(ss, p, ':');) parts.push_back(p);
    if (parts.size() != 3)
        fail("{} '{}' is not dtype:channels:layout (e.g. uint8:3:channels_last)", option, printable(text));
    InputClass c{parse_dtype(parts[0]), 0, parse_layout(parts[2]), text};
    try {
        std::size_t used = 0;
        c.channels = std::stoll(parts[1], &used);
        if (used != parts[1].size()) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
        fail("{} '{}': channels '{}' is not a number", option, printable(text), printable(parts[1]));
    }
    if (c.channels < 1 || c.channels > 4096) fail("{} '{}': channels must be 1..4096", option, printable(text));
    return c;
}

std::vector<BenchCase> pipeline_cases(const BenchOptions& o) {
    const Pipeline p = load_pipeline(o.pipeline);
    const bool inline_json = !o.pipeline.empty() && o.pipeline[0] == '[';
    const std::string title = inline_json ? "pipeline" : std::filesystem::path(o.pipeline).filename().string();
    std::vector<BenchCase> out;
    auto base = [&] {
        BenchCase c;
        c.title = title;
        c.device = o.device;
        c.pipeline = p;
        return c;
    };
    auto describe = [](const BenchCase& c) {
        return fmt::format("({}, {}, {}, {}) {} {}", c.shape[0], c.shape[1], c.shape[2], c.shape[3],
                           dtype_name(c.dtype), c.layout == Layout::ChannelsLast ? "CL" : "CF");
    };
    io::DecodeOptions decode;
    decode.mode = io::parse_image_mode(o.mode);
    auto add_file = [&](const std::filesystem::path& path, const std::string& label) {
        BenchCase c = base();
        try {
            Tensor t = io::read_image(path, decode);
            c.dtype = t.dtype();
            c.shape = t.shape();
            c.layout = t.suggested_layout();
            if (!t.is_dense(c.layout)) t = t.to_layout(c.layout);
            c.name = fmt::format("{} {}", label, describe(c));
            c.data = std::make_shared<const Tensor>(std::move(t));
        } catch (const Error& e) {
            c.name = label;
            c.error = e.what();
        }
        out.push_back(std::move(c));
    };
    for (const std::string& arg : o.images) {
        const std::filesystem::path path(arg);
        std::error_code ec;
        if (std::filesystem::is_directory(path, ec)) {
            const FolderScan scan = scan_image_folder(path);
            if (scan.images.empty()) fail("bench: no image files (.jpg, .jpeg, .png, .npy) in {}", printable(arg));
            for (std::size_t i = 0; i < scan.images.size() && i < kMaxFolderImages; ++i)
                add_file(path / scan.images[i], (path / scan.images[i]).string());
        } else {
            add_file(path, arg);
        }
    }
    if (!o.sizes.empty()) {
        const InputClass k = parse_input_class(o.input_class);
        for (const std::string& size : o.sizes) {
            long long h = 0, w = 0;
            char x = 0, extra = 0;
            if (std::sscanf(size.c_str(), "%lld%c%lld%c", &h, &x, &w, &extra) != 3 || (x != 'x' && x != 'X') ||
                h < 1 || w < 1 || h > 65536 || w > 65536)
                fail("--size '{}' is not HxW (two sides of 1..65536, e.g. 1080x1920)", printable(size));
            BenchCase c = base();
            c.dtype = k.dtype;
            c.shape = Dims{1, k.channels, h, w};
            c.layout = k.layout;
            c.name = describe(c);
            out.push_back(std::move(c));
        }
    }
    if (out.empty()) fail("bench: give images (files or folders) or --size HxW to run the pipeline on");
    return out;
}

std::vector<BenchCase> select_cases(const BenchOptions& o) {
    if (o.device != "cpu" && o.device != "cuda") fail("unknown device '{}' (available: cpu, cuda)", o.device);
    std::vector<BenchCase> all = o.pipeline.empty() ? suite_cases(o.suite) : pipeline_cases(o);
    std::regex pattern;
    try {
        pattern = std::regex(o.filter, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
        fail("invalid --filter regex '{}': {}", o.filter, e.what());
    }
    std::vector<BenchCase> picked;
    for (BenchCase& c : all)
        if (c.device == o.device && (o.filter.empty() || std::regex_search(c.name, pattern)))
            picked.push_back(std::move(c));
    if (picked.empty())
        fail("no case of {} on device '{}' matches --filter '{}'",
             o.pipeline.empty() ? fmt::format("suite '{}'", o.suite) : std::string("the pipeline"), o.device,
             o.filter);
    std::vector<BenchCase> grouped;
    for (auto& [key, cases] : group_by_table(picked, [](const BenchCase& c) { return TableKey{c.title, c.device}; }))
        for (BenchCase& c : cases) grouped.push_back(std::move(c));
    return grouped;
}

std::string format_tables(const std::vector<Record>& records, double copy_gbps) {
    std::vector<const Record*> ok;
    for (const Record& r : records)
        if (r.error.empty()) ok.push_back(&r);
    std::string text;
    for (const auto& [key, group] : group_by_table(ok, [](const Record* r) { return TableKey{r->title, r->device}; }))
        text += format_one_table(key, group, copy_gbps);
    return text;
}

std::string format_compare(const Results& a, const Results& b, const std::string& name_a,
                           const std::string& name_b) {
    auto engines_of = [](const Results& res) {
        std::vector<std::string> list;
        for (const Record& r : res.records)
            if (r.error.empty()) add_unique(list, r.engine);
        return list;
    };
    std::vector<std::string> ea = engines_of(a), eb = engines_of(b);
    // The same engines on both sides: compare each engine with itself. Otherwise (say
    // reference in A, compiled in B) set every engine of A beside every engine of B.
    std::vector<std::pair<std::string, std::string>> pairs;
    if (std::set<std::string>(ea.begin(), ea.end()) == std::set<std::string>(eb.begin(), eb.end())) {
        for (const std::string& e : ea) pairs.emplace_back(e, e);
    } else {
        for (const std::string& x : ea)
            for (const std::string& y : eb) pairs.emplace_back(x, y);
    }

    auto describe = [](const Results& res, const std::string& name) {
        int threads = res.records.empty() ? 0 : res.records.front().threads;
        return fmt::format("{} (suite {}, {} threads; {}; {}; toroid {})", name,
                           res.suite.empty() ? "?" : res.suite, threads,
                           res.machine.cpu.empty() ? "unknown cpu" : res.machine.cpu,
                           res.machine.compiler.empty() ? "unknown compiler" : res.machine.compiler,
                           res.machine.toroid_version.empty() ? "?" : res.machine.toroid_version);
    };
    std::string text = "A: " + describe(a, name_a) + "\n" + "B: " + describe(b, name_b) + "\n" +
                       "Speed-up = A time / B time (above 1: B is faster).\n\n";

    std::map<std::tuple<std::string, std::string, std::string>, const Record*> in_b;
    for (const Record& r : b.records)
        if (r.error.empty()) in_b.emplace(std::tuple{r.device, r.case_name, r.engine}, &r);

    std::vector<std::string> summary;
    std::size_t matched_total = 0;
    for (const auto& [engine_a, engine_b] : pairs) {
        struct Row {
            const Record* a;
            const Record* b;
        };
        std::vector<Row> rows;
        for (const Record& r : a.records) {
            if (!r.error.empty() || r.engine != engine_a) continue;
            auto it = in_b.find(std::tuple{r.device, r.case_name, engine_b});
            if (it != in_b.end()) rows.push_back({&r, it->second});
        }
        if (rows.empty()) continue;
        matched_total += rows.size();
        std::string head_a = "A " + engine_a + " (us)", head_b = "B " + engine_b + " (us)";
        std::vector<double> all_speedups;
        for (const auto& [key, group] :
             group_by_table(rows, [](const Row& r) { return TableKey{r.a->title, r.a->device}; })) {
            std::size_t label_w = std::string_view("geometric mean").size();
            std::size_t a_w = head_a.size(), b_w = head_b.size(), s_w = 7;
            std::vector<double> speedups;
            for (const Row& r : group) {
                label_w = std::max(label_w, display_width(row_label(r.a->case_name, key.title)));
                a_w = std::max(a_w, format_us(r.a->median_us).size());
                b_w = std::max(b_w, format_us(r.b->median_us).size());
                speedups.push_back(r.a->median_us / r.b->median_us);
            }
            std::string header = "  " + std::string(label_w, ' ') + " | " + pad_left(head_a, a_w) + " | " +
                                 pad_left(head_b, b_w) + " | " + pad_left("A/B", s_w);
            std::string title = fmt::format("{}, {}", key.title, key.device);
            if (engine_a != engine_b || pairs.size() > 1) title += fmt::format(": {} vs {}", engine_a, engine_b);
            text += title_line(title, display_width(header)) + "\n" + header + "\n";
            for (std::size_t i = 0; i < group.size(); ++i)
                text += "  " + pad_right(row_label(group[i].a->case_name, key.title), label_w) + " | " +
                        pad_left(format_us(group[i].a->median_us), a_w) + " | " +
                        pad_left(format_us(group[i].b->median_us), b_w) + " | " +
                        pad_left(fmt::format("{:.2f}x", speedups[i]), s_w) + "\n";
            text += "  " + pad_right("geometric mean", label_w) + " | " + std::string(a_w, ' ') + " | " +
                    std::string(b_w, ' ') + " | " + pad_left(fmt::format("{:.2f}x", geometric_mean(speedups)), s_w) +
                    "\n\n";
            all_speedups.insert(all_speedups.end(), speedups.begin(), speedups.end());
        }
        summary.push_back(fmt::format("Overall geometric mean speed-up, {} (A) vs {} (B): {:.2f}x over {} cases",
                                      engine_a, engine_b, geometric_mean(all_speedups), all_speedups.size()));
    }
    if (matched_total == 0)
        fail("'{}' and '{}' have no case in common (records match by case, device and engine)", name_a, name_b);
    for (const std::string& line : summary) text += line + "\n";

    // Cases on one side only are named by count so a partial run is not mistaken for a full one.
    auto cases_of = [](const Results& res) {
        std::set<std::pair<std::string, std::string>> s;
        for (const Record& r : res.records)
            if (r.error.empty()) s.emplace(r.device, r.case_name);
        return s;
    };
    auto ca = cases_of(a), cb = cases_of(b);
    std::size_t only_a = 0, only_b = 0;
    for (const auto& c : ca) only_a += cb.count(c) == 0;
    for (const auto& c : cb) only_b += ca.count(c) == 0;
    if (only_a || only_b) text += fmt::format("Not compared: {} cases only in A, {} only in B.\n", only_a, only_b);
    return text;
}

}  // namespace bench

// ---- the two commands -----------------------------------------------------------------

int run_bench(const BenchOptions& o, std::ostream& out) {
    bench::check_options(o);
    std::vector<bench::BenchCase> cases = bench::select_cases(o);
    std::vector<std::unique_ptr<Engine>> engines;
    for (const std::string& name : o.engines) {
        EngineOptions eo;
        eo.threads = o.threads;
        // Every case's prepare is a first prepare, so that its time is the compile latency.
        eo.cold_prepare = true;
        engines.push_back(make_engine(name, eo));
    }

    bench::Results results{bench::this_machine(), o.pipeline.empty() ? o.suite : "pipeline", {}};
    std::vector<std::string> failures;
    std::size_t table_begin = 0;  // first record of the table being filled
    auto flush_table = [&] {
        std::vector<bench::Record> table(results.records.begin() + static_cast<std::ptrdiff_t>(table_begin),
                                         results.records.end());
        out << bench::format_tables(table, results.machine.device_copy_gbps) << std::flush;
        table_begin = results.records.size();
    };

    const bool cuda_rows = std::any_of(o.engines.begin(), o.engines.end(), [](const std::string& e) { return e == "cuda"; }) &&
                           std::any_of(cases.begin(), cases.end(), [](const bench::BenchCase& c) { return c.device == "cuda"; });
    if (cuda_rows) {
        try {
            results.machine.device_copy_gbps = bench::measure_device_copy_gbps();
            out << fmt::format("device copy (cuMemcpyDtoDAsync, 1 GiB, CUDA events, median of 20): {:.0f} GB/s read + "
                               "written\n\n",
                               results.machine.device_copy_gbps);
        } catch (const Error& e) {
            out << fmt::format("device copy not measured: {}\n\n", e.what());
        }
    }
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const bench::BenchCase& c = cases[i];
        if (i > 0 && (c.title != cases[i - 1].title || c.device != cases[i - 1].device)) flush_table();
        Tensor input;
        std::size_t bytes = 0;
        std::string setup_error;
        try {
            input = bench::make_input(c);
            bytes = bench::case_bytes(c);
        } catch (const Error& e) {
            setup_error = e.what();
        }
        // Engines take turns on the same case so that drifting machine load hits them alike.
        for (auto& engine : engines) {
            bench::Record r;
            try {
                if (!setup_error.empty()) throw Error(setup_error);
                r = engine->name() == "cuda" ? bench::measure_cuda(c, input, bytes, o)
                                              : bench::measure(c, *engine, input, bytes, o);
            } catch (const std::exception& e) {  // an engine's own failure ends only its case
                r = bench::Record{};
                r.case_name = c.name;
                r.title = c.title;
                r.device = c.device;
                r.engine = std::string(engine->name());
                r.threads = o.threads;
                r.error = e.what();
                failures.push_back(fmt::format("{} on '{}': {}", engine->name(), c.name, e.what()));
            }
            results.records.push_back(std::move(r));
        }
    }
    flush_table();
    if (!failures.empty()) {
        out << fmt::format("{} measurement(s) failed:\n", failures.size());
        for (const std::string& f : failures) out << "  " << f << "\n";
    }
    if (!o.json_path.empty()) {
        io::write_file_atomic(o.json_path, bench::results_to_json(results));
        out << "Results written to " << o.json_path << "\n";
    }
    return failures.empty() ? 0 : 1;
}

int compare_bench(const std::string& a, const std::string& b, std::ostream& out) {
    bench::Results ra = bench::load_results(a);
    bench::Results rb = bench::load_results(b);
    out << bench::format_compare(ra, rb, a, b);
    return 0;
}

}  // namespace toroid
