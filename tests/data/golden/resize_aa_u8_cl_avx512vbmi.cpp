
// Buffers:
//   b0: input input uint8_t [p0, 3, p1, p2] strides [p3, 1, p4, 3] origin [0, 0, 0, 0]
//   b1: constant op0.horizontal_start int32_t [p5] strides [1] origin [0]
//   b2: constant op0.horizontal_weight_i16 int16_t [p6, p5] strides [p5, 1] origin [0, 0]
//   b3: temp op0.horizontal uint8_t [p14, 3, p16, p18] strides [p20, 1, p19, 3] origin [p13, 0, p15, p17]
//   b4: constant op0.vertical_start int32_t [p9] strides [1] origin [0]
//   b5: constant op0.vertical_weight_i16 int16_t [p9, p10] strides [p10, 1] origin [0, 0]
//   b6: output op0.vertical uint8_t [p0, 3, p9, p5] strides [p22, 1, p21, 3] origin [0, 0, 0, 0]

namespace t_lanes16 {
// kernel_0
//   computes op0.horizontal (op 0 (resize))
//   realize: requested by its decomposition
//   bounds: computes only the region of v0, v2, v3 its consumers read
//   layout: channels_last
//   loop order: v0, v2, v3, v1 (memory order of the output)
//   unroll v1: 3 iterations, innermost in memory
//   vector axis v3 (16 lanes, 16 pixels a permute): interleaved, a tap loop per output
//   loads along v3: b0 window, b1 contiguous, b2 contiguous
//   taps in lanes: where the taps of 16 outputs span more than 112 bytes at run time (or there are fewer than 16), each output pixel's 3 channels x 8 taps of r64 are one register of 16-bit pairs (a masked load, a byte permute, a multiply-add per 8 taps), 4 pixels summed across lanes at once, the weights laid out per pixel once per call; elsewhere the vector loop over v3
//   parallel over v0 x v2 (collapsed, shared by the threads)
static void kernel_0(void* const* buffers, const std::int64_t* params, int threads) {
    (void)threads;
    (void)params;
    const std::uint8_t* __restrict b0 = static_cast<const std::uint8_t*>(buffers[0]);  // input
    const std::int32_t* __restrict b1 = static_cast<const std::int32_t*>(buffers[1]);  // op0.horizontal_start
    const std::int16_t* __restrict b2 = static_cast<const std::int16_t*>(buffers[2]);  // op0.horizontal_weight_i16
    std::uint8_t* __restrict b3 = static_cast<std::uint8_t*>(buffers[3]);  // op0.horizontal
    const std::int64_t p3 = static_cast<std::int64_t>(params[3]);  // input.stride_n
    (void)p3;
    const std::int64_t p4 = static_cast<std::int64_t>(params[4]);  // input.stride_h
    (void)p4;
    const std::int64_t p5 = static_cast<std::int64_t>(params[5]);  // op0.out_w
    (void)p5;
    const std::int32_t p6 = static_cast<std::int32_t>(params[6]);  // op0.horizontal_taps
    (void)p6;
    const std::int32_t p7 = static_cast<std::int32_t>(params[7]);  // op0.horizontal_precision
    (void)p7;
    const std::int64_t p8 = static_cast<std::int64_t>(params[8]);  // op0.horizontal_half
    (void)p8;
    const std::int64_t p13 = static_cast<std::int64_t>(params[13]);  // op0.horizontal.region_origin0
    (void)p13;
    const std::int64_t p14 = static_cast<std::int64_t>(params[14]);  // op0.horizontal.region_extent0
    (void)p14;
    const std::int64_t p15 = static_cast<std::int64_t>(params[15]);  // op0.horizontal.region_origin2
    (void)p15;
    const std::int64_t p16 = static_cast<std::int64_t>(params[16]);  // op0.horizontal.region_extent2
    (void)p16;
    const std::int64_t p17 = static_cast<std::int64_t>(params[17]);  // op0.horizontal.region_origin3
    (void)p17;
    const std::int64_t p18 = static_cast<std::int64_t>(params[18]);  // op0.horizontal.region_extent3
    (void)p18;
    const std::int64_t p19 = static_cast<std::int64_t>(params[19]);  // op0.horizontal.stride2
    (void)p19;
    const std::int64_t p20 = static_cast<std::int64_t>(params[20]);  // op0.horizontal.stride0
    (void)p20;
    const std::int64_t t0 = p13 + p14;
    const std::int64_t t1 = p15 + p16;
    const std::int64_t t2 = p17 + p18;
    const std::int64_t tlX0 = p17;
    const std::int64_t tlN = std::int64_t(t2) > tlX0 ? std::int64_t(t2) - tlX0 : 0;
    const std::int32_t tlK = p6;
    const std::int32_t tlChunks = (tlK + 7) / 8;
    const std::size_t tlWeightBytes = static_cast<std::size_t>((tlN + 3) * tlChunks) * kTapLanesWeights * sizeof(std::int16_t);
    void* const tlMem = tlN > 0 && tlK > 0 ? __builtin_malloc(tlWeightBytes + static_cast<std::size_t>(tlN + 3) * sizeof(std::int64_t)) : nullptr;
    const struct TlFree { void* p; ~TlFree() { __builtin_free(p); } } tlFree{tlMem};
    std::int16_t* tlW = nullptr;
    std::int64_t* tlO = nullptr;
    const t_tap_lanes tlIdx = t_make_tap_lanes(3);
    if (tlMem != nullptr) {
        tlO = reinterpret_cast<std::int64_t*>(static_cast<char*>(tlMem) + tlWeightBytes);
        for (std::int64_t tli = 0; tli < tlN + 3; ++tli) {
            const std::int64_t v3 = tlX0 + (tli < tlN ? tli : tlN - 1);
            const std::int32_t t3 = b1[v3];
            const std::int32_t t4 = static_cast<std::int32_t>(t3);
            const std::int64_t t5 = t4 * 3;
            tlO[tli] = t5;
        }
        const std::int64_t tlStep = tlN > 1 ? (tlO[tlN - 1] > tlO[0] ? tlO[tlN - 1] - tlO[0] : tlO[0] - tlO[tlN - 1]) : 0;
        if (tlN < kLanes || tlStep * (kLanes - 1) / (tlN > 1 ? tlN - 1 : 1) + std::int64_t(tlK) * 3 > 112) {
            tlW = static_cast<std::int16_t*>(tlMem);
            __builtin_memset(tlW, 0, tlWeightBytes);
            for (std::int64_t tli = 0; tli < tlN + 3; ++tli) {
                const std::int64_t v3 = tlX0 + (tli < tlN ? tli : tlN - 1);
                for (std::int32_t r64 = 0; r64 < tlK; ++r64) {
                    const std::int64_t t6 = r64 * p5;
                    const std::int64_t t7 = t6 + v3;
                    const std::int16_t t8 = b2[t7];
                    t_tap_lanes_weight(tlW + (tli * tlChunks + r64 / 8) * kTapLanesWeights, r64 % 8, static_cast<std::int16_t>(t8));
                }
            }
        }
    }
    const std::int64_t n0 = std::int64_t(t0) > std::int64_t(p13) ? std::int64_t(t0) - std::int64_t(p13) : 0;
    const std::int64_t n2 = std::int64_t(t1) > std::int64_t(p15) ? std::int64_t(t1) - std::int64_t(p15) : 0;
    const std::int64_t total = n0 * n2;
    const auto rows = [&](std::int64_t lo, std::int64_t hi) __attribute__((noinline)) {
        const std::uint8_t* __restrict b0 = static_cast<const std::uint8_t*>(buffers[0]);  // input
        const std::int32_t* __restrict b1 = static_cast<const std::int32_t*>(buffers[1]);  // op0.horizontal_start
        const std::int16_t* __restrict b2 = static_cast<const std::int16_t*>(buffers[2]);  // op0.horizontal_weight_i16
        std::uint8_t* __restrict b3 = static_cast<std::uint8_t*>(buffers[3]);  // op0.horizontal
        const std::int64_t p3 = static_cast<std::int64_t>(params[3]);  // input.stride_n
        (void)p3;
        const std::int64_t p4 = static_cast<std::int64_t>(params[4]);  // input.stride_h
        (void)p4;
        const std::int64_t p5 = static_cast<std::int64_t>(params[5]);  // op0.out_w
        (void)p5;
        const std::int32_t p6 = static_cast<std::int32_t>(params[6]);  // op0.horizontal_taps
        (void)p6;
        const std::int32_t p7 = static_cast<std::int32_t>(params[7]);  // op0.horizontal_precision
        (void)p7;
        const std::int64_t p8 = static_cast<std::int64_t>(params[8]);  // op0.horizontal_half
        (void)p8;
        const std::int64_t p13 = static_cast<std::int64_t>(params[13]);  // op0.horizontal.region_origin0
        (void)p13;
        const std::int64_t p15 = static_cast<std::int64_t>(params[15]);  // op0.horizontal.region_origin2
        (void)p15;
        const std::int64_t p17 = static_cast<std::int64_t>(params[17]);  // op0.horizontal.region_origin3
        (void)p17;
        const std::int64_t p19 = static_cast<std::int64_t>(params[19]);  // op0.horizontal.stride2
        (void)p19;
        const std::int64_t p20 = static_cast<std::int64_t>(params[20]);  // op0.horizontal.stride0
        (void)p20;
        const std::int64_t rn2 = n2;
        const window_table<1> wt9((t2 - p17) / kLanes + 1);
        for (std::int64_t v3 = p17; v3 + kLanes <= t2; v3 += kLanes) {
            const std::int64_t blk3 = (v3 - p17) / kLanes;
            (void)blk3;
            const vec<std::int32_t> t10 = load_v(b1 + v3);
            const vec<std::int32_t> t11 = to_v<vec<std::int32_t>>(t10);
            const vec<std::int64_t> t12 = to_v<vec<std::int64_t>>(t11) * to_v<vec<std::int64_t>>(3);
            wt9[blk3] = make_window<1>(t12, 2);
        }
        if (t2 - (p17) >= kLanes) { const std::int64_t v3 = t2 - kLanes;
            const std::int64_t blk3 = (t2 - p17) / kLanes;
            (void)blk3;
            const vec<std::int32_t> t13 = load_v(b1 + v3);
            const vec<std::int32_t> t14 = to_v<vec<std::int32_t>>(t13);
            const vec<std::int64_t> t15 = to_v<vec<std::int64_t>>(t14) * to_v<vec<std::int64_t>>(3);
            wt9[blk3] = make_window<1>(t15, 2);
        }
        std::int64_t rest = lo;
        std::int64_t v2 = static_cast<std::int64_t>(p15 + rest % rn2);
        rest /= rn2;
        std::int64_t v0 = static_cast<std::int64_t>(p13 + rest);
        for (std::int64_t it = lo; it < hi;) {
            const std::int64_t run = std::int64_t(p15) + rn2 - v2 < hi - it ? std::int64_t(p15) + rn2 - v2 : hi - it;
            it += run;
            for (const std::int64_t runEnd = static_cast<std::int64_t>(v2 + run); v2 < runEnd; ++v2) {
                {
                    std::int64_t v3 = p17;
                    if (tlW != nullptr) {
                        const std::int16_t* __restrict tlw = tlW;
                        const std::int64_t* __restrict tlo = tlO;
                        const t_tap_lanes tlI = tlIdx;
                        const std::int32_t tlc = tlChunks;
                        const std::int64_t tlx0 = tlX0, tlStride = static_cast<std::int64_t>(tlc) * kTapLanesWeights;
                        const auto tlFull = t_tap_lanes_span(3 * 8), tlLast = t_tap_lanes_span(static_cast<std::int64_t>(tlK - 8 * (tlc - 1)) * 3);
                        const std::int64_t t16 = v2 * p4;
                        const std::int64_t t17 = v0 * p3;
                        const std::int64_t t18 = t17 + t16;
                        const std::uint8_t* const tlRow = b0 + t18;
                        for (; v3 < t2; v3 += 4) {
                            const std::int64_t tln = t2 - v3 < 4 ? t2 - v3 : 4;
                            const std::int64_t tli = v3 - tlx0;
                            const std::uint8_t* tlq0 = tlRow + tlo[tli + 0];
                            const std::int16_t* tlv0 = tlw + (tli + 0) * tlStride;
                            vec<std::int32_t> tla0 = {};
                            const std::uint8_t* tlq1 = tlRow + tlo[tli + 1];
                            const std::int16_t* tlv1 = tlw + (tli + 1) * tlStride;
                            vec<std::int32_t> tla1 = {};
                            const std::uint8_t* tlq2 = tlRow + tlo[tli + 2];
                            const std::int16_t* tlv2 = tlw + (tli + 2) * tlStride;
                            vec<std::int32_t> tla2 = {};
                            const std::uint8_t* tlq3 = tlRow + tlo[tli + 3];
                            const std::int16_t* tlv3 = tlw + (tli + 3) * tlStride;
                            vec<std::int32_t> tla3 = {};
                            for (std::int32_t tlj = 1; tlj < tlc; ++tlj) {
                                tla0 = t_tap_lanes_madd(tla0, tlq0, tlFull, tlI, tlv0);
                                tla1 = t_tap_lanes_madd(tla1, tlq1, tlFull, tlI, tlv1);
                                tla2 = t_tap_lanes_madd(tla2, tlq2, tlFull, tlI, tlv2);
                                tla3 = t_tap_lanes_madd(tla3, tlq3, tlFull, tlI, tlv3);
                                tlq0 += 24; tlv0 += kTapLanesWeights;
                                tlq1 += 24; tlv1 += kTapLanesWeights;
                                tlq2 += 24; tlv2 += kTapLanesWeights;
                                tlq3 += 24; tlv3 += kTapLanesWeights;
                            }
                            tla0 = t_tap_lanes_madd(tla0, tlq0, tlLast, tlI, tlv0);
                            tla1 = t_tap_lanes_madd(tla1, tlq1, tlLast, tlI, tlv1);
                            tla2 = t_tap_lanes_madd(tla2, tlq2, tlLast, tlI, tlv2);
                            tla3 = t_tap_lanes_madd(tla3, tlq3, tlLast, tlI, tlv3);
                            const vec<std::int32_t> tls = t_tap_lanes_sum4(tla0, tla1, tla2, tla3);
                            const std::int32_t t19 = static_cast<std::int32_t>(p8);
                            const vec<std::int32_t> t20 = to_v<vec<std::int32_t>>(tls) + to_v<vec<std::int32_t>>(t19);
                            const std::int32_t t21 = static_cast<std::int32_t>(p7);
                            const vec<std::int32_t> t22 = to_v<vec<std::int32_t>>(t20) >> t21;
                            const vec<std::uint8_t> t23 = sat_v<std::uint8_t>(to_v<vec<std::int32_t>>(t22));
                            const std::int64_t t24 = v3 * 3;
                            const std::int64_t t25 = -p13;
                            const std::int64_t t26 = t25 + v0;
                            const std::int64_t t27 = t26 * p20;
                            const std::int64_t t28 = -p15;
                            const std::int64_t t29 = t28 + v2;
                            const std::int64_t t30 = t29 * p19;
                            const std::int64_t t31 = p17 * -3;
                            const std::int64_t t32 = t31 + t30;
                            const std::int64_t t33 = t32 + t27;
                            const std::int64_t t34 = t33 + t24;
                            t_tap_lanes_store<3>(b3 + t34, to_v<vec<std::uint8_t>>(t23), tln);
                        }
                    } else {
                        if (t2 - (p17) >= kLanes) {
                            for (std::int64_t blk3 = 0; v3 < t2; v3 += kLanes, ++blk3) {
                                if (v3 + kLanes > t2) v3 = t2 - kLanes;
                                vec<std::int32_t> t35 = {};
                                vec<std::int32_t> t36 = {};
                                vec<std::int32_t> t37 = {};
                                const vec<std::int32_t> t38 = load_v(b1 + v3);
                                const vec<std::int32_t> t39 = to_v<vec<std::int32_t>>(t38);
                                const std::int64_t t40 = v0 * p3;
                                const vec<std::int64_t> t41 = to_v<vec<std::int64_t>>(t39) * to_v<vec<std::int64_t>>(3);
                                const vec<std::int64_t> t42 = to_v<vec<std::int64_t>>(t40) + to_v<vec<std::int64_t>>(t41);
                                const std::int64_t t43 = v2 * p4;
                                const vec<std::int64_t> t44 = to_v<vec<std::int64_t>>(t42) + to_v<vec<std::int64_t>>(t43);
                                const lane_window<1>& t45 = wt9[blk3];
                                if (t45.groups == 1) {
                                    #pragma GCC unroll 4
                                    for (std::int32_t r64 = 0; r64 < p6; ++r64) {
                                        const std::int32_t t47 = r64 * 3;
                                        const std::int64_t t48 = t40 + t43;
                                        const std::int64_t t49 = t48 + t47;
                                        const t_window_reads t46 = read_window1(b0 + t49 + 0 + t45.first, t45);
                                        const vec<std::int32_t> t50 = pick_window_u32<1>(t46, t45, 0);
                                        const std::int64_t t51 = r64 * p5;
                                        const std::int64_t t52 = t51 + v3;
                                        const vec<std::int16_t> t53 = load_v(b2 + t52);
                                        const vec<std::int32_t> t54 = to_v<vec<std::int32_t>>(t53);
                                        t35 = dp16_v(t35, to_v<vec<std::int32_t>>(t50), to_v<vec<std::int32_t>>(t54));
                                        const vec<std::int32_t> t55 = pick_window_u32<1>(t46, t45, 1);
                                        t36 = dp16_v(t36, to_v<vec<std::int32_t>>(t55), to_v<vec<std::int32_t>>(t54));
                                        const vec<std::int32_t> t56 = pick_window_u32<1>(t46, t45, 2);
                                        t37 = dp16_v(t37, to_v<vec<std::int32_t>>(t56), to_v<vec<std::int32_t>>(t54));
                                    }
                                } else if (t45.groups == 2) {
                                    #pragma GCC unroll 4
                                    for (std::int32_t r64 = 0; r64 < p6; ++r64) {
                                        const std::int32_t t58 = r64 * 3;
                                        const std::int64_t t59 = t40 + t43;
                                        const std::int64_t t60 = t59 + t58;
                                        const t_window_reads t57 = read_window2(b0 + t60 + 0 + t45.first, t45);
                                        const vec<std::int32_t> t61 = pick_window_u32<2>(t57, t45, 0);
                                        const std::int64_t t62 = r64 * p5;
                                        const std::int64_t t63 = t62 + v3;
                                        const vec<std::int16_t> t64 = load_v(b2 + t63);
                                        const vec<std::int32_t> t65 = to_v<vec<std::int32_t>>(t64);
                                        t35 = dp16_v(t35, to_v<vec<std::int32_t>>(t61), to_v<vec<std::int32_t>>(t65));
                                        const vec<std::int32_t> t66 = pick_window_u32<2>(t57, t45, 1);
                                        t36 = dp16_v(t36, to_v<vec<std::int32_t>>(t66), to_v<vec<std::int32_t>>(t65));
                                        const vec<std::int32_t> t67 = pick_window_u32<2>(t57, t45, 2);
                                        t37 = dp16_v(t37, to_v<vec<std::int32_t>>(t67), to_v<vec<std::int32_t>>(t65));
                                    }
                                } else {
                                    #pragma GCC unroll 1
                                    for (std::int32_t r64 = 0; r64 < p6; ++r64) {
                                        const std::int32_t t68 = r64 * 3;
                                        const std::int64_t t69 = t40 + t43;
                                        const std::int64_t t70 = t69 + t68;
                                        const vec<std::uint8_t> t71 = gather_window(b0 + t70 + t45.first, t45);
                                        const vec<std::int32_t> t72 = to_v<vec<std::int32_t>>(t71);
                                        const std::int64_t t73 = r64 * p5;
                                        const std::int64_t t74 = t73 + v3;
                                        const vec<std::int16_t> t75 = load_v(b2 + t74);
                                        const vec<std::int32_t> t76 = to_v<vec<std::int32_t>>(t75);
                                        t35 = dp16_v(t35, to_v<vec<std::int32_t>>(t72), to_v<vec<std::int32_t>>(t76));
                                        const std::int64_t t77 = t70 + 1;
                                        const vec<std::uint8_t> t78 = gather_window(b0 + t77 + t45.first, t45);
                                        const vec<std::int32_t> t79 = to_v<vec<std::int32_t>>(t78);
                                        t36 = dp16_v(t36, to_v<vec<std::int32_t>>(t79), to_v<vec<std::int32_t>>(t76));
                                        const std::int64_t t80 = t70 + 2;
                                        const vec<std::uint8_t> t81 = gather_window(b0 + t80 + t45.first, t45);
                                        const vec<std::int32_t> t82 = to_v<vec<std::int32_t>>(t81);
                                        t37 = dp16_v(t37, to_v<vec<std::int32_t>>(t82), to_v<vec<std::int32_t>>(t76));
                                    }
                                }
                                const std::int32_t t83 = static_cast<std::int32_t>(p8);
                                const vec<std::int32_t> t84 = to_v<vec<std::int32_t>>(t35) + to_v<vec<std::int32_t>>(t83);
                                const std::int32_t t85 = static_cast<std::int32_t>(p7);
                                const vec<std::int32_t> t86 = to_v<vec<std::int32_t>>(t84) >> t85;
                                const vec<std::uint8_t> t87 = sat_v<std::uint8_t>(to_v<vec<std::int32_t>>(t86));
                                const std::int64_t t88 = v3 * 3;
                                const std::int64_t t89 = -p13;
                                const std::int64_t t90 = t89 + v0;
                                const std::int64_t t91 = t90 * p20;
                                const std::int64_t t92 = -p15;
                                const std::int64_t t93 = t92 + v2;
                                const std::int64_t t94 = t93 * p19;
                                const std::int64_t t95 = p17 * -3;
                                const std::int64_t t96 = t95 + t94;
                                const std::int64_t t97 = t96 + t91;
                                const std::int64_t t98 = t97 + t88;
                                const vec<std::int32_t> t99 = to_v<vec<std::int32_t>>(t36) + to_v<vec<std::int32_t>>(t83);
                                const vec<std::int32_t> t100 = to_v<vec<std::int32_t>>(t99) >> t85;
                                const vec<std::uint8_t> t101 = sat_v<std::uint8_t>(to_v<vec<std::int32_t>>(t100));
                                const std::int64_t t102 = t98 + 1;
                                const vec<std::int32_t> t103 = to_v<vec<std::int32_t>>(t37) + to_v<vec<std::int32_t>>(t83);
                                const vec<std::int32_t> t104 = to_v<vec<std::int32_t>>(t103) >> t85;
                                const vec<std::uint8_t> t105 = sat_v<std::uint8_t>(to_v<vec<std::int32_t>>(t104));
                                const std::int64_t t106 = t98 + 2;
                                store_interleaved(b3 + t98, to_v<vec<std::uint8_t>>(t87), to_v<vec<std::uint8_t>>(t101), to_v<vec<std::uint8_t>>(t105));
                            }
                        } else {
                            for (; v3 < t2; ++v3) {
                                std::int32_t t107 = 0;
                                std::int32_t t108 = 0;
                                std::int32_t t109 = 0;
                                const std::int32_t t110 = b1[v3];
                                const std::int32_t t111 = static_cast<std::int32_t>(t110);
                                const std::int64_t t112 = v2 * p4;
                                const std::int64_t t113 = t111 * 3;
                                const std::int64_t t114 = v0 * p3;
                                const std::int64_t t115 = t114 + t113;
                                const std::int64_t t116 = t115 + t112;
                                #pragma GCC unroll 4
                                for (std::int32_t r64 = 0; r64 < p6; ++r64) {
                                    const std::int32_t t117 = r64 * 3;
                                    const std::int64_t t118 = t116 + t117;
                                    const std::uint8_t t119 = b0[t118];
                                    const std::int32_t t120 = static_cast<std::int32_t>(t119);
                                    const std::int64_t t121 = r64 * p5;
                                    const std::int64_t t122 = t121 + v3;
                                    const std::int16_t t123 = b2[t122];
                                    const std::int32_t t124 = static_cast<std::int32_t>(t123);
                                    const std::int32_t t125 = t124 * t120;
                                    t107 += t125;
                                    const std::int64_t t126 = t118 + 1;
                                    const std::uint8_t t127 = b0[t126];
                                    const std::int32_t t128 = static_cast<std::int32_t>(t127);
                                    const std::int32_t t129 = t124 * t128;
                                    t108 += t129;
                                    const std::int64_t t130 = t118 + 2;
                                    const std::uint8_t t131 = b0[t130];
                                    const std::int32_t t132 = static_cast<std::int32_t>(t131);
                                    const std::int32_t t133 = t124 * t132;
                                    t109 += t133;
                                }
                                const std::int64_t t134 = v3 * 3;
                                const std::int64_t t135 = -p13;
                                const std::int64_t t136 = t135 + v0;
                                const std::int64_t t137 = t136 * p20;
                                const std::int64_t t138 = -p15;
                                const std::int64_t t139 = t138 + v2;
                                const std::int64_t t140 = t139 * p19;
                                const std::int64_t t141 = p17 * -3;
                                const std::int64_t t142 = t141 + t140;
                                const std::int64_t t143 = t142 + t137;
                                const std::int64_t t144 = t143 + t134;
                                const std::int32_t t145 = static_cast<std::int32_t>(p7);
                                const std::int32_t t146 = static_cast<std::int32_t>(p8);
                                const std::int32_t t147 = t107 + t146;
                                const std::int32_t t148 = t147 >> t145;
                                const std::uint8_t t149 = sat_u8(t148);
                                b3[t144] = t149;
                                const std::int64_t t150 = t144 + 1;
                                const std::int32_t t151 = t108 + t146;
                                const std::int32_t t152 = t151 >> t145;
                                const std::uint8_t t153 = sat_u8(t152);
                                b3[t150] = t153;
                                const std::int64_t t154 = t144 + 2;
                                const std::int32_t t155 = t109 + t146;
                                const std::int32_t t156 = t155 >> t145;
                                const std::uint8_t t157 = sat_u8(t156);
                                b3[t154] = t157;
                            }
                        }
                    }
                }
            }
            if (v2 == static_cast<std::int64_t>(p15 + rn2)) { v2 = static_cast<std::int64_t>(p15); ++v0; }
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
// kernel_1
//   computes op0.vertical (op 0 (resize))
//   realize: the pipeline's result
//   layout: channels_last
//   loop order: v0, v2, v3, v1 (memory order of the output)
//   unroll v1: 3 iterations, innermost in memory
//   fuse v3 and v1: every access moves by the same stride along 3 * v3 + v1, one loop over consecutive elements
//   vector axis v3 (16 lanes, 4-byte elements): stride 1 in the output
//   loads along v3: b3 contiguous, b4 uniform, b5 uniform
//   4 vectors a step along v3: their tap loops run as one, each tap's weight and address loaded once
//   parallel over v0 x v2 (collapsed, shared by the threads)
static void kernel_1(void* const* buffers, const std::int64_t* params, int threads) {
    (void)threads;
    (void)params;
    const std::uint8_t* __restrict b3 = static_cast<const std::uint8_t*>(buffers[3]);  // op0.horizontal
    const std::int32_t* __restrict b4 = static_cast<const std::int32_t*>(buffers[4]);  // op0.vertical_start
    const std::int16_t* __restrict b5 = static_cast<const std::int16_t*>(buffers[5]);  // op0.vertical_weight_i16
    std::uint8_t* __restrict b6 = static_cast<std::uint8_t*>(buffers[6]);  // op0.vertical
    const std::int64_t p0 = static_cast<std::int64_t>(params[0]);  // input.n
    (void)p0;
    const std::int64_t p5 = static_cast<std::int64_t>(params[5]);  // op0.out_w
    (void)p5;
    const std::int64_t p9 = static_cast<std::int64_t>(params[9]);  // op0.out_h
    (void)p9;
    const std::int32_t p10 = static_cast<std::int32_t>(params[10]);  // op0.vertical_taps
    (void)p10;
    const std::int32_t p11 = static_cast<std::int32_t>(params[11]);  // op0.vertical_precision
    (void)p11;
    const std::int64_t p12 = static_cast<std::int64_t>(params[12]);  // op0.vertical_half
    (void)p12;
    const std::int64_t p13 = static_cast<std::int64_t>(params[13]);  // op0.horizontal.region_origin0
    (void)p13;
    const std::int64_t p15 = static_cast<std::int64_t>(params[15]);  // op0.horizontal.region_origin2
    (void)p15;
    const std::int64_t p17 = static_cast<std::int64_t>(params[17]);  // op0.horizontal.region_origin3
    (void)p17;
    const std::int64_t p19 = static_cast<std::int64_t>(params[19]);  // op0.horizontal.stride2
    (void)p19;
    const std::int64_t p20 = static_cast<std::int64_t>(params[20]);  // op0.horizontal.stride0
    (void)p20;
    const std::int64_t p21 = static_cast<std::int64_t>(params[21]);  // op0.vertical.stride2
    (void)p21;
    const std::int64_t p22 = static_cast<std::int64_t>(params[22]);  // op0.vertical.stride0
    (void)p22;
    const std::int64_t n0 = std::int64_t(p0) > std::int64_t(0) ? std::int64_t(p0) - std::int64_t(0) : 0;
    const std::int64_t n2 = std::int64_t(p9) > std::int64_t(0) ? std::int64_t(p9) - std::int64_t(0) : 0;
    const std::int64_t total = n0 * n2;
    const auto rows = [&](std::int64_t lo, std::int64_t hi) __attribute__((noinline)) {
        const std::uint8_t* __restrict b3 = static_cast<const std::uint8_t*>(buffers[3]);  // op0.horizontal
        const std::int32_t* __restrict b4 = static_cast<const std::int32_t*>(buffers[4]);  // op0.vertical_start
        const std::int16_t* __restrict b5 = static_cast<const std::int16_t*>(buffers[5]);  // op0.vertical_weight_i16
        std::uint8_t* __restrict b6 = static_cast<std::uint8_t*>(buffers[6]);  // op0.vertical
        const std::int64_t p5 = static_cast<std::int64_t>(params[5]);  // op0.out_w
        (void)p5;
        const std::int32_t p10 = static_cast<std::int32_t>(params[10]);  // op0.vertical_taps
        (void)p10;
        const std::int32_t p11 = static_cast<std::int32_t>(params[11]);  // op0.vertical_precision
        (void)p11;
        const std::int64_t p12 = static_cast<std::int64_t>(params[12]);  // op0.vertical_half
        (void)p12;
        const std::int64_t p13 = static_cast<std::int64_t>(params[13]);  // op0.horizontal.region_origin0
        (void)p13;
        const std::int64_t p15 = static_cast<std::int64_t>(params[15]);  // op0.horizontal.region_origin2
        (void)p15;
        const std::int64_t p17 = static_cast<std::int64_t>(params[17]);  // op0.horizontal.region_origin3
        (void)p17;
        const std::int64_t p19 = static_cast<std::int64_t>(params[19]);  // op0.horizontal.stride2
        (void)p19;
        const std::int64_t p20 = static_cast<std::int64_t>(params[20]);  // op0.horizontal.stride0
        (void)p20;
        const std::int64_t p21 = static_cast<std::int64_t>(params[21]);  // op0.vertical.stride2
        (void)p21;
        const std::int64_t p22 = static_cast<std::int64_t>(params[22]);  // op0.vertical.stride0
        (void)p22;
        const std::int64_t rn2 = n2;
        const std::int64_t t0 = p5 * 3;
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
                    for (; v3 + 4 * kLanes <= t0; v3 += 4 * kLanes) {
                        vec<std::int32_t> t1 = {};
                        vec<std::int32_t> t2 = {};
                        vec<std::int32_t> t3 = {};
                        vec<std::int32_t> t4 = {};
                        const std::int64_t t5 = v2 * p10;
                        const std::int32_t t6 = b4[v2];
                        const std::int32_t t7 = static_cast<std::int32_t>(t6);
                        const std::int64_t t8 = p17 * -3;
                        const std::int64_t t9 = -p15;
                        const std::int64_t t10 = t9 + t7;
                        const std::int64_t t11 = -p13;
                        const std::int64_t t12 = t11 + v0;
                        const std::int64_t t13 = t12 * p20;
                        const vec<std::int64_t> t14 = iota_v<vec<std::int64_t>>(v3);
                        const vec<std::int64_t> t15 = to_v<vec<std::int64_t>>(t14) + to_v<vec<std::int64_t>>(16);
                        const vec<std::int64_t> t16 = to_v<vec<std::int64_t>>(t14) + to_v<vec<std::int64_t>>(32);
                        const vec<std::int64_t> t17 = to_v<vec<std::int64_t>>(t14) + to_v<vec<std::int64_t>>(48);
                        #pragma GCC unroll 4
                        for (std::int32_t r65 = 0; r65 < p10; ++r65) {
                            const std::int64_t t18 = t10 + r65;
                            const std::int64_t t19 = t18 * p19;
                            const std::int64_t t20 = t8 + t19;
                            const std::int64_t t21 = t20 + t13;
                            const std::int64_t t22 = t21 + v3;
                            const vec<std::uint8_t> t23 = load_v(b3 + t22);
                            const vec<std::int32_t> t24 = to_v<vec<std::int32_t>>(t23);
                            const std::int64_t t25 = t5 + r65;
                            const std::int16_t t26 = b5[t25];
                            const std::int32_t t27 = static_cast<std::int32_t>(t26);
                            t1 = dp16_v(t1, to_v<vec<std::int32_t>>(t24), to_v<vec<std::int32_t>>(t27));
                            const std::int64_t t28 = t22 + 16;
                            const vec<std::uint8_t> t29 = load_v(b3 + t28);
                            const vec<std::int32_t> t30 = to_v<vec<std::int32_t>>(t29);
                            t2 = dp16_v(t2, to_v<vec<std::int32_t>>(t30), to_v<vec<std::int32_t>>(t27));
                            const std::int64_t t31 = t22 + 32;
                            const vec<std::uint8_t> t32 = load_v(b3 + t31);
                            const vec<std::int32_t> t33 = to_v<vec<std::int32_t>>(t32);
                            t3 = dp16_v(t3, to_v<vec<std::int32_t>>(t33), to_v<vec<std::int32_t>>(t27));
                            const std::int64_t t34 = t22 + 48;
                            const vec<std::uint8_t> t35 = load_v(b3 + t34);
                            const vec<std::int32_t> t36 = to_v<vec<std::int32_t>>(t35);
                            t4 = dp16_v(t4, to_v<vec<std::int32_t>>(t36), to_v<vec<std::int32_t>>(t27));
                        }
                        const std::int32_t t37 = static_cast<std::int32_t>(p12);
                        const vec<std::int32_t> t38 = to_v<vec<std::int32_t>>(t1) + to_v<vec<std::int32_t>>(t37);
                        const std::int32_t t39 = static_cast<std::int32_t>(p11);
                        const vec<std::int32_t> t40 = to_v<vec<std::int32_t>>(t38) >> t39;
                        const vec<std::uint8_t> t41 = sat_v<std::uint8_t>(to_v<vec<std::int32_t>>(t40));
                        const std::int64_t t42 = v0 * p22;
                        const std::int64_t t43 = v2 * p21;
                        const std::int64_t t44 = t43 + t42;
                        const std::int64_t t45 = t44 + v3;
                        store_v(b6 + t45, to_v<vec<std::uint8_t>>(t41));
                        const vec<std::int32_t> t46 = to_v<vec<std::int32_t>>(t2) + to_v<vec<std::int32_t>>(t37);
                        const vec<std::int32_t> t47 = to_v<vec<std::int32_t>>(t46) >> t39;
                        const vec<std::uint8_t> t48 = sat_v<std::uint8_t>(to_v<vec<std::int32_t>>(t47));
                        const std::int64_t t49 = t45 + 16;
                        store_v(b6 + t49, to_v<vec<std::uint8_t>>(t48));
                        const vec<std::int32_t> t50 = to_v<vec<std::int32_t>>(t3) + to_v<vec<std::int32_t>>(t37);
                        const vec<std::int32_t> t51 = to_v<vec<std::int32_t>>(t50) >> t39;
                        const vec<std::uint8_t> t52 = sat_v<std::uint8_t>(to_v<vec<std::int32_t>>(t51));
                        const std::int64_t t53 = t45 + 32;
                        store_v(b6 + t53, to_v<vec<std::uint8_t>>(t52));
                        const vec<std::int32_t> t54 = to_v<vec<std::int32_t>>(t4) + to_v<vec<std::int32_t>>(t37);
                        const vec<std::int32_t> t55 = to_v<vec<std::int32_t>>(t54) >> t39;
                        const vec<std::uint8_t> t56 = sat_v<std::uint8_t>(to_v<vec<std::int32_t>>(t55));
                        const std::int64_t t57 = t45 + 48;
                        store_v(b6 + t57, to_v<vec<std::uint8_t>>(t56));
                    }
                    if (t0 - (0) >= kLanes) {
                        for (std::int64_t blk3 = 0; v3 < t0; v3 += kLanes, ++blk3) {
                            if (v3 + kLanes > t0) v3 = t0 - kLanes;
                            vec<std::int32_t> t58 = {};
                            const std::int64_t t59 = v2 * p10;
                            const std::int32_t t60 = b4[v2];
                            const std::int32_t t61 = static_cast<std::int32_t>(t60);
                            const std::int64_t t62 = p17 * -3;
                            const std::int64_t t63 = -p15;
                            const std::int64_t t64 = t63 + t61;
                            const std::int64_t t65 = -p13;
                            const std::int64_t t66 = t65 + v0;
                            const std::int64_t t67 = t66 * p20;
                            #pragma GCC unroll 4
                            for (std::int32_t r65 = 0; r65 < p10; ++r65) {
                                const std::int64_t t68 = t64 + r65;
                                const std::int64_t t69 = t68 * p19;
                                const std::int64_t t70 = t62 + t69;
                                const std::int64_t t71 = t70 + t67;
                                const std::int64_t t72 = t71 + v3;
                                const vec<std::uint8_t> t73 = load_v(b3 + t72);
                                const vec<std::int32_t> t74 = to_v<vec<std::int32_t>>(t73);
                                const std::int64_t t75 = t59 + r65;
                                const std::int16_t t76 = b5[t75];
                                const std::int32_t t77 = static_cast<std::int32_t>(t76);
                                t58 = dp16_v(t58, to_v<vec<std::int32_t>>(t74), to_v<vec<std::int32_t>>(t77));
                            }
                            const std::int32_t t78 = static_cast<std::int32_t>(p12);
                            const vec<std::int32_t> t79 = to_v<vec<std::int32_t>>(t58) + to_v<vec<std::int32_t>>(t78);
                            const std::int32_t t80 = static_cast<std::int32_t>(p11);
                            const vec<std::int32_t> t81 = to_v<vec<std::int32_t>>(t79) >> t80;
                            const vec<std::uint8_t> t82 = sat_v<std::uint8_t>(to_v<vec<std::int32_t>>(t81));
                            const std::int64_t t83 = v0 * p22;
                            const std::int64_t t84 = v2 * p21;
                            const std::int64_t t85 = t84 + t83;
                            const std::int64_t t86 = t85 + v3;
                            store_v(b6 + t86, to_v<vec<std::uint8_t>>(t82));
                        }
                    } else {
                        for (; v3 < t0; ++v3) {
                            const std::int64_t t87 = v0 * p22;
                            const std::int64_t t88 = v2 * p21;
                            const std::int64_t t89 = t88 + t87;
                            const std::int64_t t90 = t89 + v3;
                            const std::int32_t t91 = static_cast<std::int32_t>(p11);
                            const std::int32_t t92 = static_cast<std::int32_t>(p12);
                            std::int32_t t93 = 0;
                            const std::int64_t t94 = v2 * p10;
                            const std::int32_t t95 = b4[v2];
                            const std::int32_t t96 = static_cast<std::int32_t>(t95);
                            const std::int64_t t97 = p17 * -3;
                            const std::int64_t t98 = -p15;
                            const std::int64_t t99 = t98 + t96;
                            const std::int64_t t100 = -p13;
                            const std::int64_t t101 = t100 + v0;
                            const std::int64_t t102 = t101 * p20;
                            #pragma GCC unroll 4
                            for (std::int32_t r65 = 0; r65 < p10; ++r65) {
                                const std::int64_t t103 = t99 + r65;
                                const std::int64_t t104 = t103 * p19;
                                const std::int64_t t105 = t97 + t104;
                                const std::int64_t t106 = t105 + t102;
                                const std::int64_t t107 = t106 + v3;
                                const std::uint8_t t108 = b3[t107];
                                const std::int32_t t109 = static_cast<std::int32_t>(t108);
                                const std::int64_t t110 = t94 + r65;
                                const std::int16_t t111 = b5[t110];
                                const std::int32_t t112 = static_cast<std::int32_t>(t111);
                                const std::int32_t t113 = t112 * t109;
                                t93 += t113;
                            }
                            const std::int32_t t114 = t93 + t92;
                            const std::int32_t t115 = t114 >> t91;
                            const std::uint8_t t116 = sat_u8(t115);
                            b6[t90] = t116;
                        }
                    }
                }
            }
            if (v2 == static_cast<std::int64_t>(0 + rn2)) { v2 = static_cast<std::int64_t>(0); ++v0; }
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

extern "C" void toroid_entry(void* const* buffers, const std::int64_t* params, int threads) {
    t_lanes16::kernel_0(buffers, params, threads);
    t_lanes16::kernel_1(buffers, params, threads);
}
