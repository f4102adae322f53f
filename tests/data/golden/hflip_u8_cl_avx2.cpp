
// Buffers:
//   b0: input input uint8_t [p0, 3, p1, p2] strides [p3, 1, p4, 3] origin [0, 0, 0, 0]
//   b1: output op0.flip uint8_t [p0, 3, p1, p2] strides [p6, 1, p5, 3] origin [0, 0, 0, 0]

namespace t_lanes8 {
// kernel_0
//   computes op0.flip (op 0 (flip))
//   realize: the pipeline's result
//   layout: channels_last
//   loop order: v0, v2, v3, v1 (memory order of the output)
//   unroll v1: 3 iterations, innermost in memory
//   no explicit vectors along v3: cheap value, interleaved stores; left to the C++ compiler
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
        std::int64_t rest = lo;
        std::int64_t v2 = static_cast<std::int64_t>(0 + rest % rn2);
        rest /= rn2;
        std::int64_t v0 = static_cast<std::int64_t>(0 + rest);
        for (std::int64_t it = lo; it < hi;) {
            const std::int64_t run = std::int64_t(0) + rn2 - v2 < hi - it ? std::int64_t(0) + rn2 - v2 : hi - it;
            it += run;
            for (const std::int64_t runEnd = static_cast<std::int64_t>(v2 + run); v2 < runEnd; ++v2) {
                #pragma GCC ivdep
                for (std::int64_t v3 = 0; v3 < p2; ++v3) {
                    const std::int64_t t0 = v3 * 3;
                    const std::int64_t t1 = v2 * p5;
                    const std::int64_t t2 = v0 * p6;
                    const std::int64_t t3 = t2 + t1;
                    const std::int64_t t4 = t3 + t0;
                    const std::int64_t t5 = v2 * p4;
                    const std::int64_t t6 = v0 * p3;
                    const std::int64_t t7 = p2 * 3;
                    const std::int64_t t8 = t7 + t6;
                    const std::int64_t t9 = t8 + t5;
                    const std::int64_t t10 = t9 - t0;
                    const std::int64_t t11 = t10 - 3;
                    const std::uint8_t t12 = b0[t11];
                    b1[t4] = t12;
                    const std::int64_t t13 = t4 + 1;
                    const std::int64_t t14 = t10 - 2;
                    const std::uint8_t t15 = b0[t14];
                    b1[t13] = t15;
                    const std::int64_t t16 = t4 + 2;
                    const std::int64_t t17 = t10 - 1;
                    const std::uint8_t t18 = b0[t17];
                    b1[t16] = t18;
                }
            }
            if (v2 == static_cast<std::int64_t>(0 + rn2)) { v2 = static_cast<std::int64_t>(0); ++v0; }
        }
    };
    const std::int64_t grains = (total * std::int64_t(p2) * std::int64_t(3)) / 32768;
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
    t_lanes8::kernel_0(buffers, params, threads);
}
