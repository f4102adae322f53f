#include "schedule/partition.h"

#include "ir/simplify.h"

namespace toroid::schedule {

using namespace ir;

namespace {

bool is_var(const Expr& e, int v) { return e->op == Op::Var && e->var == v; }

// lo <= v: the bound; v < hi: the bound; else null.
Expr lower_bound_of(const Expr& e, int v) {
    return e->op == Op::Le && is_var(e->args[1], v) && !depends_on_var(e->args[0], v) ? e->args[0] : nullptr;
}
Expr upper_bound_of(const Expr& e, int v) {
    return e->op == Op::Lt && is_var(e->args[0], v) && !depends_on_var(e->args[1], v) ? e->args[1] : nullptr;
}

}  // namespace

std::optional<Partition> find_partition(const Expr& value, int v) {
    Partition p;
    bool other = false;
    visit(value, [&](const Expr& e) {
        if (other) return;
        if (const Expr lo = lower_bound_of(e, v)) {
            if (p.lo && !structurally_equal(p.lo, lo)) other = true;
            p.lo = lo;
        } else if (const Expr hi = upper_bound_of(e, v)) {
            if (p.hi && !structurally_equal(p.hi, hi)) other = true;
            p.hi = hi;
        } else if (e->op == Op::Sum) {
            other = true;  // tap loops keep their own form
        } else if (e->type == Type::Bool && e->args.size() == 2 && is_int(e->args[0]->type) &&
                   (depends_on_var(e->args[0], v) || depends_on_var(e->args[1], v))) {
            other = true;  // a test of v of another form
        }
    });
    if (other || !p.lo || !p.hi) return std::nullopt;
    return p;
}

Expr partitioned_value(const Expr& value, int v, int part) {
    return simplify(rewrite(value, [&](const Expr& e) {
        if (lower_bound_of(e, v)) return bconst(part != 0);  // lo <= v: false before lo
        if (upper_bound_of(e, v)) return bconst(part != 2);  // v < hi: false from hi on
        return e;
    }));
}

}  // namespace toroid::schedule
