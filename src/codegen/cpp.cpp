// C++ code generation. Each kernel becomes a perfectly nested loop nest whose body is
// straight-line code: every distinct subexpression is computed once into a named
// temporary (the same value read by the unrolled channels of a pixel, or by the 16
// taps of a bicubic sample, is shared), small sums are unrolled, larger ones become a
// loop, and integer index arithmetic is narrowed to int32 wherever range analysis
// proves it fits. Loads and stores go through __restrict pointers so the compiler can
// vectorize the vector loop and hoist what does not depend on it.
#include "codegen/cpp.h"

#include "codegen/c_printer.h"

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

// One kernel as C++: the printer base's scalar code, plus explicit vectors (GCC/Clang
// vector extensions) for the vector loop and OpenMP for the parallel loops.
// Elements of a kernel without tap sums below which one more thread does not pay for itself
// (PyTorch's parallel_for grain is the same).
constexpr std::int64_t kParallelGrain = 32768;

class CppKernelWriter final : public CPrinter {
public:
    CppKernelWriter(const Program& p, const Kernel& k, LoadBounds lb) : CPrinter(p, k, std::move(lb)) {}

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
        if (k_.tap_lanes > 0) {
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
                emit_tap_lanes_loop(*tap_lanes, end, out);
                --indent_;
                line("} else {");
                ++indent_;
            }
            const int unroll = k_.vector_unroll;
            const std::string& begin = bounds_text[depth].first;
            const bool partitioned = k_.partition_lo && !tap_lanes && unroll == 1 && window_tables_.empty();
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
        const std::string lo = emit(k_.partition_lo), hi = emit(k_.partition_hi);
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

