// Loop partitioning (as Halide partitions loops at the edges of a region): a kernel whose
// value tests an interval of its vector loop's variable v (lo <= v and v < hi, with lo and
// hi independent of v: an erased rectangle's columns, a constant pad's inside) runs that
// loop in three parts, [begin, lo), [lo, hi) and [hi, end), each with the tests replaced by
// their value there. The parts then hold no per-lane compares or selects on v: a part that
// only copies is a plain run of loads and stores. The scheduler records it, the C++ printer
// prints it.
#pragma once

#include "ir/loop.h"

#include <optional>

namespace toroid::schedule {

struct Partition {
    ir::Expr lo, hi;  // independent of v
};

// The interval `value` tests of v: every test of v in it is lo <= v or v < hi, for one lo
// and one hi (each may appear in several places); nullopt when there is none, or anything
// else (another bound, a test of a function of v) tests v.
std::optional<Partition> find_partition(const ir::Expr& value, int v);

// `value` with its tests of the interval replaced by their value in part 0 (v < lo), 1
// (lo <= v < hi) or 2 (v >= hi, v >= lo), simplified. The parts are these only where
// lo <= hi: the printer runs the parts there, and the loop as it is elsewhere.
ir::Expr partitioned_value(const ir::Expr& value, int v, int part);

}  // namespace toroid::schedule
