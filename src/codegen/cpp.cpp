// C++ code generation. Each kernel becomes a perfectly nested loop nest whose body is
// straight-line code: every distinct subexpression is computed once into a named
// temporary (the same value read by the unrolled channels of a pixel, or by the 16
// taps of a bicubic sample, is shared), small sums are unrolled, larger ones become a
// loop, and integer index arithmetic is narrowed to int32 wherever range analysis
// proves it fits. Loads and stores go through __restrict pointers so the compiler can
// vectorize the vector loop and hoist what does not depend on it.
#include "codegen/cpp.h"

#include "codegen/cpu_vector.h"

#include "core/error.h"
#include "core/interrupt.h"
#include "ir/graph.h"
#include "ir/simplify.h"
#include "schedule/histogram.h"
#include "schedule/partition.h"
#include "schedule/tabulate.h"
#include "schedule/tap_pairs.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <functional>
#include <cstring>
#include <limits>
#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace toroid::codegen {

using namespace ir;

// The generated sources' preamble: the text of codegen/cpu_preamble.h, which CMake embeds
// into the library (cmake/EmbedText.cmake), split at kLaneSplit: the vector part expects
// TOROID_LANES and TOROID_REVERSE.
extern const std::string_view kCpuPreamble;
extern const std::string_view kScalarMath;  // core/scalar_math.h
constexpr std::string_view kScalarMathInclude = "#include \"../core/scalar_math.h\"\n";

namespace {

// Elements of a kernel without tap sums below which one more thread does not pay for itself
// (PyTorch's parallel_for grain is the same).
constexpr std::int64_t kParallelGrain = 32768;

// One kernel as C++: the loop nest (OpenMP for the parallel loops, the vector loop's steps
// and its tail, loop partitions, taps in lanes, histograms) around the bodies the CPU-vector
// printer writes.
class CppKernelWriter final : public CpuVectorPrinter {
public:
    CppKernelWriter(const Program& p, const Kernel& k, LoadBounds lb) : CpuVectorPrinter(p, k, std::move(lb)) {}

