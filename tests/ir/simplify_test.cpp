// Range analysis and simplification: the rewrites codegen relies on (affine indices,
// idle clamps, div/mod pairs), the ones that must not happen, and a randomized check that
// simplify() keeps every value (and bounds() contains it) at random points of the ranges.
#include "ir/simplify.h"

#include "ir/eval.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace toroid::ir {
namespace {

constexpr std::int64_t kI64Max = std::numeric_limits<std::int64_t>::max();

std::string simp(const Expr& e, const VarRanges& r = {}, const LoadBounds& lb = {}) {
    return to_string(simplify(e, r, lb));
}

TEST(SimplifyBounds, Arithmetic) {
    const VarRanges r = {{0, {0, 9}}, {1, {-3, 4}}};
    const Expr v0 = var(0), v1 = var(1);
    EXPECT_EQ(bounds(v0, r), (Interval{0, 9}));
    EXPECT_EQ(bounds(var(2), r), std::nullopt);
    EXPECT_EQ(bounds(add(v0, v1), r), (Interval{-3, 13}));
    EXPECT_EQ(bounds(sub(v0, v1), r), (Interval{-4, 12}));
    EXPECT_EQ(bounds(mul(v1, iconst(-2)), r), (Interval{-8, 6}));
    EXPECT_EQ(bounds(mul(v0, v1), r), (Interval{-27, 36}));
    EXPECT_EQ(bounds(floordiv(v1, iconst(2)), r), (Interval{-2, 2}));
    EXPECT_EQ(bounds(mod(v1, iconst(3)), r), (Interval{0, 2}));
    EXPECT_EQ(bounds(mod(v0, iconst(16)), r), (Interval{0, 9}));
    EXPECT_EQ(bounds(mod(add(v0, iconst(20)), iconst(10)), r), (Interval{0, 9}));
    EXPECT_EQ(bounds(mod(var(5), iconst(10)), r), (Interval{0, 9}));  // whatever the dividend
    EXPECT_EQ(bounds(min(v0, v1), r), (Interval{-3, 4}));
    EXPECT_EQ(bounds(max(v0, v1), r), (Interval{0, 9}));
    EXPECT_EQ(bounds(abs(v1), r), (Interval{0, 4}));
    EXPECT_EQ(bounds(neg(v1), r), (Interval{-4, 3}));
    EXPECT_EQ(bounds(shift_right(v1, 1), r), (Interval{-2, 2}));
    EXPECT_EQ(bounds(select(lt(v0, v1), iconst(100), v1), r), (Interval{-3, 100}));
    EXPECT_EQ(bounds(select(lt(v0, iconst(10)), iconst(100), v1), r), (Interval{100, 100}));
    EXPECT_EQ(bounds(lt(v1, v0), r), (Interval{0, 1}));
    EXPECT_EQ(bounds(lt(v0, iconst(10)), r), (Interval{1, 1}));
    EXPECT_EQ(bounds(fconst(1), r), std::nullopt);
}

TEST(SimplifyBounds, TypesLoadsAndSums) {
    const VarRanges r = {{0, {0, 9}}};
    const Expr px = load(1, Type::U8, {var(0)});
    EXPECT_EQ(bounds(px, r), (Interval{0, 255}));  // a narrow type's range
    EXPECT_EQ(bounds(cast(Type::I64, px), r), (Interval{0, 255}));
    EXPECT_EQ(bounds(load(2, Type::I64, {var(0)}), r), std::nullopt);
    const LoadBounds lb = [](int b) -> std::optional<Interval> {
        if (b == 2) return Interval{-1, 7};
        return std::nullopt;
    };
    EXPECT_EQ(bounds(load(2, Type::I64, {var(0)}), r, lb), (Interval{-1, 7}));
    // Wrap-around in a narrow type: its whole range.
    EXPECT_EQ(bounds(add(px, px), r), (Interval{0, 255}));
    EXPECT_EQ(bounds(cast(Type::U8, add(var(0), iconst(250))), r), (Interval{0, 255}));
    EXPECT_EQ(bounds(cast(Type::U8, add(var(0), iconst(200))), r), (Interval{200, 209}));
    EXPECT_EQ(bounds(sat_cast(Type::U8, add(var(0), iconst(250))), r), (Interval{250, 255}));
    EXPECT_EQ(bounds(sat_cast(Type::I16, load(0, Type::F32, {var(0)})), r), (Interval{-32768, 32767}));
    EXPECT_EQ(bounds(cast(Type::I64, load(0, Type::F32, {var(0)})), r), std::nullopt);
    // A Sum binds its variable to [0, extent) and multiplies the body's range by the extent.
    EXPECT_EQ(bounds(sum(64, 4, add(var(64), var(0)), Type::I64), r), (Interval{0, 48}));
    EXPECT_EQ(bounds(sum(64, 3, cast(Type::I32, px), Type::I32), r), (Interval{0, 765}));
    // int64 overflow: unknown.
    EXPECT_EQ(bounds(mul(var(0), iconst(kI64Max)), r), std::nullopt);
    EXPECT_EQ(bounds(add(iconst(kI64Max), var(0)), r), std::nullopt);
}

TEST(SimplifyAffine, CanonicalForm) {
    const Expr v0 = var(0), v1 = var(1), v2 = var(2);
    EXPECT_EQ(simp(sub(add(v0, iconst(1)), iconst(1))), "v0");
    EXPECT_EQ(simp(mul(iconst(2), add(v1, iconst(3)))), "v1 * 2 + 6");
    EXPECT_EQ(simp(add(add(v2, v0), sub(v1, v0))), "v1 + v2");
    EXPECT_EQ(simp(sub(iconst(5), add(v0, v1))), "5 - v0 - v1");
    EXPECT_EQ(simp(sub(add(mul(v0, iconst(3)), v1), mul(iconst(3), v0))), "v1");
    EXPECT_EQ(simp(neg(sub(v0, iconst(4)))), "4 - v0");
    EXPECT_EQ(simp(add(neg(v1), v0)), "v0 - v1");
    EXPECT_EQ(simp(sub(v0, add(v0, iconst(1)))), "-1");
    // Non-affine terms are kept whole and ordered before the loop vars (parameters come
    // first, reduction vars last: each prefix stays the same across the inner loops).
    EXPECT_EQ(simp(add(add(mul(v0, v1), v2), sub(mul(v0, v1), iconst(1)))), "v0 * v1 * 2 + v2 - 1");
    EXPECT_EQ(simp(add(add(var(64), v2), param(0))), "p0 + v2 + r64");
    // Inside loads and other ops too.
    EXPECT_EQ(simp(load(3, Type::F32, {sub(add(v0, iconst(2)), iconst(2))})), "load(t3, [v0])");
}

TEST(SimplifyDivMod, SplitsByRanges) {
    const VarRanges r = {{0, {0, 99}}, {1, {0, 3}}, {2, {0, 9}}};
    const Expr v0 = var(0), v1 = var(1), v2 = var(2);
    const Expr packed = add(mul(v0, iconst(4)), v1);
    EXPECT_EQ(simp(floordiv(packed, iconst(4)), r), "v0");
    EXPECT_EQ(simp(mod(packed, iconst(4)), r), "v1");
    EXPECT_EQ(simp(floordiv(add(packed, iconst(8)), iconst(4)), r), "v0 + 2");
    EXPECT_EQ(simp(mod(add(packed, iconst(9)), iconst(4)), r), "(v1 + 1) % 4");
    EXPECT_EQ(simp(floordiv(add(packed, iconst(9)), iconst(4)), r), "(v1 + 1) // 4 + v0 + 2");
    EXPECT_EQ(simp(floordiv(v0, iconst(100)), r), "0");
    EXPECT_EQ(simp(mod(v0, iconst(100)), r), "v0");
    EXPECT_EQ(simp(floordiv(floordiv(v0, iconst(2)), iconst(5)), r), "v0 // 10");
    EXPECT_EQ(simp(mod(mod(v0, iconst(12)), iconst(4)), r), "v0 % 4");
    // c * (x // c) + x % c == x, for any x.
    const Expr x = add(v0, v2);
    EXPECT_EQ(simp(add(mul(floordiv(x, iconst(7)), iconst(7)), mod(x, iconst(7))), {}), "v0 + v2");
    // Not provable: v2 spans more than one block of 4.
    EXPECT_EQ(simp(floordiv(add(mul(v0, iconst(4)), v2), iconst(4)), r), "v2 // 4 + v0");
    EXPECT_EQ(simp(mod(add(mul(v0, iconst(4)), v2), iconst(4)), r), "v2 % 4");
    // Without ranges the products may wrap: no division rewrite.
    EXPECT_EQ(simp(floordiv(packed, iconst(4))), "(v0 * 4 + v1) // 4");
}

TEST(SimplifyRanges, IdleClampsAndComparisons) {
    const VarRanges r = {{0, {0, 99}}, {2, {0, 43}}};
    const Expr v0 = var(0), v2 = var(2);
    EXPECT_EQ(simp(min(v0, iconst(99)), r), "v0");
    EXPECT_EQ(simp(min(v0, iconst(98)), r), "min(v0, 98)");
    EXPECT_EQ(simp(max(v0, iconst(0)), r), "v0");
    EXPECT_EQ(simp(max(v0, iconst(-5)), r), "v0");
    EXPECT_EQ(simp(max(iconst(100), v0), r), "100");
    EXPECT_EQ(simp(clamp(add(v2, iconst(1)), iconst(0), iconst(44)), r), "v2 + 1");
    EXPECT_EQ(simp(clamp(sub(v2, iconst(1)), iconst(0), iconst(44)), r), "max(v2 - 1, 0)");
    EXPECT_EQ(simp(min(add(var(5), iconst(1)), var(5)), {{5, {-10, 10}}}), "v5");
    EXPECT_EQ(simp(load(3, Type::F32, {v0, clamp(add(v2, iconst(1)), iconst(0), iconst(44))}), r),
              "load(t3, [v0, v2 + 1])");
    EXPECT_EQ(simp(lt(v0, iconst(100)), r), "true");
    EXPECT_EQ(simp(le(iconst(0), v0), r), "true");
    EXPECT_EQ(simp(lt(v0, iconst(0)), r), "false");
    EXPECT_EQ(simp(lt(v0, iconst(50)), r), "v0 < 50");
    EXPECT_EQ(simp(eq(v2, iconst(50)), r), "false");
    EXPECT_EQ(simp(ne(v2, iconst(50)), r), "true");
    EXPECT_EQ(simp(lt(v0, add(v0, iconst(1))), r), "true");
    // A crop's mask that the ranges make idle, with its select.
    const Expr ih = add(v2, iconst(3));
    const Expr inside = logical_and(le(iconst(0), ih), lt(ih, iconst(480)));
    const Expr px = load(1, Type::U8, {clamp(ih, iconst(0), iconst(479))});
    EXPECT_EQ(simp(select(inside, px, iconst(0, Type::U8)), r), "load(t1, [v2 + 3])");
    // Casts and saturation that the ranges make exact.
    EXPECT_EQ(simp(sat_cast(Type::U8, cast(Type::I32, v2)), r), "cast<uint8_t>(cast<int32_t>(v2))");
    EXPECT_EQ(simp(cast(Type::I64, cast(Type::I32, v0)), r), "v0");
    EXPECT_EQ(simp(cast(Type::I64, cast(Type::U8, add(v0, iconst(200)))), r),
              "cast<int64_t>(cast<uint8_t>(v0 + 200))");
    // Loads from constant tables with a known range.
    const LoadBounds lb = [](int b) -> std::optional<Interval> {
        if (b == 4) return Interval{0, 479};
        if (b == 5) return Interval{7, 7};
        return std::nullopt;
    };
    const Expr idx = cast(Type::I64, load(4, Type::I32, {v0}));
    EXPECT_EQ(simp(clamp(idx, iconst(0), iconst(479)), r, lb), "cast<int64_t>(load(t4, [v0]))");
    EXPECT_EQ(simp(load(5, Type::I64, {v0}), r, lb), "7");
    // Sum: its body sees the reduction variable's range.
    EXPECT_EQ(simp(sum(64, 4, load(1, Type::F32, {min(var(64), iconst(3))}), Type::F32), r),
              "sum<float>(r64 < 4: load(t1, [r64]))");
}

TEST(SimplifyStride, LinearStride) {
    EXPECT_EQ(linear_stride(var(3), 3), 1);
    EXPECT_EQ(linear_stride(add(mul(var(0), iconst(640)), var(3)), 3), 1);
    EXPECT_EQ(linear_stride(sub(iconst(63), var(3)), 3), -1);
    EXPECT_EQ(linear_stride(mul(var(0), iconst(8)), 3), 0);
    EXPECT_EQ(linear_stride(mul(iconst(3), add(var(3), var(1))), 3), 3);
    EXPECT_EQ(linear_stride(neg(mul(var(3), iconst(2))), 3), -2);
    EXPECT_EQ(linear_stride(sub(var(3), var(3)), 3), 0);  // folded by the builder
    EXPECT_EQ(linear_stride(add(var(3), sub(var(0), var(3))), 3), 0);
    EXPECT_EQ(linear_stride(mul(var(3), var(3)), 3), std::nullopt);
    EXPECT_EQ(linear_stride(mul(var(3), var(1)), 3), std::nullopt);
    EXPECT_EQ(linear_stride(floordiv(var(3), iconst(2)), 3), std::nullopt);
    EXPECT_EQ(linear_stride(cast(Type::I64, load(1, Type::I32, {var(3)})), 3), std::nullopt);
    EXPECT_EQ(linear_stride(load(1, Type::F32, {var(0)}), 3), 0);
    EXPECT_EQ(linear_stride(load(1, Type::F32, {var(3)}), 3), std::nullopt);
    EXPECT_EQ(linear_stride(mul(var(3), iconst(kI64Max)), 3), kI64Max);
    EXPECT_EQ(linear_stride(mul(mul(var(3), iconst(kI64Max)), iconst(2)), 3), std::nullopt);  // overflow
}

TEST(SimplifyFits, Int32) {
    const VarRanges r = {{0, {0, 1000}}, {1, {-5, 5}}};
    EXPECT_TRUE(fits_int32(add(mul(var(0), iconst(1000)), var(1)), r));
    EXPECT_FALSE(fits_int32(mul(var(0), iconst(std::int64_t{1} << 31)), r));
    EXPECT_FALSE(fits_int32(var(2), r));
    EXPECT_TRUE(fits_int32(cast(Type::F32, load(1, Type::U8, {var(0)})), r));
    EXPECT_FALSE(fits_int32(cast(Type::F32, load(1, Type::U8, {mul(var(0), iconst(kI64Max))})), r));
    // Every subexpression counts, not only the result.
    EXPECT_FALSE(fits_int32(floordiv(mul(var(0), iconst(1LL << 40)), iconst(1LL << 40)), r));
    EXPECT_TRUE(fits_int32(sum(64, 10, mul(var(64), var(0)), Type::I64), r));
}

// ---- randomized: simplify keeps values, bounds contain them ----

struct RandomCase {
    std::mt19937_64 rng;
    bool big = false;  // wide ranges and constants, to reach int64 wrap-around
    int nvars = 2;
    VarRanges ranges;
    std::vector<int> scope;  // vars usable here (free vars, then enclosing reduction vars)
    int next_reduction = 64;
    std::vector<std::int64_t> table;  // buffer 7 (int64), indexed modulo its size

