// Helpers the op-table tests share (colour, tone, blur, pad and erase): the compiled engine
// against the reference on a grid of random images, and the CUDA generator's sources of a
// list of pipelines through clang's CUDA front end (no SDK).
#pragma once

#include "engine/cuda_engine.h"
#include "engine/engine.h"
#include "engine_test_support.h"
#include "ops/pipeline_json.h"
#include "reference/reference.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace toroid::test {

// Every pipeline on seeded random images of both dtypes and layouts, 1 and 3 channels and
// each height x width of `sizes` (dims 2 and 3; two images where the height is 7), through
// the compiled engine's quick and full tiers (and, with `specialized`, the specialized
// engine at height 7): each bit for bit the reference engine's result. At a sampling
// stride k (sample_stride()), every k-th of these cases only.
inline void expect_compiled_matches_reference(const std::vector<std::string>& pipelines, const std::vector<Dims>& sizes,
                                              bool specialized = false) {
    std::uint32_t seed = 1;
    std::size_t index = 0;
    for (const std::string& text : pipelines)
        for (DType dt : {DType::UInt8, DType::Float32})
            for (Layout l : {Layout::Contiguous, Layout::ChannelsLast})
                for (std::int64_t c : {1, 3})
                    for (const Dims& hw : sizes) {
                        if (!sampled(index++)) {
                            ++seed;
                            continue;
                        }
                        const Pipeline p = parse_pipeline(text, ".");
                        const std::int64_t n = hw[2] == 7 ? 2 : 1;
                        const Tensor in = random_image(dt, {n, c, hw[2], hw[3]}, l, seed++);
                        SCOPED_TRACE(text + " " + std::string(dtype_name(dt)) + " " + std::string(layout_name(l)) +
                                     " c=" + std::to_string(c) + " " + std::to_string(hw[2]) + "x" + std::to_string(hw[3]));
                        const Tensor want = reference::run(p, in);
                        for (Tiers tiers : {Tiers::QuickOnly, Tiers::FullOnly}) {
                            EngineOptions o;
                            o.tiers = tiers;
                            const Tensor got = make_engine("compiled", o)->prepare(p, in.spec())->run(in);
                            ASSERT_TRUE(identical(got, want)) << "max difference " << max_difference(got, want);
                        }
                        if (specialized && hw[2] == 7) {
                            const Tensor got = make_engine("specialized", EngineOptions{})->prepare(p, in.spec())->run(in);
                            ASSERT_TRUE(identical(got, want)) << "specialized: max difference " << max_difference(got, want);
                        }
                    }
}

// The tensors the kernels an explain() lists compute ("kernel_3: ... -> op0.mean float[..."),
// in order, less the scheduler's own helpers: a reduction's lanes along rows
// (schedule/rfactor.h) and a byte function's table (schedule/tabulate.h).
inline std::vector<std::string> kernels_computing(const std::string& explain) {
    std::vector<std::string> names;
    std::istringstream in(explain);
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("kernel_", 0) != 0) continue;
        const auto arrow = line.find("-> ");
        if (arrow == std::string::npos) continue;
        const std::string name = line.substr(arrow + 3, line.find(' ', arrow + 3) - arrow - 3);
        const auto ends_with = [&](const std::string& s) {
            return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
        };
        if (!ends_with(".lanes") && !ends_with(".table")) names.push_back(name);
    }
    return names;
}

// The distinct single-image and batched CUDA sources of every pipeline, uint8 and float32,
// both layouts, on an input of `shape`.
inline std::vector<std::string> cuda_sources_of(const std::vector<std::string>& pipelines, const Dims& shape) {
    std::set<std::string> seen;
    std::vector<std::string> sources;
    for (const std::string& text : pipelines) {
        const Pipeline p = parse_pipeline(text, ".");
        for (DType dt : {DType::UInt8, DType::Float32})
            for (Layout l : {Layout::Contiguous, Layout::ChannelsLast}) {
                const TensorSpec spec{dt, shape, dense_strides(shape, l)};
                for (const std::string& src : {cuda_source(p, spec, "sm_70"), cuda_batch_source(p, spec, "sm_70")})
                    if (seen.insert(src).second) sources.push_back(src);
            }
    }
    return sources;
}

// `sources` compile with clang's CUDA front end (scripts/check-cuda-source.sh); the test is
// skipped where clang cannot compile CUDA.
inline void expect_cuda_sources_compile(const std::vector<std::string>& sources) {
    const CudaSourceCheck r = check_cuda_sources(sources);
    ASSERT_NE(r.status, -1) << r.log;
    if (r.status == 77) GTEST_SKIP() << r.log;
    EXPECT_EQ(r.status, 0) << r.log;
}

}  // namespace toroid::test
