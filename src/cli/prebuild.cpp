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
#include "ops/pipeline_json.h"
#include "ops/ops.h"
#include "target/target.h"

#include <fmt/format.h>

#include <filesystem>

namespace toroid::cli {

using bench::InputClass;

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

    std::vector<Pipeline> pipelines;
    for (const auto& p : a.pipelines) pipelines.push_back(load_pipeline(p));
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
            for (long long n : batches)
                for (long long h : sizes)
                    for (long long w : sizes) {
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
                fail("{} on {}: no probe size is a valid input ({})", printable(a.pipelines[i], 80), c.text, last_error);
            // A probe whose program an earlier probe or pipeline made (one structure) is shared.
            out << fmt::format("  {} {}: {} program{} ({} compiled, {} already there), {} of {} probe inputs on "
                               "programs made before\n",
                               printable(a.pipelines[i], 80), c.text, built + there, built + there == 1 ? "" : "s",
                               built, there, shared, probes);
            total_built += built;
            total_there += there;
        }
    }
    out << fmt::format("toroid prebuild: {} programs compiled, {} already there\n", total_built, total_there);
    return 0;
}

}  // namespace toroid::cli
