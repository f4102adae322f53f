
// Buffers:
//   b0: input input uint8_t [p0, 3, p1, p2] strides [p3, p4, p5, 1] origin [0, 0, 0, 0]
//   b1: output op0.flip uint8_t [p0, 3, p1, p2] strides [p8, p7, p6, 1] origin [0, 0, 0, 0]

namespace t_lanes64 {
// kernel_0
//   computes op0.flip (op 0 (flip))
//   realize: the pipeline's result
//   layout: contiguous
//   loop order: v0, v1, v2, v3 (memory order of the output)
//   vector axis v3 (64 lanes, its vectors hold bytes only): stride 1 in the output
//   loads along v3: b0 reversed
//   parallel over v0 x v1 x v2 (collapsed, shared by the threads)
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
    const std::int64_t p4 = static_cast<std::int64_t>(params[4]);  // input.stride_c
    (void)p4;
    const std::int64_t p5 = static_cast<std::int64_t>(params[5]);  // input.stride_h
    (void)p5;
    const std::int64_t p6 = static_cast<std::int64_t>(params[6]);  // op0.flip.stride2
    (void)p6;
    const std::int64_t p7 = static_cast<std::int64_t>(params[7]);  // op0.flip.stride1
    (void)p7;
    const std::int64_t p8 = static_cast<std::int64_t>(params[8]);  // op0.flip.stride0
    (void)p8;
    const std::int64_t n0 = std::int64_t(p0) > std::int64_t(0) ? std::int64_t(p0) - std::int64_t(0) : 0;
    const std::int64_t n1 = std::int64_t(3) > std::int64_t(0) ? std::int64_t(3) - std::int64_t(0) : 0;
    const std::int64_t n2 = std::int64_t(p1) > std::int64_t(0) ? std::int64_t(p1) - std::int64_t(0) : 0;
    const std::int64_t total = n0 * n1 * n2;
    const auto rows = [&](std::int64_t lo, std::int64_t hi) __attribute__((noinline)) {
        const std::uint8_t* __restrict b0 = static_cast<const std::uint8_t*>(buffers[0]);  // input
        std::uint8_t* __restrict b1 = static_cast<std::uint8_t*>(buffers[1]);  // op0.flip
        const std::int64_t p2 = static_cast<std::int64_t>(params[2]);  // input.w
        (void)p2;
        const std::int64_t p3 = static_cast<std::int64_t>(params[3]);  // input.stride_n
        (void)p3;
        const std::int64_t p4 = static_cast<std::int64_t>(params[4]);  // input.stride_c
        (void)p4;
        const std::int64_t p5 = static_cast<std::int64_t>(params[5]);  // input.stride_h
        (void)p5;
        const std::int64_t p6 = static_cast<std::int64_t>(params[6]);  // op0.flip.stride2
        (void)p6;
        const std::int64_t p7 = static_cast<std::int64_t>(params[7]);  // op0.flip.stride1
        (void)p7;
        const std::int64_t p8 = static_cast<std::int64_t>(params[8]);  // op0.flip.stride0
        (void)p8;
        const std::int64_t rn1 = n1;
        const std::int64_t rn2 = n2;
        std::int64_t rest = lo;
        std::int64_t v2 = static_cast<std::int64_t>(0 + rest % rn2);
        rest /= rn2;
        std::int32_t v1 = static_cast<std::int32_t>(0 + rest % rn1);
        rest /= rn1;
        std::int64_t v0 = static_cast<std::int64_t>(0 + rest);
        for (std::int64_t it = lo; it < hi;) {
            const std::int64_t run = std::int64_t(0) + rn2 - v2 < hi - it ? std::int64_t(0) + rn2 - v2 : hi - it;
            it += run;
            for (const std::int64_t runEnd = static_cast<std::int64_t>(v2 + run); v2 < runEnd; ++v2) {
                {
                    std::int64_t v3 = 0;
                    if (p2 - (0) >= kLanes) {
                        std::int64_t blk3 = 0;
                        for (; v3 < p2 - kLanes; v3 += kLanes, ++blk3) {
                            const std::int64_t t0 = v2 * p5;
                            const std::int64_t t1 = v1 * p4;
                            const std::int64_t t2 = v0 * p3;
                            const std::int64_t t3 = p2 + t2;
                            const std::int64_t t4 = t3 + t1;
                            const std::int64_t t5 = t4 + t0;
                            const std::int64_t t6 = t5 - v3;
                            const std::int64_t t7 = t6 - 1;
                            const vec<std::uint8_t> t8 = reverse_v(load_v(b0 + t7 - (kLanes - 1)));
                            const std::int64_t t9 = v1 * p7;
                            const std::int64_t t10 = v2 * p6;
                            const std::int64_t t11 = v0 * p8;
                            const std::int64_t t12 = t11 + t10;
                            const std::int64_t t13 = t12 + t9;
                            const std::int64_t t14 = t13 + v3;
                            store_v(b1 + t14, to_v<vec<std::uint8_t>>(t8));
                        }
                        v3 = p2 - kLanes;
                        (void)blk3;
                        {
                            const std::int64_t t15 = v2 * p5;
                            const std::int64_t t16 = v1 * p4;
                            const std::int64_t t17 = v0 * p3;
                            const std::int64_t t18 = p2 + t17;
                            const std::int64_t t19 = t18 + t16;
                            const std::int64_t t20 = t19 + t15;
                            const std::int64_t t21 = t20 - v3;
                            const std::int64_t t22 = t21 - 1;
                            const vec<std::uint8_t> t23 = reverse_v(load_v(b0 + t22 - (kLanes - 1)));
                            const std::int64_t t24 = v1 * p7;
                            const std::int64_t t25 = v2 * p6;
                            const std::int64_t t26 = v0 * p8;
                            const std::int64_t t27 = t26 + t25;
                            const std::int64_t t28 = t27 + t24;
                            const std::int64_t t29 = t28 + v3;
                            store_v(b1 + t29, to_v<vec<std::uint8_t>>(t23));
                        }
                    } else {
                        for (; v3 < p2; ++v3) {
                            const std::int64_t t30 = v1 * p7;
                            const std::int64_t t31 = v2 * p6;
                            const std::int64_t t32 = v0 * p8;
                            const std::int64_t t33 = t32 + t31;
                            const std::int64_t t34 = t33 + t30;
                            const std::int64_t t35 = t34 + v3;
                            const std::int64_t t36 = v2 * p5;
                            const std::int64_t t37 = v1 * p4;
                            const std::int64_t t38 = v0 * p3;
                            const std::int64_t t39 = p2 + t38;
                            const std::int64_t t40 = t39 + t37;
                            const std::int64_t t41 = t40 + t36;
                            const std::int64_t t42 = t41 - v3;
                            const std::int64_t t43 = t42 - 1;
                            const std::uint8_t t44 = b0[t43];
                            b1[t35] = t44;
                        }
                    }
                }
            }
            if (v2 == static_cast<std::int64_t>(0 + rn2)) { v2 = static_cast<std::int64_t>(0); if (++v1 == static_cast<std::int32_t>(0 + rn1)) { v1 = static_cast<std::int32_t>(0); ++v0; } }
        }
    };
    const std::int64_t grains = (total * std::int64_t(p2)) / 32768;
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
    t_lanes64::kernel_0(buffers, params, threads);
}
