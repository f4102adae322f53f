// The benchmark library's reporting of compile latency: each record's first-prepare time and
// where the code came from survive the JSON round trip, and the tables sum them up per
// compiling engine (engines that compile nothing get no line).
#include "bench/bench.h"

#include "core/error.h"
#include "io/file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace toroid::bench {
namespace {

Record record(const std::string& engine, const std::string& row, double prepare_s, const std::string& cache,
              double compile_s) {
    Record r;
    r.case_name = "flip " + row;
    r.title = "flip";
    r.device = "cpu";
    r.engine = engine;
    r.median_us = 10;
    r.runs = 10;
    r.prepare_s = prepare_s;
    r.prepare_cache = cache;
    r.compile_s = compile_s;
    return r;
}

TEST(BenchCompileLatency, JsonKeepsPrepareCacheAndCompileTime) {
    Results res;
    res.suite = "quick";
    res.records = {record("compiled", "(1, 3, 8, 8)", 0.25, "compiled", 0.2),
                   record("compiled", "(1, 3, 9, 9)", 0.01, "disk", 0),
                   record("reference", "(1, 3, 8, 8)", 0.001, "", 0)};
    const Results back = results_from_json(results_to_json(res), "test");
    ASSERT_EQ(back.records.size(), 3u);
    EXPECT_EQ(back.records[0].prepare_cache, "compiled");
    EXPECT_DOUBLE_EQ(back.records[0].prepare_s, 0.25);
    EXPECT_DOUBLE_EQ(back.records[0].compile_s, 0.2);
    EXPECT_EQ(back.records[1].prepare_cache, "disk");
    EXPECT_EQ(back.records[2].prepare_cache, "");
    EXPECT_EQ(results_to_json(res).find("\"prepare_cache\": \"\""), std::string::npos);
}

TEST(BenchCompileLatency, TablesSumUpFirstPrepares) {
    const std::vector<Record> records = {record("compiled", "(1, 3, 8, 8)", 0.300, "compiled", 0.28),
                                         record("reference", "(1, 3, 8, 8)", 0.001, "", 0),
                                         record("compiled", "(1, 3, 9, 9)", 0.010, "disk", 0),
                                         record("reference", "(1, 3, 9, 9)", 0.001, "", 0),
                                         record("compiled", "(1, 3, 7, 7)", 0.500, "compiled", 0.45),
                                         record("reference", "(1, 3, 7, 7)", 0.001, "", 0)};
    const std::string text = format_tables(records);
    EXPECT_NE(text.find("First prepare, compiled: median 300 ms, max 500 ms over 3 cases (2 compiled, 1 disk hit)"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("First prepare, reference"), std::string::npos) << text;
    // Per case: a prepare column for the compiled engine only, disk hits marked.
    EXPECT_NE(text.find("    prepare | "), std::string::npos) << text;
    EXPECT_NE(text.find("  300 ms | "), std::string::npos) << text;
    EXPECT_NE(text.find("  10 ms disk | "), std::string::npos) << text;
    EXPECT_NE(text.find("  500 ms | "), std::string::npos) << text;
}

TEST(BenchCompileLatency, QuickBuildLineSummarizesOnlyTheCasesThatRanOne) {
    std::vector<Record> records = {record("compiled", "(1, 3, 8, 8)", 0.100, "compiled", 0.09),
                                   record("compiled", "(1, 3, 9, 9)", 0.005, "disk", 0)};
    records[0].quick = true;
    records[0].first_result_s = 0.120;
    records[0].full_s = 0.900;
    records[1].first_result_s = records[1].full_s = 0.005;  // a disk hit: no quick build
    const std::string text = format_tables(records);
    EXPECT_NE(text.find("1 quick build first: first result median 120 ms, max 120 ms; full build loaded after "
                        "median 900 ms, max 900 ms"),
              std::string::npos)
        << text;
}

TEST(BenchCompileLatency, EnginesThatCompileNothingGetNoPrepareColumn) {
    const std::string text = format_tables({record("reference", "(1, 3, 8, 8)", 0.001, "", 0)});
    EXPECT_EQ(text.find("prepare"), std::string::npos) << text;
    EXPECT_EQ(text.find("First prepare"), std::string::npos) << text;
}

// `toroid bench PIPELINE IMAGES... --size HxW`: a case per image file (folders walked),
// named by its path and input, holding the decoded image; a file that cannot be read is a
// case that fails; generated inputs of the input class per size.
TEST(BenchPipelineCases, ImagesFoldersAndSizes) {
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("toroid_bench_cases_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir / "photos");
    io::write_image(dir / "photos" / "a.png", Tensor::zeros(DType::UInt8, {1, 3, 20, 30}, Layout::ChannelsLast));
    io::write_image(dir / "photos" / "b.npy", Tensor::zeros(DType::Float32, {1, 1, 8, 9}));
    std::ofstream(dir / "broken.png") << "not a png";
    BenchOptions o;
    o.pipeline = R"([{"op": "flip", "dims": [3]}])";
    o.images = {(dir / "photos").string(), (dir / "broken.png").string()};
    o.sizes = {"64x48"};
    o.input_class = "float32:1:contiguous";
    const std::vector<BenchCase> cases = pipeline_cases(o);
    ASSERT_EQ(cases.size(), 4u);
    EXPECT_EQ(cases[0].shape, (Dims{1, 3, 20, 30}));
    EXPECT_EQ(cases[0].layout, Layout::ChannelsLast);
    ASSERT_TRUE(cases[0].data);
    EXPECT_NE(cases[0].name.find("a.png (1, 3, 20, 30) uint8 CL"), std::string::npos) << cases[0].name;
    EXPECT_EQ(cases[1].dtype, DType::Float32);
    EXPECT_EQ(make_input(cases[1]).shape(), (Dims{1, 1, 8, 9}));
    EXPECT_FALSE(cases[2].error.empty());
    EXPECT_THROW(make_input(cases[2]), Error);
    EXPECT_EQ(cases[3].shape, (Dims{1, 1, 64, 48}));
    EXPECT_EQ(cases[3].dtype, DType::Float32);
    EXPECT_FALSE(cases[3].data);
    EXPECT_EQ(cases[3].title, "pipeline");
    std::filesystem::remove_all(dir);
}

TEST(BenchPipelineCases, BadArgumentsAreErrors) {
    BenchOptions o;
    o.pipeline = R"([{"op": "flip", "dims": [3]}])";
    EXPECT_THROW(pipeline_cases(o), Error);  // nothing to run on
    for (const char* size : {"12", "0x5", "5x", "1e3x4", "5x5x5"}) {
        o.sizes = {size};
        EXPECT_THROW(pipeline_cases(o), Error) << size;
    }
    o.sizes = {"8x8"};
    for (const char* k : {"uint8:3", "uint9:3:contiguous", "uint8:x:contiguous", "uint8:0:contiguous",
                          "uint8:3:planar"}) {
        o.input_class = k;
        EXPECT_THROW(pipeline_cases(o), Error) << k;
    }
    o.input_class = "uint8:3:contiguous";
    o.pipeline = R"([{"op": "flip"}])";
    EXPECT_THROW(pipeline_cases(o), Error);
}

}  // namespace
}  // namespace toroid::bench
