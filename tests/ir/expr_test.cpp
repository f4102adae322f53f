// Expr builders (type checks, constant folding, integer and float semantics), queries,
// the printer, the scalar interpreter, and the Graph and Program containers. Expected
// values are written out by hand or computed independently of ir::apply_op.
#include "ir/eval.h"
#include "ir/expr.h"
#include "ir/graph.h"
#include "ir/loop.h"

#include "core/error.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace toroid::ir {
namespace {

std::int64_t ival(const Expr& e) {
    EXPECT_TRUE(is_const(e)) << to_string(e);
    return e->ival;
}
double fval(const Expr& e) {
    EXPECT_TRUE(is_const(e)) << to_string(e);
    return e->fval;
}

// The message of the toroid::Error that f throws ("" if none).
template <typename F>
std::string error_of(F f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

TEST(ExprTypes, Names) {
    EXPECT_EQ(type_name(Type::U8), "uint8_t");
    EXPECT_EQ(type_name(Type::F32), "float");
    EXPECT_EQ(type_bytes(Type::I16), 2u);
    EXPECT_EQ(type_bytes(Type::F64), 8u);
    EXPECT_TRUE(is_int(Type::U8));
    EXPECT_FALSE(is_int(Type::Bool));
    EXPECT_TRUE(is_float(Type::F64));
    EXPECT_EQ(int_min(Type::I16), -32768);
    EXPECT_EQ(int_max(Type::U8), 255);
    EXPECT_EQ(int_max(Type::Bool), 1);
    EXPECT_THROW(int_min(Type::F32), Error);
    EXPECT_EQ(op_name(Op::FloorDiv), "floordiv");
}

TEST(ExprBuild, TypeErrorsNameOpAndTypes) {
    const std::string m = error_of([] { add(var(0), fconst(1.0)); });
    EXPECT_NE(m.find("add"), std::string::npos) << m;
    EXPECT_NE(m.find("int64_t"), std::string::npos) << m;
    EXPECT_NE(m.find("float"), std::string::npos) << m;
    EXPECT_THROW(fma(var(0), var(1), var(2)), Error);
    EXPECT_THROW(div(var(0), var(1)), Error);
    EXPECT_THROW(floordiv(fconst(1), fconst(2)), Error);
    EXPECT_THROW(shift_right(fconst(1), 1), Error);
    EXPECT_THROW(shift_right(var(0), 64), Error);
    EXPECT_THROW(shift_right(iconst(3, Type::U8), 8), Error);
    EXPECT_THROW(select(var(0), var(1), var(2)), Error);
    EXPECT_THROW(select(lt(var(0), var(1)), var(1), fconst(1)), Error);
    EXPECT_THROW(load(1, Type::F32, {iconst(0, Type::I32)}), Error);
    EXPECT_THROW(logical_and(var(0), bconst(true)), Error);
    EXPECT_THROW(add(bconst(true), bconst(false)), Error);
    EXPECT_THROW(iconst(256, Type::U8), Error);
    EXPECT_THROW(iconst(0, Type::F32), Error);
    EXPECT_THROW(fconst(0, Type::I32), Error);
    EXPECT_THROW(sat_cast(Type::Bool, var(0)), Error);
    EXPECT_THROW(sum(64, -1, var(64), Type::I64), Error);
    EXPECT_THROW(add(var(0), nullptr), Error);
    EXPECT_EQ(lt(var(0), var(1))->type, Type::Bool);
    EXPECT_EQ(eq(fconst(1), fconst(2))->type, Type::Bool);
}

TEST(ExprBuild, FoldsConstantsAndIdentities) {
    const Expr x = var(0);
    EXPECT_EQ(ival(add(iconst(2), iconst(3))), 5);
    EXPECT_EQ(add(x, iconst(0)), x);
    EXPECT_EQ(add(iconst(0), x), x);
    EXPECT_EQ(sub(x, iconst(0)), x);
    EXPECT_EQ(ival(sub(x, x)), 0);
    EXPECT_EQ(mul(x, iconst(1)), x);
    EXPECT_EQ(ival(mul(iconst(0), x)), 0);
    EXPECT_EQ(floordiv(x, iconst(1)), x);
    EXPECT_EQ(ival(mod(x, iconst(1))), 0);
    EXPECT_EQ(min(add(x, iconst(1)), add(x, iconst(1)))->op, Op::Add);
    EXPECT_EQ(max(x, x), x);
    EXPECT_EQ(select(bconst(true), x, var(1)), x);
    EXPECT_EQ(select(bconst(false), x, var(1))->var, 1);
    EXPECT_EQ(select(lt(x, var(1)), var(2), var(2))->var, 2);
    EXPECT_EQ(cast(Type::I64, x), x);
    EXPECT_EQ(ival(lt(iconst(1), iconst(2))), 1);
    EXPECT_EQ(ival(le(x, x)), 1);
    EXPECT_EQ(ival(ne(x, x)), 0);
    EXPECT_EQ(logical_and(bconst(true), lt(x, var(1)))->op, Op::Lt);
    EXPECT_EQ(ival(logical_or(lt(x, var(1)), bconst(true))), 1);
    EXPECT_EQ(logical_not(logical_not(lt(x, var(1))))->op, Op::Lt);
    EXPECT_EQ(ival(shift_right(iconst(-9), 1)), -5);
    EXPECT_EQ(shift_right(x, 0), x);
    // Float identities are only the exact ones: x * 0.0 is not 0 for NaN, inf or -x.
    const Expr f = load(0, Type::F32, {x});
    EXPECT_EQ(mul(f, fconst(0))->op, Op::Mul);
    EXPECT_EQ(mul(f, fconst(1)), f);
    EXPECT_EQ(sub(f, fconst(0)), f);
    EXPECT_EQ(add(f, fconst(0))->op, Op::Add);  // -0.0 + 0.0 is +0.0
    EXPECT_EQ(add(f, fconst(-0.0)), f);
    EXPECT_EQ(eq(f, f)->op, Op::Eq);             // NaN != NaN
}

TEST(ExprBuild, IntegerSemantics) {
    // FloorDiv rounds toward -inf and Mod takes the divisor's sign, as in Python.
    for (std::int64_t a = -12; a <= 12; ++a) {
        for (std::int64_t b : {-5, -3, -2, -1, 1, 2, 3, 7}) {
            const auto q = static_cast<std::int64_t>(std::floor(static_cast<double>(a) / static_cast<double>(b)));
            EXPECT_EQ(ival(floordiv(iconst(a), iconst(b))), q) << a << " // " << b;
            EXPECT_EQ(ival(mod(iconst(a), iconst(b))), a - b * q) << a << " % " << b;
        }
    }
    // Division by a constant zero is left for run time (where it is an error).
    EXPECT_EQ(floordiv(iconst(5), iconst(0))->op, Op::FloorDiv);
    EXPECT_EQ(mod(iconst(5), iconst(0))->op, Op::Mod);
    // Results wrap to the node's type.
    EXPECT_EQ(ival(add(iconst(200, Type::U8), iconst(100, Type::U8))), 44);
    EXPECT_EQ(ival(sub(iconst(1, Type::U8), iconst(2, Type::U8))), 255);
    EXPECT_EQ(ival(neg(iconst(-32768, Type::I16))), -32768);
    EXPECT_EQ(ival(mul(iconst(65536, Type::I32), iconst(65536, Type::I32))), 0);
    const std::int64_t big = std::numeric_limits<std::int64_t>::max();
    EXPECT_EQ(ival(add(iconst(big), iconst(1))), std::numeric_limits<std::int64_t>::min());
    EXPECT_EQ(ival(floordiv(iconst(std::numeric_limits<std::int64_t>::min()), iconst(-1))),
              std::numeric_limits<std::int64_t>::min());
    EXPECT_EQ(ival(abs(iconst(-7, Type::I32))), 7);
    EXPECT_EQ(ival(min(iconst(3, Type::I16), iconst(-3, Type::I16))), -3);
    EXPECT_EQ(ival(max(iconst(3), iconst(-3))), 3);
}

TEST(ExprBuild, CastSemantics) {
    EXPECT_EQ(ival(cast(Type::I32, fconst(-2.7))), -2);  // truncation
    EXPECT_EQ(ival(cast(Type::U8, fconst(255.9))), 255);
    EXPECT_EQ(cast(Type::U8, fconst(300.5))->op, Op::Cast);  // undefined: not folded
    EXPECT_EQ(cast(Type::I32, fconst(NAN))->op, Op::Cast);
    EXPECT_EQ(ival(cast(Type::U8, iconst(300))), 44);  // integer casts wrap
    EXPECT_EQ(ival(cast(Type::I16, iconst(40000))), 40000 - 65536);
    EXPECT_EQ(ival(cast(Type::Bool, iconst(-3))), 1);
    EXPECT_EQ(ival(cast(Type::Bool, fconst(0.0))), 0);
    EXPECT_EQ(fval(cast(Type::F32, iconst(16777217))), 16777216.0);  // rounded to float
    EXPECT_EQ(fval(cast(Type::F64, iconst(16777217))), 16777217.0);
    EXPECT_EQ(fval(cast(Type::F32, fconst(0.1, Type::F64))), static_cast<double>(0.1f));
    // SatCast clamps to the target's range first; NaN becomes 0.
    EXPECT_EQ(ival(sat_cast(Type::U8, fconst(300.5))), 255);
    EXPECT_EQ(ival(sat_cast(Type::U8, fconst(-5.5))), 0);
    EXPECT_EQ(ival(sat_cast(Type::U8, fconst(17.9))), 17);
    EXPECT_EQ(ival(sat_cast(Type::I32, fconst(NAN))), 0);
    EXPECT_EQ(ival(sat_cast(Type::I64, fconst(1e30, Type::F64))), std::numeric_limits<std::int64_t>::max());
    EXPECT_EQ(ival(sat_cast(Type::I64, fconst(-1e30, Type::F64))), std::numeric_limits<std::int64_t>::min());
    EXPECT_EQ(ival(sat_cast(Type::I16, iconst(-100000))), -32768);
    EXPECT_EQ(ival(sat_cast(Type::U8, iconst(256, Type::I32))), 255);
    // From a type whose every value fits, saturation is a plain cast.
    EXPECT_EQ(sat_cast(Type::I32, load(0, Type::U8, {var(0)}))->op, Op::Cast);
    EXPECT_EQ(sat_cast(Type::U8, load(0, Type::I32, {var(0)}))->op, Op::SatCast);
    EXPECT_EQ(sat_cast(Type::F32, load(0, Type::I32, {var(0)}))->op, Op::Cast);
}

TEST(ExprBuild, FloatSemantics) {
    // F32 constants and results are rounded to float; F64 ones are not.
    EXPECT_EQ(fval(fconst(0.1)), static_cast<double>(0.1f));
    EXPECT_EQ(fval(add(fconst(1e8), fconst(1))), 1e8);
    EXPECT_EQ(fval(add(fconst(1e8, Type::F64), fconst(1, Type::F64))), 100000001.0);
    EXPECT_EQ(fval(div(fconst(1), fconst(3))), static_cast<double>(1.0f / 3.0f));
    EXPECT_EQ(fval(fma(fconst(2), fconst(3), fconst(1))), 7.0);
    EXPECT_EQ(fval(floor(fconst(-1.5))), -2.0);
    EXPECT_EQ(fval(round_even(fconst(2.5))), 2.0);
    EXPECT_EQ(fval(round_even(fconst(3.5))), 4.0);
    EXPECT_EQ(fval(abs(fconst(-0.25))), 0.25);
    EXPECT_EQ(fval(neg(fconst(0.25))), -0.25);
    EXPECT_EQ(ival(lt(fconst(NAN), fconst(1))), 0);
    EXPECT_EQ(ival(ne(fconst(NAN), fconst(NAN))), 1);
    EXPECT_EQ(fval(min(fconst(2), fconst(-1))), -1.0);
}

TEST(ExprBuild, Sum) {
    const Expr body = load(1, Type::U8, {var(0), var(64)});
    const Expr s = sum(64, 3, body, Type::I32);
    ASSERT_EQ(s->op, Op::Sum);
    EXPECT_EQ(s->type, Type::I32);
    EXPECT_EQ(s->args[0]->op, Op::Cast);  // the body is cast to the accumulator type
    EXPECT_EQ(const_extent(s), 3);
    EXPECT_EQ(s->var, 64);
    // A run-time extent stays a Sum (even of an integer body independent of the variable).
    const Expr d = sum(64, param(0), var(0), Type::I64);
    ASSERT_EQ(d->op, Op::Sum);
    EXPECT_FALSE(const_extent(d).has_value());
    EXPECT_EQ(to_string(d), "sum<int64_t>(r64 < p0: v0)");
    EXPECT_EQ(eval_int(d, {{0, 5}, {kFirstParamVar, 3}}), 15);
    EXPECT_EQ(bounds(d, {{0, {1, 2}}, {kFirstParamVar, {0, 4}}}), (Interval{0, 8}));
    EXPECT_THROW(sum(64, var(64), var(0), Type::I64), Error);  // the extent uses the reduction variable
    EXPECT_EQ(ival(sum(64, 0, body, Type::I32)), 0);
    EXPECT_EQ(fval(sum(64, 0, fconst(1), Type::F32)), 0.0);
    // One integer term: the body with the reduction variable at 0.
    EXPECT_EQ(to_string(sum(64, 1, load(1, Type::I64, {var(64)}), Type::I64)), "load(t1, [0])");
    // An integer body independent of the variable: a product.
    EXPECT_EQ(to_string(sum(64, 4, var(0), Type::I64)), "v0 * 4");
    // Float sums round at every step: never folded into products.
    EXPECT_EQ(sum(64, 4, fconst(0.1), Type::F32)->op, Op::Sum);
}

TEST(ExprPrint, ReadableOneLine) {
    const Expr e = mul(load(3, Type::F32, {var(0), var(1), clamp(add(var(2), iconst(1)), iconst(0), iconst(44)), var(3)}),
                       fconst(0.5));
    EXPECT_EQ(to_string(e), "load(t3, [v0, v1, clamp(v2 + 1, 0, 44), v3]) * 0.5f");
    EXPECT_EQ(to_string(mul(add(var(0), iconst(1)), iconst(2))), "(v0 + 1) * 2");
    EXPECT_EQ(to_string(sub(var(0), sub(var(1), var(2)))), "v0 - (v1 - v2)");
    EXPECT_EQ(to_string(sub(sub(var(0), var(1)), var(2))), "v0 - v1 - v2");
    EXPECT_EQ(to_string(add(var(0), iconst(-1))), "v0 + -1");
    EXPECT_EQ(to_string(floordiv(var(0), iconst(4))), "v0 // 4");
    EXPECT_EQ(to_string(mod(add(var(0), var(1)), iconst(4))), "(v0 + v1) % 4");
    EXPECT_EQ(to_string(neg(add(var(0), var(1)))), "-(v0 + v1)");
    EXPECT_EQ(to_string(logical_and(lt(var(0), iconst(3)), logical_not(eq(var(1), iconst(0))))),
              "v0 < 3 && !(v1 == 0)");
    EXPECT_EQ(to_string(select(le(var(0), var(1)), fconst(1, Type::F64), fconst(2.5, Type::F64))),
              "select(v0 <= v1, 1.0, 2.5)");
    EXPECT_EQ(to_string(cast(Type::F32, load(0, Type::U8, {var(0)}))), "cast<float>(load(t0, [v0]))");
    EXPECT_EQ(to_string(sat_cast(Type::U8, round_even(load(0, Type::F32, {var(0)})))),
              "sat_cast<uint8_t>(round_even(load(t0, [v0])))");
    EXPECT_EQ(to_string(iconst(7, Type::I32)), "7i32");
    EXPECT_EQ(to_string(iconst(7, Type::U8)), "7u8");
    EXPECT_EQ(to_string(bconst(false)), "false");
    EXPECT_EQ(to_string(fconst(-INFINITY)), "-inf");
    EXPECT_EQ(to_string(shift_right(var(0), 3)), "v0 >> 3");
    EXPECT_EQ(to_string(sum(64, 3, mul(load(1, Type::F32, {var(0), var(64)}), fconst(2)), Type::F32)),
              "sum<float>(r64 < 3: load(t1, [v0, r64]) * 2.0f)");
    EXPECT_EQ(to_string(var(65)), "r65");
}

TEST(ExprQuery, SubstituteRewriteVisit) {
    const Expr e = add(mul(var(0), iconst(3)), var(1));
    EXPECT_EQ(ival(substitute(e, {{0, iconst(2)}, {1, iconst(5)}})), 11);
    EXPECT_EQ(to_string(substitute(e, {{1, var(2)}})), "v0 * 3 + v2");
    // A Sum binds its reduction variable.
    const Expr s = sum(64, 3, load(1, Type::I64, {var(64), var(0)}), Type::I64);
    EXPECT_EQ(to_string(substitute(s, {{64, iconst(7)}, {0, iconst(1)}})), "sum<int64_t>(r64 < 3: load(t1, [r64, 1]))");
    EXPECT_FALSE(depends_on_var(s, 64));
    EXPECT_TRUE(depends_on_var(s, 0));
    EXPECT_FALSE(depends_on_var(e, 2));
    EXPECT_EQ(node_count(e), 5u);

    std::vector<Op> order;
    visit(e, [&](const Expr& x) { order.push_back(x->op); });
    EXPECT_EQ(order, (std::vector<Op>{Op::Add, Op::Mul, Op::Var, Op::Const, Op::Var}));

    // rewrite works bottom-up and refolds through the builders.
    const Expr r = rewrite(e, [](const Expr& x) { return x->op == Op::Var ? iconst(x->var + 1) : x; });
    EXPECT_EQ(ival(r), 1 * 3 + 2);

    EXPECT_TRUE(structurally_equal(add(var(0), iconst(1)), add(var(0), iconst(1))));
    EXPECT_FALSE(structurally_equal(add(var(0), iconst(1)), add(var(0), iconst(2))));
    EXPECT_FALSE(structurally_equal(iconst(1), iconst(1, Type::I32)));
    EXPECT_FALSE(structurally_equal(fconst(0.0), fconst(-0.0)));
    EXPECT_FALSE(structurally_equal(load(1, Type::F32, {var(0)}), load(2, Type::F32, {var(0)})));
    EXPECT_TRUE(is_const(fconst(2), 2));
    EXPECT_FALSE(is_const(var(0), 0));

    EXPECT_EQ(with_args(e, {var(4), var(5)})->op, Op::Add);
    EXPECT_THROW(with_args(e, {var(4)}), Error);
}

TEST(ExprEval, Interpreter) {
    const LoadFn table = [](int buffer, const std::vector<std::int64_t>& i) {
        if (buffer == 1) return Scalar::of_float(0.5 * static_cast<double>(i[0]));
        return Scalar::of_int(i[0] * 300);  // normalized to the load's type (U8 wraps)
    };
    const Expr x = var(0);
    EXPECT_EQ(eval_int(add(mul(x, iconst(3)), var(1)), {{0, 4}, {1, -2}}), 10);
    EXPECT_EQ(eval_int(load(2, Type::U8, {x}), {{0, 1}}, table), 44);
    EXPECT_DOUBLE_EQ(eval_float(mul(load(1, Type::F32, {x}), fconst(2)), {{0, 3}}, table), 3.0);
    const Expr s = sum(64, 4, load(1, Type::F32, {add(x, var(64))}), Type::F32);
    EXPECT_DOUBLE_EQ(eval_float(s, {{0, 1}}, table), 0.5 * (1 + 2 + 3 + 4));
    EXPECT_EQ(eval_int(sum(64, 5, mul(var(64), var(64)), Type::I64), {}), 0 + 1 + 4 + 9 + 16);
    // Only the chosen branch of a select is evaluated.
    const Expr guarded = select(eq(x, iconst(0)), iconst(-1), floordiv(iconst(10), x));
    EXPECT_EQ(eval_int(guarded, {{0, 0}}), -1);
    EXPECT_EQ(eval_int(guarded, {{0, 3}}), 3);
    EXPECT_THROW(eval_int(floordiv(iconst(10), x), {{0, 0}}), Error);
    EXPECT_THROW(eval_int(x, {}), Error);
    EXPECT_THROW(eval_int(load(2, Type::U8, {x}), {{0, 1}}), Error);
    EXPECT_THROW(eval_int(cast(Type::I32, load(1, Type::F32, {x})), {{0, 1LL << 40}}, table), Error);
}

TEST(GraphTest, BuildsAndChecks) {
    Graph g;
    const Expr w_in = g.add_param("input.w", ParamKind::Size, 5);
    const int in = g.add_input("input", Type::U8, {iconst(1), iconst(3), iconst(4), w_in},
                               {iconst(60), iconst(1), iconst(15), iconst(3)});
    const int w = g.add_constant_values("resize0.w", Type::F32, {w_in, iconst(2)}, std::vector<float>(10, 0.5f));
    const int r = g.new_reduction_var();
    EXPECT_EQ(r, kFirstReductionVar);
    const Expr px = cast(Type::F32, load(in, Type::U8, {var(0), var(1), var(2), var(64)}));
    const Expr body = sum(r, 2, mul(px, load(w, Type::F32, {var(3), var(r)})), Type::F32);
    const int c = g.add_compute("resize0.h", Type::F32, {iconst(1), iconst(3), iconst(4), w_in}, body, "op 0 (resize)", true);
    g.output = c;
    EXPECT_EQ(g.tensors().size(), 3u);
    EXPECT_EQ(g.at(c).kind, TensorKind::Compute);
    EXPECT_EQ(g.at(w).data.size(), 40u);
    EXPECT_TRUE(g.at(c).realize);
    EXPECT_EQ(g.concrete_shape(c), (std::vector<std::int64_t>{1, 3, 4, 5}));

    const std::string s = g.to_string();
    EXPECT_NE(s.find("p0 input.w (size) = 5"), std::string::npos) << s;
    EXPECT_NE(s.find("t0 input 'input' uint8_t[1, 3, 4, p0] strides [60, 1, 15, 3]"), std::string::npos) << s;
    EXPECT_NE(s.find("t1 table 'resize0.w' float[p0, 2]"), std::string::npos) << s;
    EXPECT_NE(s.find("t2 compute 'resize0.h' float[1, 3, 4, p0] realize (op 0 (resize)) = sum<float>(r64 < 2: "),
              std::string::npos)
        << s;
    EXPECT_NE(s.find("output t2"), std::string::npos) << s;

    EXPECT_THROW(g.add_input("input", Type::U8, {iconst(1)}, {iconst(1)}), Error);  // duplicate name
    EXPECT_THROW(g.add_input("x", Type::U8, {iconst(1), iconst(2)}, {iconst(1)}), Error);  // strides
    EXPECT_THROW(g.add_constant("k", Type::F32, {iconst(3)}, std::vector<std::uint8_t>(8)), Error);  // data size
    EXPECT_THROW(g.add_compute("a", Type::U8, {iconst(2)}, fconst(1), ""), Error);  // body type
    EXPECT_THROW(g.add_compute("b", Type::F32, {iconst(2)}, load(9, Type::F32, {var(0)}), ""), Error);  // unknown tensor
    EXPECT_THROW(g.add_compute("c", Type::F32, {iconst(2)}, load(w, Type::F32, {var(0)}), ""), Error);  // rank
    EXPECT_THROW(g.add_compute("d", Type::U8, {iconst(2), iconst(2)}, load(w, Type::U8, {var(0), var(1)}), ""),
                 Error);  // type
    EXPECT_THROW(g.add_compute("e", Type::I64, {iconst(2)}, var(1), ""), Error);  // free var
    EXPECT_THROW(g.add_compute("e2", Type::I64, {iconst(2)}, param(7), ""), Error);  // unknown parameter
    EXPECT_THROW(g.add_constant_values("i", Type::I32, {iconst(2)}, std::vector<std::int32_t>{0, 9}, Interval{0, 5}),
                 Error);  // outside its declared range
    EXPECT_EQ(g.add_compute("f", Type::I64, {iconst(2), iconst(2)}, add(var(1), w_in), ""), 3);
}

TEST(GraphTest, StructureIgnoresValues) {
    auto make = [](std::int64_t width, float weight) {
        Graph g;
        const Expr w = g.add_param("input.w", ParamKind::Size, width);
        const int in = g.add_input("input", Type::F32, {iconst(1), iconst(1), iconst(1), w},
                                   {iconst(1), iconst(1), w, iconst(1)});
        const int t = g.add_constant_values("k", Type::F32, {w}, std::vector<float>(static_cast<std::size_t>(width), weight));
        g.output = g.add_compute("out", Type::F32, {iconst(1), iconst(1), iconst(1), w},
                                 mul(load(in, Type::F32, {var(0), var(1), var(2), var(3)}), load(t, Type::F32, {var(3)})),
                                 "op 0");
        return g;
    };
    // Another size and other table data: the same structure, one compiled program.
    EXPECT_EQ(make(5, 0.5f).structure(), make(700, 2.0f).structure());
    Graph other = make(5, 0.5f);
    other.add_param("extra", ParamKind::Offset, 1);
    EXPECT_NE(make(5, 0.5f).structure(), other.structure());
    EXPECT_EQ(make(5, 0.5f).value_of(add(param(0), iconst(1))), 6);
}

TEST(ProgramTest, BuffersAndDump) {
    EXPECT_EQ(buffer_role_name(BufferRole::Temp), "temp");
    EXPECT_EQ(loop_kind_name(LoopKind::Vector), "vector");
    Program p;
    p.params = {ProgramParam{"input.w", ParamKind::Size, ParamSource{ParamSource::Kind::Graph, 0, -1, -1}},
                ProgramParam{"out.stride2", ParamKind::Stride, ParamSource{ParamSource::Kind::OutputStride, -1, 1, 2}}};
    Buffer in{};
    in.id = 0;
    in.name = "input";
    in.role = BufferRole::Input;
    in.type = Type::U8;
    in.shape = {iconst(1), iconst(3), iconst(4), param(0)};
    in.strides = {iconst(768), iconst(1), iconst(192), iconst(3)};
    in.origin = {iconst(0), iconst(0), iconst(0), iconst(0)};
    Buffer out{};
    out.id = 1;
    out.name = "out";
    out.role = BufferRole::Output;
    out.type = Type::F32;
    out.shape = {iconst(1), iconst(3), iconst(4), param(0)};
    out.strides = {iconst(768), iconst(256), param(1), iconst(1)};
    out.origin = {iconst(0), iconst(0), iconst(2), iconst(0)};
    // Offsets: (index - origin) * stride over the dims, parameters included.
    EXPECT_EQ(to_string(simplify(offset_expr(out, {var(0), var(1), var(2), var(3)}))), "(v2 - 2) * p1 + v1 * 256 + v3");
    p.buffers = {in, out};
    p.input = 0;
    p.output = 1;
    Kernel k;
    k.name = "convert";
    k.output = 1;
    k.loops = {{0, iconst(0), iconst(1), LoopKind::Parallel}, {2, iconst(2), iconst(4), LoopKind::Parallel},
               {1, iconst(0), iconst(3), LoopKind::Serial}, {3, iconst(0), param(0), LoopKind::Vector}};
    k.cpu().vector_width = 16;
    k.value = mul(cast(Type::F32, load(0, Type::U8, {var(0), var(1), var(2), var(3)})), fconst(0.5));
    k.decisions = {"vectorize v3: stride 1 in the output"};
    p.kernels = {k};
    const std::string s = p.to_string();
    EXPECT_NE(s.find("param p0 input.w (size, graph)"), std::string::npos) << s;
    EXPECT_NE(s.find("param p1 out.stride2 (stride, output stride of t1 dim 2)"), std::string::npos) << s;
    EXPECT_NE(s.find("buffer t0 input 'input' uint8_t[1, 3, 4, p0] strides [768, 1, 192, 3]"), std::string::npos) << s;
    EXPECT_NE(s.find("buffer t1 output 'out' float[1, 3, 4, p0] strides [768, 256, p1, 1] origin [0, 0, 2, 0]"),
              std::string::npos)
        << s;
    EXPECT_NE(s.find("kernel 0 'convert' -> t1\n  parallel for v0 in 0 + [0, 1)\n    parallel for v2 in 2 + [0, 4)\n"
                     "      for v1 in 0 + [0, 3)\n        vector(16) for v3 in 0 + [0, p0)\n"
                     "          t1[v0, v1, v2, v3] = cast<float>(load(t0, [v0, v1, v2, v3])) * 0.5f\n"),
              std::string::npos)
        << s;
    EXPECT_NE(s.find("  # vectorize v3: stride 1 in the output"), std::string::npos) << s;
    const VarRanges r = p.param_ranges();
    EXPECT_EQ(r.at(kFirstParamVar).lo, 0);
}

// float16 and bfloat16 are storage types: converted to and from float32 only, each
// narrowing rounded to nearest even (folded as core/half.h rounds), nothing computed on them.
TEST(NarrowTypes, ConvertThroughFloatOnlyAndRoundToNearestEven) {
    const Expr h = load(0, Type::F16, {var(0)});
    EXPECT_THROW(add(h, h), Error);
    EXPECT_THROW(lt(h, h), Error);
    EXPECT_THROW(cast(Type::I32, h), Error);
    EXPECT_THROW(cast(Type::BF16, h), Error);
    EXPECT_THROW(cast(Type::F16, fconst(1.0, Type::F64)), Error);
    EXPECT_EQ(cast(Type::F32, h)->type, Type::F32);
    // 1 + 2^-11 is halfway between float16's 1 and 1 + 2^-10: even, 1.
    EXPECT_EQ(cast(Type::F16, fconst(1.0 + 0x1p-11))->fval, 1.0);
    EXPECT_EQ(cast(Type::F16, fconst(1.0 + 3 * 0x1p-11))->fval, 1.0 + 0x1p-9);
    EXPECT_TRUE(std::isinf(cast(Type::F16, fconst(65520.0))->fval));
    EXPECT_EQ(cast(Type::BF16, fconst(1.0 + 3 * 0x1p-8))->fval, 1.0 + 0x1p-6);
    EXPECT_EQ(type_bytes(Type::BF16), 2u);
    EXPECT_EQ(int_max(Type::U16), 65535);
    EXPECT_EQ(sat_cast(Type::U16, fconst(70000.0))->ival, 65535);
}

}  // namespace
}  // namespace toroid::ir