    std::string write() {
        const Buffer& out = prog_.buffer(k_.output);
        line(fmt::format("// {}", k_.name));
        for (const auto& d : k_.decisions) line(fmt::format("//   {}", d));
        line(fmt::format("static void {}(void* const* buffers, const std::int64_t* params, int threads) {{", k_.name));
        ++indent_;
        scopes_.emplace_back();  // the kernel's scope: parameters and loop bounds
        line("(void)threads;");
        line("(void)params;");
        std::vector<bool> used(prog_.buffers.size(), false);
        used[static_cast<std::size_t>(k_.output)] = true;
        visit(k_.value, [&](const Expr& e) {
            if (e->op == Op::Load) used[static_cast<std::size_t>(e->buffer)] = true;
        });
        std::vector<std::string> decls;
        for (const Buffer& b : prog_.buffers) {
            if (!used[static_cast<std::size_t>(b.id)]) continue;
            const bool is_out = b.id == k_.output;
            decls.push_back(fmt::format("{}{}* __restrict b{} = static_cast<{}{}*>(buffers[{}]);  // {}", is_out ? "" : "const ",
                                        ctype(b.type), b.id, is_out ? "" : "const ", ctype(b.type), b.id, b.name));
        }
        for (const std::string& d : decls) line(d);
        // The run-time parameters the kernel uses are declared here once it is written
        // (params_used): a long pipeline's kernels do not each read every parameter.
        const std::size_t params_at = static_cast<std::size_t>(text_.tellp());
        const std::string params_indent(static_cast<std::size_t>(indent_) * 4, ' ');
        if (k_.histogram) {
            emit_histogram(out, decls);
            --indent_;
            line("}");
            return with_param_decls(params_at, params_indent);
        }
        // Parallel loops are the outermost ones, collapsed into one OpenMP loop.
        int parallel = 0;
        while (parallel < static_cast<int>(k_.loops.size()) &&
               k_.loops[static_cast<std::size_t>(parallel)].kind == LoopKind::Parallel)
            ++parallel;
        // Loop bounds (expressions of parameters) before the loops they bound: the parallel
        // loops' before the loop nest, as OpenMP wants; the inner loops' (and the windows
        // worked out once per call) at the start of the row function, as its own locals:
        // read through its closure, every byte store could alias them and they would be
        // reloaded in the inner loops.
        std::vector<std::pair<std::string, std::string>> bounds_text;
        auto inner_bounds = [&] {
            for (std::size_t i = bounds_text.size(); i < k_.loops.size(); ++i) {
                const Loop& l = k_.loops[i];
                if (l.kind == LoopKind::Unrolled) break;
                const std::string b = emit(l.begin);
                const std::string e = emit(simplify(add(l.begin, l.extent), ranges_, lb_));
                bounds_text.emplace_back(b, e);
            }
            precompute_windows(bounds_text);
        };
        for (int i = 0; i < parallel; ++i) {
            const Loop& l = k_.loops[static_cast<std::size_t>(i)];
            const std::string b = emit(l.begin);
            const std::string e = emit(simplify(add(l.begin, l.extent), ranges_, lb_));
            bounds_text.emplace_back(b, e);
        }
        // Taps in lanes: each pixel's weights laid out once per call, before the rows.
        std::optional<schedule::TapLanes> tap_lanes;
        if (k_.cpu().tap_lanes > 0) {
            tap_lanes = schedule::tap_lanes_form(prog_, k_);
            if (!tap_lanes) fail("internal: kernel {} has taps in lanes but not their form", k_.name);
            emit_tap_lanes_weights(*tap_lanes);
        }
        if (parallel == 0) inner_bounds();
        auto var_type = [&](const Loop& l) {
            return fits_i32(ranges_.count(l.var) ? std::optional<Interval>(ranges_.at(l.var)) : std::nullopt)
                       ? "std::int32_t" : "std::int64_t";
        };
        if (parallel > 0) {
            // The parallel loops become one flat index over their iterations, and the rows run
            // in a function of their own: called once per thread with a contiguous range
            // (OpenMP's static schedule), or directly with one thread, because an OpenMP
            // region costs a team of one even under if(false).
            std::string total;
            for (int i = 0; i < parallel; ++i) {
                const Loop& l = k_.loops[static_cast<std::size_t>(i)];
                const auto& [b, e] = bounds_text[static_cast<std::size_t>(i)];
                line(fmt::format("const std::int64_t n{0} = std::int64_t({2}) > std::int64_t({1}) ? std::int64_t({2}) - std::int64_t({1}) : 0;",
                                 l.var, b, e));
                total += (total.empty() ? "" : " * ") + fmt::format("n{}", l.var);
            }
            line(fmt::format("const std::int64_t total = {};", total));
            // The loop variables are worked out from the range's first index once, then
            // stepped like an odometer (a division per row would cost more than a short row).
            line("const auto rows = [&](std::int64_t lo, std::int64_t hi) __attribute__((noinline)) {");
            ++indent_;
            // The buffers and parameters again, as the row function's own locals: read
            // through the closure, every byte store could alias them and they would be
            // reloaded in the inner loops (and the pointers would lose __restrict).
            for (const std::string& d : decls) line(d);
            row_params_at_ = static_cast<std::size_t>(text_.tellp());
            row_params_indent_ = std::string(static_cast<std::size_t>(indent_) * 4, ' ');
            // The parallel loops' extents too (the odometer reads them every row).
            for (int i = 1; i < parallel; ++i)
                line(fmt::format("const std::int64_t rn{0} = n{0};", k_.loops[static_cast<std::size_t>(i)].var));
            scopes_.emplace_back();  // the row function's: inner bounds, windows
            inner_bounds();
            line("std::int64_t rest = lo;");
            for (int i = parallel - 1; i >= 0; --i) {
                const Loop& l = k_.loops[static_cast<std::size_t>(i)];
                const std::string& b = bounds_text[static_cast<std::size_t>(i)].first;
                if (i > 0) {
                    line(fmt::format("{0} v{1} = static_cast<{0}>({2} + rest % rn{1});", var_type(l), l.var, b));
                    line(fmt::format("rest /= rn{};", l.var));
                } else {
                    line(fmt::format("{0} v{1} = static_cast<{0}>({2} + rest);", var_type(l), l.var, b));
                }
            }
            // The rows run in runs along the innermost parallel loop: a counted loop over
            // its variable up to its end or the range's, the outer ones stepped between
            // runs. Inside a run the outer variables are invariant and the inner one is a
            // plain induction variable, so the compiler steps each row's offsets by their
            // strides instead of multiplying them out again every row (on a short row of
            // bytes that costs as much as the row's loads and stores).
            line("for (std::int64_t it = lo; it < hi;) {");
            ++indent_;
            {
                const Loop& l = k_.loops[static_cast<std::size_t>(parallel - 1)];
                const std::string& b = bounds_text[static_cast<std::size_t>(parallel - 1)].first;
                if (parallel > 1)
                    line(fmt::format("const std::int64_t run = std::int64_t({1}) + rn{0} - v{0} < hi - it ? "
                                     "std::int64_t({1}) + rn{0} - v{0} : hi - it;", l.var, b));
                else
                    line("const std::int64_t run = hi - it;");
                line("it += run;");
                line(fmt::format("for (const {0} runEnd = static_cast<{0}>(v{1} + run); v{1} < runEnd; ++v{1}) {{",
                                 var_type(l), l.var));
                ++indent_;
            }
        }
        std::size_t depth = static_cast<std::size_t>(parallel);
        const Loop* vector_loop = nullptr;
        for (; depth < k_.loops.size(); ++depth) {
            const Loop& l = k_.loops[depth];
            if (l.kind == LoopKind::Unrolled) break;
            const std::string t = fits_i32(ranges_.count(l.var) ? std::optional<Interval>(ranges_.at(l.var)) : std::nullopt)
                                      ? "std::int32_t" : "std::int64_t";
            if (l.kind == LoopKind::Vector) {
                vector_loop = &l;
                break;
            }
            // The innermost loop without explicit vectors is left to the C++ compiler's
            // vectorizer: its iterations never depend on each other.
            if (depth + 1 == k_.loops.size() || k_.loops[depth + 1].kind == LoopKind::Unrolled) line("#pragma GCC ivdep");
            line(fmt::format("for ({} v{} = {}; v{} < {}; ++v{}) {{", t, l.var, bounds_text[depth].first, l.var,
                             bounds_text[depth].second, l.var));
            ++indent_;
        }
        if (vector_loop) {
            // kLanes outputs per iteration, then the remaining ones one at a time.
            const Loop& l = *vector_loop;
            const std::string& end = bounds_text[depth].second;
            line("{");
            ++indent_;
            line(fmt::format("std::int64_t v{} = {};", l.var, bounds_text[depth].first));
            if (tap_lanes) {
                line("if (tlW != nullptr) {");
                ++indent_;
                // Several rows a step where the run has them (CpuPlan::tap_lanes_rows), then
                // the next row; the run's last rows one at a time.
                const int rows = k_.cpu().tap_lanes_rows;
                if (rows > 1 && parallel > 0) {
                    const int row = k_.loops[static_cast<std::size_t>(parallel - 1)].var;
                    if (schedule::tap_lanes_row_var(k_, *tap_lanes) != row)
                        fail("internal: kernel {} has taps in lanes over rows of v{}, not of the loop around v{}", k_.name,
                             schedule::tap_lanes_row_var(k_, *tap_lanes), tap_lanes->x_var);
                    line(fmt::format("if (runEnd - v{} >= {}) {{", row, rows));
                    ++indent_;
                    emit_tap_lanes_loop(*tap_lanes, end, out, rows, row);
                    line(fmt::format("v{} += {};", row, rows - 1));
                    line("continue;");
                    --indent_;
                    line("}");
                }
                emit_tap_lanes_loop(*tap_lanes, end, out);
                --indent_;
                line("} else {");
                ++indent_;
            }
            const int unroll = k_.cpu().vector_unroll;
            const std::string& begin = bounds_text[depth].first;
            const bool partitioned = k_.cpu().partition_lo && !tap_lanes && unroll == 1 && window_tables_.empty();
            // The general loop: vectors, then the last one at the end (or a scalar loop).
            const auto general = [&] {
                if (unroll > 1) {
                    // `unroll` vectors a step, their tap loops as one (kernels with windows,
                    // which are per block of kLanes outputs, are not unrolled).
                    line(fmt::format("for (; v{0} + {1} * kLanes <= {2}; v{0} += {1} * kLanes) {{", l.var, unroll, end));
                    ++indent_;
                    vector_var_ = l.var;
                    emit_body(depth + 1, out, unroll);
                    vector_var_ = -1;
                    --indent_;
                    line("}");
                }
                // One vector a step; the last one ends at the loop's end where the loop has at
                // least kLanes iterations (it recomputes a few outputs, which write the same
                // values: results never alias their inputs), else the outputs are computed one
                // at a time (a scalar tail of gathers and tap loops costs as much as many
                // vectors). The block counter picks the windows (the last vector's are the
                // table's last entry).
                line(fmt::format("if ({} - ({}) >= kLanes) {{", end, begin));
                ++indent_;
                // One vector's body, one level in.
                const auto vector_body = [&] {
                    ++indent_;
                    vector_var_ = l.var;
                    emit_body(depth + 1, out);
                    vector_var_ = -1;
                    --indent_;
            };
            if (split_last_vector()) {
                // A cheap body (no tap loop, few operations: flips, crops, copies, nearest
                // resizes, conversions): the loop runs over the vectors before the last one,
                // a plain counted loop whose addresses the compiler steps by kLanes, and the
                // last vector is a second copy of the body after it. Clamping the variable
                // inside the loop (below) puts a compare and a conditional move on the loop's
                // dependency chain and keeps the addresses from being stepped: on a short row
                // of bytes (a 224-wide uint8 flip: 7 vectors of 32) that costs about as much
                // as the loads and stores themselves.
                line(fmt::format("std::int64_t blk{} = 0;", l.var));
                // A body that gathers through windows (nearest resizes, channels-last flips):
                // unrolled eight ways, the compiler addresses the window table at constant
                // offsets and keeps the strides in registers, as it does where the row's
                // width is a constant (on the Intel host, kernels timed alone with
                // bench/kernel_alone.cpp: a nearest uint8 downscale 1.1x faster, unrolled
                // four or eight ways alike; a 224² channels-last flip 1.15x, eight ways
                // better than four; the benchmark's nearest upscales 1.2-1.8x).
                if (!window_tables_.empty()) line("#pragma GCC unroll 8");
                line(fmt::format("for (; v{0} < {1} - kLanes; v{0} += kLanes, ++blk{0}) {{", l.var, end));
                vector_body();
                line("}");
                // blk now counts the vectors before the last: the table's last entry.
                line(fmt::format("v{0} = {1} - kLanes;", l.var, end));
                line(fmt::format("(void)blk{};", l.var));
                line("{");
                vector_body();
                line("}");
            } else {
                // One copy of the body serves both (a second copy of a large body, such as a
                // resize pass's tap loops, doubled the compile time of the largest kernels).
                line(fmt::format("for (std::int64_t blk{0} = 0; v{0} < {1}; v{0} += kLanes, ++blk{0}) {{", l.var, end));
                ++indent_;
                line(fmt::format("if (v{0} + kLanes > {1}) v{0} = {1} - kLanes;", l.var, end));
                vector_var_ = l.var;
                emit_body(depth + 1, out);
                vector_var_ = -1;
                --indent_;
                line("}");
            }
            --indent_;
            line("} else {");
            ++indent_;
            line(fmt::format("for (; v{} < {}; ++v{}) {{", l.var, end, l.var));
            ++indent_;
            emit_body(depth + 1, out);
            --indent_;
            line("}");
            --indent_;
            line("}");
            };
            if (partitioned) emit_partitioned(l, begin, end, depth, out, general);
            else general();
            if (tap_lanes) {
                --indent_;
                line("}");
            }
            --indent_;
            line("}");
        } else {
            emit_body(depth, out);
        }
        for (std::size_t i = static_cast<std::size_t>(parallel); i < depth; ++i) {
            --indent_;
            line("}");
        }
        if (parallel > 0) {
            --indent_;
            line("}");  // the run
            // Next run: where the innermost parallel variable reached its end, it starts
            // again and the outer ones step, carrying like an odometer.
            if (parallel > 1) {
                std::string step;
                for (int i = parallel - 1; i >= 1; --i) {
                    const Loop& l = k_.loops[static_cast<std::size_t>(i)];
                    const std::string& b = bounds_text[static_cast<std::size_t>(i)].first;
                    if (i == parallel - 1) {
                        step += fmt::format("if (v{0} == static_cast<{1}>({2} + rn{0})) {{ v{0} = static_cast<{1}>({2}); ", l.var,
                                            var_type(l), b);
                    } else {
                        step += fmt::format("if (++v{0} == static_cast<{1}>({2} + rn{0})) {{ v{0} = static_cast<{1}>({2}); ",
                                            l.var, var_type(l), b);
                    }
                }
                step += fmt::format("++v{};", k_.loops[0].var);
                for (int i = 1; i < parallel; ++i) step += " }";
                line(step);
            }
            --indent_;
            line("}");
            scopes_.pop_back();
            --indent_;
            row_params_end_ = static_cast<std::size_t>(text_.tellp());
            line("};");
            // Threads for enough work only: a kernel without tap sums does about the same
            // work per element, and below kParallelGrain elements a thread its team costs
            // more than it saves (a small image's copy on many cores).
            bool sums = false;
            visit(k_.value, [&](const Expr& e) { sums = sums || e->op == Op::Sum; });
            if (sums) {
                line("const int team = threads;");
            } else {
                std::string work = "total";
                for (std::size_t i = static_cast<std::size_t>(parallel); i < k_.loops.size(); ++i)
                    work += fmt::format(" * std::int64_t({})", emit(k_.loops[i].extent));
                line(fmt::format("const std::int64_t grains = ({}) / {};", work, kParallelGrain));
                line("const int team = grains < 1 ? 1 : (grains < threads ? static_cast<int>(grains) : threads);");
            }
            line("if (team > 1) {");
            line("    #pragma omp parallel num_threads(team)");
            line("    {");
            line("        const std::int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();");
            line("        rows(total * t / nt, total * (t + 1) / nt);");
            line("    }");
            line("} else {");
            line("    rows(0, total);");
            line("}");
        }
        --indent_;
        line("}");
        return with_param_decls(params_at, params_indent);
    }

private:
    // The text with the run-time parameters declared where they are used: at `params_at`
    // (the kernel's own scope) and, again, as the row function's own locals (read through
    // its closure, every byte store could alias them: they would be reloaded, and the
    // offsets computed from them again, at every step of the inner loops).
    std::string with_param_decls(std::size_t params_at, const std::string& params_indent) {
        std::string text = text_.str();
        if (row_params_end_ > row_params_at_)
            text.insert(row_params_at_, param_decls(std::string_view(text).substr(row_params_at_, row_params_end_ - row_params_at_),
                                                    row_params_indent_));
        text.insert(params_at, param_decls(std::string_view(text).substr(params_at), params_indent));
        return text;
    }
    std::size_t row_params_at_ = 0, row_params_end_ = 0;
    std::string row_params_indent_;