    // Set while a part's short vector is printed: the lanes its store writes.
    std::string store_lanes_;

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
    // most Kernel::tap_lanes_span bytes) and has 16 pixels to fill a vector.
    void emit_tap_lanes_weights(const schedule::TapLanes& t) {
        const Loop& xl = loop_of(t.x_var);
        const std::string x1 = emit(simplify(add(xl.begin, xl.extent), ranges_, lb_));
        line(fmt::format("const std::int64_t tlX0 = {};", emit(xl.begin)));
        line(fmt::format("const std::int64_t tlN = std::int64_t({0}) > tlX0 ? std::int64_t({0}) - tlX0 : 0;", x1));
        line(fmt::format("const std::int32_t tlK = {};", emit(sum_extent(t.sum))));
        // P pixels a step, T taps a register (Kernel::tap_lanes_pixels).
        const int P = k_.tap_lanes_pixels, T = 2 * P;
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
        const std::string taps = k_.tap_lanes_past_window ? "1" : fmt::format("std::int64_t(tlK) * {}", t.channels);
        const std::string bound = k_.tap_lanes_past_window ? "lane_window<1>::kSpan" : std::to_string(k_.tap_lanes_span);
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

    // The rows' part: P pixels a step (Kernel::tap_lanes_pixels; the last step's missing
    // pixels repeat the last pixel and are not stored), each pixel's taps T = 2P at a time
    // from its own bytes, then the kernel's value of the P pixels' sums, stored as P * C
    // consecutive bytes.
    void emit_tap_lanes_loop(const schedule::TapLanes& t, const std::string& end, const Buffer& out) {
        const int x = t.x_var;
        const int channels = t.channels;
        const int P = k_.tap_lanes_pixels, T = 2 * P;
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
        line(fmt::format("for (; v{0} < {1}; v{0} += {2}) {{", x, end, P));
        ++indent_;
        scopes_.emplace_back();
        line(fmt::format("const std::int64_t tln = {1} - v{0} < {2} ? {1} - v{0} : {2};", x, end, P));
        line(fmt::format("const std::int64_t tli = v{} - tlx0;", x));
        std::string accs;
        for (int j = 0; j < P; ++j) {
            line(fmt::format("const std::uint8_t* tlq{0} = tlRow + tlo[tli + {0}];", j));
            line(fmt::format("const std::int16_t* tlv{0} = tlw + (tli + {0}) * tlStride;", j));
            line(fmt::format("vec<std::int32_t> tla{} = {{}};", j));
            accs += fmt::format("{}tla{}", j ? ", " : "", j);
        }
        // Every T taps but the last all there; the last with the taps that exist.
        auto chunk = [&](const std::string& mask) {
            for (int j = 0; j < P; ++j)
                line(fmt::format("tla{0} = t_tap_lanes_madd(tla{0}, tlq{0}, {1}, tlI, tlv{0});", j, mask));
        };
        line("for (std::int32_t tlj = 1; tlj < tlc; ++tlj) {");
        ++indent_;
        chunk("tlFull");
        for (int j = 0; j < P; ++j) line(fmt::format("tlq{0} += {1}; tlv{0} += kTapLanesWeights;", j, T * channels));
        --indent_;
        line("}");
        chunk("tlLast");
        line(fmt::format("const vec<std::int32_t> tls = t_tap_lanes_sum{}({});", P, accs));
        scopes_.back().vby_node[t.sum.get()] = VName{"tls", true, "std::int32_t"};
        vector_var_ = x;
        const VName v = emitv(k_.value);
        vector_var_ = -1;
        std::vector<Expr> idx;
        for (std::size_t d = 0; d < out.shape.size(); ++d) idx.push_back(var(static_cast<int>(d)));
        const Expr off = simplify(substitute(offset_expr(out, idx), {{t.c_var, iconst(0)}}), ranges_, lb_);
        pinned_.push_back(off);
        line(fmt::format("t_tap_lanes_store<{}>(b{} + {}, to_v<vec<std::uint8_t>>({}), tln);", channels, out.id, emit(off), v.name));
        scopes_.pop_back();
        --indent_;
        line("}");
        scopes_.pop_back();
    }

    // Elements from a buffer's first to its last: 1 + sum of (extent - 1) * stride (strides
    // are never negative).
    Expr buffer_span(const Buffer& b) {
        Expr span = iconst(1);
        for (std::size_t d = 0; d < b.shape.size(); ++d)
            span = add(span, mul(sub(b.shape[d], iconst(1)), b.strides[d]));
        const Expr e = simplify(span, ranges_, lb_);
        pinned_.push_back(e);
        return e;
    }

    // For an int32 product whose factors fit in 16 bits, one of them in [0, 32767]: the
    // index of that factor (mul16_v's first operand); else nullopt.
    std::optional<int> mul16_order(const Expr& e) {
        if (e->op != Op::Mul || e->type != Type::I32) return std::nullopt;
        const auto x = bounds(e->args[0], ranges_, lb_), y = bounds(e->args[1], ranges_, lb_);
        auto small = [](const std::optional<Interval>& i) { return i && i->lo >= -32768 && i->hi <= 32767; };
        auto unsigned15 = [](const std::optional<Interval>& i) { return i && i->lo >= 0 && i->hi <= 32767; };
        if (!small(x) || !small(y) || (!unsigned15(x) && !unsigned15(y))) return std::nullopt;
        return unsigned15(x) ? 0 : 1;
    }

    // A tap's 16-bit product added to its int32 accumulator as one multiply-add (dp16_v,
    // vpdpwssd where the preamble uses it).
    void accumulate_v(const std::string& acc, const std::string& elem, const Expr& term) override {
        const auto f = elem == "std::int32_t" && varying(term) ? mul16_order(term) : std::nullopt;
        if (!f) {
            CPrinter::accumulate_v(acc, elem, term);
            return;
        }
        const VName a = emitv(term->args[static_cast<std::size_t>(*f)]), b = emitv(term->args[static_cast<std::size_t>(1 - *f)]);
        auto V = [&](const VName& x) { return fmt::format("to_v<vec<std::int32_t>>({})", x.name); };
        line(fmt::format("{0} = dp16_v({0}, {1}, {2});", acc, V(a), V(b)));
    }

    const Loop& loop_of(int v) const {
        for (const Loop& l : k_.loops)
            if (l.var == v) return l;
        fail("internal: kernel {} has no loop v{}", k_.name, v);
    }

    void emit_store(const Expr& value, const Buffer& out,
                    const std::vector<std::pair<int, std::int64_t>>* fixed = nullptr) override {
        const Expr off_e = offset_expr(out, store_index(out, fixed));
        if (vector_var_ < 0) {
            const std::string off = emit(off_e);
            const std::string val = emit(value);
            line(fmt::format("b{}[{}] = {};", out.id, off, val));
            return;
        }
        const std::string vt = fmt::format("vec<{}>", ctype(out.type));
        const std::string val = fmt::format("to_v<{}>({})", vt, emitv(value).name);
        const auto stride = linear_stride(off_e, vector_var_);
        const std::string base = emit(off_e);  // lane 0
        // The unrolled channels of a pixel, stored at stride C from consecutive bases, are
        // collected and stored interleaved at once.
        if (fixed && stride && *stride > 1 && *stride <= 4) {
            if (!pending_.empty()) {
                const auto gap = bounds(simplify(sub(off_e, pending_.front().off), ranges_, lb_), ranges_, lb_);
                const bool next = gap && gap->lo == gap->hi && gap->lo == static_cast<std::int64_t>(pending_.size()) &&
                                  *stride == pending_.front().stride;
                if (!next) end_stores();
            }
            pending_.push_back(PendingStore{off_e, *stride, base, val});
            pinned_.push_back(off_e);
            if (static_cast<std::int64_t>(pending_.size()) == *stride) {
                std::string vals;
                for (const PendingStore& p : pending_) vals += ", " + p.val;
                line(fmt::format("store_interleaved(b{} + {}{});", out.id, pending_.front().base, vals));
                pending_.clear();
            }
            store_buffer_ = out.id;
            return;
        }
        if (stride && *stride == 1 && !store_lanes_.empty())
            line(fmt::format("store_lanes_v(b{} + {}, {}, {});", out.id, base, val, store_lanes_));
        else if (stride && *stride == 1) line(fmt::format("store_v(b{} + {}, {});", out.id, base, val));
        else if (stride) line(fmt::format("scatter_stride_v(b{} + {}, {}, {});", out.id, base, *stride, val));
        else line(fmt::format("scatter_v(b{}, {}, {});", out.id, emitv(off_e).name, val));
    }

    // Tap loops with windows: a copy for the usual case, every window one 128-byte span
    // (gather_window1 keeps its index and masks in registers), one for byte windows in two
    // groups (gather_window2), and the general one.
    void emit_tap_loop_variants(const std::function<void()>& emit_loop) override {
        std::vector<std::string> names;
        for (const auto& [node, w] : scopes_.back().windows)
            if (std::find(names.begin(), names.end(), w.first) == names.end()) names.push_back(w.first);
        if (names.empty()) {
            emit_loop();
            return;
        }
        std::sort(names.begin(), names.end());
        const auto all_groups = [&](int g) {
            std::string cond;
            for (const std::string& n : names) cond += fmt::format("{}{}.groups == {}", cond.empty() ? "" : " && ", n, g);
            return cond;
        };
        // One copy of the loop per case, under its condition (the window copy the printer
        // reads while printing it).
        const auto copy = [&](const std::string& opening, WindowCopy which) {
            line(opening);
            ++indent_;
            window_copy_ = which;
            emit_loop();
            window_copy_ = WindowCopy::None;
            --indent_;
        };
        copy(fmt::format("if ({}) {{", all_groups(1)), WindowCopy::One);
        // Byte windows of downscales by about 2.5 to 5 (16 outputs span more than one
        // 128-byte window): two groups of lanes, each its own window, blended by a fixed mask.
        const bool bytes_only = std::all_of(scopes_.back().windows.begin(), scopes_.back().windows.end(),
                                            [&](const auto& w) { return type_bytes(prog_.buffer(w.first->buffer).type) == 1; });
        if (bytes_only) copy(fmt::format("}} else if ({}) {{", all_groups(2)), WindowCopy::Two);
        // Words too far apart for one window: the hardware gather, straight from the
        // lanes' offsets (no window in between). The general copy (rare: windows in 4
        // groups, or lanes read one by one) is not unrolled: about a tenth of a large
        // kernel's compile time for a loop whose gathers dominate it anyway.
        copy("} else {", WindowCopy::General);
        line("}");
    }
    // Which copy of a tap loop with windows is being printed (emit_tap_loop_variants).
    enum class WindowCopy : std::uint8_t { None, One, Two, General };
    WindowCopy window_copy_ = WindowCopy::None;
    bool one_window() const { return window_copy_ == WindowCopy::One; }
    bool two_windows() const { return window_copy_ == WindowCopy::Two; }
    std::string unroll_pragma() const override {
        return window_copy_ == WindowCopy::General ? "#pragma GCC unroll 1" : "#pragma GCC unroll 4";
    }

    struct PendingStore {
        Expr off;
        std::int64_t stride;
        std::string base, val;
    };
    std::vector<PendingStore> pending_;
    int store_buffer_ = -1;

    // Channels that did not make a whole interleaved pixel are stored one by one.
    void end_stores() override {
        for (const PendingStore& p : pending_)
            line(fmt::format("scatter_stride_v(b{} + {}, {}, {});", store_buffer_, p.base, p.stride, p.val));
        pending_.clear();
    }

    // Element types read through windows: bytes (no gather instruction) and 4-byte words
    // (whose gathers load lane by lane).
    static bool windowed(Type t) { return type_bytes(t) == 1 || type_bytes(t) == 4; }

    // Splits a byte load's offset in a tap loop (reduction var r) into the part that differs
    // across lanes (not across taps) and the lane-uniform rest; false if it has no such form.
    // Terms split through additions; where that leaves another loop's variable in the
    // lanes' part (`x - floordiv(f, 3) * 3`: a row's base minus a pixel's), through
    // subtractions too (the scheduler's column_only splits the same way).
    bool split_gather(const Expr& off, int r, Expr& lanes, Expr& uniform) {
        if (!varying(off) || linear_stride(off, vector_var_)) return false;
        auto split = [&](const std::vector<Expr>& terms) {
            lanes = uniform = nullptr;
            for (const Expr& t : terms) {
                if (varying(t)) {
                    if (depends_on_var(t, r)) return false;
                    lanes = lanes ? add(lanes, t) : t;
                } else {
                    uniform = uniform ? add(uniform, t) : t;
                }
            }
            return true;
        };
        auto row_free = [&] {
            bool other = false;
            visit(lanes, [&](const Expr& x) {
                other = other || (x->op == Op::Var && x->var != vector_var_ && !is_param_var(x->var));
            });
            return !other;
        };
        if (!split(sum_terms(off))) {
            // A tap's term under a subtraction (`row(r) - floordiv(x, 3) * 3`: a mirrored
            // channels-last pixel in a vertical pass): split through the subtractions.
            if (!split(signed_sum_terms(off))) return false;
        } else if (!row_free()) {
            Expr l0 = lanes, u0 = uniform;
            if (!split(signed_sum_terms(off)) || !row_free()) {
                lanes = l0;
                uniform = u0;
            }
        }
        if (!uniform) uniform = iconst(0, off->type);
        pinned_.push_back(lanes);
        pinned_.push_back(uniform);
        return true;
    }

    // Windows whose lanes depend on the vector loop's position only (a resize's start
    // table, a nearest resize's index table, not the row): computed once per kernel call
    // for every block of kLanes outputs, before the loop nest, instead of once per row.
    // Gathers in tap loops and outside them both read through them.
    void precompute_windows(const std::vector<std::pair<std::string, std::string>>& bounds_text) {
        std::size_t d = 0;
        while (d < k_.loops.size() && k_.loops[d].kind != LoopKind::Vector) ++d;
        if (d == k_.loops.size()) return;
        const int v = k_.loops[d].var;
        std::vector<Expr> window_lanes;
        std::vector<std::string> keys;
        std::vector<std::size_t> window_bytes;
        // key -> the lane-uniform part of each byte load in a tap loop, less its constant
        // term -> the least and greatest constant term.
        std::map<std::string, std::map<std::string, std::pair<std::int64_t, std::int64_t>>> offsets;
        vector_var_ = v;
        // Each distinct node once per tap loop: the value is a DAG, and a tree walk takes
        // time exponential in the depth of its sharing (chains of inlined warps). A repeated
        // visit would find the same window and offsets again.
        std::set<std::pair<const Node*, int>> seen;
        std::function<void(const Expr&, int)> walk = [&](const Expr& e, int tap) {
            if (!seen.emplace(e.get(), tap).second) return;
            if (e->op == Op::Sum) {
                walk(e->args[0], const_extent(e) ? tap : e->var);
                return;
            }
            for (const auto& a : e->args) walk(a, tap);
            if (e->op != Op::Load || !windowed(prog_.buffer(e->buffer).type)) return;
            Expr lanes, uniform;
            if (!split_gather(offset_expr(prog_.buffer(e->buffer), e->args), tap, lanes, uniform)) return;
            bool outer = false;
            visit(lanes, [&](const Expr& x) {
                if (x->op != Op::Var || x->var == v || is_param_var(x->var)) return;
                outer = true;  // another loop's variable, or a tap's
            });
            const std::size_t e_bytes = type_bytes(prog_.buffer(e->buffer).type);
            const std::string key = fmt::format("{}|{}", e_bytes, to_string(lanes));
            if (outer) return;
            if (e_bytes == 1 && tap >= 0) {
                // The offsets of this load in the unrolled copies of the body: its part
                // without the unrolled loops' variables, plus a constant per copy.
                std::vector<std::pair<int, Expr>> zero;
                std::int64_t lo = 0, hi = 0;
                bool affine = true;
                for (const Loop& l : k_.loops) {
                    if (l.kind != LoopKind::Unrolled || !depends_on_var(uniform, l.var)) continue;
                    const auto st = linear_stride(uniform, l.var);
                    if (!st || !is_const(l.begin) || !is_const(l.extent)) {
                        affine = false;
                        break;
                    }
                    zero.emplace_back(l.var, iconst(0));
                    const std::int64_t a = *st * l.begin->ival, b = *st * (l.begin->ival + l.extent->ival - 1);
                    lo += std::min(a, b);
                    hi += std::max(a, b);
                }
                if (affine) {
                    const auto [rest, k] = split_constant(simplify(substitute(uniform, zero), ranges_, lb_));
                    auto& rests = offsets[key];
                    const auto [at, fresh] = rests.try_emplace(to_string(rest), k + lo, k + hi);
                    if (!fresh) at->second = {std::min(at->second.first, k + lo), std::max(at->second.second, k + hi)};
                }
            }
            if (std::find(keys.begin(), keys.end(), key) != keys.end()) return;
            // The lanes' part of an in-bounds offset: int32 in int32 programs, as the offset
            // is (a range worked out from run-time sizes alone would make it int64, and the
            // window's offsets twice as wide to build).
            if (prog_.index_width == IndexWidth::I32)
                visit(lanes, [&](const Expr& x) {
                    if (x->type == Type::I64 && offset_nodes_.insert(x.get()).second) pinned_.push_back(x);
                });
            keys.push_back(key);
            window_lanes.push_back(lanes);
            window_bytes.push_back(e_bytes);
        };
        walk(k_.value, -1);
        vector_var_ = -1;
        // Byte windows read in a tap loop at a few consecutive offsets (the channels of
        // channels-last pixels: c = 0, 1, 2 of the same taps): their windows reach `slack`
        // bytes further, so that one pair of loads per tap serves all of them (shared_).
        std::map<std::string, int> slack;
        for (const auto& [key, rests] : offsets) {
            std::int64_t most = 0;
            for (const auto& [rest, span] : rests) most = std::max(most, span.second - span.first);
            if (most <= 0 || most > 3) continue;
            slack[key] = static_cast<int>(most);
            for (const auto& [rest, span] : rests)
                if (span.second - span.first == most) shared_[key][rest] = span.first;
        }
        const auto& [begin, end] = bounds_text[d];
        for (std::size_t i = 0; i < window_lanes.size(); ++i) {
            const std::string table = fmt::format("wt{}", next_temp_++);
            // One window per block of kLanes outputs, and one more for the vector that ends
            // at the loop's end (the tail).
            line(fmt::format("const window_table<{}> {}(({} - {}) / kLanes + 1);", window_bytes[i], table, end, begin));
            for (int tail = 0; tail < 2; ++tail) {
                if (tail == 0)
                    line(fmt::format("for (std::int64_t v{0} = {1}; v{0} + kLanes <= {2}; v{0} += kLanes) {{", v, begin, end));
                else
                    line(fmt::format("if ({1} - ({0}) >= kLanes) {{ const std::int64_t v{2} = {1} - kLanes;", begin, end, v));
                ++indent_;
                scopes_.emplace_back();
                // The block's index, as in the loop nest: a window whose lanes come from a
                // gather through an earlier window (a table indexed by a clamped column)
                // reads that window's entry for this block.
                line(fmt::format("const std::int64_t blk{} = {};", v,
                                 tail == 0 ? fmt::format("(v{} - {}) / kLanes", v, begin)
                                           : fmt::format("({} - {}) / kLanes", end, begin)));
                line(fmt::format("(void)blk{};", v));
                std::string lanes;
                if (k_.vector_width > 16) {
                    // Vectors of more lanes than a register holds of 4-byte elements (a
                    // kernel of bytes): its index vectors are wider than any register, and
                    // GCC lowers their division lane by lane with a divide instruction. Each
                    // lane's offset is worked out by the scalar code instead (a multiply for
                    // a constant divisor), in a loop the compiler vectorizes.
                    const std::string el = expr_ctype(window_lanes[i]);
                    const std::string arr = fmt::format("t{}", next_temp_++), block = fmt::format("t{}", next_temp_++);
                    lanes = fmt::format("t{}", next_temp_++);
                    line(fmt::format("const std::int64_t {} = v{};", block, v));
                    line(fmt::format("{} {}[kLanes];", el, arr));
                    line("for (int lane = 0; lane < kLanes; ++lane) {");
                    ++indent_;
                    scopes_.emplace_back();
                    // (int32 in int32 programs, whose loops run over the dims of buffers of
                    // fewer than 2^30 elements, or where the loop's range allows: the
                    // compiler vectorizes the lanes' division by a constant then, not in
                    // int64.)
                    const std::string vt =
                        prog_.index_width == IndexWidth::I32 ||
                                fits_i32(ranges_.count(v) ? std::optional<Interval>(ranges_.at(v)) : std::nullopt)
                            ? "std::int32_t" : "std::int64_t";
                    line(fmt::format("const {0} v{1} = static_cast<{0}>({2} + lane);", vt, v, block));
                    line(fmt::format("{}[lane] = {};", arr, emit(window_lanes[i])));
                    scopes_.pop_back();
                    --indent_;
                    line("}");
                    line(fmt::format("vec<{}> {};", el, lanes));
                    line(fmt::format("__builtin_memcpy(&{}, {}, sizeof {});", lanes, arr, lanes));
                } else {
                    vector_var_ = v;
                    lanes = emitv(window_lanes[i]).name;
                    vector_var_ = -1;
                }
                const auto sl = slack.find(keys[i]);
                line(fmt::format("{}[blk{}] = make_window<{}>({}{});", table, v, window_bytes[i], lanes,
                                 sl == slack.end() ? "" : fmt::format(", {}", sl->second)));
                scopes_.pop_back();
                --indent_;
                line("}");
            }
            window_tables_[keys[i]] = fmt::format("{}[blk{}]", table, v);
        }
    }
    std::map<std::string, std::string> window_tables_;  // lanes expression -> its precomputed window
    // Window key -> the lane-uniform parts (less their constant term) whose loads share one
    // window read per tap -> the least constant term (the shared read's).
    std::map<std::string, std::map<std::string, std::int64_t>> shared_;
    std::map<std::string, std::string> window_key_;  // window temporary -> its key

    // e as (the sum of its non-constant terms, its constant term).
    std::pair<Expr, std::int64_t> split_constant(const Expr& e) const {
        Expr rest;
        std::int64_t k = 0;
        for (const Expr& t : sum_terms(e)) {
            if (is_const(t)) k += t->ival;
            else rest = rest ? add(rest, t) : t;
        }
        return {rest ? rest : iconst(0, e->type), k};
    }

    // A byte load in a tap loop whose offset is (a part that differs across lanes but not
    // across taps) + (a part the same in every lane): the lanes' offsets are worked out once
    // before the loop (window_u8) and each tap reads them from one window of memory.
    void hoist_gather(const Expr& load, const Expr& off, int r) override {
        if (vector_var_ < 0 || !windowed(prog_.buffer(load->buffer).type)) return;
        Expr lanes, uniform;
        if (!split_gather(off, r, lanes, uniform)) return;
        const std::size_t e_bytes = type_bytes(prog_.buffer(load->buffer).type);
        std::string w;
        // (The last vector starts off the blocks' grid: it has its own entry.)
        const auto& tables = window_tables_;
        if (auto t = tables.find(fmt::format("{}|{}", e_bytes, to_string(lanes))); t != tables.end()) {
            w = temp(fmt::format("lane_window<{}>&", e_bytes), t->second);
            window_key_[w] = t->first;
        } else {
            const VName v = emitv(lanes);
            w = temp(fmt::format("lane_window<{}>", e_bytes), fmt::format("make_window<{}>({})", e_bytes, v.name));
        }
        scopes_.back().windows[load.get()] = {w, uniform};
    }

    // Tap pairs (schedule/tap_pairs.h): a tap loop of cast<i32>(a) * cast<i32>(b) terms
    // with 16-bit-range factors runs two taps per step, each pair one 16-bit multiply-add
    // into the int32 accumulator (the preamble's t_madd_pairs: pmaddwd), then an odd last tap
    // the plain way. Per sum: a(r), b(r), a(r + 1), b(r + 1); the second tap's loads read
    // the windows hoisted for them here, before the loop.
    std::unordered_map<const Node*, std::array<Expr, 4>> pair_terms_;

    bool prepare_tap_pairs(const std::vector<Expr>& sums) override {
        if (vector_var_ < 0 || !k_.tap_pairs) return false;
        std::vector<std::array<Expr, 4>> terms;
        for (const Expr& s : sums) {
            const auto f = schedule::tap_pair_factors(s);
            if (!f || !varying(s)) return false;
            const int r = s->var;
            Expr rv = var(r);
            visit(s->args[0], [&](const Expr& x) {
                if (x->op == Op::Var && x->var == r) rv = x;
            });
            const std::vector<std::pair<int, Expr>> next = {{r, add(rv, iconst(1, rv->type))}};
            std::array<Expr, 4> t = {f->a, f->b, simplify(substitute(f->a, next), ranges_, lb_),
                                     simplify(substitute(f->b, next), ranges_, lb_)};
            for (const Expr& x : t) pinned_.push_back(x);
            terms.push_back(t);
        }
        for (std::size_t i = 0; i < sums.size(); ++i) {
            hoist_invariants(terms[i][2], sums[i]->var, /*vector=*/true);
            hoist_invariants(terms[i][3], sums[i]->var, /*vector=*/true);
            pair_terms_[sums[i].get()] = terms[i];
            // A factor whose two taps are bytes of the same window, a tap-invariant distance
            // apart: its pair gather's masks and index, once before the loop.
            for (int f = 0; f < 2; ++f) {
                const Expr& x0 = terms[i][static_cast<std::size_t>(f)];
                const Expr& x1 = terms[i][static_cast<std::size_t>(f + 2)];
                const auto* w0 = find_window(x0);
                const auto* w1 = find_window(x1);
                if (!w0 || !w1 || w0->first != w1->first || type_bytes(x0->type) != 1 ||
                    w0->second->type != w1->second->type)
                    continue;
                const Expr step = simplify(sub(w1->second, w0->second), ranges_, lb_);
                pinned_.push_back(step);
                if (varying(step) || depends_on_var(step, sums[i]->var)) continue;
                pair_windows_[x0.get()] = step;
            }
        }
        return true;
    }
    // A factor's first-tap load -> the distance of its second tap in its window (its pair
    // window is made at the top of the pair loop's branch: the plain branch does not pay).
    std::unordered_map<const Node*, Expr> pair_windows_;

    void emit_tap_pairs(const std::vector<Expr>& sums, const std::vector<std::string>& accs,
                        const std::string& n) override {
        const int r = sums.front()->var;
        // Both taps' factors in one element type each (a scalar: the same for every lane).
        auto factor = [&](const Expr& x) {
            const VName v = emitv(x);
            const std::string el = ctype(x->type);
            return v.vector ? fmt::format("to_v<vec<{}>>({})", el, v.name) : fmt::format("static_cast<{}>({})", el, v.name);
        };
        // A factor's two taps as 16-bit pairs: where both are bytes read through the same
        // window, one gather of both taps in pair order (gather_window_pairs); else the two
        // values, interleaved.
        std::unordered_map<const Node*, std::string> made;  // first-tap load -> its pair window
        auto pairs = [&](const Expr& x0, const Expr& x1) {
            const auto pw = made.find(x0.get());
            const auto* w0 = find_window(x0);
            if (pw != made.end() && w0) {
                const std::string g = temp(fmt::format("pair_v<{}>", ctype(x0->type)),
                                           fmt::format("{}(b{} + {} + {}.first, {}, {})",
                                                       one_window() ? "gather_window_pairs1" : "gather_window_pairs",
                                                       x0->buffer, emit(w0->second), w0->first, w0->first, pw->second));
                return fmt::format("t_widen_pairs<{}>({})", ctype(x0->type), g);
            }
            return fmt::format("t_pairs16({}, {})", factor(x0), factor(x1));
        };
        // One tap the plain way (the odd last tap, and every tap of the plain loop).
        auto plain_tap = [&] {
            ++indent_;
            scopes_.emplace_back();
            for (std::size_t i = 0; i < sums.size(); ++i) accumulate_v(accs[i], "std::int32_t", sums[i]->args[0]);
            scopes_.pop_back();
            --indent_;
            line("}");
        };
        // Few taps: the plain loop (the pairs' setup and odd last tap would cost more than
        // they save); the preamble's kTapPairsMin says how few.
        line(fmt::format("if ({} >= kTapPairsMin) {{", n));
        ++indent_;
        scopes_.emplace_back();
        for (std::size_t i = 0; i < sums.size(); ++i) {
            const std::array<Expr, 4>& t = pair_terms_.at(sums[i].get());
            for (std::size_t f = 0; f < 2; ++f) {
                const auto step = pair_windows_.find(t[f].get());
                const auto* w0 = find_window(t[f]);
                if (step == pair_windows_.end() || !w0) continue;
                made[t[f].get()] = temp("pair_window", fmt::format("make_pair_window({}, {})", w0->first, emit(step->second)));
            }
        }
        line(fmt::format("std::int32_t r{} = 0;", r));
        line("#pragma GCC unroll 2");
        line(fmt::format("for (; r{0} + 1 < {1}; r{0} += 2) {{", r, n));
        ++indent_;
        scopes_.emplace_back();
        for (std::size_t i = 0; i < sums.size(); ++i) {
            const std::array<Expr, 4>& t = pair_terms_.at(sums[i].get());
            const std::string a = pairs(t[0], t[2]), b = pairs(t[1], t[3]);
            line(fmt::format("{0} = t_madd_pairs({0}, {1}, {2});", accs[i], a, b));
        }
        scopes_.pop_back();
        --indent_;
        line("}");
        // An odd number of taps: the last one alone.
        line(fmt::format("if (r{} < {}) {{", r, n));
        plain_tap();
        scopes_.pop_back();
        --indent_;
        line("} else {");
        ++indent_;
        line(unroll_pragma());
        line(fmt::format("for (std::int32_t r{0} = 0; r{0} < {1}; ++r{0}) {{", r, n));
        plain_tap();
        --indent_;
        line("}");
    }

    // The window a load in a tap loop reads through (its name and the lane-uniform part of
    // its offset), or null.
    const std::pair<std::string, Expr>* find_window(const Expr& load) const {
        if (load->op != Op::Load) return nullptr;
        for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
            auto f = it->windows.find(load.get());
            if (f != it->windows.end()) return &f->second;
        }
        return nullptr;
    }

