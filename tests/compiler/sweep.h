// Seeded random differential sweep, compiled engine against reference engine: a case
// generator (pipeline + input from one seed), the element-wise comparison, a minimizer
// for failing cases and the driver shared by sweep_test.cpp and the toroid_sweep tool.
#pragma once

#include "core/tensor.h"
#include "ops/ops.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace toroid::sweep {

// A small deterministic generator (splitmix64) with its own distributions, so that a seed
// names the same case with every standard library.
class Rng {
public:
    explicit Rng(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next();
    // Uniform in [lo, hi] (inclusive); lo <= hi.
    std::int64_t uniform_int(std::int64_t lo, std::int64_t hi);
    // Uniform in [lo, hi).
    double uniform(double lo, double hi);
    bool chance(double p) { return uniform(0.0, 1.0) < p; }
    // An index drawn with the given relative weights.
    std::size_t weighted(std::initializer_list<double> weights);

private:
    std::uint64_t state_;
};

// Generated results larger than this are not drawn (the case is drawn again).
inline constexpr std::int64_t kMaxOutputElements = 2'000'000;

// One differential test: a pipeline, an input (possibly a strided view of a larger tensor)
// and the thread count the compiled engine runs with.
struct Case {
    std::uint64_t seed = 0;
    Pipeline pipeline;
    Tensor input;
    int threads = 1;
    std::string input_origin;  // how the input was made (layout, view of what)
    // More inputs of other sizes (same dtype, batch, channels, layout and view-ness), run
    // after `input` on the same compiled engine: results are compared, and an input whose
    // program structure an earlier one had must not compile again.
    std::vector<Tensor> more_inputs;
};

// The case of `seed`. Every returned case passes infer_shape, and no result along its
// pipeline (intermediates included) exceeds kMaxOutputElements.
Case make_case(std::uint64_t seed);

// The seed of case `index` of a sweep starting at `base` (base + index, so that
// `toroid_sweep --seed S --cases 1` reruns exactly case S).
inline std::uint64_t case_seed(std::uint64_t base, std::int64_t index) {
    return base + static_cast<std::uint64_t>(index);
}

// The outcome of comparing a compiled result against the reference result: uint8 equal in
// every element; float32 within 1e-4 absolute or 1e-5 relative; NaN only against NaN.
struct Comparison {
    bool ok = true;
    std::int64_t mismatches = 0;
    double max_abs_error = 0;  // over finite pairs
    std::string first;         // the first mismatch (or dtype/shape difference), as text
    Dims first_index{-1, -1, -1, -1};
};
bool values_match(float got, float expected);
Comparison compare(const Tensor& got, const Tensor& expected);

// Runs `c` on both engines and compares (every input in turn, stopping at the first
// failure). `ok` is false on a mismatch, on an exception from either engine, when the
// compiled engine changed its input, or when it compiled again for an input whose program
// structure an earlier input of the case already had.
enum class Failure { None, Mismatch, ReferenceThrew, CompiledThrew, InputChanged, Recompiled };
struct CaseResult {
    bool ok = true;
    Failure kind = Failure::None;
    std::string failure;   // one paragraph: what went wrong
    Comparison comparison;
    Tensor got, expected;  // when both engines produced a result (of input input_index)
    std::size_t input_index = 0;  // 0: c.input, k: c.more_inputs[k - 1] (the last one run)
    std::size_t programs = 0;     // with more_inputs: distinct program structures among them
};
CaseResult run_case(const Case& c);

// seed, input spec and origin, thread count, pipeline JSON, grids; small tensors in full.
std::string describe_case(const Case& c);
// describe_case plus the failure text.
std::string report(const Case& c, const CaseResult& r);

// Greedily shrinks a failing case (drops ops, threads -> 1, dense input, fewer batches,
// channels, rows and columns, smaller crops and grids) while it keeps failing; `log`
// (optional) gets one line per accepted step.
Case minimize(const Case& failing, std::ostream* log = nullptr);

// Writes pipeline.json (grids as grid<i>.npy beside it), input.npy (dense), and when
// present expected.npy / got.npy into `dir`, so that `toroid apply` can rerun the case.
void dump_case(const Case& c, const CaseResult& r, const std::filesystem::path& dir);

struct Options {
    std::uint64_t seed = 0;
    std::int64_t cases = 0;
    // Shard `shard` of `shards` runs the cases whose index is congruent to shard.
    int shard = 0, shards = 1;
    int jobs = 1;                    // cases run on this many threads at once
    std::ostream* log = nullptr;     // failures as they happen, progress when verbose
    bool verbose = false;            // one line per case
    bool minimize = false;           // also minimize every failing case (into the report)
    std::filesystem::path dump_dir;  // when set: dump_case of every failing case, per seed
    // Each case in its own child process (POSIX fork), so that a crash, a hang or a
    // runaway compile is one failing seed instead of the end of the sweep. The limits
    // apply to the child (and the compiler it runs); 0 = none.
    bool isolate = false;
    std::int64_t memory_limit_bytes = 0;
    int timeout_seconds = 0;  // twenty times this with `minimize`
};

struct Summary {
    std::int64_t cases = 0;
    std::vector<std::uint64_t> failing_seeds;  // ascending
    std::vector<std::string> reports;          // one per failing seed, same order
    double seconds = 0;
};
Summary run_sweep(const Options& options);

}  // namespace toroid::sweep