    explicit RandomCase(std::uint64_t seed, bool wide) : rng(seed), big(wide) {
        nvars = static_cast<int>(pick(2, 3));
        for (int v = 0; v < nvars; ++v) {
            const std::int64_t span = big ? (std::int64_t{1} << pick(0, 40)) : pick(0, 30);
            const std::int64_t lo = big ? pick(-(std::int64_t{1} << 40), std::int64_t{1} << 40) : pick(-20, 20);
            ranges[v] = Interval{lo, lo + pick(0, span)};
            scope.push_back(v);
        }
        for (int i = 0; i < 5; ++i) table.push_back(pick(-50, 50));
    }

    std::int64_t pick(std::int64_t lo, std::int64_t hi) {
        return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
    }
    std::int64_t small_const() {
        if (big && pick(0, 3) == 0) return pick(-(std::int64_t{1} << 62), std::int64_t{1} << 62);
        return pick(-12, 12);
    }
    Expr leaf() {
        if (pick(0, 9) < 6) return var(scope[static_cast<std::size_t>(pick(0, static_cast<std::int64_t>(scope.size()) - 1))]);
        return iconst(small_const());
    }
    Expr affine(int depth) {
        Expr e = iconst(small_const());
        for (int v = 0; v < nvars; ++v)
            if (pick(0, 2) > 0) e = add(e, mul(var(v), iconst(pick(-9, 9))));
        if (depth > 0 && pick(0, 1)) e = add(e, gen(depth - 1));
        return e;
    }

