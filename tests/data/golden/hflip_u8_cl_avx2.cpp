
// Buffers:
//   b0: input input uint8_t [p0, 3, p1, p2] strides [p3, 1, p4, 3] origin [0, 0, 0, 0]
//   b1: output op0.flip uint8_t [p0, 3, p1, p2] strides [p6, 1, p5, 3] origin [0, 0, 0, 0]

namespace t_lanes32 {
// kernel_0
//   computes op0.flip (op 0 (flip))
//   realize: the pipeline's result
//   layout: channels_last
//   loop order: v0, v2, v3, v1 (memory order of the output)
//   unroll v1: 3 iterations, innermost in memory
//   fuse v3 and v1: the store and forward loads move by the same stride along 3 * v3 + v1, byte loads backwards through the pixels (read through windows); one loop over consecutive elements
//   vector axis v3 (32 lanes, its vectors hold bytes only): stride 1 in the output
//   loads along v3: b0 window
//   parallel over v0 x v2 (collapsed, shared by the threads)
static void kernel_0(void* const* buffers, const std::int64_t* params, int threads) {
    (void)threads;
    (void)params;
    const std::uint8_t* __restrict b0 = static_cast<const std::uint8_t*>(buffers[0]);  // input
    std::uint8_t* __restrict b1 = static_cast<std::uint8_t*>(buffers[1]);  // op0.flip
    const std::int64_t p0 = static_cast<std::int64_t>(params[0]);  // input.n
    (void)p0;
    const std::int64_t p1 = static_cast<std::int64_t>(params[1]);  // input.h
    (void)p1;
    const std::int64_t p2 = static_cast<std::int64_t>(params[2]);  // input.w
    (void)p2;
    const std::int64_t p3 = static_cast<std::int64_t>(params[3]);  // input.stride_n
    (void)p3;
    const std::int64_t p4 = static_cast<std::int64_t>(params[4]);  // input.stride_h
    (void)p4;
    const std::int64_t p5 = static_cast<std::int64_t>(params[5]);  // op0.flip.stride2
    (void)p5;
    const std::int64_t p6 = static_cast<std::int64_t>(params[6]);  // op0.flip.stride0
    (void)p6;
    const std::int64_t n0 = std::int64_t(p0) > std::int64_t(0) ? std::int64_t(p0) - std::int64_t(0) : 0;
    const std::int64_t n2 = std::int64_t(p1) > std::int64_t(0) ? std::int64_t(p1) - std::int64_t(0) : 0;
    const std::int64_t total = n0 * n2;
    const auto rows = [&](std::int64_t lo, std::int64_t hi) __attribute__((noinline)) {
        const std::uint8_t* __restrict b0 = static_cast<const std::uint8_t*>(buffers[0]);  // input
        std::uint8_t* __restrict b1 = static_cast<std::uint8_t*>(buffers[1]);  // op0.flip
        const std::int64_t p2 = static_cast<std::int64_t>(params[2]);  // input.w
        (void)p2;
        const std::int64_t p3 = static_cast<std::int64_t>(params[3]);  // input.stride_n
        (void)p3;
        const std::int64_t p4 = static_cast<std::int64_t>(params[4]);  // input.stride_h
        (void)p4;
        const std::int64_t p5 = static_cast<std::int64_t>(params[5]);  // op0.flip.stride2
        (void)p5;
        const std::int64_t p6 = static_cast<std::int64_t>(params[6]);  // op0.flip.stride0
        (void)p6;
        const std::int64_t rn2 = n2;
        const std::int64_t t0 = p2 * 3;
        const window_table<1> wt1((t0 - 0) / kLanes + 1);
        for (std::int64_t v3 = 0; v3 + kLanes <= t0; v3 += kLanes) {
            const std::int64_t blk3 = (v3 - 0) / kLanes;
            (void)blk3;
            const std::int64_t t3 = v3;
            std::int64_t t2[kLanes];
            for (int lane = 0; lane < kLanes; ++lane) {
                const std::int64_t v3 = static_cast<std::int64_t>(t3 + lane);
                const std::int32_t t5 = v3 % 3;
                const std::int64_t t6 = v3 / 3;
                const std::int64_t t7 = t6 * 3;
                const std::int64_t t8 = -t7;
                const std::int64_t t9 = t8 + t5;
                t2[lane] = t9;
            }
            vec<std::int64_t> t4;
            __builtin_memcpy(&t4, t2, sizeof t4);
            wt1[blk3] = make_window<1>(t4);
        }
        if (t0 - (0) >= kLanes) { const std::int64_t v3 = t0 - kLanes;
            const std::int64_t blk3 = (t0 - 0) / kLanes;
            (void)blk3;
            const std::int64_t t11 = v3;
            std::int64_t t10[kLanes];
            for (int lane = 0; lane < kLanes; ++lane) {
                const std::int64_t v3 = static_cast<std::int64_t>(t11 + lane);
                const std::int32_t t13 = v3 % 3;
                const std::int64_t t14 = v3 / 3;
                const std::int64_t t15 = t14 * 3;
                const std::int64_t t16 = -t15;
                const std::int64_t t17 = t16 + t13;
                t10[lane] = t17;
            }
            vec<std::int64_t> t12;
            __builtin_memcpy(&t12, t10, sizeof t12);
            wt1[blk3] = make_window<1>(t12);
        }
        std::int64_t rest = lo;
        std::int64_t v2 = static_cast<std::int64_t>(0 + rest % rn2);
        rest /= rn2;
        std::int64_t v0 = static_cast<std::int64_t>(0 + rest);
        for (std::int64_t it = lo; it < hi;) {
            const std::int64_t run = std::int64_t(0) + rn2 - v2 < hi - it ? std::int64_t(0) + rn2 - v2 : hi - it;
            it += run;
            for (const std::int64_t runEnd = static_cast<std::int64_t>(v2 + run); v2 < runEnd; ++v2) {
                {
                    std::int64_t v3 = 0;
                    if (t0 - (0) >= kLanes) {
                        std::int64_t blk3 = 0;
                        #pragma GCC unroll 8
                        for (; v3 < t0 - kLanes; v3 += kLanes, ++blk3) {
                            const lane_window<1>& t18 = wt1[blk3];
                            const std::int64_t t19 = v2 * p4;
                            const std::int64_t t20 = v0 * p3;
                            const std::int64_t t21 = t0 + t20;
                            const std::int64_t t22 = t21 + t19;
                            const std::int64_t t23 = t22 + -3;
                            const vec<std::uint8_t> t24 = gather_window_any(b0 + t23 + t18.first, t18);
                            const std::int64_t t25 = v2 * p5;
                            const std::int64_t t26 = v0 * p6;
                            const std::int64_t t27 = t26 + t25;
                            const std::int64_t t28 = t27 + v3;
                            store_v(b1 + t28, to_v<vec<std::uint8_t>>(t24));
                        }
                        v3 = t0 - kLanes;
                        (void)blk3;
                        {
                            const lane_window<1>& t29 = wt1[blk3];
                            const std::int64_t t30 = v2 * p4;
                            const std::int64_t t31 = v0 * p3;
                            const std::int64_t t32 = t0 + t31;
                            const std::int64_t t33 = t32 + t30;
                            const std::int64_t t34 = t33 + -3;
                            const vec<std::uint8_t> t35 = gather_window_any(b0 + t34 + t29.first, t29);
                            const std::int64_t t36 = v2 * p5;
                            const std::int64_t t37 = v0 * p6;
                            const std::int64_t t38 = t37 + t36;
                            const std::int64_t t39 = t38 + v3;
                            store_v(b1 + t39, to_v<vec<std::uint8_t>>(t35));
                        }
                    } else {
                        for (; v3 < t0; ++v3) {
                            const std::int64_t t40 = v2 * p5;
                            const std::int64_t t41 = v0 * p6;
                            const std::int64_t t42 = t41 + t40;
                            const std::int64_t t43 = t42 + v3;
                            const std::int32_t t44 = v3 % 3;
                            const std::int64_t t45 = v3 / 3;
                            const std::int64_t t46 = t45 * 3;
                            const std::int64_t t47 = v2 * p4;
                            const std::int64_t t48 = v0 * p3;
                            const std::int64_t t49 = t0 + t48;
                            const std::int64_t t50 = t49 + t47;
                            const std::int64_t t51 = t50 - t46;
                            const std::int64_t t52 = t51 + t44;
                            const std::int64_t t53 = t52 - 3;
                            const std::uint8_t t54 = b0[t53];
                            b1[t43] = t54;
                        }
                    }
                }
            }
            if (v2 == static_cast<std::int64_t>(0 + rn2)) { v2 = static_cast<std::int64_t>(0); ++v0; }
        }
    };
    const std::int64_t t55 = 3 * p2;
    const std::int64_t grains = (total * std::int64_t(t55)) / 32768;
    const int team = grains < 1 ? 1 : (grains < threads ? static_cast<int>(grains) : threads);
    if (team > 1) {
        #pragma omp parallel num_threads(team)
        {
            const std::int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
            rows(total * t / nt, total * (t + 1) / nt);
        }
    } else {
        rows(0, total);
    }
}
}

extern "C" void toroid_entry(void* const* buffers, const std::int64_t* params, int threads) {
    t_lanes32::kernel_0(buffers, params, threads);
}