    // A histogram kernel (schedule/histogram.h): per plane (the loops other than the bins'),
    // counts in local bins over the reduction domain, then the region's bins stored. The
    // innermost reduction variable steps four terms at a time into four sets of bins (a run of
    // equal keys would otherwise wait on its own increments), summed at the end. The planes
    // are split over the threads.
    void emit_histogram(const Buffer& out, const std::vector<std::string>& decls) {
        const auto f = schedule::histogram_form(prog_, k_);
        if (!f) fail("internal: kernel {} is marked a histogram but is not one", k_.name);
        const auto [bins_loop, planes] = schedule::histogram_loops(k_, *f);
        const int ways = f->bins <= 1024 ? 4 : 1;
        std::string total = "1";
        for (const Loop* l : planes) {
            line(fmt::format("const std::int64_t n{} = {};", l->var, emit(l->extent)));
            total += fmt::format(" * n{}", l->var);
        }
        line(fmt::format("const std::int64_t total = {};", total));
        line("const auto planes = [&](std::int64_t lo, std::int64_t hi) __attribute__((noinline)) {");
        ++indent_;
        for (const std::string& d : decls) line(d);
        row_params_at_ = static_cast<std::size_t>(text_.tellp());
        row_params_indent_ = std::string(static_cast<std::size_t>(indent_) * 4, ' ');
        line("for (std::int64_t it = lo; it < hi; ++it) {");
        ++indent_;
        scopes_.emplace_back();
        line("std::int64_t rest = it;");
        for (std::size_t i = planes.size(); i-- > 0;) {
            const Loop& l = *planes[i];
            line(fmt::format("const std::int64_t v{} = {} + rest % n{};", l.var, emit(l.begin), l.var));
            line(fmt::format("rest /= n{};", l.var));
        }
        line(fmt::format("std::int32_t bins[{}][{}] = {{}};", ways, f->bins));
        const std::string B = std::to_string(f->bins);
        const auto count = [&](const Expr& key, int way) {
            const std::string k = emit(key);
            line(fmt::format("if (static_cast<std::uint64_t>({0}) < {1}u) ++bins[{2}][{0}];", k, B, way));
        };
        for (std::size_t i = 0; i + 1 < f->sums.size(); ++i) {
            const Expr& sum = f->sums[i];
            line(fmt::format("for (std::int64_t r{0} = 0; r{0} < {1}; ++r{0}) {{", sum->var, emit(sum_extent(sum))));
            ++indent_;
            scopes_.emplace_back();
        }
        const Expr& inner = f->sums.back();
        const int r = inner->var;
        const std::string n = emit(sum_extent(inner));
        line(fmt::format("std::int64_t r{} = 0;", r));
        if (ways > 1) {
            line(fmt::format("for (; r{0} + {1} <= {2}; r{0} += {1}) {{", r, ways, n));
            ++indent_;
            scopes_.emplace_back();
            for (int w = 0; w < ways; ++w)
                count(simplify(substitute(f->key, {{r, add(var(r), iconst(w))}}), ranges_, lb_), w);
            scopes_.pop_back();
            --indent_;
            line("}");
        }
        line(fmt::format("for (; r{0} < {1}; ++r{0}) {{", r, n));
        ++indent_;
        scopes_.emplace_back();
        count(f->key, 0);
        scopes_.pop_back();
        --indent_;
        line("}");
        for (std::size_t i = 0; i + 1 < f->sums.size(); ++i) {
            scopes_.pop_back();
            --indent_;
            line("}");
        }
        // The region the buffer holds (its consumers' reads), from the bins.
        const Loop& b = *bins_loop;
        line(fmt::format("for (std::int64_t v{0} = {1}; v{0} < {1} + {2}; ++v{0}) {{", b.var, emit(b.begin), emit(b.extent)));
        ++indent_;
        scopes_.emplace_back();
        std::string sum_of = fmt::format("bins[0][v{}]", b.var);
        for (int w = 1; w < ways; ++w) sum_of += fmt::format(" + bins[{}][v{}]", w, b.var);
        line(fmt::format("const std::int64_t at = v{};", b.var));
        line(fmt::format("b{}[{}] = static_cast<{}>(at >= 0 && at < {} ? {} : 0);", out.id,
                         emit(offset_expr(out, store_index(out, nullptr))), ctype(out.type), B, sum_of));
        scopes_.pop_back();
        --indent_;
        line("}");
        scopes_.pop_back();
        --indent_;
        line("}");
        --indent_;
        row_params_end_ = static_cast<std::size_t>(text_.tellp());
        line("};");
        line("if (threads > 1 && total > 1) {");
        line("    #pragma omp parallel num_threads(threads)");
        line("    {");
        line("        const std::int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();");
        line("        planes(total * t / nt, total * (t + 1) / nt);");
        line("    }");
        line("} else {");
        line("    planes(0, total);");
        line("}");
    }