    Expr gen(int depth) {
        if (depth <= 0 || pick(0, 5) == 0) return leaf();
        const int d = depth - 1;
        switch (pick(0, 21)) {
            case 0: return add(gen(d), gen(d));
            case 1: return sub(gen(d), gen(d));
            case 2: return mul(gen(d), iconst(small_const()));
            case 3: return mul(gen(d), gen(d));
            case 4: return neg(gen(d));
            case 5: return floordiv(gen(d), iconst(pick(1, 9)));
            case 6: return mod(gen(d), iconst(pick(1, 9)));
            case 7: return min(gen(d), gen(d));
            case 8: return max(gen(d), gen(d));
            case 9: {
                const std::int64_t lo = pick(-15, 15);
                return clamp(gen(d), iconst(lo), iconst(lo + pick(0, 30)));
            }
            case 10: return abs(gen(d));
            case 11: {
                const Expr a = gen(d), b = gen(d);
                Expr c;
                switch (pick(0, 3)) {
                    case 0: c = lt(a, b); break;
                    case 1: c = le(a, b); break;
                    case 2: c = eq(a, b); break;
                    default: c = ne(a, b); break;
                }
                if (pick(0, 3) == 0) c = logical_and(c, lt(gen(d), iconst(pick(-5, 5))));
                if (pick(0, 3) == 0) c = logical_not(c);
                return select(c, gen(d), gen(d));
            }
            case 12: return shift_right(gen(d), static_cast<int>(pick(0, 3)));
            case 13: return cast(Type::I64, cast(Type::I32, gen(d)));
            case 14: return cast(Type::I64, sat_cast(Type::U8, gen(d)));
            case 15: return load(7, Type::I64, {mod(gen(d), iconst(static_cast<std::int64_t>(table.size())))});
            case 16: {
                const int r = next_reduction++;
                scope.push_back(r);
                const Expr body = gen(d);
                scope.pop_back();
                if (pick(0, 2) == 0) return cast(Type::I64, sum(r, pick(1, 3), body, Type::I32));
                return sum(r, pick(1, 3), body, Type::I64);
            }
            case 17:
            case 18: {
                // (c * v + small) // c and % c: what decomposition writes for packed indices.
                const std::int64_t c = pick(1, 8);
                Expr e = iconst(pick(-10, 10));
                for (int v = 0; v < nvars; ++v) {
                    const std::int64_t k = pick(0, 2) == 0 ? pick(-3, 3) : c * pick(-3, 3);
                    e = add(e, mul(var(v), iconst(k)));
                }
                return pick(0, 1) ? floordiv(e, iconst(c)) : mod(e, iconst(c));
            }
            case 19: return affine(d);
            case 20: {
                const Expr a = cast(Type::I32, gen(d)), b = cast(Type::I32, gen(d));
                return cast(Type::I64, pick(0, 1) ? add(a, b) : min(a, b));
            }
            default: return select(lt(gen(d), gen(d)), iconst(pick(-3, 3)), gen(d));
        }
    }

