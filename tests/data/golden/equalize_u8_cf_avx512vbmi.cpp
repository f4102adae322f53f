
// Buffers:
//   b0: input input uint8_t [p0, 3, p1, p2] strides [p3, p4, p5, 1] origin [0, 0, 0, 0]
//   b1: temp op0.hist int32_t [p7, 3, 256, 1] strides [768, 256, 1, 1] origin [p6, 0, 0, 0]
//   b2: temp op0.top int32_t [p11, 3, 1, 1] strides [3, 1, 1, 1] origin [p10, 0, 0, 0]
//   b3: temp op0.cum int32_t [p13, 3, 256, 1] strides [768, 256, 1, 1] origin [p12, 0, 0, 0]
//   b4: output op0.equalize uint8_t [p0, 3, p1, p2] strides [p18, p17, p16, 1] origin [0, 0, 0, 0]
//   b5: temp op0.equalize.table uint8_t [p15, 3, 1, 256] strides [768, 256, 256, 1] origin [p14, 0, 0, 0]
//   b6: temp op0.top.lanes int32_t [p9, 3, 1, 16] strides [48, 16, 16, 1] origin [p8, 0, 0, 0]

namespace t_lanes16 {
// kernel_0
//   computes op0.hist (op 0 (equalize))
//   realize: requested by its decomposition
//   a histogram of 256 bins along v2: one pass over r64 x r65 adding one to each term's bin, instead of a pass per bin
//   bounds: computes only the region of v0 its consumers read
//   layout: contiguous
//   loop order: v0, v1, v2, v3 (memory order of the output)
static void kernel_0(void* const* buffers, const std::int64_t* params, int threads) {
    (void)threads;
    (void)params;
    const std::uint8_t* __restrict b0 = static_cast<const std::uint8_t*>(buffers[0]);  // input
    std::int32_t* __restrict b1 = static_cast<std::int32_t*>(buffers[1]);  // op0.hist
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
    const std::int64_t p6 = static_cast<std::int64_t>(params[6]);  // op0.hist.region_origin0
    (void)p6;
    const std::int64_t p7 = static_cast<std::int64_t>(params[7]);  // op0.hist.region_extent0
    (void)p7;
    const std::int64_t n0 = p7;
    const std::int64_t n1 = 3;
    const std::int64_t n3 = 1;
    const std::int64_t total = 1 * n0 * n1 * n3;
    const auto planes = [&](std::int64_t lo, std::int64_t hi) __attribute__((noinline)) {
        const std::uint8_t* __restrict b0 = static_cast<const std::uint8_t*>(buffers[0]);  // input
        std::int32_t* __restrict b1 = static_cast<std::int32_t*>(buffers[1]);  // op0.hist
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
        const std::int64_t p6 = static_cast<std::int64_t>(params[6]);  // op0.hist.region_origin0
        (void)p6;
        for (std::int64_t it = lo; it < hi; ++it) {
            std::int64_t rest = it;
            const std::int64_t v3 = 0 + rest % n3;
            rest /= n3;
            const std::int64_t v1 = 0 + rest % n1;
            rest /= n1;
            const std::int64_t v0 = p6 + rest % n0;
            rest /= n0;
            std::int32_t bins[4][256] = {};
            for (std::int64_t r64 = 0; r64 < p1; ++r64) {
                std::int64_t r65 = 0;
                for (; r65 + 4 <= p2; r65 += 4) {
                    const std::int64_t t0 = v1 * p4;
                    const std::int64_t t1 = v0 * p3;
                    const std::int64_t t2 = r64 * p5;
                    const std::int64_t t3 = t2 + t1;
                    const std::int64_t t4 = t3 + t0;
                    const std::int64_t t5 = t4 + r65;
                    const std::uint8_t t6 = b0[t5];
                    const std::int32_t t7 = static_cast<std::int32_t>(t6);
                    const std::int32_t t8 = static_cast<std::int32_t>(t7);
                    if (static_cast<std::uint64_t>(t8) < 256u) ++bins[0][t8];
                    const std::int64_t t9 = t5 + 1;
                    const std::uint8_t t10 = b0[t9];
                    const std::int32_t t11 = static_cast<std::int32_t>(t10);
                    const std::int32_t t12 = static_cast<std::int32_t>(t11);
                    if (static_cast<std::uint64_t>(t12) < 256u) ++bins[1][t12];
                    const std::int64_t t13 = t5 + 2;
                    const std::uint8_t t14 = b0[t13];
                    const std::int32_t t15 = static_cast<std::int32_t>(t14);
                    const std::int32_t t16 = static_cast<std::int32_t>(t15);
                    if (static_cast<std::uint64_t>(t16) < 256u) ++bins[2][t16];
                    const std::int64_t t17 = t5 + 3;
                    const std::uint8_t t18 = b0[t17];
                    const std::int32_t t19 = static_cast<std::int32_t>(t18);
                    const std::int32_t t20 = static_cast<std::int32_t>(t19);
                    if (static_cast<std::uint64_t>(t20) < 256u) ++bins[3][t20];
                }
                for (; r65 < p2; ++r65) {
                    const std::int64_t t21 = v1 * p4;
                    const std::int64_t t22 = v0 * p3;
                    const std::int64_t t23 = r64 * p5;
                    const std::int64_t t24 = t23 + t22;
                    const std::int64_t t25 = t24 + t21;
                    const std::int64_t t26 = t25 + r65;
                    const std::uint8_t t27 = b0[t26];
                    const std::int32_t t28 = static_cast<std::int32_t>(t27);
                    const std::int32_t t29 = static_cast<std::int32_t>(t28);
                    if (static_cast<std::uint64_t>(t29) < 256u) ++bins[0][t29];
                }
            }
            for (std::int64_t v2 = 0; v2 < 0 + 256; ++v2) {
                const std::int64_t at = v2;
                const std::int32_t t30 = v1 * 256;
                const std::int64_t t31 = v0 * 768;
                const std::int64_t t32 = p6 * -768;
                const std::int64_t t33 = t32 + t31;
                const std::int64_t t34 = t33 + t30;
                const std::int64_t t35 = t34 + v2;
                b1[t35] = static_cast<std::int32_t>(at >= 0 && at < 256 ? bins[0][v2] + bins[1][v2] + bins[2][v2] + bins[3][v2] : 0);
            }
        }
    };
    if (threads > 1 && total > 1) {
        #pragma omp parallel num_threads(threads)
        {
            const std::int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
            planes(total * t / nt, total * (t + 1) / nt);
        }
    } else {
        planes(0, total);
    }
}
}

