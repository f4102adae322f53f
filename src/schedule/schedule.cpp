// The scheduler's passes (see schedule.h for the list and their order). It knows
// primitives only: a tensor is cheap or expensive, read once or many times, stored in
// some layout; never which op made it.
#include "schedule/schedule.h"

#include "core/error.h"
#include "core/tensor.h"
#include "ir/simplify.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <unordered_map>
#include <unordered_set>
#include <map>
#include <numeric>

namespace toroid::schedule {

using namespace ir;

namespace {

// Loads of `tensor` in `e`, each weighted by the extents of the Sums around it: how
// many times one evaluation of `e` reads the tensor (saturating; memoized, as
// expressions are DAGs).
std::int64_t read_count_rec(const Expr& e, int tensor, std::unordered_map<const Node*, std::int64_t>& memo) {
    if (const auto it = memo.find(e.get()); it != memo.end()) return it->second;
    constexpr std::int64_t cap = std::int64_t{1} << 40;
    std::int64_t n = e->op == Op::Load && e->buffer == tensor ? 1 : 0;
    for (const auto& a : e->args) n = std::min(cap, n + read_count_rec(a, tensor, memo));
    if (e->op == Op::Sum) n = std::min(cap, n * std::max<std::int64_t>(e->ival, 1));
    memo[e.get()] = n;
    return n;
}

std::int64_t read_count(const Expr& e, int tensor) {
    std::unordered_map<const Node*, std::int64_t> memo;
    return read_count_rec(e, tensor, memo);
}

bool contains_sum(const Expr& e) {
    bool found = false;
    visit(e, [&](const Expr& x) { found = found || x->op == Op::Sum; });
    return found;
}

// Ranges of every reduction variable of `e` (from its Sums).
void add_reduction_ranges(const Expr& e, VarRanges& ranges) {
    visit(e, [&](const Expr& x) {
        if (x->op == Op::Sum) ranges[x->var] = Interval{0, x->ival - 1};
    });
}

// The value range of an integer constant table, from its data.
std::optional<Interval> table_range(const GraphTensor& t) {
    if (t.kind != TensorKind::Constant) return std::nullopt;
    return data_range(t.type, t.data);
}

std::vector<std::int64_t> dense_c_strides(const std::vector<std::int64_t>& shape) {
    std::vector<std::int64_t> s(shape.size(), 1);
    for (std::size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
    return s;
}

// Operations of `e` (distinct nodes, leaves excluded) that do not depend on the
// channel index v1, and those that do.
std::pair<std::int64_t, std::int64_t> channel_work(const Expr& e) {
    std::map<const Node*, bool> depends;  // memo: node depends on v1
    std::int64_t shared = 0, per_channel = 0;
    std::function<bool(const Expr&)> walk = [&](const Expr& x) -> bool {
        auto it = depends.find(x.get());
        if (it != depends.end()) return it->second;
        bool d = x->op == Op::Var && x->var == 1;
        for (const auto& a : x->args) d = walk(a) || d;
        depends[x.get()] = d;
        if (x->op != Op::Const && x->op != Op::Var) (d ? per_channel : shared) += 1;
        return d;
    };
    walk(e);
    return {shared, per_channel};
}

struct Scheduler {
    const Graph& g;
    Options options;
    std::vector<PassDump>* dumps;

    std::vector<bool> realized;            // by graph id
    std::vector<Expr> body;                // inlined bodies, by graph id
    std::vector<std::string> log;          // program-level decisions
    std::map<int, std::vector<std::string>> notes;  // per realized tensor
    std::vector<std::optional<Interval>> table_ranges;

    LoadBounds load_bounds() const {
        return [this](int buffer) -> std::optional<Interval> {
            if (buffer < 0 || static_cast<std::size_t>(buffer) >= table_ranges.size()) return std::nullopt;
            return table_ranges[static_cast<std::size_t>(buffer)];
        };
    }

    // Pass 1: a computed tensor is realized when it is the output, when its
    // decomposition asks for it (a separable pass), or when it is expensive (it sums,
    // or is large) and would be evaluated more than once per consumer element.
    void choose_realized() {
        const auto n = g.tensors().size();
        realized.assign(n, false);
        std::vector<std::int64_t> uses(n, 0);
        for (std::size_t i = n; i-- > 0;) {
            const GraphTensor& t = g.tensors()[i];
            if (t.kind != TensorKind::Compute) continue;
            const int id = static_cast<int>(i);
            bool realize = id == g.output || t.realize;
            std::string why = id == g.output ? "the pipeline's result" : "requested by its decomposition";
            if (!realize) {
                // How often one element of each consumer kernel reads this tensor.
                std::int64_t count = 0;
                for (std::size_t j = i + 1; j < n; ++j) {
                    const GraphTensor& c = g.tensors()[j];
                    if (c.kind != TensorKind::Compute) continue;
                    const std::int64_t k = read_count(c.body, id);
                    count += k * (realized[j] ? 1 : std::max<std::int64_t>(uses[j], 1));
                }
                uses[i] = count;
                const bool expensive = contains_sum(t.body) || node_count(t.body) > 48;
                if (expensive && count > 1) {
                    realize = true;
                    why = fmt::format("expensive ({} nodes{}) and read {} times per consumer element",
                                      node_count(t.body), contains_sum(t.body) ? ", sums" : "", count);
                } else {
                    log.push_back(fmt::format("inline {} ({}): read {} time(s) per consumer element", t.name, t.origin,
                                              count));
                }
            }
            if (realize) {
                realized[i] = true;
                notes[id].push_back("realize: " + why);
                log.push_back(fmt::format("realize {} ({}): {}", t.name, t.origin, why));
            }
        }
    }

    // Pass 2: substitute the bodies of inlined tensors into their readers.
    void inline_tensors() {
        body.assign(g.tensors().size(), nullptr);
        for (const GraphTensor& t : g.tensors()) {
            if (t.kind != TensorKind::Compute) continue;
            body[static_cast<std::size_t>(t.id)] = rewrite(t.body, [&](const Expr& e) -> Expr {
                if (e->op != Op::Load) return e;
                const GraphTensor& src = g.at(e->buffer);
                if (src.kind != TensorKind::Compute || realized[static_cast<std::size_t>(src.id)]) return e;
                std::vector<std::pair<int, Expr>> sub;
                for (std::size_t k = 0; k < e->args.size(); ++k) sub.emplace_back(static_cast<int>(k), e->args[k]);
                return substitute(body[static_cast<std::size_t>(src.id)], sub);
            });
        }
    }

    ir::Program run() {
        table_ranges.resize(g.tensors().size());
        for (const GraphTensor& t : g.tensors()) table_ranges[static_cast<std::size_t>(t.id)] = table_range(t);
        choose_realized();
        inline_tensors();

        // Buffers: the input, the constants still read, and the realized tensors.
        Program prog;
        std::map<int, int> buffer_of;  // graph id -> buffer id
        auto reads = [&](int id) {
            for (const GraphTensor& t : g.tensors())
                if (t.kind == TensorKind::Compute && realized[static_cast<std::size_t>(t.id)] &&
                    read_count(body[static_cast<std::size_t>(t.id)], id) > 0)
                    return true;
            return false;
        };
        for (const GraphTensor& t : g.tensors()) {
            const bool keep = t.id == 0 || (t.kind == TensorKind::Constant && reads(t.id)) ||
                              (t.kind == TensorKind::Compute && realized[static_cast<std::size_t>(t.id)]);
            if (!keep) continue;
            Buffer b;
            b.id = static_cast<int>(prog.buffers.size());
            b.name = t.name;
            b.type = t.type;
            b.shape = t.shape;
            b.origin.assign(t.shape.size(), 0);
            if (t.kind == TensorKind::Input) {
                b.role = BufferRole::Input;
                b.strides = t.strides;
            } else if (t.kind == TensorKind::Constant) {
                b.role = BufferRole::Constant;
                b.strides = dense_c_strides(t.shape);
                b.data = t.data;
            } else {
                b.role = t.id == g.output ? BufferRole::Output : BufferRole::Temp;
            }
            buffer_of[t.id] = b.id;
            prog.buffers.push_back(std::move(b));
        }
        prog.input = buffer_of.at(0);
        prog.output = buffer_of.at(g.output);

        // Kernels in graph order (producers before consumers), loads renamed to buffers.
        for (const GraphTensor& t : g.tensors()) {
            if (t.kind != TensorKind::Compute || !realized[static_cast<std::size_t>(t.id)]) continue;
            Kernel k;
            k.name = fmt::format("kernel_{}", prog.kernels.size());
            k.output = buffer_of.at(t.id);
            k.value = rewrite(body[static_cast<std::size_t>(t.id)], [&](const Expr& e) -> Expr {
                if (e->op != Op::Load) return e;
                return load(buffer_of.at(e->buffer), e->type, e->args);
            });
            k.decisions = notes[t.id];
            k.decisions.insert(k.decisions.begin(), fmt::format("computes {} ({})", t.name, t.origin));
            for (std::size_t d = 0; d < t.shape.size(); ++d)
                k.loops.push_back(Loop{static_cast<int>(d), 0, t.shape[d], LoopKind::Serial});
            prog.kernels.push_back(std::move(k));
        }
        // Table value ranges, now by buffer id.
        std::vector<std::optional<Interval>> ranges(prog.buffers.size());
        for (const auto& [gid, bid] : buffer_of) ranges[static_cast<std::size_t>(bid)] = table_ranges[static_cast<std::size_t>(gid)];
        table_ranges = std::move(ranges);
        dump("inline", prog);

        simplify_kernels(prog);
        dump("simplify", prog);
        infer_bounds(prog);
        simplify_kernels(prog);  // the smaller ranges may prove more clamps idle
        dump("infer_bounds", prog);
        choose_layouts(prog);
        dump("choose_layouts", prog);
        order_loops(prog);
        dump("order_loops", prog);
        choose_axes(prog);
        estimate_costs(prog);
        dump("choose_axes", prog);
        return prog;
    }

    void dump(const char* pass, const Program& prog) {
        if (dumps) dumps->push_back(PassDump{pass, prog.to_string()});
    }

    static VarRanges kernel_ranges(const Kernel& k) {
        VarRanges r;
        for (const Loop& l : k.loops) r[l.var] = Interval{l.begin, l.begin + l.extent - 1};
        add_reduction_ranges(k.value, r);
        return r;
    }

    // Pass 3: simplify every kernel's value under its loop ranges.
    void simplify_kernels(Program& prog) {
        for (Kernel& k : prog.kernels) k.value = simplify(k.value, kernel_ranges(k), load_bounds());
    }

    // Pass 4: each realized intermediate is computed only over the region its
    // consumers read (a crop after a resize computes the cropped rows only).
    void infer_bounds(Program& prog) {
        for (std::size_t ki = prog.kernels.size(); ki-- > 0;) {
            Kernel& producer = prog.kernels[ki];
            Buffer& b = prog.buffers[static_cast<std::size_t>(producer.output)];
            if (b.role == BufferRole::Output) continue;
            std::vector<std::optional<Interval>> region(b.shape.size());
            bool known = true;
            for (std::size_t kj = ki + 1; kj < prog.kernels.size() && known; ++kj) {
                const Kernel& consumer = prog.kernels[kj];
                const VarRanges r = kernel_ranges(consumer);
                visit(consumer.value, [&](const Expr& e) {
                    if (!known || e->op != Op::Load || e->buffer != b.id) return;
                    for (std::size_t d = 0; d < e->args.size(); ++d) {
                        auto iv = bounds(e->args[d], r, load_bounds());
                        if (!iv) {
                            known = false;
                            return;
                        }
                        region[d] = region[d] ? Interval{std::min(region[d]->lo, iv->lo), std::max(region[d]->hi, iv->hi)}
                                              : *iv;
                    }
                });
            }
            if (!known) {
                producer.decisions.push_back("bounds: consumers' reads not provable, computing the whole tensor");
                continue;
            }
            std::vector<std::int64_t> origin(b.shape.size()), shape(b.shape.size());
            bool shrunk = false;
            for (std::size_t d = 0; d < b.shape.size(); ++d) {
                Interval iv = region[d].value_or(Interval{0, 0});
                iv.lo = std::max<std::int64_t>(iv.lo, 0);
                iv.hi = std::min<std::int64_t>(iv.hi, b.shape[d] - 1);
                if (iv.hi < iv.lo) iv = Interval{0, 0};
                origin[d] = iv.lo;
                shape[d] = iv.hi - iv.lo + 1;
                shrunk = shrunk || shape[d] != b.shape[d];
            }
            b.origin = origin;
            b.shape = shape;
            for (Loop& l : producer.loops) {
                l.begin = origin[static_cast<std::size_t>(l.var)];
                l.extent = shape[static_cast<std::size_t>(l.var)];
            }
            if (shrunk)
                producer.decisions.push_back(fmt::format("bounds: consumers read only [{}] of [{}]",
                                                         fmt::join(shape, ", "), fmt::join(g.at(0).shape, ", ")));
        }
    }

    // Pass 5: realized 4-D buffers take the input's layout; channels-last input keeps
    // every intermediate and the result channels-last.
    void choose_layouts(Program& prog) {
        const GraphTensor& in = g.at(0);
        TensorSpec spec;
        for (std::size_t d = 0; d < 4 && d < in.shape.size(); ++d) {
            spec.shape[d] = in.shape[d];
            spec.strides[d] = in.strides[d];
        }
        const Layout layout = suggested_layout(spec);
        log.push_back(fmt::format("layout: {} (the input's)", layout_name(layout)));
        for (Buffer& b : prog.buffers) {
            if (b.role != BufferRole::Temp && b.role != BufferRole::Output) continue;
            if (b.shape.size() == 4) {
                const Dims s{b.shape[0], b.shape[1], b.shape[2], b.shape[3]};
                const Dims st = dense_strides(s, layout);
                b.strides.assign(st.begin(), st.end());
            } else {
                b.strides = dense_c_strides(b.shape);
            }
        }
        for (Kernel& k : prog.kernels)
            k.decisions.push_back(fmt::format("layout: {}", layout_name(layout)));
    }

    // Pass 6: loops from the largest stride of the stored buffer to the smallest, so
    // the innermost loop writes consecutive elements.
    void order_loops(Program& prog) {
        for (Kernel& k : prog.kernels) {
            const Buffer& b = prog.buffer(k.output);
            std::stable_sort(k.loops.begin(), k.loops.end(), [&](const Loop& a, const Loop& c) {
                const auto sa = b.shape[static_cast<std::size_t>(a.var)] == 1 ? INT64_MAX : b.strides[static_cast<std::size_t>(a.var)];
                const auto sc = b.shape[static_cast<std::size_t>(c.var)] == 1 ? INT64_MAX : b.strides[static_cast<std::size_t>(c.var)];
                return sa > sc;
            });
            std::string why = "memory order of the output";
            // A few channels whose values share most of their work (the sample
            // coordinates of a warp, say) are computed together: channels innermost, to be
            // unrolled, so the shared work is done once per pixel.
            auto c = std::find_if(k.loops.begin(), k.loops.end(), [](const Loop& l) { return l.var == 1; });
            if (k.loops.size() == 4 && c != k.loops.end() && c + 1 != k.loops.end() && c->extent > 1 &&
                c->extent <= 4) {
                const auto [shared, per_channel] = channel_work(k.value);
                if (shared > per_channel) {
                    const Loop moved = *c;
                    k.loops.erase(c);
                    k.loops.push_back(moved);
                    why = fmt::format("channels innermost: {} of {} operations are the same for every channel",
                                      shared, shared + per_channel);
                }
            }
            std::vector<std::string> names;
            for (const Loop& l : k.loops) names.push_back(fmt::format("v{}", l.var));
            k.decisions.push_back(fmt::format("loop order: {} ({})", fmt::join(names, ", "), why));
        }
    }

    // Pass 7: the innermost loop is the vector loop; a tiny innermost loop (channels of
    // a channels-last image) is unrolled and the loop around it vectorized instead.
    // Outer loops are parallel until there are enough iterations to share.
    void choose_axes(Program& prog) {
        for (Kernel& k : prog.kernels) {
            const Buffer& b = prog.buffer(k.output);
            const int lanes = std::max(1, options.vector_bytes / static_cast<int>(ir::type_bytes(b.type)));
            std::size_t vec = k.loops.size() - 1;
            if (k.loops.size() >= 2 && k.loops[vec].extent <= 4 && k.loops[vec].extent > 1) {
                k.loops[vec].kind = LoopKind::Unrolled;
                k.decisions.push_back(fmt::format("unroll v{}: {} iterations, innermost in memory", k.loops[vec].var,
                                                  k.loops[vec].extent));
                --vec;
            }
            k.loops[vec].kind = LoopKind::Vector;
            k.vector_width = lanes;
            k.decisions.push_back(fmt::format("vector axis v{} ({} lanes of {}): {}", k.loops[vec].var, lanes,
                                              type_name(b.type),
                                              k.loops[vec].kind == LoopKind::Vector && vec + 1 < k.loops.size()
                                                  ? "interleaved with the unrolled loop"
                                                  : "stride 1 in the output"));
            std::int64_t iterations = 1;
            std::vector<std::string> par;
            for (std::size_t i = 0; i < vec && iterations < 512; ++i) {
                k.loops[i].kind = LoopKind::Parallel;
                iterations *= k.loops[i].extent;
                par.push_back(fmt::format("v{}", k.loops[i].var));
            }
            if (!par.empty())
                k.decisions.push_back(fmt::format("parallel over {} ({} iterations shared by the threads)",
                                                  fmt::join(par, " x "), iterations));
            else
                k.decisions.push_back("no parallel loop: only the vector loop has more than one iteration");
        }
    }

    void estimate_costs(Program& prog) {
        for (Kernel& k : prog.kernels) {
            const Buffer& out = prog.buffer(k.output);
            std::int64_t points = 1;
            for (const Loop& l : k.loops) points *= l.extent;
            k.bytes_written = points * static_cast<std::int64_t>(ir::type_bytes(out.type));
            // Per output point, each distinct operation once (the code generator shares
            // common subexpressions), times the extents of the Sums around it.
            std::int64_t flops = 0;
            std::unordered_set<const Node*> walked;
            std::function<void(const Expr&, std::int64_t)> walk = [&](const Expr& e, std::int64_t m) {
                if (!walked.insert(e.get()).second) return;
                if (e->op == Op::Sum) m *= e->ival;
                if (is_float(e->type) && e->op != Op::Load && e->op != Op::Const && e->op != Op::Cast) flops += m;
                for (const auto& a : e->args) walk(a, m);
            };
            walk(k.value, 1);
            k.flops = flops * points;
            // Each element read once at best, at worst once per load: report the distinct bytes.
            std::int64_t bytes = 0;
            std::vector<bool> seen(prog.buffers.size(), false);
            visit(k.value, [&](const Expr& e) {
                if (e->op != Op::Load || seen[static_cast<std::size_t>(e->buffer)]) return;
                seen[static_cast<std::size_t>(e->buffer)] = true;
                const Buffer& b = prog.buffer(e->buffer);
                bytes += b.numel() * static_cast<std::int64_t>(ir::type_bytes(b.type));
            });
            k.bytes_read = bytes;
        }
    }
};

}  // namespace

Program schedule(const Graph& g, const Options& options, std::vector<PassDump>* dumps) {
    if (g.output < 0) fail("internal: graph has no output");
    Scheduler s{g, options, dumps, {}, {}, {}, {}, {}};
    Program p = s.run();
    return p;
}

}  // namespace toroid::schedule
