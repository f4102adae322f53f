// The printers of the tone ops' primitives: a Min / Max reduction starts from its identity
// and steps with t_rmin / t_rmax (scalar and vector forms), Pow is t_pow (pow_v in vectors),
// on the CPU's programs (host, scalar and AVX2 targets) and in the CUDA source.
#include "codegen/cpp.h"
#include "decomp/decompose.h"
#include "engine/cuda_engine.h"
#include "ops/pipeline_json.h"
#include "schedule/schedule.h"

#include <gtest/gtest.h>

#include <string>

namespace toroid {
namespace {

std::string cpu_source(const std::string& json, DType dt, const schedule::Options& o) {
    const Pipeline p = parse_pipeline(json, ".");
    const Dims shape{2, 3, 9, 40};
    const TensorSpec spec{dt, shape, dense_strides(shape, Layout::ChannelsLast)};
    return codegen::generate_cpp(schedule::schedule(decomp::decompose(p, spec), o), 16);
}

bool has(const std::string& src, const std::string& what) { return src.find(what) != std::string::npos; }

TEST(ToneCodegen, ReductionsAndPowOnEveryTarget) {
    for (const Target& t : {Target::host_cpu(), Target::host_cpu().scalar()}) {
        schedule::Options o;
        o.target = t;
        for (DType dt : {DType::UInt8, DType::Float32}) {
            const std::string ac = cpu_source(R"([{"op": "autocontrast"}])", dt, o);
            EXPECT_TRUE(has(ac, "t_rmin(") || has(ac, "rmin_v(")) << ac;
            EXPECT_TRUE(has(ac, "t_rmax(") || has(ac, "rmax_v(")) << ac;
            EXPECT_TRUE(has(ac, "INFINITY")) << "a Min starts from +inf";
            const std::string gamma = cpu_source(R"([{"op": "adjust_gamma", "gamma": 2.2}])", dt, o);
            EXPECT_TRUE(has(gamma, "t_pow(") || has(gamma, "pow_v(")) << gamma;
        }
    }
    const Dims shape{2, 3, 9, 40};
    const TensorSpec spec{DType::UInt8, shape, dense_strides(shape, Layout::Contiguous)};
    const std::string cu = cuda_source(parse_pipeline(R"([{"op": "autocontrast"}, {"op": "adjust_gamma", "gamma": 0.4}])", "."),
                                       spec, "sm_80");
    EXPECT_TRUE(has(cu, "t_rmin(") && has(cu, "t_rmax(") && has(cu, "t_pow(")) << cu;
}

}  // namespace
}  // namespace toroid
