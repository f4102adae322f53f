#include "schedule/tabulate.h"

#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

namespace toroid::schedule {

using namespace ir;

namespace {

bool is_loop_var(const Expr& e) { return e->op == Op::Var && e->var < kFirstParamVar; }


// A variable no kernel has (the last loop variable id): where the argument stood.
constexpr int kArgumentVar = kFirstReductionVar - 1;

}  // namespace

std::optional<ByteFunction> byte_function(const Expr& value) {
    // Loads whose indices name a loop variable past n and c read pixels: one of them only
    // (a load whose indices hold another load, such as a per-plane table read at the pixel's
    // value, is not a pixel read: it must depend on the pixels through the argument only).
    auto past_plane = [](const Expr& e) {
        bool found = false;
        visit(e, [&](const Expr& x) { found = found || (is_loop_var(x) && x->var >= 2); });
        return found;
    };
    auto holds_load = [](const Expr& e) {
        bool found = false;
        visit(e, [&](const Expr& x) { found = found || x->op == Op::Load; });
        return found;
    };
    std::optional<Expr> argument;
    bool other = false;
    visit(value, [&](const Expr& e) {
        if (other) return;
        if (e->op == Op::Sum) other = true;  // a reduction: not pointwise
        if (e->op != Op::Load) return;
        bool indexed = false, nested = false;
        for (const Expr& a : e->args) {
            indexed = indexed || past_plane(a);
            nested = nested || holds_load(a);
        }
        if (!indexed || nested) return;
        if (e->type != Type::U8 || (argument && !structurally_equal(*argument, e))) other = true;
        else argument = e;
    });
    if (other || !argument) return std::nullopt;
    // With the argument replaced, no loop variable is left but n and c (in any load's
    // indices too).
    const Expr rest = rewrite(value, [&](const Expr& e) { return structurally_equal(e, *argument) ? cast(Type::U8, var(kArgumentVar)) : e; });
    ByteFunction f{*argument, substitute(rest, {{kArgumentVar, var(3)}}), false, false};
    bool loops = false;
    visit(rest, [&](const Expr& e) {
        if (!is_loop_var(e) || e->var == kArgumentVar) return;
        if (e->var == 0) f.per_image = true;
        else if (e->var == 1) f.per_channel = true;
        else loops = true;
    });
    if (loops) return std::nullopt;
    return f;
}

std::optional<Expr> byte_function_argument(const Expr& value) {
    const auto f = byte_function(value);
    if (!f) return std::nullopt;
    return f->argument;
}

int pointwise_cost(const Expr& value) {
    int cost = 0;
    visit(value, [&](const Expr& e) {
        switch (e->op) {
            case Op::Const:
            case Op::Var:
            case Op::Load: break;
            case Op::Pow: cost += 40; break;
            case Op::Div: cost += 4; break;
            case Op::FloorDiv:
            case Op::Mod: cost += is_const(e->args[1]) ? 1 : 8; break;  // an integer division
            default: cost += 1;
        }
    });
    return cost;
}

std::optional<Expr> byte_table_argument(const Program& prog, const Expr& load) {
    if (load->op != Op::Load || load->args.size() != 4) return std::nullopt;
    const Buffer& b = prog.buffer(load->buffer);
    if (!b.lookup_table || b.type != Type::U8) return std::nullopt;
    const Expr& at = load->args[3];
    if (at->op != Op::Cast || at->args[0]->type != Type::U8) return std::nullopt;
    return at->args[0];
}

void tabulate_byte_functions(Program& prog, const Target& target) {
    std::vector<Kernel> kernels;
    kernels.reserve(prog.kernels.size());
    for (Kernel& k : prog.kernels) {
        const auto function = byte_function(k.value);
        // The work the table saves: its entry's (the argument's own index arithmetic stays
        // in the kernel), less the cast that stands for the argument.
        const int cost = function ? pointwise_cost(function->entry) - 1 : 0;
        const bool registers = target.byte_tables && k.value->type == Type::U8;
        if (!function || cost < (registers ? 1 : kTabulateMinCost)) {
            kernels.push_back(std::move(k));
            continue;
        }
        // One table per image and channel where the function differs by them (an image's
        // mean, a channel's least and greatest values).
        const Buffer& out = prog.buffer(k.output);
        const std::string name = out.name + ".table";
        Shape shape{function->per_image ? out.shape[0] : iconst(1), function->per_channel ? out.shape[1] : iconst(1),
                    iconst(1), iconst(256)};
        const Type type = k.value->type;
        Kernel fill = new_temp_kernel(prog, name, type, std::move(shape), function->entry,
                                      fmt::format("computes {}: {}'s value for each of the 256 bytes it reads{}", name,
                                                  out.name, function->per_image || function->per_channel ? " (per plane)" : ""));
        prog.buffers.back().lookup_table = true;
        k.value = load(fill.output, type,
                       {function->per_image ? var(0) : iconst(0), function->per_channel ? var(1) : iconst(0), iconst(0),
                        cast(Type::I64, function->argument)});
        k.decisions.push_back(fmt::format("tabulate: a function of one byte it reads (cost {} >= {}): reads {}", cost,
                                          registers ? 1 : kTabulateMinCost, name));
        kernels.push_back(std::move(fill));
        kernels.push_back(std::move(k));
    }
    number_kernels(kernels);
    prog.kernels = std::move(kernels);
}

}  // namespace toroid::schedule
