#include "schedule/block_reduce.h"

#include "schedule/rfactor.h"

#include <fmt/format.h>

#include <functional>
#include <unordered_map>

namespace toroid::schedule {

using namespace ir;

namespace {

// Whether `extent` names an image size (a Size parameter of the program).
bool image_sized(const Program& prog, const Expr& extent) {
    bool found = false;
    visit(extent, [&](const Expr& e) {
        if (e->op != Op::Var || !is_param_var(e->var)) return;
        const auto i = static_cast<std::size_t>(e->var - kFirstParamVar);
        found = found || (i < prog.params.size() && prog.params[i].kind == ParamKind::Size);
    });
    return found;
}

}  // namespace

bool integer_valued(const Program& prog, const Expr& root) {
    std::unordered_map<const Node*, bool> memo;
    std::unordered_map<int, bool> buffers;  // Temp buffer id -> its kernel's value
    std::function<bool(const Expr&)> walk = [&](const Expr& e) -> bool {
        if (!is_float(e->type)) return e->type != Type::Bool;
        if (auto it = memo.find(e.get()); it != memo.end()) return it->second;
        bool r = false;
        switch (e->op) {
            case Op::Const: r = e->fval == static_cast<double>(static_cast<std::int64_t>(e->fval)); break;
            case Op::Floor:
            case Op::RoundEven: r = true; break;
            case Op::Cast:
            case Op::SatCast: r = !is_float(e->args[0]->type) || walk(e->args[0]); break;
            case Op::Add:
            case Op::Sub:
            case Op::Mul:
            case Op::Min:
            case Op::Max:
            case Op::Neg:
            case Op::Abs:
                r = true;
                for (const Expr& a : e->args) r = r && walk(a);
                break;
            case Op::Select: r = walk(e->args[1]) && walk(e->args[2]); break;
            case Op::Sum: r = reduce_kind(e) != Reduce::Fma && walk(e->args[0]); break;
            case Op::Load: {
                const Buffer& b = prog.buffer(e->buffer);
                if (b.role != BufferRole::Temp) break;
                if (auto it = buffers.find(b.id); it != buffers.end()) {
                    r = it->second;
                    break;
                }
                buffers[b.id] = false;  // (a cycle cannot occur: kernels read earlier ones)
                for (const Kernel& k : prog.kernels)
                    if (k.output == b.id) r = walk(k.value);
                buffers[b.id] = r;
                break;
            }
            default: break;
        }
        memo[e.get()] = r;
        return r;
    };
    return walk(root);
}

void split_image_reductions(Program& prog, const Target& target) {
    if (target.kind != TargetKind::Cuda) return;
    std::vector<Kernel> kernels;
    kernels.reserve(prog.kernels.size());
    for (Kernel& k : prog.kernels) {
        const Buffer& out = prog.buffer(k.output);
        const auto chain = reduction_chain(k.value, [&](const Expr& sum) {
            return regroupable(sum) || (reduce_kind(sum) == Reduce::Add && sum->type == Type::F64);
        });
        // A free dim of the output (logical extent 1, the last such) for the rows.
        int free = -1;
        for (std::size_t d = 0; d < out.logical.size(); ++d)
            if (is_const(out.logical[d], 1)) free = static_cast<int>(d);
        if (!chain || chain->sums.size() < 2 || free < 0 || !k.store_index.empty() ||
            !image_sized(prog, sum_extent(chain->sums.front())) || !image_sized(prog, sum_extent(chain->sums[1])) ||
            (is_float(chain->sums.front()->type) && reduce_kind(chain->sums.front()) == Reduce::Add &&
             !integer_valued(prog, chain->term))) {
            kernels.push_back(std::move(k));
            continue;
        }
        // P[.., r, ..] (r at the free dim): the reductions inside the outermost, at r.
        const Expr& outer = chain->sums.front();
        const Expr inner = substitute(substitute(outer->args[0], {{free, iconst(0)}}), {{outer->var, var(free)}});
        Shape shape = out.shape;
        shape[static_cast<std::size_t>(free)] = sum_extent(outer);
        const std::string name = out.name + ".rows";
        const Type acc = outer->type;
        Kernel rows = new_temp_kernel(prog, name, acc, shape, inner,
                                      fmt::format("computes {}: {}'s reduction for each r{} (a block of threads or a "
                                                  "histogram each, in parallel)",
                                                  name, out.name, outer->var));
        std::vector<Expr> at;
        for (std::size_t d = 0; d < shape.size(); ++d)
            at.push_back(static_cast<int>(d) == free ? var(outer->var) : var(static_cast<int>(d)));
        k.value = substitute(reduce(reduce_kind(outer), outer->var, sum_extent(outer), load(rows.output, acc, at), acc),
                             {{free, iconst(0)}});
        k.decisions.push_back(fmt::format("combines the {} values of {} (its reduction split along r{}: few outputs "
                                          "of long reductions would keep few blocks busy)",
                                          acc == Type::F64 ? "double" : type_name(acc), name, outer->var));
        kernels.push_back(std::move(rows));
        kernels.push_back(std::move(k));
    }
    number_kernels(kernels);
    prog.kernels = std::move(kernels);
}

void choose_block_reductions(Program& prog, const Target& target) {
    if (target.kind != TargetKind::Cuda) return;
    for (Kernel& k : prog.kernels) {
        if (k.histogram) continue;
        // The kernel's outermost reductions: exactly one (a node may be read more than once).
        std::vector<Expr> outer;
        std::function<void(const Expr&)> walk = [&](const Expr& e) {
            if (e->op == Op::Sum) {
                if (std::none_of(outer.begin(), outer.end(), [&](const Expr& o) { return o.get() == e.get(); }))
                    outer.push_back(e);
                return;
            }
            for (const Expr& a : e->args) walk(a);
        };
        walk(k.value);
        if (outer.size() != 1) continue;
        const Expr& s = outer.front();
        if (!image_sized(prog, sum_extent(s))) continue;
        const Reduce kind = reduce_kind(s);
        const Type t = s->type;
        if (t != Type::I32 && t != Type::I64 && t != Type::F32 && t != Type::F64) continue;
        std::string why;
        if (kind == Reduce::Min || kind == Reduce::Max) why = kind == Reduce::Min ? "the least term" : "the greatest term";
        else if (kind == Reduce::Add && !is_float(t)) why = "an integer sum";
        else if (kind == Reduce::Add && t == Type::F64 && integer_valued(prog, s->args[0]))
            why = "a double sum of integer values";
        else continue;
        k.gpu().block_sum = s.get();
        const Expr& body = s->args[0];
        const bool nested = body->op == Op::Sum && reduce_kind(body) == kind && body->type == t;
        k.decisions.push_back(fmt::format("a block per output: its threads share the reduction over r{}{} ({}: the same "
                                          "in any grouping), combined across the block",
                                          s->var, nested ? fmt::format(" x r{}", body->var) : std::string(), why));
    }
}

}  // namespace toroid::schedule
