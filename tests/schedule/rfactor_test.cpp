// Reductions along rows in vector lanes (schedule/rfactor.h): which kernels are split into
// lanes and their combination, and the results equal to the reference engine's, for rows
// shorter than, equal to and longer than the lanes, with and without row ends.
#include "schedule/rfactor.h"

#include "../engine/op_table_support.h"
#include "decomp/decompose.h"
#include "ops/pipeline_json.h"
#include "schedule/schedule.h"

#include <gtest/gtest.h>

#include <string>

namespace toroid {
namespace {

ir::Program program_for(const std::string& json, Layout layout, DType dtype = DType::UInt8) {
    const Pipeline p = parse_pipeline(json, ".");
    const Dims shape{2, 3, 20, 45};
    schedule::Options o;
    o.target = Target::host_cpu();
    return schedule::schedule(decomp::decompose(p, TensorSpec{dtype, shape, dense_strides(shape, layout)}), o);
}

int lanes_buffers(const ir::Program& p) {
    int n = 0;
    for (const ir::Buffer& b : p.buffers) n += b.name.size() > 6 && b.name.compare(b.name.size() - 6, 6, ".lanes") == 0;
    return n;
}

TEST(Rfactor, WholeImageReductionsRunAlongRowsInLanes) {
    // Autocontrast's least and greatest values (Min, Max), equalize's greatest value (its
    // counts per bin are a histogram: schedule/histogram.h).
    EXPECT_EQ(lanes_buffers(program_for(R"([{"op": "autocontrast"}])", Layout::Contiguous)), 2);
    EXPECT_EQ(lanes_buffers(program_for(R"([{"op": "equalize"}])", Layout::Contiguous)), 1);
    // Contrast's uint8 grey rows: a double sum of integer values (floored grey), the same in
    // any grouping.
    EXPECT_EQ(lanes_buffers(program_for(R"([{"op": "adjust_contrast", "factor": 0.5}])", Layout::Contiguous)), 1);
    // Rows of channels-last pixels too (a channel's elements a pixel apart).
    EXPECT_EQ(lanes_buffers(program_for(R"([{"op": "autocontrast"}])", Layout::ChannelsLast)), 2);
    EXPECT_EQ(lanes_buffers(program_for(R"([{"op": "adjust_contrast", "factor": 0.5}])", Layout::ChannelsLast)), 1);
    // Not: float sums of float values (their order is their rounding).
    EXPECT_EQ(lanes_buffers(program_for(R"([{"op": "adjust_contrast", "factor": 0.5}])", Layout::Contiguous,
                                        DType::Float32)),
              0);
}

TEST(Rfactor, CompiledEqualsReferenceOnRandomImages) {
    test::expect_compiled_matches_reference(
        {R"([{"op": "autocontrast"}])", R"([{"op": "equalize"}])",
         R"([{"op": "posterize", "bits": 3}, {"op": "autocontrast"}, {"op": "adjust_contrast", "factor": 1.7}])"},
        {Dims{1, 1, 7, 5}, Dims{1, 1, 9, 16}, Dims{1, 1, 13, 37}, Dims{1, 1, 3, 70}});
}

}  // namespace
}  // namespace toroid
