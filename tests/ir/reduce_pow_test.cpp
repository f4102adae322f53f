// The IR's Pow (PyTorch's pow of a float tensor by a scalar) and Min / Max reductions (a Sum
// node's kind): the interpreter's semantics, which constant folding shares, the folding of
// trivial reductions, and the kind as part of the structure.
#include "core/error.h"
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

// An Fma reduction rounds once per term: fma(a, b, acc) in the accumulator's type, which
// a sum of products (a rounding for the product, another for the add) does not match.
TEST(ExprReduce, FmaChainsRoundOncePerTerm) {
    using namespace ir;
    const int r = kFirstReductionVar;
    // -1, then 1 + 2^-12 squared (1 + 2^-11 + 2^-24): the plain product rounds the last bit
    // away (ties to even), the fused step keeps it in the sum with -1.
    const float a = 1.0f + std::ldexp(1.0f, -12);
    const std::vector<double> xs{1.0, a}, ws{-1.0, a};
    const LoadFn table = [&](int t, const std::vector<std::int64_t>& i) {
        return Scalar::of_float((t == 0 ? xs : ws)[static_cast<std::size_t>(i[0])]);
    };
    const Expr term = mul(load(0, Type::F32, {var(r)}), load(1, Type::F32, {var(r)}));
    const Expr chain = reduce(Reduce::Fma, r, iconst(2), term, Type::F32);
    const float fused = std::fma(a, a, std::fma(1.0f, -1.0f, 0.0f));
    volatile float product = a * a;  // rounded on its own
    const float plain = (0.0f + 1.0f * -1.0f) + product;
    ASSERT_NE(fused, plain);
    EXPECT_EQ(eval_float(chain, {}, table), static_cast<double>(fused));
    EXPECT_EQ(eval_float(sum(r, iconst(2), term, Type::F32), {}, table), static_cast<double>(plain));
    ASSERT_TRUE(fma_factors(chain, chain->args[0]).has_value());
    EXPECT_FALSE(fma_factors(sum(r, iconst(2), term, Type::F32), term).has_value());
    // Float only; the empty chain is 0; the kind is part of the structure and the printing.
    EXPECT_THROW(reduce(Reduce::Fma, r, iconst(2), cast(Type::I32, var(r)), Type::I32), Error);
    EXPECT_TRUE(is_const(reduce(Reduce::Fma, r, iconst(0), term, Type::F32)));
    EXPECT_FALSE(structurally_equal(chain, sum(r, iconst(2), term, Type::F32)));
    EXPECT_EQ(to_string(chain).rfind("fma_sum<", 0), 0u);
}

}  // namespace
}  // namespace toroid
