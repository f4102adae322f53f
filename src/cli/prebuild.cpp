// `toroid prebuild` (cli/prebuild.h): the compiled engine in prebuild mode (EngineOptions::
// prebuild_into) prepared on probe inputs. Programs are shape-generic, specialized only on
// the input's class (dtype, channels, layout) and, per axis, on relations such as up- or
// down-scaling and padding: probe sides from tiny to large reach each of those variants, and
// the engine's structure cache compiles each program once however many probes share it.
#include "cli/prebuild.h"

#include "bench/bench.h"

#include "core/error.h"
#include "core/tensor.h"
#include "engine/engine.h"
#include "io/file.h"
#include "ops/pipeline_json.h"
#include "ops/ops.h"
#include "target/target.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>

namespace toroid::cli {

using bench::InputClass;

namespace {

// The entries of a set file ({"pipelines": [entry, ...]}, each entry [op, ...] or
// {"ops": [...], "size": [h, w]}); nullopt for anything else (inline JSON, a file of one
// pipeline), which load_pipeline reads and reports on.
std::optional<nlohmann::json> pipeline_set(const std::string& arg) {
    const std::size_t first = arg.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && arg[first] == '[') return std::nullopt;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(arg, ec)) return std::nullopt;
    const std::string text = io::read_file(arg, io::kMaxPipelineBytes);
    const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!doc.is_object() || !doc.contains("pipelines")) return std::nullopt;
    const nlohmann::json& set = doc["pipelines"];
    if (!set.is_array() || set.empty())
        fail("{}: \"pipelines\" must be a non-empty list of pipelines", printable(arg, 80));
    return set;
}

}  // namespace

int run_prebuild(const PrebuildArgs& a, std::ostream& out) {
    if (a.into.empty()) fail("--into needs a folder");
    std::vector<InputClass> classes;
    for (const auto& t : a.inputs.empty() ? std::vector<std::string>{"uint8:3:channels_last", "uint8:3:contiguous"}
                                          : a.inputs)
        classes.push_back(bench::parse_input_class(t));
    // From a thumbnail to a large photo: sizes on both sides of common resize targets.
    const std::vector<long long> sizes = a.sizes.empty() ? std::vector<long long>{24, 200, 720, 2400} : a.sizes;
    const std::vector<long long> batches = a.batches.empty() ? std::vector<long long>{1} : a.batches;
    for (long long s : sizes)
        if (s < 1 || s > 65536) fail("--sizes: {} is not 1..65536", s);
    for (long long n : batches)
        if (n < 1 || n > 4096) fail("--batch: {} is not 1..4096", n);

    // A file may hold one pipeline (a list of ops) or a set of them ({"pipelines": [...]}: the
    // programs training recipes' calls need, scripts/make_presets.py), each a list of ops or
    // {"ops": [...], "size": [h, w]} (prepared on that input size only); each is labelled for
    // the report.
    std::vector<Pipeline> pipelines;
    std::vector<std::string> labels;
    std::vector<std::optional<std::pair<long long, long long>>> fixed_sizes;  // an entry's own size
    for (const auto& p : a.pipelines) {
        if (std::optional<nlohmann::json> set = pipeline_set(p)) {
            const std::filesystem::path dir = std::filesystem::path(p).parent_path();
            for (std::size_t j = 0; j < set->size(); ++j) {
                labels.push_back(fmt::format("{}#{}", printable(p, 80), j));
                try {
                    const nlohmann::json& entry = (*set)[j];
                    std::optional<std::pair<long long, long long>> size;
                    if (entry.is_object()) {
                        if (!entry.contains("ops")) fail("an entry that is an object needs \"ops\"");
                        if (entry.contains("size")) {
                            const nlohmann::json& hw = entry["size"];
                            if (!hw.is_array() || hw.size() != 2 || !hw[0].is_number_integer() ||
                                !hw[1].is_number_integer() || hw[0].get<long long>() < 1 ||
                                hw[1].get<long long>() < 1 || hw[0].get<long long>() > 65536 ||
                                hw[1].get<long long>() > 65536)
                                fail("\"size\" must be [height, width], each 1..65536");
                            size = std::pair{hw[0].get<long long>(), hw[1].get<long long>()};
                        }
                    }
                    pipelines.push_back(parse_pipeline_doc(entry.is_object() ? entry["ops"] : entry,
                                                           dir.empty() ? "." : dir));
                    fixed_sizes.push_back(size);
                } catch (const Error& e) {
                    fail("{}: {}", labels.back(), e.what());
                }
            }
            continue;
        }
        pipelines.push_back(load_pipeline(p));
        labels.push_back(printable(p, 80));
        fixed_sizes.emplace_back();
    }
    std::filesystem::create_directories(a.into);
    const std::string into = std::filesystem::absolute(a.into).string();

    const Target target = Target::host_cpu();
    EngineOptions options;
    options.threads = 1;
    options.prebuild_into = into;
    auto engine = make_engine("compiled", options);
    out << fmt::format("toroid prebuild: {} for {} into {}\n", target.name(), target.isa_level(), into);

    int total_built = 0, total_there = 0;
    for (std::size_t i = 0; i < pipelines.size(); ++i) {
        for (const InputClass& c : classes) {
            int built = 0, there = 0, shared = 0, probes = 0;
            std::string last_error;
            // An entry of a set with its own size is prepared on that size alone.
            const std::vector<long long> hs = fixed_sizes[i] ? std::vector<long long>{fixed_sizes[i]->first} : sizes;
            const std::vector<long long> ws = fixed_sizes[i] ? std::vector<long long>{fixed_sizes[i]->second} : sizes;
            for (long long n : batches)
                for (long long h : hs)
                    for (long long w : ws) {
                        const Dims shape{n, c.channels, h, w};
                        const TensorSpec spec{c.dtype, shape, dense_strides(shape, c.layout)};
                        try {
                            infer_shape(pipelines[i], ShapeInfo{spec.dtype, spec.shape});
                        } catch (const Error& e) {
                            last_error = e.what();  // a size the pipeline does not take
                            continue;
                        }
                        ++probes;
                        const PrepareStats st = engine->prepare(pipelines[i], spec)->stats();
                        built += st.compiled;
                        there += st.prebuilt_hits;
                        shared += st.compiled == 0 && st.prebuilt_hits == 0;
                    }
            if (probes == 0)
                fail("{} on {}: no probe size is a valid input ({})", labels[i], c.text, last_error);
            // A probe whose program an earlier probe or pipeline made (one structure) is shared.
            out << fmt::format("  {} {}: {} program{} ({} compiled, {} already there), {} of {} probe inputs on "
                               "programs made before\n",
                               labels[i], c.text, built + there, built + there == 1 ? "" : "s",
                               built, there, shared, probes);
            total_built += built;
            total_there += there;
        }
    }
    out << fmt::format("toroid prebuild: {} programs compiled, {} already there\n", total_built, total_there);
    return 0;
}

}  // namespace toroid::cli
