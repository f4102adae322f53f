// The benchmark suites of `toroid bench`: each case is one pipeline on one input
// (dtype, shape, layout) for one device. "seeds" holds the rows of the anchor tables
// (docs of the measured PyTorch baselines) and an eval preprocessing pipeline (resize, crop,
// flip, convert, normalize); "quick" a few small CPU rows for smoke runs.
#pragma once

#include "core/dtype.h"
#include "core/tensor.h"
#include "ops/ops.h"

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace toroid::bench {

struct BenchCase {
    // The anchor row's label, e.g. "interpolate bilinear AA (1, 3, 345, 456) -> (270, 270) uint8 CL".
    std::string name;
    // The op family the case's table is titled by, e.g. "interpolate bilinear AA", "flip".
    std::string title;
    std::string device = "cpu";  // "cpu" or "cuda"
    Pipeline pipeline;
    DType dtype = DType::UInt8;
    Dims shape{0, 0, 0, 0};
    Layout layout = Layout::Contiguous;
    // The input itself (a user's image: `toroid bench PIPELINE IMAGE`), else make_input
    // makes one; or why it could not be read (the case then fails on every engine).
    std::shared_ptr<const Tensor> data;
    std::string error;

    TensorSpec input_spec() const { return {dtype, shape, dense_strides(shape, layout)}; }
};

std::vector<std::string> suite_names();  // {"seeds", "quick"}

// Every case of `suite` on every device; throws toroid::Error for an unknown suite.
std::vector<BenchCase> suite_cases(std::string_view suite);

// The row label inside its table: the name without the title in front where it starts
// with it ("(1, 3, 345, 456) -> (270, 270) uint8 CL"), else the whole name ("hflip ...").
std::string row_label(std::string_view name, std::string_view title);

// Bytes one run moves: input (+ a grid_sample grid) read, output written.
std::size_t case_bytes(const BenchCase& c);

// The cases of `suites` as JSON, for tools that run the same rows elsewhere
// (bench/peers.py): {"suites": [{"name", "cases": [{"label", "op", "row", "device",
// "pipeline", "input": {"dtype", "shape", "layout"}, "output": {"dtype", "shape"},
// "bytes"}]}]}. "label" is the case name, "op" its table title, "row" its row label;
// "pipeline" is the canonical pipeline JSON `toroid apply` reads. Throws toroid::Error
// for an unknown suite.
std::string suites_to_json(const std::vector<std::string>& suites);

// The case's input: its data where it has some, else filled with deterministic
// pseudo-random values: uint8 over 0..255, float32 over [0, 1). The same case always gets
// the same values. Throws toroid::Error with the case's error where it has one.
Tensor make_input(const BenchCase& c);

}  // namespace toroid::bench