    VarValues point() {
        VarValues p;
        for (const auto& [v, iv] : ranges) {
            const auto k = pick(0, 5);
            p[v] = k == 0 ? iv.lo : k == 1 ? iv.hi : pick(iv.lo, iv.hi);
        }
        return p;
    }
};

void check_random(bool big, std::uint64_t seed0, int cases) {
    int rewritten = 0;
    for (int n = 0; n < cases; ++n) {
        RandomCase rc(seed0 + static_cast<std::uint64_t>(n), big);
        const Expr e = rc.gen(static_cast<int>(rc.pick(1, 5)));
        const LoadFn load_fn = [&](int, const std::vector<std::int64_t>& i) {
            return Scalar::of_int(rc.table.at(static_cast<std::size_t>(i[0])));
        };
        const LoadBounds lb = [&](int b) -> std::optional<Interval> {
            if (b != 7) return std::nullopt;
            return Interval{*std::min_element(rc.table.begin(), rc.table.end()),
                            *std::max_element(rc.table.begin(), rc.table.end())};
        };
        const Expr s = simplify(e, rc.ranges, lb);
        rewritten += !structurally_equal(e, s);
        const auto be = bounds(e, rc.ranges, lb), bs = bounds(s, rc.ranges, lb);
        std::vector<std::optional<std::int64_t>> stride(static_cast<std::size_t>(rc.nvars));
        for (int v = 0; v < rc.nvars; ++v) stride[static_cast<std::size_t>(v)] = linear_stride(s, v);
        const bool fits = fits_int32(s, rc.ranges, lb);
        for (int k = 0; k < 40; ++k) {
            const VarValues p = rc.point();
            const std::int64_t want = eval_int(e, p, load_fn), got = eval_int(s, p, load_fn);
            ASSERT_EQ(got, want) << "seed " << seed0 + static_cast<std::uint64_t>(n) << "\n  e = " << to_string(e)
                                 << "\n  s = " << to_string(s) << "\n  at v0=" << p.at(0) << " v1=" << p.at(1);
            if (be) {
                ASSERT_TRUE(be->lo <= want && want <= be->hi) << to_string(e) << " = " << want;
            }
            if (bs) {
                ASSERT_TRUE(bs->lo <= got && got <= bs->hi) << to_string(s) << " = " << got;
            }
            if (fits) {
                ASSERT_TRUE(got >= std::numeric_limits<std::int32_t>::min() &&
                            got <= std::numeric_limits<std::int32_t>::max());
            }
            // A known stride is the exact step of the value along the var.
            for (int v = 0; v < rc.nvars; ++v) {
                const auto& a = stride[static_cast<std::size_t>(v)];
                if (!a || p.at(v) == rc.ranges.at(v).hi) continue;
                VarValues q = p;
                ++q[v];
                const auto step = static_cast<std::int64_t>(static_cast<std::uint64_t>(eval_int(s, q, load_fn)) -
                                                            static_cast<std::uint64_t>(got));
                ASSERT_EQ(step, *a) << "v" << v << " in " << to_string(s);
            }
        }
    }
    // The generator must exercise the simplifier, not only the builders.
    EXPECT_GT(rewritten, cases / 4);
}

// The bytes of `values` as a table of type T.
template <typename T>
std::vector<std::uint8_t> table_bytes(const std::vector<T>& values) {
    std::vector<std::uint8_t> out(values.size() * sizeof(T));
    std::memcpy(out.data(), values.data(), out.size());
    return out;
}

TEST(SimplifyTables, DataRangeOverABoxOfIndices) {
    // A 3x4 int16 table: row r holds 10 r + c, but -7 at (2, 3).
    const auto data = table_bytes<std::int16_t>({0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, -7});
    const std::vector<std::int64_t> shape = {3, 4};
    const std::vector<Interval> rows12 = {{1, 2}, {0, 1}};
    EXPECT_EQ(data_range(Type::I16, data), (Interval{-7, 22}));
    EXPECT_EQ(data_range(Type::I16, data, shape, {}), (Interval{-7, 22}));  // no box: all of it
    EXPECT_EQ(data_range(Type::I16, data, shape, rows12), (Interval{10, 21}));
    const std::vector<Interval> corner = {{2, 5}, {3, 9}};  // clamped to the table: (2, 3)
    EXPECT_EQ(data_range(Type::I16, data, shape, corner), (Interval{-7, -7}));
    const std::vector<Interval> outside = {{3, 4}, {0, 3}};
    EXPECT_EQ(data_range(Type::I16, data, shape, outside), std::nullopt);
    // No bound rather than a read past the data: a size that is not the shape's, a type
    // without integer elements.
    const std::vector<std::int64_t> larger = {4, 4};
    EXPECT_EQ(data_range(Type::I16, data, larger, {}), std::nullopt);
    EXPECT_EQ(data_range(Type::Bool, data, shape, {}), std::nullopt);
    EXPECT_EQ(data_range(Type::F32, data, {}, {}), std::nullopt);
    // A scalar table.
    EXPECT_EQ(data_range(Type::I32, table_bytes<std::int32_t>({42}), {}, {}), (Interval{42, 42}));
}

TEST(SimplifyTables, BoundsIndexedReadsTheEntriesReached) {
    // start[v0] + v1 over v0 in [1, 2], v1 in [0, 3]: the table's entries 1..2 only.
    const auto data = table_bytes<std::int32_t>({100, 5, 9, -50});
    const std::vector<std::int64_t> shape = {4};
    std::vector<std::vector<Interval>> asked;
    const IndexedLoadBounds tables = [&](int buffer, std::span<const Interval> index) -> std::optional<Interval> {
        asked.emplace_back(index.begin(), index.end());
        if (buffer != 7) return std::nullopt;
        return data_range(Type::I32, data, shape, index);
    };
    const Expr e = add(load(7, Type::I32, {var(0)}), cast(Type::I32, var(1)));
    const VarRanges r = {{0, {1, 2}}, {1, {0, 3}}};
    EXPECT_EQ(bounds_indexed(e, r, tables), (Interval{5, 12}));
    ASSERT_FALSE(asked.empty());
    EXPECT_EQ(asked.back(), (std::vector<Interval>{{1, 2}}));
    // An index of unknown range asks for the whole table.
    EXPECT_EQ(bounds_indexed(load(7, Type::I32, {var(3)}), r, tables), (Interval{-50, 100}));
    EXPECT_TRUE(asked.back().empty());
    // Parameters from the value vector, where known.
    const std::vector<std::int64_t> params = {6, 8};
    const std::vector<bool> known = {true, false};
    EXPECT_EQ(bounds_indexed(add(param(0), var(1)), r, tables, params, &known), (Interval{6, 9}));
    EXPECT_EQ(bounds_indexed(param(1), r, tables, params, &known), std::nullopt);
    EXPECT_EQ(bounds_indexed(param(1), r, tables, params), (Interval{8, 8}));
}

TEST(SimplifyRandom, KeepsValuesSmallRanges) { check_random(false, 1000, 4000); }
TEST(SimplifyRandom, KeepsValuesWideRanges) { check_random(true, 900000, 3000); }

}  // namespace
}  // namespace toroid::ir