    // Declarations of the run-time parameters `body` names (identifiers p<i>), each read
    // once (int32 where its declared range allows). A name matched in a comment only adds a
    // declaration that is not used.
    std::string param_decls(std::string_view body, const std::string& indent) const {
        std::vector<bool> used(prog_.params.size(), false);
        auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
        for (std::size_t i = 0; i + 1 < body.size(); ++i) {
            if (body[i] != 'p' || (i > 0 && ident(body[i - 1]))) continue;
            std::size_t j = i + 1, n = 0;
            while (j < body.size() && std::isdigit(static_cast<unsigned char>(body[j])) && n < prog_.params.size())
                n = n * 10 + static_cast<std::size_t>(body[j++] - '0');
            if (j == i + 1 || (j < body.size() && ident(body[j]))) continue;
            if (n < used.size()) used[n] = true;
        }
        std::string out;
        for (std::size_t i = 0; i < prog_.params.size(); ++i) {
            if (!used[i]) continue;
            const Interval r = declared_range(prog_.params[i].kind, prog_.index_width);
            const char* t = fits_i32(r) ? "std::int32_t" : "std::int64_t";
            out += fmt::format("{}const {} p{} = static_cast<{}>(params[{}]);  // {}\n", indent, t, i, t, i,
                               prog_.params[i].name);
            out += fmt::format("{}(void)p{};\n", indent, i);
        }
        return out;
    }

