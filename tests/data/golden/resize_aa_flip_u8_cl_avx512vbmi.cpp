
// Buffers:
//   b0: input input uint8_t [p0, 3, p1, p2] strides [p3, 1, p4, 3] origin [0, 0, 0, 0]
//   b1: constant op0.horizontal_start int32_t [p5] strides [1] origin [0]
//   b2: constant op0.horizontal_weight_i16 int16_t [p6, p5] strides [p5, 1] origin [0, 0]
//   b3: temp op0.horizontal uint8_t [p14, 3, p16, p18] strides [p26, 1, p25, 3] origin [p13, 0, p15, p17]
//   b4: constant op0.vertical_start int32_t [p9] strides [1] origin [0]
//   b5: constant op0.vertical_weight_i16 int16_t [p9, p10] strides [p10, 1] origin [0, 0]
//   b6: temp op0.vertical uint8_t [p20, 3, p22, p24] strides [p28, 1, p27, 3] origin [p19, 0, p21, p23]
//   b7: output op1.flip uint8_t [p0, 3, p9, p5] strides [p30, 1, p29, 3] origin [0, 0, 0, 0]

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
//   taps in lanes, 4 rows of v2 a step: each pixel's offset and weights loaded once for them
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
    const std::int64_t p25 = static_cast<std::int64_t>(params[25]);  // op0.horizontal.stride2
    (void)p25;
    const std::int64_t p26 = static_cast<std::int64_t>(params[26]);  // op0.horizontal.stride0
    (void)p26;
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
        const std::int64_t p25 = static_cast<std::int64_t>(params[25]);  // op0.horizontal.stride2
        (void)p25;
        const std::int64_t p26 = static_cast<std::int64_t>(params[26]);  // op0.horizontal.stride0
        (void)p26;
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
                        if (runEnd - v2 >= 4) {
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
                            const std::int64_t tlR1 = p4;
                            const std::int64_t tlR2 = 2 * tlR1;
                            const std::int64_t tlR3 = 3 * tlR1;
                            for (; v3 < t2; v3 += 4) {
                                const std::int64_t tln = t2 - v3 < 4 ? t2 - v3 : 4;
                                const std::int64_t tli = v3 - tlx0;
                                const std::uint8_t* tlq0 = tlRow + tlo[tli + 0];
                                const std::int16_t* tlv0 = tlw + (tli + 0) * tlStride;
                                vec<std::int32_t> tla0_0 = {};
                                vec<std::int32_t> tla1_0 = {};
                                vec<std::int32_t> tla2_0 = {};
                                vec<std::int32_t> tla3_0 = {};
                                const std::uint8_t* tlq1 = tlRow + tlo[tli + 1];
                                const std::int16_t* tlv1 = tlw + (tli + 1) * tlStride;
                                vec<std::int32_t> tla0_1 = {};
                                vec<std::int32_t> tla1_1 = {};
                                vec<std::int32_t> tla2_1 = {};
                                vec<std::int32_t> tla3_1 = {};
                                const std::uint8_t* tlq2 = tlRow + tlo[tli + 2];
                                const std::int16_t* tlv2 = tlw + (tli + 2) * tlStride;
                                vec<std::int32_t> tla0_2 = {};
                                vec<std::int32_t> tla1_2 = {};
                                vec<std::int32_t> tla2_2 = {};
                                vec<std::int32_t> tla3_2 = {};
                                const std::uint8_t* tlq3 = tlRow + tlo[tli + 3];
                                const std::int16_t* tlv3 = tlw + (tli + 3) * tlStride;
                                vec<std::int32_t> tla0_3 = {};
                                vec<std::int32_t> tla1_3 = {};
                                vec<std::int32_t> tla2_3 = {};
                                vec<std::int32_t> tla3_3 = {};
                                for (std::int32_t tlj = 1; tlj < tlc; ++tlj) {
                                    {
                                        const t_tap_lanes_w tlwv = t_tap_lanes_weights(tlv0);
                                        tla0_0 = t_tap_lanes_madd_w(tla0_0, tlq0, tlFull, tlI, tlwv);
                                        tla1_0 = t_tap_lanes_madd_w(tla1_0, tlq0 + tlR1, tlFull, tlI, tlwv);
                                        tla2_0 = t_tap_lanes_madd_w(tla2_0, tlq0 + tlR2, tlFull, tlI, tlwv);
                                        tla3_0 = t_tap_lanes_madd_w(tla3_0, tlq0 + tlR3, tlFull, tlI, tlwv);
                                    }
                                    {
                                        const t_tap_lanes_w tlwv = t_tap_lanes_weights(tlv1);
                                        tla0_1 = t_tap_lanes_madd_w(tla0_1, tlq1, tlFull, tlI, tlwv);
                                        tla1_1 = t_tap_lanes_madd_w(tla1_1, tlq1 + tlR1, tlFull, tlI, tlwv);
                                        tla2_1 = t_tap_lanes_madd_w(tla2_1, tlq1 + tlR2, tlFull, tlI, tlwv);
                                        tla3_1 = t_tap_lanes_madd_w(tla3_1, tlq1 + tlR3, tlFull, tlI, tlwv);
                                    }
                                    {
                                        const t_tap_lanes_w tlwv = t_tap_lanes_weights(tlv2);
                                        tla0_2 = t_tap_lanes_madd_w(tla0_2, tlq2, tlFull, tlI, tlwv);
                                        tla1_2 = t_tap_lanes_madd_w(tla1_2, tlq2 + tlR1, tlFull, tlI, tlwv);
                                        tla2_2 = t_tap_lanes_madd_w(tla2_2, tlq2 + tlR2, tlFull, tlI, tlwv);
                                        tla3_2 = t_tap_lanes_madd_w(tla3_2, tlq2 + tlR3, tlFull, tlI, tlwv);
                                    }
                                    {
                                        const t_tap_lanes_w tlwv = t_tap_lanes_weights(tlv3);
                                        tla0_3 = t_tap_lanes_madd_w(tla0_3, tlq3, tlFull, tlI, tlwv);
                                        tla1_3 = t_tap_lanes_madd_w(tla1_3, tlq3 + tlR1, tlFull, tlI, tlwv);
                                        tla2_3 = t_tap_lanes_madd_w(tla2_3, tlq3 + tlR2, tlFull, tlI, tlwv);
                                        tla3_3 = t_tap_lanes_madd_w(tla3_3, tlq3 + tlR3, tlFull, tlI, tlwv);
                                    }
                                    tlq0 += 24; tlv0 += kTapLanesWeights;
                                    tlq1 += 24; tlv1 += kTapLanesWeights;
                                    tlq2 += 24; tlv2 += kTapLanesWeights;
                                    tlq3 += 24; tlv3 += kTapLanesWeights;
                                }
                                {
                                    const t_tap_lanes_w tlwv = t_tap_lanes_weights(tlv0);
                                    tla0_0 = t_tap_lanes_madd_w(tla0_0, tlq0, tlLast, tlI, tlwv);
                                    tla1_0 = t_tap_lanes_madd_w(tla1_0, tlq0 + tlR1, tlLast, tlI, tlwv);
                                    tla2_0 = t_tap_lanes_madd_w(tla2_0, tlq0 + tlR2, tlLast, tlI, tlwv);
                                    tla3_0 = t_tap_lanes_madd_w(tla3_0, tlq0 + tlR3, tlLast, tlI, tlwv);
                                }
                                {
                                    const t_tap_lanes_w tlwv = t_tap_lanes_weights(tlv1);
                                    tla0_1 = t_tap_lanes_madd_w(tla0_1, tlq1, tlLast, tlI, tlwv);
                                    tla1_1 = t_tap_lanes_madd_w(tla1_1, tlq1 + tlR1, tlLast, tlI, tlwv);
                                    tla2_1 = t_tap_lanes_madd_w(tla2_1, tlq1 + tlR2, tlLast, tlI, tlwv);
                                    tla3_1 = t_tap_lanes_madd_w(tla3_1, tlq1 + tlR3, tlLast, tlI, tlwv);
                                }
                                {
                                    const t_tap_lanes_w tlwv = t_tap_lanes_weights(tlv2);
                                    tla0_2 = t_tap_lanes_madd_w(tla0_2, tlq2, tlLast, tlI, tlwv);
                                    tla1_2 = t_tap_lanes_madd_w(tla1_2, tlq2 + tlR1, tlLast, tlI, tlwv);
                                    tla2_2 = t_tap_lanes_madd_w(tla2_2, tlq2 + tlR2, tlLast, tlI, tlwv);
                                    tla3_2 = t_tap_lanes_madd_w(tla3_2, tlq2 + tlR3, tlLast, tlI, tlwv);
                                }
                                {
                                    const t_tap_lanes_w tlwv = t_tap_lanes_weights(tlv3);
                                    tla0_3 = t_tap_lanes_madd_w(tla0_3, tlq3, tlLast, tlI, tlwv);
                                    tla1_3 = t_tap_lanes_madd_w(tla1_3, tlq3 + tlR1, tlLast, tlI, tlwv);
                                    tla2_3 = t_tap_lanes_madd_w(tla2_3, tlq3 + tlR2, tlLast, tlI, tlwv);
                                    tla3_3 = t_tap_lanes_madd_w(tla3_3, tlq3 + tlR3, tlLast, tlI, tlwv);
                                }
                                {
                                    const vec<std::int32_t> tls0 = t_tap_lanes_sum4(tla0_0, tla0_1, tla0_2, tla0_3);
                                    const std::int32_t t19 = static_cast<std::int32_t>(p8);
                                    const vec<std::int32_t> t20 = to_v<vec<std::int32_t>>(tls0) + to_v<vec<std::int32_t>>(t19);
                                    const std::int32_t t21 = static_cast<std::int32_t>(p7);
                                    const vec<std::int32_t> t22 = to_v<vec<std::int32_t>>(t20) >> t21;
                                    const vec<std::uint8_t> t23 = sat_v<std::uint8_t>(to_v<vec<std::int32_t>>(t22));
                                    const std::int64_t t24 = v3 * 3;
                                    const std::int64_t t25 = -p13;
                                    const std::int64_t t26 = t25 + v0;
                                    const std::int64_t t27 = t26 * p26;
                                    const std::int64_t t28 = -p15;
                                    const std::int64_t t29 = t28 + v2;
                                    const std::int64_t t30 = t29 * p25;
                                    const std::int64_t t31 = p17 * -3;
                                    const std::int64_t t32 = t31 + t30;
                                    const std::int64_t t33 = t32 + t27;
                                    const std::int64_t t34 = t33 + t24;
                                    t_tap_lanes_store<3>(b3 + t34, to_v<vec<std::uint8_t>>(t23), tln);
                                }
                                {
                                    const vec<std::int32_t> tls1 = t_tap_lanes_sum4(tla1_0, tla1_1, tla1_2, tla1_3);
                                    const std::int32_t t35 = static_cast<std::int32_t>(p8);
                                    const vec<std::int32_t> t36 = to_v<vec<std::int32_t>>(tls1) + to_v<vec<std::int32_t>>(t35);
                                    const std::int32_t t37 = static_cast<std::int32_t>(p7);
                                    const vec<std::int32_t> t38 = to_v<vec<std::int32_t>>(t36) >> t37;
                                    const vec<std::uint8_t> t39 = sat_v<std::uint8_t>(to_v<vec<std::int32_t>>(t38));
                                    const std::int64_t t40 = v3 * 3;
                                    const std::int64_t t41 = -p15;
                                    const std::int64_t t42 = t41 + v2;
                                    const std::int64_t t43 = t42 + 1;
                                    const std::int64_t t44 = t43 * p25;
                                    const std::int64_t t45 = -p13;
                                    const std::int64_t t46 = t45 + v0;
                                    const std::int64_t t47 = t46 * p26;
                                    const std::int64_t t48 = p17 * -3;
                                    const std::int64_t t49 = t48 + t47;
                                    const std::int64_t t50 = t49 + t44;
                                    const std::int64_t t51 = t50 + t40;
                                    t_tap_lanes_store<3>(b3 + t51, to_v<vec<std::uint8_t>>(t39), tln);
                                }
                                {
                                    const vec<std::int32_t> tls2 = t_tap_lanes_sum4(tla2_0, tla2_1, tla2_2, tla2_3);
                                    const std::int32_t t52 = static_cast<std::int32_t>(p8);
                                    const vec<std::int32_t> t53 = to_v<vec<std::int32_t>>(tls2) + to_v<vec<std::int32_t>>(t52);
                                    const std::int32_t t54 = static_cast<std::int32_t>(p7);
                                    const vec<std::int32_t> t55 = to_v<vec<std::int32_t>>(t53) >> t54;
                                    const vec<std::uint8_t> t56 = sat_v<std::uint8_t>(to_v<vec<std::int32_t>>(t55));
                                    const std::int64_t t57 = v3 * 3;
                                    const std::int64_t t58 = -p13;
                                    const std::int64_t t59 = t58 + v0;
                                    const std::int64_t t60 = t59 * p26;
                                    const std::int64_t t61 = -p15;
                                    const std::int64_t t62 = t61 + v2;
                                    const std::int64_t t63 = t62 + 2;
                                    const std::int64_t t64 = t63 * p25;
                                    const std::int64_t t65 = p17 * -3;
                                    const std::int64_t t66 = t65 + t64;
                                    const std::int64_t t67 = t66 + t60;
                                    const std::int64_t t68 = t67 + t57;
                                    t_tap_lanes_store<3>(b3 + t68, to_v<vec<std::uint8_t>>(t56), tln);
                                }
                                {
                                    const vec<std::int32_t> tls3 = t_tap_lanes_sum4(tla3_0, tla3_1, tla3_2, tla3_3);
                                    const std::int32_t t69 = static_cast<std::int32_t>(p8);
                                    const vec<std::int32_t> t70 = to_v<vec<std::int32_t>>(tls3) + to_v<vec<std::int32_t>>(t69);
                                    const std::int32_t t71 = static_cast<std::int32_t>(p7);
                                    const vec<std::int32_t> t72 = to_v<vec<std::int32_t>>(t70) >> t71;
                                    const vec<std::uint8_t> t73 = sat_v<std::uint8_t>(to_v<vec<std::int32_t>>(t72));
                                    const std::int64_t t74 = v3 * 3;
                                    const std::int64_t t75 = -p15;
                                    const std::int64_t t76 = t75 + v2;
                                    const std::int64_t t77 = t76 + 3;
                                    const std::int64_t t78 = t77 * p25;
                                    const std::int64_t t79 = -p13;
                                    const std::int64_t t80 = t79 + v0;
                                    const std::int64_t t81 = t80 * p26;
                                    const std::int64_t t82 = p17 * -3;
                                    const std::int64_t t83 = t82 + t81;
                                    const std::int64_t t84 = t83 + t78;
                                    const std::int64_t t85 = t84 + t74;
                                    t_tap_lanes_store<3>(b3 + t85, to_v<vec<std::uint8_t>>(t73), tln);
                                }
                            }
                            v2 += 3;
                            continue;
                        }
                        const std::int16_t* __restrict tlw = tlW;
                        const std::int64_t* __restrict tlo = tlO;
                        const t_tap_lanes tlI = tlIdx;
                        const std::int32_t tlc = tlChunks;
                        const std::int64_t tlx0 = tlX0, tlStride = static_cast<std::int64_t>(tlc) * kTapLanesWeights;
                        const auto tlFull = t_tap_lanes_span(3 * 8), tlLast = t_tap_lanes_span(static_cast<std::int64_t>(tlK - 8 * (tlc - 1)) * 3);
                        const std::int64_t t86 = v2 * p4;
                        const std::int64_t t87 = v0 * p3;
                        const std::int64_t t88 = t87 + t86;
                        const std::uint8_t* const tlRow = b0 + t88;
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
                                {
                                    const t_tap_lanes_w tlwv = t_tap_lanes_weights(tlv0);
                                    tla0 = t_tap_lanes_madd_w(tla0, tlq0, tlFull, tlI, tlwv);
                                }
                                {
                                    const t_tap_lanes_w tlwv = t_tap_lanes_weights(tlv1);
                                    tla1 = t_tap_lanes_madd_w(tla1, tlq1, tlFull, tlI, tlwv);
                                }
                                {
                                    const t_tap_lanes_w tlwv = t_tap_lanes_weights(tlv2);
                                    tla2 = t_tap_lanes_madd_w(tla2, tlq2, tlFull, tlI, tlwv);
                                }
                                {
                                    const t_tap_lanes_w tlwv = t_tap_lanes_weights(tlv3);
                                    tla3 = t_tap_lanes_madd_w(tla3, tlq3, tlFull, tlI, tlwv);
                                }
                                tlq0 += 24; tlv0 += kTapLanesWeights;
                                tlq1 += 24; tlv1 += kTapLanesWeights;
                                tlq2 += 24; tlv2 += kTapLanesWeights;
                                tlq3 += 24; tlv3 += kTapLanesWeights;
                            }
                            {
                                const t_tap_lanes_w tlwv = t_tap_lanes_weights(tlv0);
                                tla0 = t_tap_lanes_madd_w(tla0, tlq0, tlLast, tlI, tlwv);
                            }
                            {
                                const t_tap_lanes_w tlwv = t_tap_lanes_weights(tlv1);
                                tla1 = t_tap_lanes_madd_w(tla1, tlq1, tlLast, tlI, tlwv);
                            }
                            {
                                const t_tap_lanes_w tlwv = t_tap_lanes_weights(tlv2);
                                tla2 = t_tap_lanes_madd_w(tla2, tlq2, tlLast, tlI, tlwv);
                            }
                            {
                                const t_tap_lanes_w tlwv = t_tap_lanes_weights(tlv3);
                                tla3 = t_tap_lanes_madd_w(tla3, tlq3, tlLast, tlI, tlwv);
                            }
                            const vec<std::int32_t> tls = t_tap_lanes_sum4(tla0, tla1, tla2, tla3);
                            const std::int32_t t89 = static_cast<std::int32_t>(p8);
                            const vec<std::int32_t> t90 = to_v<vec<std::int32_t>>(tls) + to_v<vec<std::int32_t>>(t89);
                            const std::int32_t t91 = static_cast<std::int32_t>(p7);
                            const vec<std::int32_t> t92 = to_v<vec<std::int32_t>>(t90) >> t91;
                            const vec<std::uint8_t> t93 = sat_v<std::uint8_t>(to_v<vec<std::int32_t>>(t92));
                            const std::int64_t t94 = v3 * 3;
                            const std::int64_t t95 = -p13;
                            const std::int64_t t96 = t95 + v0;
                            const std::int64_t t97 = t96 * p26;
                            const std::int64_t t98 = -p15;
                            const std::int64_t t99 = t98 + v2;
                            const std::int64_t t100 = t99 * p25;
                            const std::int64_t t101 = p17 * -3;
                            const std::int64_t t102 = t101 + t100;
                            const std::int64_t t103 = t102 + t97;
                            const std::int64_t t104 = t103 + t94;
                            t_tap_lanes_store<3>(b3 + t104, to_v<vec<std::uint8_t>>(t93), tln);
                        }
                    } else {
                        if (t2 - (p17) >= kLanes) {
                            for (std::int64_t blk3 = 0; v3 < t2; v3 += kLanes, ++blk3) {
                                if (v3 + kLanes > t2) v3 = t2 - kLanes;
                                vec<std::int32_t> t105 = {};
                                vec<std::int32_t> t106 = {};
                                vec<std::int32_t> t107 = {};
                                const vec<std::int32_t> t108 = load_v(b1 + v3);
                                const vec<std::int32_t> t109 = to_v<vec<std::int32_t>>(t108);
                                const std::int64_t t110 = v0 * p3;
                                const vec<std::int64_t> t111 = to_v<vec<std::int64_t>>(t109) * to_v<vec<std::int64_t>>(3);
                                const vec<std::int64_t> t112 = to_v<vec<std::int64_t>>(t110) + to_v<vec<std::int64_t>>(t111);
                                const std::int64_t t113 = v2 * p4;
                                const vec<std::int64_t> t114 = to_v<vec<std::int64_t>>(t112) + to_v<vec<std::int64_t>>(t113);
                                const lane_window<1>& t115 = wt9[blk3];
                                if (t115.groups == 1) {
                                    #pragma GCC unroll 4
                                    for (std::int32_t r64 = 0; r64 < p6; ++r64) {
                                        const std::int32_t t117 = r64 * 3;
                                        const std::int64_t t118 = t110 + t113;
                                        const std::int64_t t119 = t118 + t117;
                                        const t_window_reads t116 = read_window1(b0 + t119 + 0 + t115.first, t115);
                                        const vec<std::int32_t> t120 = pick_window_u32<1>(t116, t115, 0);
                                        const std::int64_t t121 = r64 * p5;
                                        const std::int64_t t122 = t121 + v3;
                                        const vec<std::int16_t> t123 = load_v(b2 + t122);
                                        const vec<std::int32_t> t124 = to_v<vec<std::int32_t>>(t123);
                                        t105 = dp16_v(t105, to_v<vec<std::int32_t>>(t120), to_v<vec<std::int32_t>>(t124));
                                        const vec<std::int32_t> t125 = pick_window_u32<1>(t116, t115, 1);
                                        t106 = dp16_v(t106, to_v<vec<std::int32_t>>(t125), to_v<vec<std::int32_t>>(t124));
                                        const vec<std::int32_t> t126 = pick_window_u32<1>(t116, t115, 2);
                                        t107 = dp16_v(t107, to_v<vec<std::int32_t>>(t126), to_v<vec<std::int32_t>>(t124));
                                    }
                                } else if (t115.groups == 2) {
                                    #pragma GCC unroll 4
                                    for (std::int32_t r64 = 0; r64 < p6; ++r64) {
                                        const std::int32_t t128 = r64 * 3;
                                        const std::int64_t t129 = t110 + t113;
                                        const std::int64_t t130 = t129 + t128;
                                        const t_window_reads t127 = read_window2(b0 + t130 + 0 + t115.first, t115);
                                        const vec<std::int32_t> t131 = pick_window_u32<2>(t127, t115, 0);
                                        const std::int64_t t132 = r64 * p5;
                                        const std::int64_t t133 = t132 + v3;
                                        const vec<std::int16_t> t134 = load_v(b2 + t133);
                                        const vec<std::int32_t> t135 = to_v<vec<std::int32_t>>(t134);
                                        t105 = dp16_v(t105, to_v<vec<std::int32_t>>(t131), to_v<vec<std::int32_t>>(t135));
                                        const vec<std::int32_t> t136 = pick_window_u32<2>(t127, t115, 1);
                                        t106 = dp16_v(t106, to_v<vec<std::int32_t>>(t136), to_v<vec<std::int32_t>>(t135));
                                        const vec<std::int32_t> t137 = pick_window_u32<2>(t127, t115, 2);
                                        t107 = dp16_v(t107, to_v<vec<std::int32_t>>(t137), to_v<vec<std::int32_t>>(t135));
                                    }
                                } else {
                                    #pragma GCC unroll 1
                                    for (std::int32_t r64 = 0; r64 < p6; ++r64) {
                                        const std::int32_t t138 = r64 * 3;
                                        const std::int64_t t139 = t110 + t113;
                                        const std::int64_t t140 = t139 + t138;
                                        const vec<std::uint8_t> t141 = gather_window(b0 + t140 + t115.first, t115);
                                        const vec<std::int32_t> t142 = to_v<vec<std::int32_t>>(t141);
                                        const std::int64_t t143 = r64 * p5;
                                        const std::int64_t t144 = t143 + v3;
                                        const vec<std::int16_t> t145 = load_v(b2 + t144);
                                        const vec<std::int32_t> t146 = to_v<vec<std::int32_t>>(t145);
                                        t105 = dp16_v(t105, to_v<vec<std::int32_t>>(t142), to_v<vec<std::int32_t>>(t146));
                                        const std::int64_t t147 = t140 + 1;
                                        const vec<std::uint8_t> t148 = gather_window(b0 + t147 + t115.first, t115);
                                        const vec<std::int32_t> t149 = to_v<vec<std::int32_t>>(t148);
                                        t106 = dp16_v(t106, to_v<vec<std::int32_t>>(t149), to_v<vec<std::int32_t>>(t146));
                                        const std::int64_t t150 = t140 + 2;
                                        const vec<std::uint8_t> t151 = gather_window(b0 + t150 + t115.first, t115);
                                        const vec<std::int32_t> t152 = to_v<vec<std::int32_t>>(t151);
                                        t107 = dp16_v(t107, to_v<vec<std::int32_t>>(t152), to_v<vec<std::int32_t>>(t146));
                                    }
                                }
                                const std::int32_t t153 = static_cast<std::int32_t>(p8);
                                const vec<std::int32_t> t154 = to_v<vec<std::int32_t>>(t105) + to_v<vec<std::int32_t>>(t153);
                                const std::int32_t t155 = static_cast<std::int32_t>(p7);
                                const vec<std::int32_t> t156 = to_v<vec<std::int32_t>>(t154) >> t155;
                                const vec<std::uint8_t> t157 = sat_v<std::uint8_t>(to_v<vec<std::int32_t>>(t156));
                                const std::int64_t t158 = v3 * 3;
                                const std::int64_t t159 = -p13;
                                const std::int64_t t160 = t159 + v0;
                                const std::int64_t t161 = t160 * p26;
                                const std::int64_t t162 = -p15;
                                const std::int64_t t163 = t162 + v2;
                                const std::int64_t t164 = t163 * p25;
                                const std::int64_t t165 = p17 * -3;
                                const std::int64_t t166 = t165 + t164;
                                const std::int64_t t167 = t166 + t161;
                                const std::int64_t t168 = t167 + t158;
                                const vec<std::int32_t> t169 = to_v<vec<std::int32_t>>(t106) + to_v<vec<std::int32_t>>(t153);
                                const vec<std::int32_t> t170 = to_v<vec<std::int32_t>>(t169) >> t155;
                                const vec<std::uint8_t> t171 = sat_v<std::uint8_t>(to_v<vec<std::int32_t>>(t170));
                                const std::int64_t t172 = t168 + 1;
                                const vec<std::int32_t> t173 = to_v<vec<std::int32_t>>(t107) + to_v<vec<std::int32_t>>(t153);
                                const vec<std::int32_t> t174 = to_v<vec<std::int32_t>>(t173) >> t155;
                                const vec<std::uint8_t> t175 = sat_v<std::uint8_t>(to_v<vec<std::int32_t>>(t174));
                                const std::int64_t t176 = t168 + 2;
                                store_interleaved(b3 + t168, to_v<vec<std::uint8_t>>(t157), to_v<vec<std::uint8_t>>(t171), to_v<vec<std::uint8_t>>(t175));
                            }
                        } else {
                            for (; v3 < t2; ++v3) {
                                std::int32_t t177 = 0;
                                std::int32_t t178 = 0;
                                std::int32_t t179 = 0;
                                const std::int32_t t180 = b1[v3];
                                const std::int32_t t181 = static_cast<std::int32_t>(t180);
                                const std::int64_t t182 = v2 * p4;
                                const std::int64_t t183 = t181 * 3;
                                const std::int64_t t184 = v0 * p3;
                                const std::int64_t t185 = t184 + t183;
                                const std::int64_t t186 = t185 + t182;
                                #pragma GCC unroll 4
                                for (std::int32_t r64 = 0; r64 < p6; ++r64) {
                                    const std::int32_t t187 = r64 * 3;
                                    const std::int64_t t188 = t186 + t187;
                                    const std::uint8_t t189 = b0[t188];
                                    const std::int32_t t190 = static_cast<std::int32_t>(t189);
                                    const std::int64_t t191 = r64 * p5;
                                    const std::int64_t t192 = t191 + v3;
                                    const std::int16_t t193 = b2[t192];
                                    const std::int32_t t194 = static_cast<std::int32_t>(t193);
                                    const std::int32_t t195 = t194 * t190;
                                    t177 += t195;
                                    const std::int64_t t196 = t188 + 1;
                                    const std::uint8_t t197 = b0[t196];
                                    const std::int32_t t198 = static_cast<std::int32_t>(t197);
                                    const std::int32_t t199 = t194 * t198;
                                    t178 += t199;
                                    const std::int64_t t200 = t188 + 2;
                                    const std::uint8_t t201 = b0[t200];
                                    const std::int32_t t202 = static_cast<std::int32_t>(t201);
                                    const std::int32_t t203 = t194 * t202;
                                    t179 += t203;
                                }
                                const std::int64_t t204 = v3 * 3;
                                const std::int64_t t205 = -p13;
                                const std::int64_t t206 = t205 + v0;
                                const std::int64_t t207 = t206 * p26;
                                const std::int64_t t208 = -p15;
                                const std::int64_t t209 = t208 + v2;
                                const std::int64_t t210 = t209 * p25;
                                const std::int64_t t211 = p17 * -3;
                                const std::int64_t t212 = t211 + t210;
                                const std::int64_t t213 = t212 + t207;
                                const std::int64_t t214 = t213 + t204;
                                const std::int32_t t215 = static_cast<std::int32_t>(p7);
                                const std::int32_t t216 = static_cast<std::int32_t>(p8);
                                const std::int32_t t217 = t177 + t216;
                                const std::int32_t t218 = t217 >> t215;
                                const std::uint8_t t219 = sat_u8(t218);
                                b3[t214] = t219;
                                const std::int64_t t220 = t214 + 1;
                                const std::int32_t t221 = t178 + t216;
                                const std::int32_t t222 = t221 >> t215;
                                const std::uint8_t t223 = sat_u8(t222);
                                b3[t220] = t223;
                                const std::int64_t t224 = t214 + 2;
                                const std::int32_t t225 = t179 + t216;
                                const std::int32_t t226 = t225 >> t215;
                                const std::uint8_t t227 = sat_u8(t226);
                                b3[t224] = t227;
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
//   realize: sums, read backwards along W by a channels-last consumer: the taps read forwards
//   bounds: computes only the region of v0, v2, v3 its consumers read
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
    const std::int64_t p19 = static_cast<std::int64_t>(params[19]);  // op0.vertical.region_origin0
    (void)p19;
    const std::int64_t p20 = static_cast<std::int64_t>(params[20]);  // op0.vertical.region_extent0
    (void)p20;
    const std::int64_t p21 = static_cast<std::int64_t>(params[21]);  // op0.vertical.region_origin2
    (void)p21;
    const std::int64_t p22 = static_cast<std::int64_t>(params[22]);  // op0.vertical.region_extent2
    (void)p22;
    const std::int64_t p23 = static_cast<std::int64_t>(params[23]);  // op0.vertical.region_origin3
    (void)p23;
    const std::int64_t p24 = static_cast<std::int64_t>(params[24]);  // op0.vertical.region_extent3
    (void)p24;
    const std::int64_t p25 = static_cast<std::int64_t>(params[25]);  // op0.horizontal.stride2
    (void)p25;
    const std::int64_t p26 = static_cast<std::int64_t>(params[26]);  // op0.horizontal.stride0
    (void)p26;
    const std::int64_t p27 = static_cast<std::int64_t>(params[27]);  // op0.vertical.stride2
    (void)p27;
    const std::int64_t p28 = static_cast<std::int64_t>(params[28]);  // op0.vertical.stride0
    (void)p28;
    const std::int64_t t0 = p19 + p20;
    const std::int64_t t1 = p21 + p22;
    const std::int64_t n0 = std::int64_t(t0) > std::int64_t(p19) ? std::int64_t(t0) - std::int64_t(p19) : 0;
    const std::int64_t n2 = std::int64_t(t1) > std::int64_t(p21) ? std::int64_t(t1) - std::int64_t(p21) : 0;
    const std::int64_t total = n0 * n2;
    const auto rows = [&](std::int64_t lo, std::int64_t hi) __attribute__((noinline)) {
        const std::uint8_t* __restrict b3 = static_cast<const std::uint8_t*>(buffers[3]);  // op0.horizontal
        const std::int32_t* __restrict b4 = static_cast<const std::int32_t*>(buffers[4]);  // op0.vertical_start
        const std::int16_t* __restrict b5 = static_cast<const std::int16_t*>(buffers[5]);  // op0.vertical_weight_i16
        std::uint8_t* __restrict b6 = static_cast<std::uint8_t*>(buffers[6]);  // op0.vertical
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
        const std::int64_t p19 = static_cast<std::int64_t>(params[19]);  // op0.vertical.region_origin0
        (void)p19;
        const std::int64_t p21 = static_cast<std::int64_t>(params[21]);  // op0.vertical.region_origin2
        (void)p21;
        const std::int64_t p23 = static_cast<std::int64_t>(params[23]);  // op0.vertical.region_origin3
        (void)p23;
        const std::int64_t p24 = static_cast<std::int64_t>(params[24]);  // op0.vertical.region_extent3
        (void)p24;
        const std::int64_t p25 = static_cast<std::int64_t>(params[25]);  // op0.horizontal.stride2
        (void)p25;
        const std::int64_t p26 = static_cast<std::int64_t>(params[26]);  // op0.horizontal.stride0
        (void)p26;
        const std::int64_t p27 = static_cast<std::int64_t>(params[27]);  // op0.vertical.stride2
        (void)p27;
        const std::int64_t p28 = static_cast<std::int64_t>(params[28]);  // op0.vertical.stride0
        (void)p28;
        const std::int64_t rn2 = n2;
        const std::int64_t t2 = 3 * p23;
        const std::int64_t t3 = p24 * 3;
        const std::int64_t t4 = p23 * 3;
        const std::int64_t t5 = t4 + t3;
        std::int64_t rest = lo;
        std::int64_t v2 = static_cast<std::int64_t>(p21 + rest % rn2);
        rest /= rn2;
        std::int64_t v0 = static_cast<std::int64_t>(p19 + rest);
        for (std::int64_t it = lo; it < hi;) {
            const std::int64_t run = std::int64_t(p21) + rn2 - v2 < hi - it ? std::int64_t(p21) + rn2 - v2 : hi - it;
            it += run;
            for (const std::int64_t runEnd = static_cast<std::int64_t>(v2 + run); v2 < runEnd; ++v2) {
                {
                    std::int64_t v3 = t2;
                    for (; v3 + 4 * kLanes <= t5; v3 += 4 * kLanes) {
                        vec<std::int32_t> t6 = {};
                        vec<std::int32_t> t7 = {};
                        vec<std::int32_t> t8 = {};
                        vec<std::int32_t> t9 = {};
                        const std::int64_t t10 = v2 * p10;
                        const std::int32_t t11 = b4[v2];
                        const std::int32_t t12 = static_cast<std::int32_t>(t11);
                        const std::int64_t t13 = -p13;
                        const std::int64_t t14 = t13 + v0;
                        const std::int64_t t15 = t14 * p26;
                        const std::int64_t t16 = p17 * -3;
                        const std::int64_t t17 = t16 + t15;
                        const std::int64_t t18 = -p15;
                        const std::int64_t t19 = t18 + t12;
                        const vec<std::int64_t> t20 = iota_v<vec<std::int64_t>>(v3);
                        const vec<std::int64_t> t21 = to_v<vec<std::int64_t>>(t20) + to_v<vec<std::int64_t>>(16);
                        const vec<std::int64_t> t22 = to_v<vec<std::int64_t>>(t20) + to_v<vec<std::int64_t>>(32);
                        const vec<std::int64_t> t23 = to_v<vec<std::int64_t>>(t20) + to_v<vec<std::int64_t>>(48);
                        #pragma GCC unroll 4
                        for (std::int32_t r65 = 0; r65 < p10; ++r65) {
                            const std::int64_t t24 = t19 + r65;
                            const std::int64_t t25 = t24 * p25;
                            const std::int64_t t26 = t17 + t25;
                            const std::int64_t t27 = t26 + v3;
                            const vec<std::uint8_t> t28 = load_v(b3 + t27);
                            const vec<std::int32_t> t29 = to_v<vec<std::int32_t>>(t28);
                            const std::int64_t t30 = t10 + r65;
                            const std::int16_t t31 = b5[t30];
                            const std::int32_t t32 = static_cast<std::int32_t>(t31);
                            t6 = dp16_v(t6, to_v<vec<std::int32_t>>(t29), to_v<vec<std::int32_t>>(t32));
                            const std::int64_t t33 = t27 + 16;
                            const vec<std::uint8_t> t34 = load_v(b3 + t33);
                            const vec<std::int32_t> t35 = to_v<vec<std::int32_t>>(t34);
                            t7 = dp16_v(t7, to_v<vec<std::int32_t>>(t35), to_v<vec<std::int32_t>>(t32));
                            const std::int64_t t36 = t27 + 32;
                            const vec<std::uint8_t> t37 = load_v(b3 + t36);
                            const vec<std::int32_t> t38 = to_v<vec<std::int32_t>>(t37);
                            t8 = dp16_v(t8, to_v<vec<std::int32_t>>(t38), to_v<vec<std::int32_t>>(t32));
                            const std::int64_t t39 = t27 + 48;
                            const vec<std::uint8_t> t40 = load_v(b3 + t39);
                            const vec<std::int32_t> t41 = to_v<vec<std::int32_t>>(t40);
                            t9 = dp16_v(t9, to_v<vec<std::int32_t>>(t41), to_v<vec<std::int32_t>>(t32));
                        }
                        const std::int32_t t42 = static_cast<std::int32_t>(p12);
                        const vec<std::int32_t> t43 = to_v<vec<std::int32_t>>(t6) + to_v<vec<std::int32_t>>(t42);
                        const std::int32_t t44 = static_cast<std::int32_t>(p11);
                        const vec<std::int32_t> t45 = to_v<vec<std::int32_t>>(t43) >> t44;
                        const vec<std::uint8_t> t46 = sat_v<std::uint8_t>(to_v<vec<std::int32_t>>(t45));
                        const std::int64_t t47 = -p19;
                        const std::int64_t t48 = t47 + v0;
                        const std::int64_t t49 = t48 * p28;
                        const std::int64_t t50 = -p21;
                        const std::int64_t t51 = t50 + v2;
                        const std::int64_t t52 = t51 * p27;
                        const std::int64_t t53 = p23 * -3;
                        const std::int64_t t54 = t53 + t52;
                        const std::int64_t t55 = t54 + t49;
                        const std::int64_t t56 = t55 + v3;
                        store_v(b6 + t56, to_v<vec<std::uint8_t>>(t46));
                        const vec<std::int32_t> t57 = to_v<vec<std::int32_t>>(t7) + to_v<vec<std::int32_t>>(t42);
                        const vec<std::int32_t> t58 = to_v<vec<std::int32_t>>(t57) >> t44;
                        const vec<std::uint8_t> t59 = sat_v<std::uint8_t>(to_v<vec<std::int32_t>>(t58));
                        const std::int64_t t60 = t56 + 16;
                        store_v(b6 + t60, to_v<vec<std::uint8_t>>(t59));
                        const vec<std::int32_t> t61 = to_v<vec<std::int32_t>>(t8) + to_v<vec<std::int32_t>>(t42);
                        const vec<std::int32_t> t62 = to_v<vec<std::int32_t>>(t61) >> t44;
                        const vec<std::uint8_t> t63 = sat_v<std::uint8_t>(to_v<vec<std::int32_t>>(t62));
                        const std::int64_t t64 = t56 + 32;
                        store_v(b6 + t64, to_v<vec<std::uint8_t>>(t63));
                        const vec<std::int32_t> t65 = to_v<vec<std::int32_t>>(t9) + to_v<vec<std::int32_t>>(t42);
                        const vec<std::int32_t> t66 = to_v<vec<std::int32_t>>(t65) >> t44;
                        const vec<std::uint8_t> t67 = sat_v<std::uint8_t>(to_v<vec<std::int32_t>>(t66));
                        const std::int64_t t68 = t56 + 48;
                        store_v(b6 + t68, to_v<vec<std::uint8_t>>(t67));
                    }
                    if (t5 - (t2) >= kLanes) {
                        for (std::int64_t blk3 = 0; v3 < t5; v3 += kLanes, ++blk3) {
                            if (v3 + kLanes > t5) v3 = t5 - kLanes;
                            vec<std::int32_t> t69 = {};
                            const std::int64_t t70 = v2 * p10;
                            const std::int32_t t71 = b4[v2];
                            const std::int32_t t72 = static_cast<std::int32_t>(t71);
                            const std::int64_t t73 = -p13;
                            const std::int64_t t74 = t73 + v0;
                            const std::int64_t t75 = t74 * p26;
                            const std::int64_t t76 = p17 * -3;
                            const std::int64_t t77 = t76 + t75;
                            const std::int64_t t78 = -p15;
                            const std::int64_t t79 = t78 + t72;
                            #pragma GCC unroll 4
                            for (std::int32_t r65 = 0; r65 < p10; ++r65) {
                                const std::int64_t t80 = t79 + r65;
                                const std::int64_t t81 = t80 * p25;
                                const std::int64_t t82 = t77 + t81;
                                const std::int64_t t83 = t82 + v3;
                                const vec<std::uint8_t> t84 = load_v(b3 + t83);
                                const vec<std::int32_t> t85 = to_v<vec<std::int32_t>>(t84);
                                const std::int64_t t86 = t70 + r65;
                                const std::int16_t t87 = b5[t86];
                                const std::int32_t t88 = static_cast<std::int32_t>(t87);
                                t69 = dp16_v(t69, to_v<vec<std::int32_t>>(t85), to_v<vec<std::int32_t>>(t88));
                            }
                            const std::int32_t t89 = static_cast<std::int32_t>(p12);
                            const vec<std::int32_t> t90 = to_v<vec<std::int32_t>>(t69) + to_v<vec<std::int32_t>>(t89);
                            const std::int32_t t91 = static_cast<std::int32_t>(p11);
                            const vec<std::int32_t> t92 = to_v<vec<std::int32_t>>(t90) >> t91;
                            const vec<std::uint8_t> t93 = sat_v<std::uint8_t>(to_v<vec<std::int32_t>>(t92));
                            const std::int64_t t94 = -p19;
                            const std::int64_t t95 = t94 + v0;
                            const std::int64_t t96 = t95 * p28;
                            const std::int64_t t97 = -p21;
                            const std::int64_t t98 = t97 + v2;
                            const std::int64_t t99 = t98 * p27;
                            const std::int64_t t100 = p23 * -3;
                            const std::int64_t t101 = t100 + t99;
                            const std::int64_t t102 = t101 + t96;
                            const std::int64_t t103 = t102 + v3;
                            store_v(b6 + t103, to_v<vec<std::uint8_t>>(t93));
                        }
                    } else {
                        for (; v3 < t5; ++v3) {
                            const std::int64_t t104 = -p19;
                            const std::int64_t t105 = t104 + v0;
                            const std::int64_t t106 = t105 * p28;
                            const std::int64_t t107 = -p21;
                            const std::int64_t t108 = t107 + v2;
                            const std::int64_t t109 = t108 * p27;
                            const std::int64_t t110 = p23 * -3;
                            const std::int64_t t111 = t110 + t109;
                            const std::int64_t t112 = t111 + t106;
                            const std::int64_t t113 = t112 + v3;
                            const std::int32_t t114 = static_cast<std::int32_t>(p11);
                            const std::int32_t t115 = static_cast<std::int32_t>(p12);
                            std::int32_t t116 = 0;
                            const std::int64_t t117 = v2 * p10;
                            const std::int32_t t118 = b4[v2];
                            const std::int32_t t119 = static_cast<std::int32_t>(t118);
                            const std::int64_t t120 = -p13;
                            const std::int64_t t121 = t120 + v0;
                            const std::int64_t t122 = t121 * p26;
                            const std::int64_t t123 = p17 * -3;
                            const std::int64_t t124 = t123 + t122;
                            const std::int64_t t125 = -p15;
                            const std::int64_t t126 = t125 + t119;
                            #pragma GCC unroll 4
                            for (std::int32_t r65 = 0; r65 < p10; ++r65) {
                                const std::int64_t t127 = t126 + r65;
                                const std::int64_t t128 = t127 * p25;
                                const std::int64_t t129 = t124 + t128;
                                const std::int64_t t130 = t129 + v3;
                                const std::uint8_t t131 = b3[t130];
                                const std::int32_t t132 = static_cast<std::int32_t>(t131);
                                const std::int64_t t133 = t117 + r65;
                                const std::int16_t t134 = b5[t133];
                                const std::int32_t t135 = static_cast<std::int32_t>(t134);
                                const std::int32_t t136 = t135 * t132;
                                t116 += t136;
                            }
                            const std::int32_t t137 = t116 + t115;
                            const std::int32_t t138 = t137 >> t114;
                            const std::uint8_t t139 = sat_u8(t138);
                            b6[t113] = t139;
                        }
                    }
                }
            }
            if (v2 == static_cast<std::int64_t>(p21 + rn2)) { v2 = static_cast<std::int64_t>(p21); ++v0; }
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

namespace t_lanes64 {
// kernel_2
//   computes op1.flip (op 1 (flip))
//   realize: the pipeline's result
//   layout: channels_last
//   loop order: v0, v2, v3, v1 (memory order of the output)
//   unroll v1: 3 iterations, innermost in memory
//   fuse v3 and v1: the store and forward loads move by the same stride along 3 * v3 + v1, byte loads backwards through the pixels (read through windows); one loop over consecutive elements
//   vector axis v3 (64 lanes, its vectors hold bytes only): stride 1 in the output
//   loads along v3: b6 window
//   parallel over v0 x v2 (collapsed, shared by the threads)
static void kernel_2(void* const* buffers, const std::int64_t* params, int threads) {
    (void)threads;
    (void)params;
    const std::uint8_t* __restrict b6 = static_cast<const std::uint8_t*>(buffers[6]);  // op0.vertical
    std::uint8_t* __restrict b7 = static_cast<std::uint8_t*>(buffers[7]);  // op1.flip
    const std::int64_t p0 = static_cast<std::int64_t>(params[0]);  // input.n
    (void)p0;
    const std::int64_t p5 = static_cast<std::int64_t>(params[5]);  // op0.out_w
    (void)p5;
    const std::int64_t p9 = static_cast<std::int64_t>(params[9]);  // op0.out_h
    (void)p9;
    const std::int64_t p19 = static_cast<std::int64_t>(params[19]);  // op0.vertical.region_origin0
    (void)p19;
    const std::int64_t p21 = static_cast<std::int64_t>(params[21]);  // op0.vertical.region_origin2
    (void)p21;
    const std::int64_t p23 = static_cast<std::int64_t>(params[23]);  // op0.vertical.region_origin3
    (void)p23;
    const std::int64_t p27 = static_cast<std::int64_t>(params[27]);  // op0.vertical.stride2
    (void)p27;
    const std::int64_t p28 = static_cast<std::int64_t>(params[28]);  // op0.vertical.stride0
    (void)p28;
    const std::int64_t p29 = static_cast<std::int64_t>(params[29]);  // op1.flip.stride2
    (void)p29;
    const std::int64_t p30 = static_cast<std::int64_t>(params[30]);  // op1.flip.stride0
    (void)p30;
    const std::int64_t n0 = std::int64_t(p0) > std::int64_t(0) ? std::int64_t(p0) - std::int64_t(0) : 0;
    const std::int64_t n2 = std::int64_t(p9) > std::int64_t(0) ? std::int64_t(p9) - std::int64_t(0) : 0;
    const std::int64_t total = n0 * n2;
    const auto rows = [&](std::int64_t lo, std::int64_t hi) __attribute__((noinline)) {
        const std::uint8_t* __restrict b6 = static_cast<const std::uint8_t*>(buffers[6]);  // op0.vertical
        std::uint8_t* __restrict b7 = static_cast<std::uint8_t*>(buffers[7]);  // op1.flip
        const std::int64_t p5 = static_cast<std::int64_t>(params[5]);  // op0.out_w
        (void)p5;
        const std::int64_t p19 = static_cast<std::int64_t>(params[19]);  // op0.vertical.region_origin0
        (void)p19;
        const std::int64_t p21 = static_cast<std::int64_t>(params[21]);  // op0.vertical.region_origin2
        (void)p21;
        const std::int64_t p23 = static_cast<std::int64_t>(params[23]);  // op0.vertical.region_origin3
        (void)p23;
        const std::int64_t p27 = static_cast<std::int64_t>(params[27]);  // op0.vertical.stride2
        (void)p27;
        const std::int64_t p28 = static_cast<std::int64_t>(params[28]);  // op0.vertical.stride0
        (void)p28;
        const std::int64_t p29 = static_cast<std::int64_t>(params[29]);  // op1.flip.stride2
        (void)p29;
        const std::int64_t p30 = static_cast<std::int64_t>(params[30]);  // op1.flip.stride0
        (void)p30;
        const std::int64_t rn2 = n2;
        const std::int64_t t0 = p5 * 3;
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
                            const std::int64_t t19 = -p19;
                            const std::int64_t t20 = t19 + v0;
                            const std::int64_t t21 = t20 * p28;
                            const std::int64_t t22 = -p21;
                            const std::int64_t t23 = t22 + v2;
                            const std::int64_t t24 = t23 * p27;
                            const std::int64_t t25 = p23 * 3;
                            const std::int64_t t26 = -t25;
                            const std::int64_t t27 = t0 + t26;
                            const std::int64_t t28 = t27 + t24;
                            const std::int64_t t29 = t28 + t21;
                            const std::int64_t t30 = t29 + -3;
                            const vec<std::uint8_t> t31 = gather_window_any(b6 + t30 + t18.first, t18);
                            const std::int64_t t32 = v2 * p29;
                            const std::int64_t t33 = v0 * p30;
                            const std::int64_t t34 = t33 + t32;
                            const std::int64_t t35 = t34 + v3;
                            store_v(b7 + t35, to_v<vec<std::uint8_t>>(t31));
                        }
                        v3 = t0 - kLanes;
                        (void)blk3;
                        {
                            const lane_window<1>& t36 = wt1[blk3];
                            const std::int64_t t37 = -p19;
                            const std::int64_t t38 = t37 + v0;
                            const std::int64_t t39 = t38 * p28;
                            const std::int64_t t40 = -p21;
                            const std::int64_t t41 = t40 + v2;
                            const std::int64_t t42 = t41 * p27;
                            const std::int64_t t43 = p23 * 3;
                            const std::int64_t t44 = -t43;
                            const std::int64_t t45 = t0 + t44;
                            const std::int64_t t46 = t45 + t42;
                            const std::int64_t t47 = t46 + t39;
                            const std::int64_t t48 = t47 + -3;
                            const vec<std::uint8_t> t49 = gather_window_any(b6 + t48 + t36.first, t36);
                            const std::int64_t t50 = v2 * p29;
                            const std::int64_t t51 = v0 * p30;
                            const std::int64_t t52 = t51 + t50;
                            const std::int64_t t53 = t52 + v3;
                            store_v(b7 + t53, to_v<vec<std::uint8_t>>(t49));
                        }
                    } else {
                        for (; v3 < t0; ++v3) {
                            const std::int64_t t54 = v2 * p29;
                            const std::int64_t t55 = v0 * p30;
                            const std::int64_t t56 = t55 + t54;
                            const std::int64_t t57 = t56 + v3;
                            const std::int32_t t58 = v3 % 3;
                            const std::int64_t t59 = -p19;
                            const std::int64_t t60 = t59 + v0;
                            const std::int64_t t61 = t60 * p28;
                            const std::int64_t t62 = v3 / 3;
                            const std::int64_t t63 = t62 * 3;
                            const std::int64_t t64 = -p21;
                            const std::int64_t t65 = t64 + v2;
                            const std::int64_t t66 = t65 * p27;
                            const std::int64_t t67 = p23 * 3;
                            const std::int64_t t68 = t0 - t67;
                            const std::int64_t t69 = t68 + t66;
                            const std::int64_t t70 = t69 - t63;
                            const std::int64_t t71 = t70 + t61;
                            const std::int64_t t72 = t71 + t58;
                            const std::int64_t t73 = t72 - 3;
                            const std::uint8_t t74 = b6[t73];
                            b7[t57] = t74;
                        }
                    }
                }
            }
            if (v2 == static_cast<std::int64_t>(0 + rn2)) { v2 = static_cast<std::int64_t>(0); ++v0; }
        }
    };
    const std::int64_t t75 = 3 * p5;
    const std::int64_t grains = (total * std::int64_t(t75)) / 32768;
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
    t_lanes64::kernel_2(buffers, params, threads);
}
