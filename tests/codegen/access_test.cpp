// The access analysis (schedule/access.h) is the C++ printer's contract: each load's form
// along the vector loop is decided once by the scheduler, recorded in the kernel
// (CpuPlan::loads, "loads along ..." in its decisions), and the printer prints a gather only
// where the plan lists it. Checked from outside the printer, on the generated source of
// every conformance case's pipeline (a CPU target per case, both layouts), and form by form
// on pipelines whose reads are known.
#include "../engine/engine_test_support.h"
#include "codegen/cpp.h"
#include "decomp/decompose.h"
#include "io/npy.h"
#include "ops/pipeline_json.h"
#include "schedule/access.h"
#include "schedule/schedule.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace toroid {
namespace {

namespace fs = std::filesystem;
using ir::LoadAccess;
using ir::LoadForm;

Target named_target(const char* name) {
    const char* old = std::getenv("TOROID_CPU_TARGET");
    const std::string saved = old ? old : "";
    setenv("TOROID_CPU_TARGET", name, 1);
    Target t = Target::host_cpu();
    if (old) setenv("TOROID_CPU_TARGET", saved.c_str(), 1);
    else unsetenv("TOROID_CPU_TARGET");
    return t;
}

ir::Program program(const std::string& json, const fs::path& dir, const Target& target, DType dtype, const Dims& shape,
                    Layout layout) {
    schedule::Options o;
    o.target = target;
    return schedule::schedule(
        decomp::decompose(parse_pipeline(json, dir), TensorSpec{dtype, shape, dense_strides(shape, layout)}), o);
}

bool planned(const ir::Kernel& k, int buffer, LoadForm f) {
    return std::any_of(k.cpu().loads.begin(), k.cpu().loads.end(),
                       [&](const LoadAccess& a) { return a.buffer == buffer && a.form == f; });
}

// The source of kernel `name`'s function: from its head to the next kernel's comment.
std::string kernel_source(const std::string& src, const std::string& name) {
    const auto at = src.find("static void " + name + "(");
    if (at == std::string::npos) return {};
    const auto next = src.find("\nstatic void ", at + 1);
    return src.substr(at, next == std::string::npos ? std::string::npos : next - at);
}

// Every gather the source of each kernel of `p` prints is one its plan lists (words read
// through a window may also be the hardware gather: the general copy of a loop whose
// windows do not fit), and every kernel with a vector loop has a plan. Returns the number
// of gathers seen.
int expect_gathers_planned(const ir::Program& p, const std::string& src, const std::string& what) {
    static const std::regex gather(R"(\b(gather_v|gather_bytes_v|gather_bytes_bounded_v)\(b(\d+),)");
    int seen = 0;
    for (const ir::Kernel& k : p.kernels) {
        const std::string body = kernel_source(src, k.name);
        EXPECT_FALSE(body.empty()) << what << ": " << k.name << " not found in the source";
        const bool vector = std::any_of(k.loops.begin(), k.loops.end(),
                                        [](const ir::Loop& l) { return l.kind == ir::LoopKind::Vector; });
        if (vector) {
            EXPECT_TRUE(std::any_of(k.decisions.begin(), k.decisions.end(),
                                    [](const std::string& d) { return d.rfind("loads along v", 0) == 0; }))
                << what << ": " << k.name << " has a vector loop and no access plan in its decisions";
        }
        for (std::sregex_iterator it(body.begin(), body.end(), gather), end; it != end; ++it) {
            ++seen;
            const std::string fn = (*it)[1];
            const int b = std::stoi((*it)[2]);
            const LoadForm f = fn == "gather_v"         ? LoadForm::LaneGather
                               : fn == "gather_bytes_v" ? LoadForm::WordGather
                                                        : LoadForm::BoundedWordGather;
            const bool ok = planned(k, b, f) || (f == LoadForm::LaneGather && type_bytes(p.buffer(b).type) == 4 &&
                                                 planned(k, b, LoadForm::Window));
            EXPECT_TRUE(ok) << what << ": " << k.name << " prints " << fn << " of b" << b << ", its plan: "
                            << schedule::describe_loads(k.cpu().loads);
        }
    }
    return seen;
}

TEST(Access, EveryConformanceCasePrintsOnlyThePlannedGathers) {
    const fs::path root = fs::path(TOROID_TEST_DATA) / "conformance";
    std::vector<fs::path> cases;
    for (const auto& d : fs::directory_iterator(root))
        if (fs::exists(d.path() / "pipeline.json")) cases.push_back(d.path());
    std::sort(cases.begin(), cases.end());
    ASSERT_GT(cases.size(), 1000u);
    const Target targets[] = {named_target("avx2"), named_target("avx512"), named_target("avx512vbmi"),
                              named_target("zen4")};
    int gathers = 0, planned_kernels = 0;
    // (Every case in the main run; the sanitized run samples them: TOROID_TEST_STRIDE.)
    for (std::size_t i = 0; i < cases.size(); ++i) {
        if (!test::sampled(i)) continue;
        std::ifstream f(cases[i] / "pipeline.json");
        std::stringstream json;
        json << f.rdbuf();
        const io::NpyArray input = io::read_npy(cases[i] / "input.npy");
        const Target& target = targets[i / static_cast<std::size_t>(test::sample_stride()) % std::size(targets)];
        for (const Layout layout : {Layout::Contiguous, Layout::ChannelsLast}) {
            const std::string what = fmt::format("{} on {} ({})", cases[i].filename().string(), target.name(),
                                                 layout_name(layout));
            try {
                const ir::Program p = program(json.str(), cases[i], target, input.dtype, input.data.shape(), layout);
                gathers += expect_gathers_planned(p, codegen::generate_cpp(p, target.kernel_lanes()), what);
                for (const ir::Kernel& k : p.kernels) planned_kernels += k.cpu().loads.empty() ? 0 : 1;
            } catch (const std::exception& e) {
                ADD_FAILURE() << what << ": " << e.what();
            }
        }
    }
    // The set has gathers of every kind to check, and plans for most kernels.
    EXPECT_GT(gathers, 500 / test::sample_stride());
    EXPECT_GT(planned_kernels, 2000 / test::sample_stride());
}

struct FormCase {
    const char* json;
    DType dtype;
    Layout layout;
    const char* target;
    LoadForm input_form;  // the form of the reads of the pipeline's input in its first kernel
};

TEST(Access, KnownReadsGetTheirForms) {
    const Dims shape{1, 3, 37, 53};
    const FormCase cases[] = {
        // A planar horizontal flip reads each row backwards.
        {R"([{"op": "flip", "dims": [-1]}])", DType::Float32, Layout::Contiguous, "avx512", LoadForm::Reversed},
        // A vertical flip reads rows forwards.
        {R"([{"op": "flip", "dims": [-2]}])", DType::UInt8, Layout::Contiguous, "avx2", LoadForm::Contiguous},
        // A planar nearest resize reads columns through its index table: a window per block
        // of output columns (the lanes' part depends on the column alone).
        {R"([{"op": "resize", "size": [20, 30], "mode": "nearest"}])", DType::UInt8, Layout::Contiguous, "avx512vbmi",
         LoadForm::Window},
        // An affine warp of floats reads where the grid points: the hardware gather.
        {R"([{"op": "affine", "theta": [[0.87, -0.5, 0.1], [0.5, 0.87, -0.2]], "mode": "bilinear", "padding_mode": "zeros", "align_corners": false}])",
         DType::Float32, Layout::Contiguous, "avx2", LoadForm::LaneGather},
        // A perspective warp of bytes gathers words that stay inside the input.
        {R"([{"op": "perspective", "coefficients": [1.08, -0.1, 0.8, 0.1, 1.15, -9.2, 0.0007, -0.002], "mode": "nearest"}])",
         DType::UInt8, Layout::Contiguous, "avx2", LoadForm::BoundedWordGather},
    };
    for (const FormCase& c : cases) {
        SCOPED_TRACE(c.json);
        const Target target = named_target(c.target);
        const ir::Program p = program(c.json, ".", target, c.dtype, shape, c.layout);
        const ir::Kernel* first = nullptr;
        for (const ir::Kernel& k : p.kernels)
            if (!first && std::any_of(k.cpu().loads.begin(), k.cpu().loads.end(),
                                      [&](const LoadAccess& a) { return p.buffer(a.buffer).role == ir::BufferRole::Input; }))
                first = &k;
        ASSERT_NE(first, nullptr) << "no kernel with a vector loop reads the input";
        EXPECT_TRUE(planned(*first, p.input, c.input_form))
            << first->name << ": " << schedule::describe_loads(first->cpu().loads) << ", expected b" << p.input << " "
            << ir::load_form_name(c.input_form);
        expect_gathers_planned(p, codegen::generate_cpp(p, target.kernel_lanes()), c.json);
    }
}

// The forms of hand-written offsets along v0 (a tap loop over r = var 64 where given).
TEST(Access, SplitGatherSeparatesTheLanesPartFromTheTaps) {
    using namespace ir;
    const Expr x = var(0), y = var(1), r = var(kFirstReductionVar);
    // table(x) + r: the lanes' part is the table's entry, the tap's part the same in every lane.
    const Expr idx = floordiv(mul(x, iconst(3)), iconst(2));
    const auto s = schedule::split_gather(add(idx, r), 0, kFirstReductionVar);
    ASSERT_TRUE(s);
    EXPECT_EQ(to_string(s->lanes), to_string(idx));
    EXPECT_EQ(to_string(s->uniform), to_string(r));
    EXPECT_TRUE(schedule::lanes_column_only(s->lanes, 0));
    // A term of both the lane and the tap has no split in that tap loop.
    EXPECT_FALSE(schedule::split_gather(floordiv(mul(add(x, r), iconst(3)), iconst(2)), 0, kFirstReductionVar));
    // Consecutive and constant-stride offsets are not gathers.
    EXPECT_FALSE(schedule::split_gather(add(mul(y, iconst(53)), x), 0, -1));
    EXPECT_FALSE(schedule::split_gather(mul(x, iconst(3)), 0, -1));
    // Lanes' parts naming the row are not the column's alone.
    const auto row = schedule::split_gather(floordiv(mul(x, y), iconst(2)), 0, -1);
    ASSERT_TRUE(row);
    EXPECT_FALSE(schedule::lanes_column_only(row->lanes, 0));
}

}  // namespace
}  // namespace toroid