    // Whether e takes a different value in each lane of the vector body.
    bool varying(const Expr& e) override {
        if (vector_var_ < 0) return false;
        auto it = varying_memo_.find(e.get());
        if (it != varying_memo_.end()) return it->second;
        bool v = e->op == Op::Var && e->var == vector_var_;
        for (const auto& a : e->args) v = varying(a) || v;
        pinned_.push_back(e);
        varying_memo_[e.get()] = v;
        return v;
    }

    std::string vtemp(const std::string& elem, const std::string& code) {
        return temp(fmt::format("vec<{}>", elem), code);
    }

    static std::string mask_elem(const std::string& elem) {
        if (elem == "float" || elem == "std::int32_t" || elem == "std::uint32_t") return "std::int32_t";
        if (elem == "double" || elem == "std::int64_t") return "std::int64_t";
        if (elem == "std::int16_t" || elem == "std::uint16_t") return "std::int16_t";
        return "std::int8_t";
    }

    // The vector (or, where uniform, scalar) value of e in the vector body.
    VName emitv(const Expr& e) override {
        if (!varying(e)) return {emit(e), false, e->type == Type::Bool ? "bool" : expr_ctype(e)};
        for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
            auto f = it->vby_node.find(e.get());
            if (f != it->vby_node.end()) return f->second;
        }
        VName r = emitv_compound(e);
        scopes_.back().vby_node[e.get()] = r;
        scopes_.back().pinned.push_back(e);
        return r;
    }


    // A load in a tap loop that reads through a window prepared before the loop (else
    // nothing): its gather, from a read this tap shares with the other channels where
    // there is one. With `widen` (bytes, one or two groups), straight into int32 lanes.
    std::optional<VName> window_gather(const Expr& e, bool widen) {
        for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
            if (window_copy_ == WindowCopy::General && type_bytes(prog_.buffer(e->buffer).type) == 4) break;
            auto f = it->windows.find(e.get());
            if (f == it->windows.end()) continue;
            const std::string& w = f->second.first;
            const std::string el = widen ? "std::int32_t" : ctype(prog_.buffer(e->buffer).type);
            const int groups = one_window() ? 1 : 2;
            // A byte window whose read this tap serves several loads: read once (in the tap
            // loop's scope), each load's lanes picked at its distance.
            if (const auto wk = window_key_.find(w); wk != window_key_.end() && (one_window() || two_windows())) {
                if (const auto sh = shared_.find(wk->second); sh != shared_.end()) {
                    const auto [rest, k] = split_constant(f->second.second);
                    if (const auto least = sh->second.find(to_string(rest)); least != sh->second.end()) {
                        const std::string name = fmt::format("window-read|{}|{}", w, least->first);
                        auto& reads = scopes_.back().by_key;
                        auto read = reads.find(name);
                        if (read == reads.end()) {
                            pinned_.push_back(rest);
                            const std::string t = fmt::format("t{}", next_temp_++);
                            line(fmt::format("const t_window_reads {} = read_window{}(b{} + {} + {} + {}.first, {});", t,
                                             one_window() ? 1 : 2, e->buffer, emit(rest), least->second, w, w));
                            read = reads.emplace(name, t).first;
                        }
                        return VName{vtemp(el, fmt::format("{}({}, {}, {})",
                                                           widen ? fmt::format("pick_window_u32<{}>", groups)
                                                                 : fmt::format("pick_window{}", groups),
                                                           read->second, w, k - least->second)),
                                     true, el};
                    }
                }
            }
            const std::string gather = !one_window() && !two_windows() ? "gather_window"
                                       : widen ? fmt::format("gather_window_u32<{}>", groups)
                                               : fmt::format("gather_window{}", groups);
            return VName{vtemp(el, fmt::format("{}(b{} + {} + {}.first, {})", gather, e->buffer, emit(f->second.second), w, w)),
                         true, el};
        }
        return std::nullopt;
    }

    VName emitv_compound(const Expr& e) {
        auto V = [&](const std::string& elem, const VName& x) {
            return fmt::format("to_v<vec<{}>>({})", elem, x.name);
        };
        if (e->op == Op::Var) {
            const std::string el = ranges_.count(e->var) && fits_i32(ranges_.at(e->var)) ? "std::int32_t" : "std::int64_t";
            return {vtemp(el, fmt::format("iota_v<vec<{}>>(v{})", el, e->var)), true, el};
        }
        // Bytes read through a window in a tap loop and widened to int32 (a uint8 pass's
        // pixel): the window's permute puts each byte straight into its int32 lane.
        if (e->op == Op::Cast && e->type == Type::I32 && e->args[0]->op == Op::Load &&
            type_bytes(prog_.buffer(e->args[0]->buffer).type) == 1 && (one_window() || two_windows()))
            if (auto g = window_gather(e->args[0], true)) return *g;
        if (e->op == Op::Load) {
            if (auto g = window_gather(e, false)) return *g;
            const Buffer& b = prog_.buffer(e->buffer);
            // An entry of a byte function's table, by the byte it looks up.
            // (Its plane's entries, from a start the same in every lane.)
            if (const auto byte = schedule::byte_table_argument(prog_, e)) {
                const Expr plane = offset_expr(b, {e->args[0], e->args[1], iconst(0), iconst(0)});
                if (!depends_on_var(plane, vector_var_)) {
                    const VName x = emitv(*byte);
                    const std::string bytes =
                        x.vector && x.elem == "std::uint8_t" ? x.name : fmt::format("to_v<vec<std::uint8_t>>({})", x.name);
                    return {vtemp("std::uint8_t", fmt::format("lut256_v(b{} + {}, {})", b.id, emit(simplify(plane)), bytes)),
                            true, "std::uint8_t"};
                }
            }
            const Expr off = offset_expr(b, e->args);
            const std::string el = ctype(b.type);
            const auto stride = linear_stride(off, vector_var_);
            if (!stride && windowed(b.type)) {
                // A gather whose lanes' part has a precomputed window (outside tap loops).
                Expr lanes, uniform;
                if (split_gather(off, -1, lanes, uniform)) {
                    const std::size_t e_bytes = type_bytes(b.type);
                    const auto& tables = window_tables_;
                    if (auto t = tables.find(fmt::format("{}|{}", e_bytes, to_string(lanes))); t != tables.end()) {
                        const std::string w = temp(fmt::format("lane_window<{}>&", e_bytes), t->second);
                        return {vtemp(el, fmt::format("gather_window_any(b{} + {} + {}.first, {})", b.id, emit(uniform), w, w)),
                                true, el};
                    }
                }
            }
            if (stride && *stride == 0) {
                // The address does not vary across lanes (e.g. a clamp pins it): one
                // load, broadcast.
                return {vtemp(el, fmt::format("to_v<vec<{}>>(b{}[{}])", el, b.id, emit(off))), true, el};
            }
            if (stride) {
                const std::string base = emit(off);  // lane 0
                if (*stride == 1) return {vtemp(el, fmt::format("load_v(b{} + {})", b.id, base)), true, el};
                if (*stride == -1)
                    return {vtemp(el, fmt::format("reverse_v(load_v(b{} + {} - (kLanes - 1)))", b.id, base)), true, el};
                return {vtemp(el, fmt::format("gather_stride_v(b{} + {}, {})", b.id, base, *stride)), true, el};
            }
            const VName o = emitv(off);
            // Bytes of a Temp buffer, which has kTempTailBytes to spare: gathered as words;
            // of the caller's input, as words that stay inside its span.
            if (type_bytes(b.type) == 1 && b.role == BufferRole::Input)
                return {vtemp(el, fmt::format("gather_bytes_bounded_v(b{}, {}, {})", b.id, o.name, emit(buffer_span(b)))),
                        true, el};
            const bool words = type_bytes(b.type) == 1 && b.role == BufferRole::Temp;
            return {vtemp(el, fmt::format("{}(b{}, {})", words ? "gather_bytes_v" : "gather_v", b.id, o.name)), true, el};
        }
        if (e->op == Op::Sum) {
            const std::string el = velem(e);
            const int r = e->var;
            const std::string acc = fmt::format("t{}", next_temp_++);
            const bool plain = reduce_kind(e) == Reduce::Add;
            line(fmt::format("vec<{}> {} = {};", el, acc, vector_identity(e, el)));
            const auto fixed = const_extent(e);
            if (!ir::tap_loop(e)) {
                for (std::int64_t j = 0; j < *fixed; ++j) {
                    const VarRanges saved = ranges_;
                    ranges_[r] = Interval{j, j};
                    const Expr term = simplify(substitute(e->args[0], {{r, iconst(j)}}), ranges_, lb_);
                    pinned_.push_back(term);
                    const std::string step = plain ? fmt::format("{} = {} + {};", acc, acc, V(el, emitv(term)))
                                                   : reduce_step_v(e, acc, el, term);
                    ranges_ = saved;
                    line(step);
                }
            } else if (const auto w = window_of(e, e->args[0])) {
                window_loops({*w}, unroll_pragma(), /*vector=*/true,
                             [&](std::size_t, const Expr& t) { accumulate(e, acc, el, t); });
            } else {
                const std::string n = emit(sum_extent(e));
                hoist_invariants(e->args[0], r, /*vector=*/true);
                const bool pairs = plain && prepare_tap_pairs({e});
                emit_tap_loop_variants([&] {
                    if (pairs) {
                        emit_tap_pairs({e}, {acc}, n);
                        return;
                    }
                    line(unroll_pragma());
                    line(fmt::format("for (std::int32_t r{0} = 0; r{0} < {1}; ++r{0}) {{", r, n));
                    ++indent_;
                    scopes_.emplace_back();
                    accumulate(e, acc, el, e->args[0]);
                    scopes_.pop_back();
                    --indent_;
                    line("}");
                });
            }
            return {acc, true, el};
        }
        std::vector<VName> a;
        for (const auto& x : e->args) a.push_back(emitv(x));
        const std::string el = e->type == Type::Bool ? "" : velem(e);
        auto bin = [&](const char* sym) {
            return VName{vtemp(el, fmt::format("{} {} {}", V(el, a[0]), sym, V(el, a[1]))), true, el};
        };
        // Operands of a comparison compute in the wider of their types.
        auto cmp = [&](const char* sym) {
            std::string c = a[0].vector ? a[0].elem : a[1].elem;
            if (a[0].vector && a[1].vector && a[0].elem != a[1].elem)
                c = (a[0].elem == "std::int64_t" || a[1].elem == "std::int64_t") ? "std::int64_t" : a[0].elem;
            if (!a[0].vector && !a[1].vector) c = a[0].elem;
            const std::string m = mask_elem(c);
            return VName{vtemp(m, fmt::format("{} {} {}", V(c, a[0]), sym, V(c, a[1]))), true, m};
        };
        auto mask = [&](const VName& x, const std::string& m) {
            if (!x.vector) return fmt::format("to_v<vec<{}>>({} ? -1 : 0)", m, x.name);
            return V(m, x);
        };
        switch (e->op) {
            case Op::Add: return bin("+");
            case Op::Sub: return bin("-");
            case Op::Mul: {
                // int32 products of factors that fit in 16 bits, one of them not negative
                // (a byte times a 16-bit weight): one 16-bit multiply-add (mul16_v) instead
                // of a 32-bit multiply, which costs twice as much on Intel cores.
                if (el == "std::int32_t") {
                    if (const auto f = mul16_order(e))
                        return {vtemp(el, fmt::format("mul16_v({}, {})", V(el, a[*f]), V(el, a[1 - *f]))), true, el};
                }
                return bin("*");
            }
            case Op::Div: return bin("/");
            case Op::Min: return {vtemp(el, fmt::format("min_v({}, {})", V(el, a[0]), V(el, a[1]))), true, el};
            case Op::Max: return {vtemp(el, fmt::format("max_v({}, {})", V(el, a[0]), V(el, a[1]))), true, el};
            case Op::Neg: return {vtemp(el, fmt::format("-{}", V(el, a[0]))), true, el};
            case Op::Fma:
                return {vtemp(el, fmt::format("fma_v({}, {}, {})", V(el, a[0]), V(el, a[1]), V(el, a[2]))), true, el};
            case Op::Floor:
                if (el != "float") break;
                return {vtemp(el, fmt::format("floor_v({})", V(el, a[0]))), true, el};
            case Op::Pow:
                if (el != "float") break;
                return {vtemp(el, fmt::format("pow_v({}, {})", V(el, a[0]), V(el, a[1]))), true, el};
            case Op::RoundEven:
                if (el != "float") break;
                return {vtemp(el, fmt::format("round_even_v({})", V(el, a[0]))), true, el};
            case Op::Abs: return {vtemp(el, fmt::format("abs_v({})", V(el, a[0]))), true, el};
            case Op::ShiftRight:
                return {vtemp(el, fmt::format("{} >> {}", V(el, a[0]), emit(e->args[1]))), true, el};
            case Op::FloorDiv:
            case Op::Mod: {
                const auto lhs = bounds(e->args[0], ranges_, lb_);
                const bool plain = lhs && lhs->lo >= 0;
                if (plain) return bin(e->op == Op::FloorDiv ? "/" : "%");
                return {vtemp(el, fmt::format("{}({}, {})", e->op == Op::FloorDiv ? "lanewise_floordiv" : "lanewise_mod",
                                              V(el, a[0]), V(el, a[1]))),
                        true, el};
            }
            case Op::Lt: return cmp("<");
            case Op::Le: return cmp("<=");
            case Op::Eq: return cmp("==");
            case Op::Ne: return cmp("!=");
            case Op::And:
            case Op::Or: {
                const std::string m = a[0].vector ? a[0].elem : a[1].elem;
                return {vtemp(m, fmt::format("{} {} {}", mask(a[0], m), e->op == Op::And ? "&" : "|", mask(a[1], m))),
                        true, m};
            }
            case Op::Not: return {vtemp(a[0].elem, fmt::format("~{}", mask(a[0], a[0].elem))), true, a[0].elem};
            case Op::Select: {
                if (!a[0].vector)
                    return {vtemp(el, fmt::format("{} ? {} : {}", a[0].name, V(el, a[1]), V(el, a[2]))), true, el};
                const std::string m = mask_elem(el);
                return {vtemp(el, fmt::format("{} ? {} : {}", mask(a[0], m), V(el, a[1]), V(el, a[2]))), true, el};
            }
            case Op::Cast:
                if (e->args[0]->type == Type::Bool)
                    return {vtemp(el, fmt::format("{} ? to_v<vec<{}>>(1) : to_v<vec<{}>>(0)", mask(a[0], mask_elem(el)), el, el)),
                            true, el};
                if (const std::string fn = narrow_cast_fn(e->type, e->args[0]->type); !fn.empty()) {
                    const std::string src = is_storage_only(e->args[0]->type) ? "std::uint16_t" : "float";
                    return {vtemp(el, fmt::format("{}_v({})", fn, V(src, a[0]))), true, el};
                }
                return {vtemp(el, V(el, a[0])), true, el};
            case Op::SatCast: {
                const std::string src = a[0].vector ? a[0].elem : velem(e->args[0]);
                if (is_int(e->type) && e->type != Type::I64)
                    return {vtemp(el, fmt::format("sat_v<{}>({})", el, V(src, a[0]))), true, el};
                return {vtemp(el, V(el, a[0])), true, el};
            }
            default: break;
        }
        // Anything else: lane by lane through the scalar code path would need the
        // lane's variables; no decomposition produces such a node today.
        fail("internal: codegen cannot vectorize op {} of type {}", op_name(e->op), type_name(e->type));
    }

    std::unordered_map<const Node*, bool> varying_memo_;
};

}  // namespace

std::string lane_namespace(int lanes) { return fmt::format("t_lanes{}", lanes); }

std::string generate_cpp(const Program& program, int lanes) {
    // Range analysis sees the declared ranges of tables, never one instance's data.
    const LoadBounds lb = program.load_bounds();
    // Each kernel is printed for its own lane count (Kernel::vector_width, chosen by the
    // scheduler); kernels without a vector loop use `lanes`. The preamble's vector part is
    // pasted once per lane count, in a namespace of its own that the kernels of that count
    // are printed in.
    // A program without vector loops (the quick tier's scalar program, say) gets no vector
    // part at all: its kernels call the scalar helpers only, and the compiler is spared
    // parsing the rest.
    auto kernel_lanes = [&](const Kernel& k) { return k.vector_width > 1 ? k.vector_width : lanes; };
    const bool vectors =
        std::any_of(program.kernels.begin(), program.kernels.end(), [](const Kernel& k) { return k.vector_width > 1; });
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
        const Kernel printed = k.fused_channels > 0 ? fused_channel_kernel(program, k) : k;
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