    // Whether the vector loop prints its last vector as a second copy of the body (see
    // write()): a body without tap loops (sums) and of at most kSplitLastNodes distinct
    // nodes, so that the copy costs little compile time.
    static constexpr std::size_t kSplitLastNodes = 48;
    // Loop partitioning (schedule/partition.h): where lo <= hi and the loop has at least
    // kLanes outputs, the parts [begin, a), [a, b) and [b, end) (a = lo and b = hi clamped
    // to the loop) each run their own value: a part of at least kLanes outputs runs vectors
    // and a last one ending at its end (recomputing a few of its own outputs), a shorter one
    // one vector of its value (at its start, or at the loop's last vector) of which only its
    // own lanes are stored (store_lanes_v). Elsewhere the general loop runs the whole value.
    void emit_partitioned(const Loop& l, const std::string& begin, const std::string& end, std::size_t depth,
                          const Buffer& out, const std::function<void()>& general) {
        const std::string lo = emit(k_.cpu().partition_lo), hi = emit(k_.cpu().partition_hi);
        const int v = l.var;
        const auto body = [&](const Expr& value, bool vector) {
            line("{");
            ++indent_;
            part_value_ = value;
            vector_var_ = vector ? v : -1;
            emit_body(depth + 1, out);
            vector_var_ = -1;
            part_value_ = nullptr;
            --indent_;
            line("}");
        };
        line(fmt::format("if (static_cast<std::int64_t>({}) <= static_cast<std::int64_t>({}) && {} - ({}) >= kLanes) {{",
                         lo, hi, end, begin));
        ++indent_;
        line(fmt::format("const std::int64_t pa{0} = t_min<std::int64_t>(t_max<std::int64_t>({1}, {2}), {3});", v, lo,
                         begin, end));
        line(fmt::format("const std::int64_t pb{0} = t_min<std::int64_t>(t_max<std::int64_t>({1}, pa{0}), {2});", v, hi,
                         end));
        const std::string edges[4] = {fmt::format("({})", begin), fmt::format("pa{}", v), fmt::format("pb{}", v),
                                      fmt::format("({})", end)};
        for (int part = 0; part < 3; ++part) {
            const std::string &s = edges[part], &e = edges[part + 1];
            const Expr value = schedule::partitioned_value(k_.value, v, part);
            pinned_.push_back(value);
            line(fmt::format("if ({} - {} >= kLanes) {{", e, s));
            ++indent_;
            line(fmt::format("for (v{0} = {1}; v{0} < {2} - kLanes; v{0} += kLanes)", v, s, e));
            body(value, true);
            line(fmt::format("v{} = {} - kLanes;", v, e));
            body(value, true);
            --indent_;
            line(fmt::format("}} else if ({} > {}) {{", e, s));
            ++indent_;
            line(fmt::format("v{0} = t_min<std::int64_t>({1}, {2} - kLanes);", v, s, end));
            store_lanes_ = fmt::format("{1} - v{0}, {2} - v{0}", v, s, e);
            body(value, true);
            store_lanes_.clear();
            --indent_;
            line("}");
        }
        --indent_;
        line("} else {");
        ++indent_;
        general();
        --indent_;
        line("}");
    }


