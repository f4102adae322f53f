// The IR's Pow (PyTorch's pow of a float tensor by a scalar) and Min / Max reductions (a Sum
// node's kind): the interpreter's semantics, which constant folding shares, the folding of
// trivial reductions, and the kind as part of the structure.
#include "ir/eval.h"
#include "ir/expr.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace toroid {
namespace {

// The interpreter's semantics of the new primitives (constant folding uses the same code).
TEST(ExprReduce, PowAndMinMaxReductions) {
    using namespace ir;
    EXPECT_EQ(torch_pow(3.0f, 2.0f), 9.0f);
    EXPECT_EQ(torch_pow(2.0f, 0.0f), 1.0f);
    EXPECT_EQ(torch_pow(NAN, 0.0f), 1.0f);  // fill_(1)
    EXPECT_EQ(torch_pow(4.0f, 0.5f), 2.0f);
    EXPECT_EQ(torch_pow(4.0f, -0.5f), 0.5f);
    EXPECT_EQ(torch_pow(0.1f, 3.0f), 0.1f * 0.1f * 0.1f);  // two roundings, not pow's one
    EXPECT_EQ(torch_pow(0.3f, 2.2f), static_cast<float>(std::pow(static_cast<double>(0.3f), static_cast<double>(2.2f))));
    // Folded: pow of constants.
    const Expr p = pow(fconst(0.5), fconst(-1.0));
    ASSERT_TRUE(is_const(p));
    EXPECT_EQ(p->fval, 2.0);
    // Min / Max over a run-time extent: the table's least and greatest values; a NaN is taken.
    const std::vector<double> data{3.0, -2.5, 7.0, 0.0};
    const LoadFn table = [&](int, const std::vector<std::int64_t>& i) { return Scalar::of_float(data[static_cast<std::size_t>(i[0])]); };
    const int r = kFirstReductionVar;
    const Expr body = load(0, Type::F32, {var(r)});
    const Expr n = param(0);
    const VarValues vals{{kFirstParamVar, 4}};
    EXPECT_EQ(eval_float(reduce(Reduce::Min, r, n, body, Type::F32), vals, table), -2.5);
    EXPECT_EQ(eval_float(reduce(Reduce::Max, r, n, body, Type::F32), vals, table), 7.0);
    EXPECT_EQ(eval_float(sum(r, n, body, Type::F32), vals, table), 7.5);
    const std::vector<double> nan_data{1.0, NAN, 0.5};
    const LoadFn nan_load = [&](int, const std::vector<std::int64_t>& i) {
        return Scalar::of_float(nan_data[static_cast<std::size_t>(i[0])]);
    };
    EXPECT_TRUE(std::isnan(eval_float(reduce(Reduce::Min, r, n, body, Type::F32), {{kFirstParamVar, 3}}, nan_load)));
    // Integer reductions start from the type's extremes; one term is the term.
    const Expr ib = cast(Type::I32, var(r));
    EXPECT_EQ(eval_int(reduce(Reduce::Max, r, n, ib, Type::I32), vals), 3);
    EXPECT_EQ(eval_int(reduce(Reduce::Min, r, n, ib, Type::I32), vals), 0);
    EXPECT_TRUE(structurally_equal(reduce(Reduce::Min, r, iconst(1), body, Type::F32), load(0, Type::F32, {iconst(0)})));
    // The kind is part of the structure: a Min is not a Max nor a Sum.
    EXPECT_FALSE(structurally_equal(reduce(Reduce::Min, r, n, body, Type::F32), reduce(Reduce::Max, r, n, body, Type::F32)));
    EXPECT_FALSE(structurally_equal(reduce(Reduce::Min, r, n, body, Type::F32), sum(r, n, body, Type::F32)));
    EXPECT_EQ(to_string(reduce(Reduce::Max, r, n, ib, Type::I32)).rfind("max<", 0), 0u);
}

}  // namespace
}  // namespace toroid