namespace t_lanes16 {
// kernel_1
//   computes op0.top.lanes: op0.top's reduction along rows, 16 consecutive elements a step in lanes
//   bounds: computes only the region of v0 its consumers read
//   layout: contiguous
//   loop order: v0, v1, v2, v3 (memory order of the output)
//   vector axis v3 (16 lanes, 4-byte elements): stride 1 in the output
//   loads along v3: b0 contiguous
//   4 vectors a step along v3: their tap loops run as one, each tap's weight and address loaded once
//   parallel over v0 x v1 x v2 (collapsed, shared by the threads)
static void kernel_1(void* const* buffers, const std::int64_t* params, int threads) {
    (void)threads;
    (void)params;
    const std::uint8_t* __restrict b0 = static_cast<const std::uint8_t*>(buffers[0]);  // input
    std::int32_t* __restrict b6 = static_cast<std::int32_t*>(buffers[6]);  // op0.top.lanes
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
    const std::int64_t p8 = static_cast<std::int64_t>(params[8]);  // op0.top.lanes.region_origin0
    (void)p8;
    const std::int64_t p9 = static_cast<std::int64_t>(params[9]);  // op0.top.lanes.region_extent0
    (void)p9;
    const std::int64_t t0 = p8 + p9;
    const std::int64_t n0 = std::int64_t(t0) > std::int64_t(p8) ? std::int64_t(t0) - std::int64_t(p8) : 0;
    const std::int64_t n1 = std::int64_t(3) > std::int64_t(0) ? std::int64_t(3) - std::int64_t(0) : 0;
    const std::int64_t n2 = std::int64_t(1) > std::int64_t(0) ? std::int64_t(1) - std::int64_t(0) : 0;
    const std::int64_t total = n0 * n1 * n2;
    const auto rows = [&](std::int64_t lo, std::int64_t hi) __attribute__((noinline)) {
        const std::uint8_t* __restrict b0 = static_cast<const std::uint8_t*>(buffers[0]);  // input
        std::int32_t* __restrict b6 = static_cast<std::int32_t*>(buffers[6]);  // op0.top.lanes
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
        const std::int64_t p8 = static_cast<std::int64_t>(params[8]);  // op0.top.lanes.region_origin0
        (void)p8;
        const std::int64_t rn1 = n1;
        const std::int64_t rn2 = n2;
        std::int64_t rest = lo;
        std::int32_t v2 = static_cast<std::int32_t>(0 + rest % rn2);
        rest /= rn2;
        std::int32_t v1 = static_cast<std::int32_t>(0 + rest % rn1);
        rest /= rn1;
        std::int64_t v0 = static_cast<std::int64_t>(p8 + rest);
        for (std::int64_t it = lo; it < hi;) {
            const std::int64_t run = std::int64_t(0) + rn2 - v2 < hi - it ? std::int64_t(0) + rn2 - v2 : hi - it;
            it += run;
            for (const std::int32_t runEnd = static_cast<std::int32_t>(v2 + run); v2 < runEnd; ++v2) {
                {
                    std::int64_t v3 = 0;
                    for (; v3 + 4 * kLanes <= 16; v3 += 4 * kLanes) {
                        vec<std::int32_t> t1 = to_v<vec<std::int32_t>>(-2147483648);
                        vec<std::int32_t> t2 = to_v<vec<std::int32_t>>(-2147483648);
                        vec<std::int32_t> t3 = to_v<vec<std::int32_t>>(-2147483648);
                        vec<std::int32_t> t4 = to_v<vec<std::int32_t>>(-2147483648);
                        #pragma GCC unroll 4
                        for (std::int32_t r66 = 0; r66 < p1; ++r66) {
                            vec<std::int32_t> t5 = to_v<vec<std::int32_t>>(-2147483648);
                            const std::int64_t t6 = p2 / 16;
                            const std::int64_t t7 = v1 * p4;
                            const std::int64_t t8 = v0 * p3;
                            const std::int64_t t9 = r66 * p5;
                            const std::int64_t t10 = t9 + t8;
                            const std::int64_t t11 = t10 + t7;
                            const vec<std::int32_t> t12 = iota_v<vec<std::int32_t>>(v3);
                            const vec<std::int64_t> t13 = to_v<vec<std::int64_t>>(t11) + to_v<vec<std::int64_t>>(t12);
                            #pragma GCC unroll 4
                            for (std::int32_t r68 = 0; r68 < t6; ++r68) {
                                const std::int64_t t14 = r68 * 16;
                                const std::int64_t t15 = t11 + v3;
                                const std::int64_t t16 = t15 + t14;
                                const vec<std::uint8_t> t17 = load_v(b0 + t16);
                                const vec<std::int32_t> t18 = to_v<vec<std::int32_t>>(t17);
                                t5 = rmax_v(t5, to_v<vec<std::int32_t>>(t18));
                            }
                            t1 = rmax_v(t1, to_v<vec<std::int32_t>>(t5));
                            vec<std::int32_t> t19 = to_v<vec<std::int32_t>>(-2147483648);
                            #pragma GCC unroll 4
                            for (std::int32_t r68 = 0; r68 < t6; ++r68) {
                                const std::int64_t t20 = r68 * 16;
                                const std::int64_t t21 = t11 + v3;
                                const std::int64_t t22 = t21 + t20;
                                const std::int64_t t23 = t22 + 16;
                                const vec<std::uint8_t> t24 = load_v(b0 + t23);
                                const vec<std::int32_t> t25 = to_v<vec<std::int32_t>>(t24);
                                t19 = rmax_v(t19, to_v<vec<std::int32_t>>(t25));
                            }
                            t2 = rmax_v(t2, to_v<vec<std::int32_t>>(t19));
                            vec<std::int32_t> t26 = to_v<vec<std::int32_t>>(-2147483648);
                            #pragma GCC unroll 4
                            for (std::int32_t r68 = 0; r68 < t6; ++r68) {
                                const std::int64_t t27 = r68 * 16;
                                const std::int64_t t28 = t11 + v3;
                                const std::int64_t t29 = t28 + t27;
                                const std::int64_t t30 = t29 + 32;
                                const vec<std::uint8_t> t31 = load_v(b0 + t30);
                                const vec<std::int32_t> t32 = to_v<vec<std::int32_t>>(t31);
                                t26 = rmax_v(t26, to_v<vec<std::int32_t>>(t32));
                            }
                            t3 = rmax_v(t3, to_v<vec<std::int32_t>>(t26));
                            vec<std::int32_t> t33 = to_v<vec<std::int32_t>>(-2147483648);
                            #pragma GCC unroll 4
                            for (std::int32_t r68 = 0; r68 < t6; ++r68) {
                                const std::int64_t t34 = r68 * 16;
                                const std::int64_t t35 = t11 + v3;
                                const std::int64_t t36 = t35 + t34;
                                const std::int64_t t37 = t36 + 48;
                                const vec<std::uint8_t> t38 = load_v(b0 + t37);
                                const vec<std::int32_t> t39 = to_v<vec<std::int32_t>>(t38);
                                t33 = rmax_v(t33, to_v<vec<std::int32_t>>(t39));
                            }
                            t4 = rmax_v(t4, to_v<vec<std::int32_t>>(t33));
                        }
                        const std::int32_t t40 = v1 * 16;
                        const std::int64_t t41 = v0 * 48;
                        const std::int64_t t42 = p8 * -48;
                        const std::int64_t t43 = t42 + t41;
                        const std::int64_t t44 = t43 + t40;
                        const std::int64_t t45 = t44 + v3;
                        store_v(b6 + t45, to_v<vec<std::int32_t>>(t1));
                        const std::int64_t t46 = t45 + 16;
                        store_v(b6 + t46, to_v<vec<std::int32_t>>(t2));
                        const std::int64_t t47 = t45 + 32;
                        store_v(b6 + t47, to_v<vec<std::int32_t>>(t3));
                        const std::int64_t t48 = t45 + 48;
                        store_v(b6 + t48, to_v<vec<std::int32_t>>(t4));
                    }
                    if (16 - (0) >= kLanes) {
                        for (std::int64_t blk3 = 0; v3 < 16; v3 += kLanes, ++blk3) {
                            if (v3 + kLanes > 16) v3 = 16 - kLanes;
                            vec<std::int32_t> t49 = to_v<vec<std::int32_t>>(-2147483648);
                            #pragma GCC unroll 4
                            for (std::int32_t r66 = 0; r66 < p1; ++r66) {
                                vec<std::int32_t> t50 = to_v<vec<std::int32_t>>(-2147483648);
                                const std::int64_t t51 = p2 / 16;
                                const std::int64_t t52 = v1 * p4;
                                const std::int64_t t53 = v0 * p3;
                                const std::int64_t t54 = r66 * p5;
                                const std::int64_t t55 = t54 + t53;
                                const std::int64_t t56 = t55 + t52;
                                const vec<std::int32_t> t57 = iota_v<vec<std::int32_t>>(v3);
                                const vec<std::int64_t> t58 = to_v<vec<std::int64_t>>(t56) + to_v<vec<std::int64_t>>(t57);
                                #pragma GCC unroll 4
                                for (std::int32_t r68 = 0; r68 < t51; ++r68) {
                                    const std::int64_t t59 = r68 * 16;
                                    const std::int64_t t60 = t56 + v3;
                                    const std::int64_t t61 = t60 + t59;
                                    const vec<std::uint8_t> t62 = load_v(b0 + t61);
                                    const vec<std::int32_t> t63 = to_v<vec<std::int32_t>>(t62);
                                    t50 = rmax_v(t50, to_v<vec<std::int32_t>>(t63));
                                }
                                t49 = rmax_v(t49, to_v<vec<std::int32_t>>(t50));
                            }
                            const std::int32_t t64 = v1 * 16;
                            const std::int64_t t65 = v0 * 48;
                            const std::int64_t t66 = p8 * -48;
                            const std::int64_t t67 = t66 + t65;
                            const std::int64_t t68 = t67 + t64;
                            const std::int64_t t69 = t68 + v3;
                            store_v(b6 + t69, to_v<vec<std::int32_t>>(t49));
                        }
                    } else {
                        for (; v3 < 16; ++v3) {
                            const std::int32_t t70 = v1 * 16;
                            const std::int64_t t71 = v0 * 48;
                            const std::int64_t t72 = p8 * -48;
                            const std::int64_t t73 = t72 + t71;
                            const std::int64_t t74 = t73 + t70;
                            const std::int64_t t75 = t74 + v3;
                            std::int32_t t76 = -2147483648;
                            #pragma GCC unroll 4
                            for (std::int32_t r66 = 0; r66 < p1; ++r66) {
                                std::int32_t t77 = -2147483648;
                                const std::int64_t t78 = p2 / 16;
                                const std::int64_t t79 = v1 * p4;
                                const std::int64_t t80 = v0 * p3;
                                const std::int64_t t81 = r66 * p5;
                                const std::int64_t t82 = t81 + t80;
                                const std::int64_t t83 = t82 + t79;
                                const std::int64_t t84 = t83 + v3;
                                #pragma GCC unroll 4
                                for (std::int32_t r68 = 0; r68 < t78; ++r68) {
                                    const std::int64_t t85 = r68 * 16;
                                    const std::int64_t t86 = t84 + t85;
                                    const std::uint8_t t87 = b0[t86];
                                    const std::int32_t t88 = static_cast<std::int32_t>(t87);
                                    t77 = t_rmax(t77, t88);
                                }
                                t76 = t_rmax(t76, t77);
                            }
                            b6[t75] = t76;
                        }
                    }
                }
            }
            if (v2 == static_cast<std::int32_t>(0 + rn2)) { v2 = static_cast<std::int32_t>(0); if (++v1 == static_cast<std::int32_t>(0 + rn1)) { v1 = static_cast<std::int32_t>(0); ++v0; } }
        }
    };
    const int team = threads;
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

namespace t_lanes16 {
// kernel_2
//   computes op0.top (op 0 (equalize))
//   realize: requested by its decomposition
//   rfactor: combines the 16 lanes of op0.top.lanes and the row ends
//   bounds: computes only the region of v0 its consumers read
//   layout: contiguous
//   loop order: v0, v1, v2, v3 (memory order of the output)
//   vector axis v3 (16 lanes, 4-byte elements): interleaved, a tap loop per output
//   loads along v3: b0 uniform, b6 uniform
//   4 vectors a step along v3: their tap loops run as one, each tap's weight and address loaded once
//   parallel over v0 x v1 x v2 (collapsed, shared by the threads)
static void kernel_2(void* const* buffers, const std::int64_t* params, int threads) {
    (void)threads;
    (void)params;
    const std::uint8_t* __restrict b0 = static_cast<const std::uint8_t*>(buffers[0]);  // input
    std::int32_t* __restrict b2 = static_cast<std::int32_t*>(buffers[2]);  // op0.top
    const std::int32_t* __restrict b6 = static_cast<const std::int32_t*>(buffers[6]);  // op0.top.lanes
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
    const std::int64_t p8 = static_cast<std::int64_t>(params[8]);  // op0.top.lanes.region_origin0
    (void)p8;
    const std::int64_t p10 = static_cast<std::int64_t>(params[10]);  // op0.top.region_origin0
    (void)p10;
    const std::int64_t p11 = static_cast<std::int64_t>(params[11]);  // op0.top.region_extent0
    (void)p11;
    const std::int64_t t0 = p10 + p11;
    const std::int64_t n0 = std::int64_t(t0) > std::int64_t(p10) ? std::int64_t(t0) - std::int64_t(p10) : 0;
    const std::int64_t n1 = std::int64_t(3) > std::int64_t(0) ? std::int64_t(3) - std::int64_t(0) : 0;
    const std::int64_t n2 = std::int64_t(1) > std::int64_t(0) ? std::int64_t(1) - std::int64_t(0) : 0;
    const std::int64_t total = n0 * n1 * n2;
    const auto rows = [&](std::int64_t lo, std::int64_t hi) __attribute__((noinline)) {
        const std::uint8_t* __restrict b0 = static_cast<const std::uint8_t*>(buffers[0]);  // input
        std::int32_t* __restrict b2 = static_cast<std::int32_t*>(buffers[2]);  // op0.top
        const std::int32_t* __restrict b6 = static_cast<const std::int32_t*>(buffers[6]);  // op0.top.lanes
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
        const std::int64_t p8 = static_cast<std::int64_t>(params[8]);  // op0.top.lanes.region_origin0
        (void)p8;
        const std::int64_t p10 = static_cast<std::int64_t>(params[10]);  // op0.top.region_origin0
        (void)p10;
        const std::int64_t rn1 = n1;
        const std::int64_t rn2 = n2;
        std::int64_t rest = lo;
        std::int32_t v2 = static_cast<std::int32_t>(0 + rest % rn2);
        rest /= rn2;
        std::int32_t v1 = static_cast<std::int32_t>(0 + rest % rn1);
        rest /= rn1;
        std::int64_t v0 = static_cast<std::int64_t>(p10 + rest);
        for (std::int64_t it = lo; it < hi;) {
            const std::int64_t run = std::int64_t(0) + rn2 - v2 < hi - it ? std::int64_t(0) + rn2 - v2 : hi - it;
            it += run;
            for (const std::int32_t runEnd = static_cast<std::int32_t>(v2 + run); v2 < runEnd; ++v2) {
                {
                    std::int64_t v3 = 0;
                    for (; v3 + 4 * kLanes <= 1; v3 += 4 * kLanes) {
                        std::int32_t t1 = -2147483648;
                        std::int32_t t2 = -2147483648;
                        const std::int32_t t3 = v1 * 16;
                        const std::int64_t t4 = v0 * 48;
                        const std::int64_t t5 = p8 * -48;
                        const std::int64_t t6 = t5 + t4;
                        const std::int64_t t7 = t6 + t3;
                        #pragma GCC unroll 4
                        for (std::int32_t r70 = 0; r70 < 16; ++r70) {
                            const std::int64_t t8 = t7 + r70;
                            const std::int32_t t9 = b6[t8];
                            t2 = t_rmax(t2, t9);
                        }
                        t1 = t_rmax(t1, t2);
                        std::int32_t t10 = -2147483648;
                        #pragma GCC unroll 4
                        for (std::int32_t r66 = 0; r66 < p1; ++r66) {
                            std::int32_t t11 = -2147483648;
                            const std::int32_t t12 = p2 % 16;
                            const std::int64_t t13 = p2 / 16;
                            const std::int64_t t14 = t13 * 16;
                            const std::int64_t t15 = v1 * p4;
                            const std::int64_t t16 = v0 * p3;
                            const std::int64_t t17 = r66 * p5;
                            const std::int64_t t18 = t17 + t16;
                            const std::int64_t t19 = t18 + t15;
                            const std::int64_t t20 = t19 + t14;
                            #pragma GCC unroll 4
                            for (std::int32_t r68 = 0; r68 < t12; ++r68) {
                                const std::int64_t t21 = t20 + r68;
                                const std::uint8_t t22 = b0[t21];
                                const std::int32_t t23 = static_cast<std::int32_t>(t22);
                                t11 = t_rmax(t11, t23);
                            }
                            t10 = t_rmax(t10, t11);
                        }
                        t1 = t_rmax(t1, t10);
                        const std::int64_t t24 = v0 * 3;
                        const std::int64_t t25 = p10 * -3;
                        const std::int64_t t26 = t25 + t24;
                        const std::int64_t t27 = t26 + v1;
                        scatter_stride_v(b2 + t27, 0, to_v<vec<std::int32_t>>(t1));
                        scatter_stride_v(b2 + t27, 0, to_v<vec<std::int32_t>>(t1));
                        scatter_stride_v(b2 + t27, 0, to_v<vec<std::int32_t>>(t1));
                        scatter_stride_v(b2 + t27, 0, to_v<vec<std::int32_t>>(t1));
                    }
                    if (1 - (0) >= kLanes) {
                        for (std::int64_t blk3 = 0; v3 < 1; v3 += kLanes, ++blk3) {
                            if (v3 + kLanes > 1) v3 = 1 - kLanes;
                            std::int32_t t28 = -2147483648;
                            std::int32_t t29 = -2147483648;
                            const std::int32_t t30 = v1 * 16;
                            const std::int64_t t31 = v0 * 48;
                            const std::int64_t t32 = p8 * -48;
                            const std::int64_t t33 = t32 + t31;
                            const std::int64_t t34 = t33 + t30;
                            #pragma GCC unroll 4
                            for (std::int32_t r70 = 0; r70 < 16; ++r70) {
                                const std::int64_t t35 = t34 + r70;
                                const std::int32_t t36 = b6[t35];
                                t29 = t_rmax(t29, t36);
                            }
                            t28 = t_rmax(t28, t29);
                            std::int32_t t37 = -2147483648;
                            #pragma GCC unroll 4
                            for (std::int32_t r66 = 0; r66 < p1; ++r66) {
                                std::int32_t t38 = -2147483648;
                                const std::int32_t t39 = p2 % 16;
                                const std::int64_t t40 = p2 / 16;
                                const std::int64_t t41 = t40 * 16;
                                const std::int64_t t42 = v1 * p4;
                                const std::int64_t t43 = v0 * p3;
                                const std::int64_t t44 = r66 * p5;
                                const std::int64_t t45 = t44 + t43;
                                const std::int64_t t46 = t45 + t42;
                                const std::int64_t t47 = t46 + t41;
                                #pragma GCC unroll 4
                                for (std::int32_t r68 = 0; r68 < t39; ++r68) {
                                    const std::int64_t t48 = t47 + r68;
                                    const std::uint8_t t49 = b0[t48];
                                    const std::int32_t t50 = static_cast<std::int32_t>(t49);
                                    t38 = t_rmax(t38, t50);
                                }
                                t37 = t_rmax(t37, t38);
                            }
                            t28 = t_rmax(t28, t37);
                            const std::int64_t t51 = v0 * 3;
                            const std::int64_t t52 = p10 * -3;
                            const std::int64_t t53 = t52 + t51;
                            const std::int64_t t54 = t53 + v1;
                            scatter_stride_v(b2 + t54, 0, to_v<vec<std::int32_t>>(t28));
                        }
                    } else {
                        for (; v3 < 1; ++v3) {
                            const std::int64_t t55 = v0 * 3;
                            const std::int64_t t56 = p10 * -3;
                            const std::int64_t t57 = t56 + t55;
                            const std::int64_t t58 = t57 + v1;
                            std::int32_t t59 = -2147483648;
                            std::int32_t t60 = -2147483648;
                            const std::int32_t t61 = v1 * 16;
                            const std::int64_t t62 = v0 * 48;
                            const std::int64_t t63 = p8 * -48;
                            const std::int64_t t64 = t63 + t62;
                            const std::int64_t t65 = t64 + t61;
                            #pragma GCC unroll 4
                            for (std::int32_t r70 = 0; r70 < 16; ++r70) {
                                const std::int64_t t66 = t65 + r70;
                                const std::int32_t t67 = b6[t66];
                                t60 = t_rmax(t60, t67);
                            }
                            t59 = t_rmax(t59, t60);
                            std::int32_t t68 = -2147483648;
                            #pragma GCC unroll 4
                            for (std::int32_t r66 = 0; r66 < p1; ++r66) {
                                std::int32_t t69 = -2147483648;
                                const std::int32_t t70 = p2 % 16;
                                const std::int64_t t71 = p2 / 16;
                                const std::int64_t t72 = t71 * 16;
                                const std::int64_t t73 = v1 * p4;
                                const std::int64_t t74 = v0 * p3;
                                const std::int64_t t75 = r66 * p5;
                                const std::int64_t t76 = t75 + t74;
                                const std::int64_t t77 = t76 + t73;
                                const std::int64_t t78 = t77 + t72;
                                #pragma GCC unroll 4
                                for (std::int32_t r68 = 0; r68 < t70; ++r68) {
                                    const std::int64_t t79 = t78 + r68;
                                    const std::uint8_t t80 = b0[t79];
                                    const std::int32_t t81 = static_cast<std::int32_t>(t80);
                                    t69 = t_rmax(t69, t81);
                                }
                                t68 = t_rmax(t68, t69);
                            }
                            t59 = t_rmax(t59, t68);
                            b2[t58] = t59;
                        }
                    }
                }
            }
            if (v2 == static_cast<std::int32_t>(0 + rn2)) { v2 = static_cast<std::int32_t>(0); if (++v1 == static_cast<std::int32_t>(0 + rn1)) { v1 = static_cast<std::int32_t>(0); ++v0; } }
        }
    };
    const int team = threads;
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

namespace t_lanes16 {
// kernel_3
//   computes op0.cum (op 0 (equalize))
//   realize: requested by its decomposition
//   bounds: computes only the region of v0 its consumers read
//   layout: contiguous
//   loop order: v0, v1, v2, v3 (memory order of the output)
//   vector axis v3 (16 lanes, 4-byte elements): interleaved, a tap loop per output
//   loads along v3: b1 uniform
//   4 vectors a step along v3: their tap loops run as one, each tap's weight and address loaded once
//   parallel over v0 x v1 x v2 (collapsed, shared by the threads)
static void kernel_3(void* const* buffers, const std::int64_t* params, int threads) {
    (void)threads;
    (void)params;
    const std::int32_t* __restrict b1 = static_cast<const std::int32_t*>(buffers[1]);  // op0.hist
    std::int32_t* __restrict b3 = static_cast<std::int32_t*>(buffers[3]);  // op0.cum
    const std::int64_t p6 = static_cast<std::int64_t>(params[6]);  // op0.hist.region_origin0
    (void)p6;
    const std::int64_t p12 = static_cast<std::int64_t>(params[12]);  // op0.cum.region_origin0
    (void)p12;
    const std::int64_t p13 = static_cast<std::int64_t>(params[13]);  // op0.cum.region_extent0
    (void)p13;
    const std::int64_t t0 = p12 + p13;
    const std::int64_t n0 = std::int64_t(t0) > std::int64_t(p12) ? std::int64_t(t0) - std::int64_t(p12) : 0;
    const std::int64_t n1 = std::int64_t(3) > std::int64_t(0) ? std::int64_t(3) - std::int64_t(0) : 0;
    const std::int64_t n2 = std::int64_t(256) > std::int64_t(0) ? std::int64_t(256) - std::int64_t(0) : 0;
    const std::int64_t total = n0 * n1 * n2;
    const auto rows = [&](std::int64_t lo, std::int64_t hi) __attribute__((noinline)) {
        const std::int32_t* __restrict b1 = static_cast<const std::int32_t*>(buffers[1]);  // op0.hist
        std::int32_t* __restrict b3 = static_cast<std::int32_t*>(buffers[3]);  // op0.cum
        const std::int64_t p6 = static_cast<std::int64_t>(params[6]);  // op0.hist.region_origin0
        (void)p6;
        const std::int64_t p12 = static_cast<std::int64_t>(params[12]);  // op0.cum.region_origin0
        (void)p12;
        const std::int64_t rn1 = n1;
        const std::int64_t rn2 = n2;
        std::int64_t rest = lo;
        std::int32_t v2 = static_cast<std::int32_t>(0 + rest % rn2);
        rest /= rn2;
        std::int32_t v1 = static_cast<std::int32_t>(0 + rest % rn1);
        rest /= rn1;
        std::int64_t v0 = static_cast<std::int64_t>(p12 + rest);
        for (std::int64_t it = lo; it < hi;) {
            const std::int64_t run = std::int64_t(0) + rn2 - v2 < hi - it ? std::int64_t(0) + rn2 - v2 : hi - it;
            it += run;
            for (const std::int32_t runEnd = static_cast<std::int32_t>(v2 + run); v2 < runEnd; ++v2) {
                {
                    std::int64_t v3 = 0;
                    for (; v3 + 4 * kLanes <= 1; v3 += 4 * kLanes) {
                        std::int32_t t1 = 0;
                        std::int32_t t2 = 0;
                        std::int32_t t3 = 0;
                        std::int32_t t4 = 0;
                        const std::int32_t t5 = v1 * 256;
                        const std::int64_t t6 = v0 * 768;
                        const std::int64_t t7 = p6 * -768;
                        const std::int64_t t8 = t7 + t6;
                        const std::int64_t t9 = t8 + t5;
                        #pragma GCC unroll 4
                        for (std::int32_t r68 = 0; r68 < 256; ++r68) {
                            const std::int64_t t10 = t9 + r68;
                            const std::int32_t t11 = b1[t10];
                            const bool t12 = r68 <= v2;
                            const std::int32_t t13 = t12 ? t11 : 0;
                            t1 += t13;
                            t2 += t13;
                            t3 += t13;
                            t4 += t13;
                        }
                        const std::int64_t t14 = p12 * -768;
                        const std::int64_t t15 = t14 + t6;
                        const std::int64_t t16 = t15 + t5;
                        const std::int64_t t17 = t16 + v2;
                        scatter_stride_v(b3 + t17, 0, to_v<vec<std::int32_t>>(t4));
                        scatter_stride_v(b3 + t17, 0, to_v<vec<std::int32_t>>(t4));
                        scatter_stride_v(b3 + t17, 0, to_v<vec<std::int32_t>>(t4));
                        scatter_stride_v(b3 + t17, 0, to_v<vec<std::int32_t>>(t4));
                    }
                    if (1 - (0) >= kLanes) {
                        for (std::int64_t blk3 = 0; v3 < 1; v3 += kLanes, ++blk3) {
                            if (v3 + kLanes > 1) v3 = 1 - kLanes;
                            std::int32_t t18 = 0;
                            const std::int32_t t19 = v1 * 256;
                            const std::int64_t t20 = v0 * 768;
                            const std::int64_t t21 = p6 * -768;
                            const std::int64_t t22 = t21 + t20;
                            const std::int64_t t23 = t22 + t19;
                            #pragma GCC unroll 4
                            for (std::int32_t r68 = 0; r68 < 256; ++r68) {
                                const std::int64_t t24 = t23 + r68;
                                const std::int32_t t25 = b1[t24];
                                const bool t26 = r68 <= v2;
                                const std::int32_t t27 = t26 ? t25 : 0;
                                t18 += t27;
                            }
                            const std::int64_t t28 = p12 * -768;
                            const std::int64_t t29 = t28 + t20;
                            const std::int64_t t30 = t29 + t19;
                            const std::int64_t t31 = t30 + v2;
                            scatter_stride_v(b3 + t31, 0, to_v<vec<std::int32_t>>(t18));
                        }
                    } else {
                        for (; v3 < 1; ++v3) {
                            const std::int32_t t32 = v1 * 256;
                            const std::int64_t t33 = v0 * 768;
                            const std::int64_t t34 = p12 * -768;
                            const std::int64_t t35 = t34 + t33;
                            const std::int64_t t36 = t35 + t32;
                            const std::int64_t t37 = t36 + v2;
                            std::int32_t t38 = 0;
                            const std::int64_t t39 = p6 * -768;
                            const std::int64_t t40 = t39 + t33;
                            const std::int64_t t41 = t40 + t32;
                            #pragma GCC unroll 4
                            for (std::int32_t r68 = 0; r68 < 256; ++r68) {
                                const std::int64_t t42 = t41 + r68;
                                const std::int32_t t43 = b1[t42];
                                const bool t44 = r68 <= v2;
                                const std::int32_t t45 = t44 ? t43 : 0;
                                t38 += t45;
                            }
                            b3[t37] = t38;
                        }
                    }
                }
            }
            if (v2 == static_cast<std::int32_t>(0 + rn2)) { v2 = static_cast<std::int32_t>(0); if (++v1 == static_cast<std::int32_t>(0 + rn1)) { v1 = static_cast<std::int32_t>(0); ++v0; } }
        }
    };
    const int team = threads;
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

namespace t_lanes16 {
// kernel_4
//   computes op0.equalize.table: op0.equalize's value for each of the 256 bytes it reads (per plane)
//   bounds: computes only the region of v0 its consumers read
//   layout: contiguous
//   loop order: v0, v1, v2, v3 (memory order of the output)
//   vector axis v3 (16 lanes, 8-byte elements): stride 1 in the output
//   loads along v3: b1 uniform, b2 uniform, b3 window
//   parallel over v0 x v1 x v2 (collapsed, shared by the threads)
static void kernel_4(void* const* buffers, const std::int64_t* params, int threads) {
    (void)threads;
    (void)params;
    const std::int32_t* __restrict b1 = static_cast<const std::int32_t*>(buffers[1]);  // op0.hist
    const std::int32_t* __restrict b2 = static_cast<const std::int32_t*>(buffers[2]);  // op0.top
    const std::int32_t* __restrict b3 = static_cast<const std::int32_t*>(buffers[3]);  // op0.cum
    std::uint8_t* __restrict b5 = static_cast<std::uint8_t*>(buffers[5]);  // op0.equalize.table
    const std::int64_t p1 = static_cast<std::int64_t>(params[1]);  // input.h
    (void)p1;
    const std::int64_t p2 = static_cast<std::int64_t>(params[2]);  // input.w
    (void)p2;
    const std::int64_t p6 = static_cast<std::int64_t>(params[6]);  // op0.hist.region_origin0
    (void)p6;
    const std::int64_t p10 = static_cast<std::int64_t>(params[10]);  // op0.top.region_origin0
    (void)p10;
    const std::int64_t p12 = static_cast<std::int64_t>(params[12]);  // op0.cum.region_origin0
    (void)p12;
    const std::int64_t p14 = static_cast<std::int64_t>(params[14]);  // op0.equalize.table.region_origin0
    (void)p14;
    const std::int64_t p15 = static_cast<std::int64_t>(params[15]);  // op0.equalize.table.region_extent0
    (void)p15;
    const std::int64_t t0 = p14 + p15;
    const std::int64_t n0 = std::int64_t(t0) > std::int64_t(p14) ? std::int64_t(t0) - std::int64_t(p14) : 0;
    const std::int64_t n1 = std::int64_t(3) > std::int64_t(0) ? std::int64_t(3) - std::int64_t(0) : 0;
    const std::int64_t n2 = std::int64_t(1) > std::int64_t(0) ? std::int64_t(1) - std::int64_t(0) : 0;
    const std::int64_t total = n0 * n1 * n2;
    const auto rows = [&](std::int64_t lo, std::int64_t hi) __attribute__((noinline)) {
        const std::int32_t* __restrict b1 = static_cast<const std::int32_t*>(buffers[1]);  // op0.hist
        const std::int32_t* __restrict b2 = static_cast<const std::int32_t*>(buffers[2]);  // op0.top
        const std::int32_t* __restrict b3 = static_cast<const std::int32_t*>(buffers[3]);  // op0.cum
        std::uint8_t* __restrict b5 = static_cast<std::uint8_t*>(buffers[5]);  // op0.equalize.table
        const std::int64_t p1 = static_cast<std::int64_t>(params[1]);  // input.h
        (void)p1;
        const std::int64_t p2 = static_cast<std::int64_t>(params[2]);  // input.w
        (void)p2;
        const std::int64_t p6 = static_cast<std::int64_t>(params[6]);  // op0.hist.region_origin0
        (void)p6;
        const std::int64_t p10 = static_cast<std::int64_t>(params[10]);  // op0.top.region_origin0
        (void)p10;
        const std::int64_t p12 = static_cast<std::int64_t>(params[12]);  // op0.cum.region_origin0
        (void)p12;
        const std::int64_t p14 = static_cast<std::int64_t>(params[14]);  // op0.equalize.table.region_origin0
        (void)p14;
        const std::int64_t rn1 = n1;
        const std::int64_t rn2 = n2;
        const window_table<4> wt1((256 - 0) / kLanes + 1);
        for (std::int64_t v3 = 0; v3 + kLanes <= 256; v3 += kLanes) {
            const std::int64_t blk3 = (v3 - 0) / kLanes;
            (void)blk3;
            const vec<std::int32_t> t2 = iota_v<vec<std::int32_t>>(v3);
            const vec<std::uint8_t> t3 = to_v<vec<std::uint8_t>>(t2);
            const vec<std::int32_t> t4 = to_v<vec<std::int32_t>>(t3);
            const vec<std::int32_t> t5 = to_v<vec<std::int32_t>>(t4) - to_v<vec<std::int32_t>>(1);
            const vec<std::int32_t> t6 = max_v(to_v<vec<std::int32_t>>(t5), to_v<vec<std::int32_t>>(0));
            const vec<std::int32_t> t7 = to_v<vec<std::int32_t>>(t6);
            wt1[blk3] = make_window<4>(t7);
        }
        if (256 - (0) >= kLanes) { const std::int64_t v3 = 256 - kLanes;
            const std::int64_t blk3 = (256 - 0) / kLanes;
            (void)blk3;
            const vec<std::int32_t> t8 = iota_v<vec<std::int32_t>>(v3);
            const vec<std::uint8_t> t9 = to_v<vec<std::uint8_t>>(t8);
            const vec<std::int32_t> t10 = to_v<vec<std::int32_t>>(t9);
            const vec<std::int32_t> t11 = to_v<vec<std::int32_t>>(t10) - to_v<vec<std::int32_t>>(1);
            const vec<std::int32_t> t12 = max_v(to_v<vec<std::int32_t>>(t11), to_v<vec<std::int32_t>>(0));
            const vec<std::int32_t> t13 = to_v<vec<std::int32_t>>(t12);
            wt1[blk3] = make_window<4>(t13);
        }
        std::int64_t rest = lo;
        std::int32_t v2 = static_cast<std::int32_t>(0 + rest % rn2);
        rest /= rn2;
        std::int32_t v1 = static_cast<std::int32_t>(0 + rest % rn1);
        rest /= rn1;
        std::int64_t v0 = static_cast<std::int64_t>(p14 + rest);
        for (std::int64_t it = lo; it < hi;) {
            const std::int64_t run = std::int64_t(0) + rn2 - v2 < hi - it ? std::int64_t(0) + rn2 - v2 : hi - it;
            it += run;
            for (const std::int32_t runEnd = static_cast<std::int32_t>(v2 + run); v2 < runEnd; ++v2) {
                {
                    std::int64_t v3 = 0;
                    if (256 - (0) >= kLanes) {
                        std::int64_t blk3 = 0;
                        #pragma GCC unroll 8
                        for (; v3 < 256 - kLanes; v3 += kLanes, ++blk3) {
                            const std::int32_t t14 = v1 * 256;
                            const std::int64_t t15 = v0 * 768;
                            const std::int64_t t16 = v0 * 3;
                            const std::int64_t t17 = p10 * -3;
                            const std::int64_t t18 = t17 + t16;
                            const std::int64_t t19 = t18 + v1;
                            const std::int32_t t20 = b2[t19];
                            const std::int32_t t21 = t_max<std::int32_t>(t20, 0);
                            const std::int32_t t22 = t_min<std::int32_t>(t21, 255);
                            const std::int32_t t23 = static_cast<std::int32_t>(t22);
                            const std::int64_t t24 = p6 * -768;
                            const std::int64_t t25 = t24 + t23;
                            const std::int64_t t26 = t25 + t15;
                            const std::int64_t t27 = t26 + t14;
                            const std::int32_t t28 = b1[t27];
                            const std::int64_t t29 = p1 * p2;
                            const std::int32_t t30 = static_cast<std::int32_t>(t29);
                            const std::int32_t t31 = t30 - t28;
                            const std::int32_t t32 = t_floordiv<std::int64_t>(t31, 255);
                            const bool t33 = t32 != 0;
                            const vec<std::int32_t> t34 = iota_v<vec<std::int32_t>>(v3);
                            const vec<std::uint8_t> t35 = to_v<vec<std::uint8_t>>(t34);
                            const vec<std::int32_t> t36 = to_v<vec<std::int32_t>>(t35);
                            const vec<std::int32_t> t37 = to_v<vec<std::int32_t>>(t36) == to_v<vec<std::int32_t>>(0);
                            const lane_window<4>& t38 = wt1[blk3];
                            const std::int64_t t39 = p12 * -768;
                            const std::int64_t t40 = t39 + t15;
                            const std::int64_t t41 = t40 + t14;
                            const vec<std::int32_t> t42 = gather_window_any(b3 + t41 + t38.first, t38);
                            const std::int32_t t43 = t_floordiv<std::int64_t>(t32, 2);
                            const vec<std::int32_t> t44 = to_v<vec<std::int32_t>>(t42) + to_v<vec<std::int32_t>>(t43);
                            const std::int32_t t45 = t_max<std::int32_t>(t32, 1);
                            const vec<std::int32_t> t46 = lanewise_floordiv(to_v<vec<std::int32_t>>(t44), to_v<vec<std::int32_t>>(t45));
                            const vec<std::int32_t> t47 = max_v(to_v<vec<std::int32_t>>(t46), to_v<vec<std::int32_t>>(0));
                            const vec<std::int32_t> t48 = min_v(to_v<vec<std::int32_t>>(t47), to_v<vec<std::int32_t>>(255));
                            const vec<std::int32_t> t49 = to_v<vec<std::int32_t>>(t37) ? to_v<vec<std::int32_t>>(0) : to_v<vec<std::int32_t>>(t48);
                            const vec<std::int32_t> t50 = t33 ? to_v<vec<std::int32_t>>(t49) : to_v<vec<std::int32_t>>(t36);
                            const vec<std::uint8_t> t51 = to_v<vec<std::uint8_t>>(t50);
                            const std::int64_t t52 = p14 * -768;
                            const std::int64_t t53 = t52 + t15;
                            const std::int64_t t54 = t53 + t14;
                            const std::int64_t t55 = t54 + v3;
                            store_v(b5 + t55, to_v<vec<std::uint8_t>>(t51));
                        }
                        v3 = 256 - kLanes;
                        (void)blk3;
                        {
                            const std::int32_t t56 = v1 * 256;
                            const std::int64_t t57 = v0 * 768;
                            const std::int64_t t58 = v0 * 3;
                            const std::int64_t t59 = p10 * -3;
                            const std::int64_t t60 = t59 + t58;
                            const std::int64_t t61 = t60 + v1;
                            const std::int32_t t62 = b2[t61];
                            const std::int32_t t63 = t_max<std::int32_t>(t62, 0);
                            const std::int32_t t64 = t_min<std::int32_t>(t63, 255);
                            const std::int32_t t65 = static_cast<std::int32_t>(t64);
                            const std::int64_t t66 = p6 * -768;
                            const std::int64_t t67 = t66 + t65;
                            const std::int64_t t68 = t67 + t57;
                            const std::int64_t t69 = t68 + t56;
                            const std::int32_t t70 = b1[t69];
                            const std::int64_t t71 = p1 * p2;
                            const std::int32_t t72 = static_cast<std::int32_t>(t71);
                            const std::int32_t t73 = t72 - t70;
                            const std::int32_t t74 = t_floordiv<std::int64_t>(t73, 255);
                            const bool t75 = t74 != 0;
                            const vec<std::int32_t> t76 = iota_v<vec<std::int32_t>>(v3);
                            const vec<std::uint8_t> t77 = to_v<vec<std::uint8_t>>(t76);
                            const vec<std::int32_t> t78 = to_v<vec<std::int32_t>>(t77);
                            const vec<std::int32_t> t79 = to_v<vec<std::int32_t>>(t78) == to_v<vec<std::int32_t>>(0);
                            const lane_window<4>& t80 = wt1[blk3];
                            const std::int64_t t81 = p12 * -768;
                            const std::int64_t t82 = t81 + t57;
                            const std::int64_t t83 = t82 + t56;
                            const vec<std::int32_t> t84 = gather_window_any(b3 + t83 + t80.first, t80);
                            const std::int32_t t85 = t_floordiv<std::int64_t>(t74, 2);
                            const vec<std::int32_t> t86 = to_v<vec<std::int32_t>>(t84) + to_v<vec<std::int32_t>>(t85);
                            const std::int32_t t87 = t_max<std::int32_t>(t74, 1);
                            const vec<std::int32_t> t88 = lanewise_floordiv(to_v<vec<std::int32_t>>(t86), to_v<vec<std::int32_t>>(t87));
                            const vec<std::int32_t> t89 = max_v(to_v<vec<std::int32_t>>(t88), to_v<vec<std::int32_t>>(0));
                            const vec<std::int32_t> t90 = min_v(to_v<vec<std::int32_t>>(t89), to_v<vec<std::int32_t>>(255));
                            const vec<std::int32_t> t91 = to_v<vec<std::int32_t>>(t79) ? to_v<vec<std::int32_t>>(0) : to_v<vec<std::int32_t>>(t90);
                            const vec<std::int32_t> t92 = t75 ? to_v<vec<std::int32_t>>(t91) : to_v<vec<std::int32_t>>(t78);
                            const vec<std::uint8_t> t93 = to_v<vec<std::uint8_t>>(t92);
                            const std::int64_t t94 = p14 * -768;
                            const std::int64_t t95 = t94 + t57;
                            const std::int64_t t96 = t95 + t56;
                            const std::int64_t t97 = t96 + v3;
                            store_v(b5 + t97, to_v<vec<std::uint8_t>>(t93));
                        }
                    } else {
                        for (; v3 < 256; ++v3) {
                            const std::int32_t t98 = v1 * 256;
                            const std::int64_t t99 = v0 * 768;
                            const std::int64_t t100 = p14 * -768;
                            const std::int64_t t101 = t100 + t99;
                            const std::int64_t t102 = t101 + t98;
                            const std::int64_t t103 = t102 + v3;
                            const std::uint8_t t104 = static_cast<std::uint8_t>(v3);
                            const std::int32_t t105 = static_cast<std::int32_t>(t104);
                            const std::int64_t t106 = v0 * 3;
                            const std::int64_t t107 = p10 * -3;
                            const std::int64_t t108 = t107 + t106;
                            const std::int64_t t109 = t108 + v1;
                            const std::int32_t t110 = b2[t109];
                            const std::int32_t t111 = t_max<std::int32_t>(t110, 0);
                            const std::int32_t t112 = t_min<std::int32_t>(t111, 255);
                            const std::int32_t t113 = static_cast<std::int32_t>(t112);
                            const std::int64_t t114 = p6 * -768;
                            const std::int64_t t115 = t114 + t113;
                            const std::int64_t t116 = t115 + t99;
                            const std::int64_t t117 = t116 + t98;
                            const std::int32_t t118 = b1[t117];
                            const std::int64_t t119 = p1 * p2;
                            const std::int32_t t120 = static_cast<std::int32_t>(t119);
                            const std::int32_t t121 = t120 - t118;
                            const std::int32_t t122 = t_floordiv<std::int64_t>(t121, 255);
                            const std::int32_t t123 = t_max<std::int32_t>(t122, 1);
                            const std::int32_t t124 = t_floordiv<std::int64_t>(t122, 2);
                            const std::int32_t t125 = t105 - 1;
                            const std::int32_t t126 = t_max<std::int32_t>(t125, 0);
                            const std::int32_t t127 = static_cast<std::int32_t>(t126);
                            const std::int64_t t128 = p12 * -768;
                            const std::int64_t t129 = t128 + t127;
                            const std::int64_t t130 = t129 + t99;
                            const std::int64_t t131 = t130 + t98;
                            const std::int32_t t132 = b3[t131];
                            const std::int32_t t133 = t132 + t124;
                            const std::int32_t t134 = t_floordiv<std::int64_t>(t133, t123);
                            const std::int32_t t135 = t_max<std::int32_t>(t134, 0);
                            const std::int32_t t136 = t_min<std::int32_t>(t135, 255);
                            const bool t137 = t105 == 0;
                            const std::int32_t t138 = t137 ? 0 : t136;
                            const bool t139 = t122 != 0;
                            const std::int32_t t140 = t139 ? t138 : t105;
                            const std::uint8_t t141 = static_cast<std::uint8_t>(t140);
                            b5[t103] = t141;
                        }
                    }
                }
            }
            if (v2 == static_cast<std::int32_t>(0 + rn2)) { v2 = static_cast<std::int32_t>(0); if (++v1 == static_cast<std::int32_t>(0 + rn1)) { v1 = static_cast<std::int32_t>(0); ++v0; } }
        }
    };
    const std::int64_t grains = (total * std::int64_t(256)) / 32768;
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

namespace t_lanes64 {
// kernel_5
//   computes op0.equalize (op 0 (equalize))
//   realize: the pipeline's result
//   tabulate: a function of one byte it reads (cost 29 >= 1): reads op0.equalize.table
//   layout: contiguous
//   loop order: v0, v1, v2, v3 (memory order of the output)
//   vector axis v3 (64 lanes, its vectors hold bytes only): stride 1 in the output
//   loads along v3: b0 contiguous, b5 byte table
//   parallel over v0 x v1 x v2 (collapsed, shared by the threads)
static void kernel_5(void* const* buffers, const std::int64_t* params, int threads) {
    (void)threads;
    (void)params;
    const std::uint8_t* __restrict b0 = static_cast<const std::uint8_t*>(buffers[0]);  // input
    std::uint8_t* __restrict b4 = static_cast<std::uint8_t*>(buffers[4]);  // op0.equalize
    const std::uint8_t* __restrict b5 = static_cast<const std::uint8_t*>(buffers[5]);  // op0.equalize.table
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
    const std::int64_t p14 = static_cast<std::int64_t>(params[14]);  // op0.equalize.table.region_origin0
    (void)p14;
    const std::int64_t p16 = static_cast<std::int64_t>(params[16]);  // op0.equalize.stride2
    (void)p16;
    const std::int64_t p17 = static_cast<std::int64_t>(params[17]);  // op0.equalize.stride1
    (void)p17;
    const std::int64_t p18 = static_cast<std::int64_t>(params[18]);  // op0.equalize.stride0
    (void)p18;
    const std::int64_t n0 = std::int64_t(p0) > std::int64_t(0) ? std::int64_t(p0) - std::int64_t(0) : 0;
    const std::int64_t n1 = std::int64_t(3) > std::int64_t(0) ? std::int64_t(3) - std::int64_t(0) : 0;
    const std::int64_t n2 = std::int64_t(p1) > std::int64_t(0) ? std::int64_t(p1) - std::int64_t(0) : 0;
    const std::int64_t total = n0 * n1 * n2;
    const auto rows = [&](std::int64_t lo, std::int64_t hi) __attribute__((noinline)) {
        const std::uint8_t* __restrict b0 = static_cast<const std::uint8_t*>(buffers[0]);  // input
        std::uint8_t* __restrict b4 = static_cast<std::uint8_t*>(buffers[4]);  // op0.equalize
        const std::uint8_t* __restrict b5 = static_cast<const std::uint8_t*>(buffers[5]);  // op0.equalize.table
        const std::int64_t p2 = static_cast<std::int64_t>(params[2]);  // input.w
        (void)p2;
        const std::int64_t p3 = static_cast<std::int64_t>(params[3]);  // input.stride_n
        (void)p3;
        const std::int64_t p4 = static_cast<std::int64_t>(params[4]);  // input.stride_c
        (void)p4;
        const std::int64_t p5 = static_cast<std::int64_t>(params[5]);  // input.stride_h
        (void)p5;
        const std::int64_t p14 = static_cast<std::int64_t>(params[14]);  // op0.equalize.table.region_origin0
        (void)p14;
        const std::int64_t p16 = static_cast<std::int64_t>(params[16]);  // op0.equalize.stride2
        (void)p16;
        const std::int64_t p17 = static_cast<std::int64_t>(params[17]);  // op0.equalize.stride1
        (void)p17;
        const std::int64_t p18 = static_cast<std::int64_t>(params[18]);  // op0.equalize.stride0
        (void)p18;
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
                            const std::int64_t t3 = t2 + t1;
                            const std::int64_t t4 = t3 + t0;
                            const std::int64_t t5 = t4 + v3;
                            const vec<std::uint8_t> t6 = load_v(b0 + t5);
                            const std::int32_t t7 = v1 * 256;
                            const std::int64_t t8 = v0 * 768;
                            const std::int64_t t9 = p14 * -768;
                            const std::int64_t t10 = t9 + t8;
                            const std::int64_t t11 = t10 + t7;
                            const vec<std::uint8_t> t12 = lut256_v(b5 + t11, t6);
                            const std::int64_t t13 = v2 * p16;
                            const std::int64_t t14 = v0 * p18;
                            const std::int64_t t15 = v1 * p17;
                            const std::int64_t t16 = t15 + t14;
                            const std::int64_t t17 = t16 + t13;
                            const std::int64_t t18 = t17 + v3;
                            store_v(b4 + t18, to_v<vec<std::uint8_t>>(t12));
                        }
                        v3 = p2 - kLanes;
                        (void)blk3;
                        {
                            const std::int64_t t19 = v2 * p5;
                            const std::int64_t t20 = v1 * p4;
                            const std::int64_t t21 = v0 * p3;
                            const std::int64_t t22 = t21 + t20;
                            const std::int64_t t23 = t22 + t19;
                            const std::int64_t t24 = t23 + v3;
                            const vec<std::uint8_t> t25 = load_v(b0 + t24);
                            const std::int32_t t26 = v1 * 256;
                            const std::int64_t t27 = v0 * 768;
                            const std::int64_t t28 = p14 * -768;
                            const std::int64_t t29 = t28 + t27;
                            const std::int64_t t30 = t29 + t26;
                            const vec<std::uint8_t> t31 = lut256_v(b5 + t30, t25);
                            const std::int64_t t32 = v2 * p16;
                            const std::int64_t t33 = v0 * p18;
                            const std::int64_t t34 = v1 * p17;
                            const std::int64_t t35 = t34 + t33;
                            const std::int64_t t36 = t35 + t32;
                            const std::int64_t t37 = t36 + v3;
                            store_v(b4 + t37, to_v<vec<std::uint8_t>>(t31));
                        }
                    } else {
                        for (; v3 < p2; ++v3) {
                            const std::int64_t t38 = v2 * p16;
                            const std::int64_t t39 = v0 * p18;
                            const std::int64_t t40 = v1 * p17;
                            const std::int64_t t41 = t40 + t39;
                            const std::int64_t t42 = t41 + t38;
                            const std::int64_t t43 = t42 + v3;
                            const std::int32_t t44 = v1 * 256;
                            const std::int64_t t45 = v0 * 768;
                            const std::int64_t t46 = v2 * p5;
                            const std::int64_t t47 = v1 * p4;
                            const std::int64_t t48 = v0 * p3;
                            const std::int64_t t49 = t48 + t47;
                            const std::int64_t t50 = t49 + t46;
                            const std::int64_t t51 = t50 + v3;
                            const std::uint8_t t52 = b0[t51];
                            const std::int32_t t53 = static_cast<std::int32_t>(t52);
                            const std::int64_t t54 = p14 * -768;
                            const std::int64_t t55 = t54 + t53;
                            const std::int64_t t56 = t55 + t45;
                            const std::int64_t t57 = t56 + t44;
                            const std::uint8_t t58 = b5[t57];
                            b4[t43] = t58;
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
    t_lanes16::kernel_0(buffers, params, threads);
    t_lanes16::kernel_1(buffers, params, threads);
    t_lanes16::kernel_2(buffers, params, threads);
    t_lanes16::kernel_3(buffers, params, threads);
    t_lanes16::kernel_4(buffers, params, threads);
    t_lanes64::kernel_5(buffers, params, threads);
}