    bool split_last_vector() const {
        bool sum = false;
        visit(k_.value, [&](const Expr& e) { sum = sum || e->op == Op::Sum; });
        return !sum && node_count(k_.value) <= kSplitLastNodes;
    }

    // Taps in lanes (schedule/tap_pairs.h, TapLanes), the kernel's part: for each pixel i
    // of the vector loop's range, and P - 1 more that repeat the last one (a step's missing
    // pixels), tlO holds the x part of its taps' offset and tlW, per T taps, the
    // kTapLanesWeights int16 weights as the preamble's t_tap_lanes_weight lays them out (the
    // register's layout is the preamble's alone). tlW is null, and the rows run the vector
    // loop, where that loop reads each tap of 16 pixels from one window (their taps span at
    // most CpuPlan::tap_lanes_span bytes) and has 16 pixels to fill a vector.
    void emit_tap_lanes_weights(const schedule::TapLanes& t) {
        const Loop& xl = loop_of(t.x_var);
        const std::string x1 = emit(simplify(add(xl.begin, xl.extent), ranges_, lb_));
        line(fmt::format("const std::int64_t tlX0 = {};", emit(xl.begin)));
        line(fmt::format("const std::int64_t tlN = std::int64_t({0}) > tlX0 ? std::int64_t({0}) - tlX0 : 0;", x1));
        line(fmt::format("const std::int32_t tlK = {};", emit(sum_extent(t.sum))));
        // P pixels a step, T taps a register (CpuPlan::tap_lanes_pixels).
        const int P = k_.cpu().tap_lanes_pixels, T = 2 * P;
        line(fmt::format("const std::int32_t tlChunks = (tlK + {0}) / {1};", T - 1, T));
        line(fmt::format("const std::size_t tlWeightBytes = static_cast<std::size_t>((tlN + {}) * tlChunks) * "
                         "kTapLanesWeights * sizeof(std::int16_t);",
                         P - 1));
        line(fmt::format("void* const tlMem = tlN > 0 && tlK > 0 ? __builtin_malloc(tlWeightBytes + "
                         "static_cast<std::size_t>(tlN + {}) * sizeof(std::int64_t)) : nullptr;",
                         P - 1));
        line("const struct TlFree { void* p; ~TlFree() { __builtin_free(p); } } tlFree{tlMem};");
        line("std::int16_t* tlW = nullptr;");
        line("std::int64_t* tlO = nullptr;");
        line(fmt::format("const t_tap_lanes tlIdx = t_make_tap_lanes({});", t.channels));
        line("if (tlMem != nullptr) {");
        ++indent_;
        line("tlO = reinterpret_cast<std::int64_t*>(static_cast<char*>(tlMem) + tlWeightBytes);");
        line(fmt::format("for (std::int64_t tli = 0; tli < tlN + {}; ++tli) {{", P - 1));
        ++indent_;
        line(fmt::format("const std::int64_t v{} = tlX0 + (tli < tlN ? tli : tlN - 1);", t.x_var));
        scopes_.emplace_back();
        line(fmt::format("tlO[tli] = {};", emit(t.pixel_x)));
        scopes_.pop_back();
        --indent_;
        line("}");
        line("const std::int64_t tlStep = tlN > 1 ? (tlO[tlN - 1] > tlO[0] ? tlO[tlN - 1] - tlO[0] : tlO[0] - tlO[tlN - 1]) : 0;");
        // The span of kLanes outputs' taps (on average over the row), against the target's
        // bound: all their taps' bytes, or (tap_lanes_past_window) one tap's against the
        // vector loop's window.
        const std::string taps = k_.cpu().tap_lanes_past_window ? "1" : fmt::format("std::int64_t(tlK) * {}", t.channels);
        const std::string bound = k_.cpu().tap_lanes_past_window ? "lane_window<1>::kSpan" : std::to_string(k_.cpu().tap_lanes_span);
        line(fmt::format("if (tlN < kLanes || tlStep * (kLanes - 1) / (tlN > 1 ? tlN - 1 : 1) + {} > {}) {{", taps, bound));
        ++indent_;
        line("tlW = static_cast<std::int16_t*>(tlMem);");
        line("__builtin_memset(tlW, 0, tlWeightBytes);");
        line(fmt::format("for (std::int64_t tli = 0; tli < tlN + {}; ++tli) {{", P - 1));
        ++indent_;
        line(fmt::format("const std::int64_t v{} = tlX0 + (tli < tlN ? tli : tlN - 1);", t.x_var));
        line(fmt::format("for (std::int32_t r{0} = 0; r{0} < tlK; ++r{0}) {{", t.sum->var));
        ++indent_;
        scopes_.emplace_back();
        const std::string w = emit(t.weight);
        line(fmt::format("t_tap_lanes_weight(tlW + (tli * tlChunks + r{0} / {1}) * kTapLanesWeights, r{0} % {1}, "
                         "static_cast<std::int16_t>({2}));",
                         t.sum->var, T, w));
        scopes_.pop_back();
        for (int i = 0; i < 4; ++i) {
            --indent_;
            line("}");
        }
    }

    // The rows' part: P pixels a step (CpuPlan::tap_lanes_pixels; the last step's missing
    // pixels repeat the last pixel and are not stored), each pixel's taps T = 2P at a time
    // from its own bytes, then the kernel's value of the P pixels' sums, stored as P * C
    // consecutive bytes. With R rows a step (rows of `row_var`, from its current value on),
    // each register of weights is loaded once for the R rows, whose bytes lie the row step
    // (schedule::tap_lanes_row_step) apart.
    void emit_tap_lanes_loop(const schedule::TapLanes& t, const std::string& end, const Buffer& out, int R = 1,
                             int row_var = -1) {
        const int x = t.x_var;
        const int channels = t.channels;
        const int P = k_.cpu().tap_lanes_pixels, T = 2 * P;
        const std::string whole = k_.cpu().tap_lanes_whole_loads ? "<true>" : "";
        const auto acc = [&](int r, int j) { return R == 1 ? fmt::format("tla{}", j) : fmt::format("tla{}_{}", r, j); };
        // Its temporaries are this branch's own (the vector loop is the other branch).
        scopes_.emplace_back();
        // The call's values again as the row's own locals: read through the closure, every
        // byte store could alias them.
        line("const std::int16_t* __restrict tlw = tlW;");
        line("const std::int64_t* __restrict tlo = tlO;");
        line("const t_tap_lanes tlI = tlIdx;");
        line("const std::int32_t tlc = tlChunks;");
        line("const std::int64_t tlx0 = tlX0, tlStride = static_cast<std::int64_t>(tlc) * kTapLanesWeights;");
        line(fmt::format("const auto tlFull = t_tap_lanes_span({0} * {1}), tlLast = t_tap_lanes_span(static_cast<std::int64_t>(tlK - {1} * (tlc - 1)) * {0});",
                         channels, T));
        line(fmt::format("const std::uint8_t* const tlRow = b{} + {};", t.pixel->buffer, emit(t.pixel_row)));
        if (R > 1) {
            const auto step = schedule::tap_lanes_row_step(t, row_var);
            if (!step) fail("internal: kernel {} has taps in lanes over rows whose step varies", k_.name);
            line(fmt::format("const std::int64_t tlR1 = {};", emit(*step)));
            for (int r = 2; r < R; ++r) line(fmt::format("const std::int64_t tlR{} = {} * tlR1;", r, r));
        }
        line(fmt::format("for (; v{0} < {1}; v{0} += {2}) {{", x, end, P));
        ++indent_;
        scopes_.emplace_back();
        line(fmt::format("const std::int64_t tln = {1} - v{0} < {2} ? {1} - v{0} : {2};", x, end, P));
        line(fmt::format("const std::int64_t tli = v{} - tlx0;", x));
        for (int j = 0; j < P; ++j) {
            line(fmt::format("const std::uint8_t* tlq{0} = tlRow + tlo[tli + {0}];", j));
            line(fmt::format("const std::int16_t* tlv{0} = tlw + (tli + {0}) * tlStride;", j));
            for (int r = 0; r < R; ++r) line(fmt::format("vec<std::int32_t> {} = {{}};", acc(r, j)));
        }
        // Every T taps but the last all there; the last with the taps that exist. Each
        // register of a pixel's weights is loaded once for its rows.
        auto chunk = [&](const std::string& mask) {
            for (int j = 0; j < P; ++j) {
                line("{");
                ++indent_;
                line(fmt::format("const t_tap_lanes_w tlwv = t_tap_lanes_weights(tlv{});", j));
                for (int r = 0; r < R; ++r)
                    line(fmt::format("{0} = t_tap_lanes_madd_w{4}({0}, tlq{1}{2}, {3}, tlI, tlwv);", acc(r, j), j,
                                     r ? fmt::format(" + tlR{}", r) : "", mask, whole));
                --indent_;
                line("}");
            }
        };
        line("for (std::int32_t tlj = 1; tlj < tlc; ++tlj) {");
        ++indent_;
        chunk("tlFull");
        for (int j = 0; j < P; ++j) line(fmt::format("tlq{0} += {1}; tlv{0} += kTapLanesWeights;", j, T * channels));
        --indent_;
        line("}");
        chunk("tlLast");
        std::vector<Expr> idx;
        for (std::size_t d = 0; d < out.shape.size(); ++d) idx.push_back(var(static_cast<int>(d)));
        const Expr off0 = substitute(offset_expr(out, idx), {{t.c_var, iconst(0)}});
        for (int r = 0; r < R; ++r) {
            // Row r's value and store, in a scope of its own: the value's nodes are the same
            // for every row (nothing but the sum and parameters), its sum is the row's.
            if (R > 1) {
                line("{");
                ++indent_;
                scopes_.emplace_back();
            }
            std::string accs;
            for (int j = 0; j < P; ++j) accs += fmt::format("{}{}", j ? ", " : "", acc(r, j));
            const std::string sum_name = R == 1 ? "tls" : fmt::format("tls{}", r);
            line(fmt::format("const vec<std::int32_t> {} = t_tap_lanes_sum{}({});", sum_name, P, accs));
            scopes_.back().vby_node[t.sum.get()] = VName{sum_name, true, "std::int32_t"};
            vector_var_ = x;
            const VName v = emitv(k_.value);
            vector_var_ = -1;
            const Expr off = simplify(
                r == 0 ? off0 : substitute(off0, {{row_var, add(var(row_var), iconst(r))}}), ranges_, lb_);
            pinned_.push_back(off);
            line(fmt::format("t_tap_lanes_store<{}>(b{} + {}, to_v<vec<std::uint8_t>>({}), tln);", channels, out.id,
                             emit(off), v.name));
            if (R > 1) {
                scopes_.pop_back();
                --indent_;
                line("}");
            }
        }
        scopes_.pop_back();
        --indent_;
        line("}");
        scopes_.pop_back();
    }

};

}  // namespace

std::string lane_namespace(int lanes) { return fmt::format("t_lanes{}", lanes); }

std::string generate_cpp(const Program& program, int lanes) {
    // Range analysis sees the declared ranges of tables, never one instance's data.
    const LoadBounds lb = program.load_bounds();
    // Each kernel is printed for its own lane count (CpuPlan::vector_width, chosen by the
    // scheduler); kernels without a vector loop use `lanes`. The preamble's vector part is
    // pasted once per lane count, in a namespace of its own that the kernels of that count
    // are printed in.
    // A program without vector loops (the quick tier's scalar program, say) gets no vector
    // part at all: its kernels call the scalar helpers only, and the compiler is spared
    // parsing the rest.
    auto kernel_lanes = [&](const Kernel& k) { return k.cpu().vector_width > 1 ? k.cpu().vector_width : lanes; };
    const bool vectors =
        std::any_of(program.kernels.begin(), program.kernels.end(), [](const Kernel& k) { return k.cpu().vector_width > 1; });
    std::vector<int> counts;
    for (const Kernel& k : program.kernels)
        if (vectors && std::find(counts.begin(), counts.end(), kernel_lanes(k)) == counts.end())
            counts.push_back(kernel_lanes(k));
    std::sort(counts.begin(), counts.end());
    const std::size_t split = kCpuPreamble.find(kLaneSplit);
    if (split == std::string_view::npos) fail("internal: the CPU preamble has no '{}' line", kLaneSplit);
    std::string src = "// Generated by toroid. Do not edit: the cache key is a hash of this text.\n";
    // The features the program was scheduled for: the preamble's forms follow them (the
    // compiler's flags enable them, engine/compiled.cpp), not the compiler's own macros.
    src += program.cpu_features.defines();
    // The preamble's part before the split, its include of the shared scalar helpers replaced
    // by their text once per process.
    static const std::string head = [split] {
        std::string h(kCpuPreamble.substr(0, split));
        const std::size_t inc = h.find(kScalarMathInclude);
        if (inc == std::string::npos) fail("internal: the CPU preamble does not include the scalar helpers");
        return h.replace(inc, kScalarMathInclude.size(), kScalarMath);
    }();
    src += head;
    for (int n : counts) {
        std::vector<int> reversed;
        for (int i = n - 1; i >= 0; --i) reversed.push_back(i);
        src += fmt::format("#define TOROID_LANES {}\n#define TOROID_REVERSE {}\nnamespace {} {{\n", n,
                           fmt::join(reversed, ", "), lane_namespace(n));
        src += kCpuPreamble.substr(split);
        src += fmt::format("}}  // namespace {}\n#undef TOROID_LANES\n#undef TOROID_REVERSE\n", lane_namespace(n));
    }
    src += "\n// Buffers:\n";
    for (const Buffer& b : program.buffers)
        src += fmt::format("//   b{}: {} {} {} {} strides {} origin {}\n", b.id, buffer_role_name(b.role), b.name,
                           type_name(b.type), shape_text(b.shape), shape_text(b.strides), shape_text(b.origin));
    for (const Kernel& k : program.kernels) {
        src += "\n";
        const Kernel printed = k.cpu().fused_channels > 0 ? fused_channel_kernel(program, k) : k;
        src += fmt::format("namespace {} {{\n", lane_namespace(kernel_lanes(k)));
        check_interrupt();  // an interrupted prepare stops between kernels
        src += CppKernelWriter(program, printed, lb).write();
        src += "}\n";
    }
    src += fmt::format("\nextern \"C\" void {}(void* const* buffers, const std::int64_t* params, int threads) {{\n",
                       kEntryPoint);
    for (const Kernel& k : program.kernels)
        src += fmt::format("    {}::{}(buffers, params, threads);\n", lane_namespace(kernel_lanes(k)), k.name);
    src += "}\n";
    return src;
}

}  // namespace toroid::codegen
