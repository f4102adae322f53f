// kernel_0
//   computes op0.hist.rows: op0.hist's reduction for each r64 (a block of threads or a histogram each, in parallel)
//   a histogram of 256 bins along v2: one pass over r65 adding one to each term's bin, instead of a pass per bin
//   bounds: computes only the region of v0, v3 its consumers read
//   layout: channels_last
//   loop order: v0, v2, v3, v1 (memory order of the output)
extern "C" __global__ void __launch_bounds__(128) toroid_kernel_0(const toroid_args args) {
    const uint8_t* __restrict__ b0 = static_cast<const uint8_t*>(args.buffers[0]);  // input
    int32_t* __restrict__ b5 = static_cast<int32_t*>(args.buffers[5]);  // op0.hist.rows
    const int64_t p0 = static_cast<int64_t>(args.params[0]);  // input.n
    const int64_t p1 = static_cast<int64_t>(args.params[1]);  // input.h
    const int64_t p2 = static_cast<int64_t>(args.params[2]);  // input.w
    const int64_t p3 = static_cast<int64_t>(args.params[3]);  // input.stride_n
    const int64_t p4 = static_cast<int64_t>(args.params[4]);  // input.stride_h
    const int64_t p5 = static_cast<int64_t>(args.params[5]);  // op0.hist.rows.region_origin0
    const int64_t p6 = static_cast<int64_t>(args.params[6]);  // op0.hist.rows.region_extent0
    const int64_t p7 = static_cast<int64_t>(args.params[7]);  // op0.hist.rows.region_origin3
    const int64_t p8 = static_cast<int64_t>(args.params[8]);  // op0.hist.rows.region_extent3
    const int64_t p9 = static_cast<int64_t>(args.params[9]);  // op0.hist.region_origin0
    const int64_t p10 = static_cast<int64_t>(args.params[10]);  // op0.hist.region_extent0
    const int64_t p11 = static_cast<int64_t>(args.params[11]);  // op0.top.rows.region_origin0
    const int64_t p12 = static_cast<int64_t>(args.params[12]);  // op0.top.rows.region_extent0
    const int64_t p13 = static_cast<int64_t>(args.params[13]);  // op0.top.rows.region_origin3
    const int64_t p14 = static_cast<int64_t>(args.params[14]);  // op0.top.rows.region_extent3
    const int64_t p15 = static_cast<int64_t>(args.params[15]);  // op0.top.region_origin0
    const int64_t p16 = static_cast<int64_t>(args.params[16]);  // op0.top.region_extent0
    const int64_t p17 = static_cast<int64_t>(args.params[17]);  // op0.cum.region_origin0
    const int64_t p18 = static_cast<int64_t>(args.params[18]);  // op0.cum.region_extent0
    const int64_t p19 = static_cast<int64_t>(args.params[19]);  // op0.equalize.stride2
    const int64_t p20 = static_cast<int64_t>(args.params[20]);  // op0.equalize.stride0
    const int64_t p21 = static_cast<int64_t>(args.params[21]);  // op0.hist.rows.stride2
    const int64_t p22 = static_cast<int64_t>(args.params[22]);  // op0.hist.rows.stride0
    const int64_t p23 = static_cast<int64_t>(args.params[23]);  // op0.top.rows.stride2
    const int64_t p24 = static_cast<int64_t>(args.params[24]);  // op0.top.rows.stride0
    __shared__ int32_t t_bins[256];
    const int64_t gz_end = static_cast<int64_t>(p6 * static_cast<int64_t>(p8) * static_cast<int64_t>(3));
    for (int64_t gz = blockIdx.z; gz < gz_end; gz += gridDim.z) {
        int64_t rest = gz;
        const int32_t v1 = static_cast<int32_t>(0 + rest % 3);
        rest /= 3;
        const int64_t v3 = static_cast<int64_t>(p7 + rest % p8);
        rest /= p8;
        const int64_t v0 = static_cast<int64_t>(p5 + rest);
        for (int32_t i = threadIdx.x; i < 256; i += blockDim.x) t_bins[i] = 0;
        __syncthreads();
        {
            const int64_t n_outer = p2;
            for (int64_t r65 = threadIdx.x; r65 < n_outer; r65 += blockDim.x) {
                {
                    const int64_t t0 = r65 * 3;
                    const int64_t t1 = v0 * p3;
                    const int64_t t2 = v3 * p4;
                    const int64_t t3 = t2 + t1;
                    const int64_t t4 = t3 + v1;
                    const int64_t t5 = t4 + t0;
                    const uint8_t t6 = b0[t5];
                    const int32_t t7 = static_cast<int32_t>(t6);
                    const int32_t t8 = static_cast<int32_t>(t7);
                    if (static_cast<unsigned long long>(t8) < 256ull) atomicAdd(&t_bins[t8], 1);
                }
            }
        }
        __syncthreads();
        for (int64_t v2 = 0 + threadIdx.x; v2 < 0 + 256; v2 += blockDim.x) {
            const int64_t t9 = v3 * 3;
            const int64_t t10 = -p5;
            const int64_t t11 = t10 + v0;
            const int64_t t12 = t11 * p22;
            const int64_t t13 = v2 * p21;
            const int64_t t14 = p7 * -3;
            const int64_t t15 = t14 + t13;
            const int64_t t16 = t15 + t12;
            const int64_t t17 = t16 + v1;
            const int64_t t18 = t17 + t9;
            b5[t18] = static_cast<int32_t>(v2 >= 0 && v2 < 256 ? t_bins[v2] : 0);
        }
        __syncthreads();  // the next plane zeroes the bins again
    }
}

// kernel_1
//   computes op0.hist (op 0 (equalize))
//   realize: requested by its decomposition
//   combines the int32_t values of op0.hist.rows (its reduction split along r64: few outputs of long reductions would keep few blocks busy)
//   bounds: computes only the region of v0 its consumers read
//   layout: channels_last
//   loop order: v0, v2, v3, v1 (memory order of the output)
//   a block per output: its threads share the reduction over r64 (an integer sum: the same in any grouping), combined across the block
//   grid x: v1 (a block of 128 threads per output)
//   grid y: v3
//   grid z: v0 x v2 (collapsed)
//   fuse t5: no (a block of threads computes each output or plane of one of them (a block-wide reduction or a histogram))
extern "C" __global__ void __launch_bounds__(128) toroid_kernel_1(const toroid_args args) {
    int32_t* __restrict__ b1 = static_cast<int32_t*>(args.buffers[1]);  // op0.hist
    const int32_t* __restrict__ b5 = static_cast<const int32_t*>(args.buffers[5]);  // op0.hist.rows
    const int64_t p0 = static_cast<int64_t>(args.params[0]);  // input.n
    const int64_t p1 = static_cast<int64_t>(args.params[1]);  // input.h
    const int64_t p2 = static_cast<int64_t>(args.params[2]);  // input.w
    const int64_t p3 = static_cast<int64_t>(args.params[3]);  // input.stride_n
    const int64_t p4 = static_cast<int64_t>(args.params[4]);  // input.stride_h
    const int64_t p5 = static_cast<int64_t>(args.params[5]);  // op0.hist.rows.region_origin0
    const int64_t p6 = static_cast<int64_t>(args.params[6]);  // op0.hist.rows.region_extent0
    const int64_t p7 = static_cast<int64_t>(args.params[7]);  // op0.hist.rows.region_origin3
    const int64_t p8 = static_cast<int64_t>(args.params[8]);  // op0.hist.rows.region_extent3
    const int64_t p9 = static_cast<int64_t>(args.params[9]);  // op0.hist.region_origin0
    const int64_t p10 = static_cast<int64_t>(args.params[10]);  // op0.hist.region_extent0
    const int64_t p11 = static_cast<int64_t>(args.params[11]);  // op0.top.rows.region_origin0
    const int64_t p12 = static_cast<int64_t>(args.params[12]);  // op0.top.rows.region_extent0
    const int64_t p13 = static_cast<int64_t>(args.params[13]);  // op0.top.rows.region_origin3
    const int64_t p14 = static_cast<int64_t>(args.params[14]);  // op0.top.rows.region_extent3
    const int64_t p15 = static_cast<int64_t>(args.params[15]);  // op0.top.region_origin0
    const int64_t p16 = static_cast<int64_t>(args.params[16]);  // op0.top.region_extent0
    const int64_t p17 = static_cast<int64_t>(args.params[17]);  // op0.cum.region_origin0
    const int64_t p18 = static_cast<int64_t>(args.params[18]);  // op0.cum.region_extent0
    const int64_t p19 = static_cast<int64_t>(args.params[19]);  // op0.equalize.stride2
    const int64_t p20 = static_cast<int64_t>(args.params[20]);  // op0.equalize.stride0
    const int64_t p21 = static_cast<int64_t>(args.params[21]);  // op0.hist.rows.stride2
    const int64_t p22 = static_cast<int64_t>(args.params[22]);  // op0.hist.rows.stride0
    const int64_t p23 = static_cast<int64_t>(args.params[23]);  // op0.top.rows.stride2
    const int64_t p24 = static_cast<int64_t>(args.params[24]);  // op0.top.rows.stride0
    const int64_t gx = static_cast<int64_t>(blockIdx.x);
    if (gx >= 3) return;
    const int32_t v1 = static_cast<int32_t>(0 + gx);
    for (int64_t gy = blockIdx.y; gy < 1; gy += gridDim.y) {
        const int32_t v3 = static_cast<int32_t>(0 + gy);
        const int64_t gz_end = static_cast<int64_t>(p10 * static_cast<int64_t>(256));
        for (int64_t gz = blockIdx.z; gz < gz_end; gz += gridDim.z) {
            int64_t rest = gz;
            const int32_t v2 = static_cast<int32_t>(0 + rest % 256);
            rest /= 256;
            const int64_t v0 = static_cast<int64_t>(p9 + rest);
            int32_t t0 = 0;
            {
                const int64_t n_outer = p1;
                for (int64_t r64 = threadIdx.x; r64 < n_outer; r64 += blockDim.x) {
                    {
                        const int64_t t1 = r64 * 3;
                        const int64_t t2 = -p5;
                        const int64_t t3 = t2 + v0;
                        const int64_t t4 = t3 * p22;
                        const int64_t t5 = v2 * p21;
                        const int64_t t6 = p7 * -3;
                        const int64_t t7 = t6 + t5;
                        const int64_t t8 = t7 + t4;
                        const int64_t t9 = t8 + v1;
                        const int64_t t10 = t9 + t1;
                        const int32_t t11 = b5[t10];
                        t0 += t11;
                    }
                }
            }
            t0 = t_block_reduce<int32_t>(t0, static_cast<int32_t>(0), t_op_add());
            const int32_t t12 = v2 * 3;
            const int64_t t13 = v0 * 768;
            const int64_t t14 = p9 * -768;
            const int64_t t15 = t14 + t13;
            const int64_t t16 = t15 + v1;
            const int64_t t17 = t16 + t12;
            if (threadIdx.x == 0) b1[t17] = t0;
        }
    }
}

// kernel_2
//   computes op0.top.rows: op0.top's reduction for each r66 (a block of threads or a histogram each, in parallel)
//   bounds: computes only the region of v0, v3 its consumers read
//   layout: channels_last
//   loop order: v0, v2, v3, v1 (memory order of the output)
//   a block per output: its threads share the reduction over r67 (the greatest term: the same in any grouping), combined across the block
//   grid x: v1 (a block of 128 threads per output)
//   grid y: v3
//   grid z: v0 x v2 (collapsed)
extern "C" __global__ void __launch_bounds__(128) toroid_kernel_2(const toroid_args args) {
    const uint8_t* __restrict__ b0 = static_cast<const uint8_t*>(args.buffers[0]);  // input
    int32_t* __restrict__ b6 = static_cast<int32_t*>(args.buffers[6]);  // op0.top.rows
    const int64_t p0 = static_cast<int64_t>(args.params[0]);  // input.n
    const int64_t p1 = static_cast<int64_t>(args.params[1]);  // input.h
    const int64_t p2 = static_cast<int64_t>(args.params[2]);  // input.w
    const int64_t p3 = static_cast<int64_t>(args.params[3]);  // input.stride_n
    const int64_t p4 = static_cast<int64_t>(args.params[4]);  // input.stride_h
    const int64_t p5 = static_cast<int64_t>(args.params[5]);  // op0.hist.rows.region_origin0
    const int64_t p6 = static_cast<int64_t>(args.params[6]);  // op0.hist.rows.region_extent0
    const int64_t p7 = static_cast<int64_t>(args.params[7]);  // op0.hist.rows.region_origin3
    const int64_t p8 = static_cast<int64_t>(args.params[8]);  // op0.hist.rows.region_extent3
    const int64_t p9 = static_cast<int64_t>(args.params[9]);  // op0.hist.region_origin0
    const int64_t p10 = static_cast<int64_t>(args.params[10]);  // op0.hist.region_extent0
    const int64_t p11 = static_cast<int64_t>(args.params[11]);  // op0.top.rows.region_origin0
    const int64_t p12 = static_cast<int64_t>(args.params[12]);  // op0.top.rows.region_extent0
    const int64_t p13 = static_cast<int64_t>(args.params[13]);  // op0.top.rows.region_origin3
    const int64_t p14 = static_cast<int64_t>(args.params[14]);  // op0.top.rows.region_extent3
    const int64_t p15 = static_cast<int64_t>(args.params[15]);  // op0.top.region_origin0
    const int64_t p16 = static_cast<int64_t>(args.params[16]);  // op0.top.region_extent0
    const int64_t p17 = static_cast<int64_t>(args.params[17]);  // op0.cum.region_origin0
    const int64_t p18 = static_cast<int64_t>(args.params[18]);  // op0.cum.region_extent0
    const int64_t p19 = static_cast<int64_t>(args.params[19]);  // op0.equalize.stride2
    const int64_t p20 = static_cast<int64_t>(args.params[20]);  // op0.equalize.stride0
    const int64_t p21 = static_cast<int64_t>(args.params[21]);  // op0.hist.rows.stride2
    const int64_t p22 = static_cast<int64_t>(args.params[22]);  // op0.hist.rows.stride0
    const int64_t p23 = static_cast<int64_t>(args.params[23]);  // op0.top.rows.stride2
    const int64_t p24 = static_cast<int64_t>(args.params[24]);  // op0.top.rows.stride0
    const int64_t gx = static_cast<int64_t>(blockIdx.x);
    if (gx >= 3) return;
    const int32_t v1 = static_cast<int32_t>(0 + gx);
    for (int64_t gy = blockIdx.y; gy < p14; gy += gridDim.y) {
        const int64_t v3 = static_cast<int64_t>(p13 + gy);
        const int64_t gz_end = static_cast<int64_t>(p12 * static_cast<int64_t>(1));
        for (int64_t gz = blockIdx.z; gz < gz_end; gz += gridDim.z) {
            int64_t rest = gz;
            const int32_t v2 = static_cast<int32_t>(0 + rest % 1);
            rest /= 1;
            const int64_t v0 = static_cast<int64_t>(p11 + rest);
            int32_t t0 = -2147483648;
            {
                const int64_t n_outer = p2;
                for (int64_t r67 = threadIdx.x; r67 < n_outer; r67 += blockDim.x) {
                    {
                        const int64_t t1 = r67 * 3;
                        const int64_t t2 = v0 * p3;
                        const int64_t t3 = v3 * p4;
                        const int64_t t4 = t3 + t2;
                        const int64_t t5 = t4 + v1;
                        const int64_t t6 = t5 + t1;
                        const uint8_t t7 = b0[t6];
                        const int32_t t8 = static_cast<int32_t>(t7);
                        t0 = t_rmax(t0, t8);
                    }
                }
            }
            t0 = t_block_reduce<int32_t>(t0, static_cast<int32_t>(-2147483648), t_op_max());
            const int64_t t9 = v3 * 3;
            const int64_t t10 = -p11;
            const int64_t t11 = t10 + v0;
            const int64_t t12 = t11 * p24;
            const int64_t t13 = p13 * -3;
            const int64_t t14 = t13 + t12;
            const int64_t t15 = t14 + v1;
            const int64_t t16 = t15 + t9;
            if (threadIdx.x == 0) b6[t16] = t0;
        }
    }
}

// kernel_3
//   computes op0.top (op 0 (equalize))
//   realize: requested by its decomposition
//   combines the int32_t values of op0.top.rows (its reduction split along r66: few outputs of long reductions would keep few blocks busy)
//   bounds: computes only the region of v0 its consumers read
//   layout: channels_last
//   loop order: v0, v2, v3, v1 (memory order of the output)
//   a block per output: its threads share the reduction over r66 (the greatest term: the same in any grouping), combined across the block
//   grid x: v1 (a block of 128 threads per output)
//   grid y: v3
//   grid z: v0 x v2 (collapsed)
//   fuse t6: no (a block of threads computes each output or plane of one of them (a block-wide reduction or a histogram))
extern "C" __global__ void __launch_bounds__(128) toroid_kernel_3(const toroid_args args) {
    int32_t* __restrict__ b2 = static_cast<int32_t*>(args.buffers[2]);  // op0.top
    const int32_t* __restrict__ b6 = static_cast<const int32_t*>(args.buffers[6]);  // op0.top.rows
    const int64_t p0 = static_cast<int64_t>(args.params[0]);  // input.n
    const int64_t p1 = static_cast<int64_t>(args.params[1]);  // input.h
    const int64_t p2 = static_cast<int64_t>(args.params[2]);  // input.w
    const int64_t p3 = static_cast<int64_t>(args.params[3]);  // input.stride_n
    const int64_t p4 = static_cast<int64_t>(args.params[4]);  // input.stride_h
    const int64_t p5 = static_cast<int64_t>(args.params[5]);  // op0.hist.rows.region_origin0
    const int64_t p6 = static_cast<int64_t>(args.params[6]);  // op0.hist.rows.region_extent0
    const int64_t p7 = static_cast<int64_t>(args.params[7]);  // op0.hist.rows.region_origin3
    const int64_t p8 = static_cast<int64_t>(args.params[8]);  // op0.hist.rows.region_extent3
    const int64_t p9 = static_cast<int64_t>(args.params[9]);  // op0.hist.region_origin0
    const int64_t p10 = static_cast<int64_t>(args.params[10]);  // op0.hist.region_extent0
    const int64_t p11 = static_cast<int64_t>(args.params[11]);  // op0.top.rows.region_origin0
    const int64_t p12 = static_cast<int64_t>(args.params[12]);  // op0.top.rows.region_extent0
    const int64_t p13 = static_cast<int64_t>(args.params[13]);  // op0.top.rows.region_origin3
    const int64_t p14 = static_cast<int64_t>(args.params[14]);  // op0.top.rows.region_extent3
    const int64_t p15 = static_cast<int64_t>(args.params[15]);  // op0.top.region_origin0
    const int64_t p16 = static_cast<int64_t>(args.params[16]);  // op0.top.region_extent0
    const int64_t p17 = static_cast<int64_t>(args.params[17]);  // op0.cum.region_origin0
    const int64_t p18 = static_cast<int64_t>(args.params[18]);  // op0.cum.region_extent0
    const int64_t p19 = static_cast<int64_t>(args.params[19]);  // op0.equalize.stride2
    const int64_t p20 = static_cast<int64_t>(args.params[20]);  // op0.equalize.stride0
    const int64_t p21 = static_cast<int64_t>(args.params[21]);  // op0.hist.rows.stride2
    const int64_t p22 = static_cast<int64_t>(args.params[22]);  // op0.hist.rows.stride0
    const int64_t p23 = static_cast<int64_t>(args.params[23]);  // op0.top.rows.stride2
    const int64_t p24 = static_cast<int64_t>(args.params[24]);  // op0.top.rows.stride0
    const int64_t gx = static_cast<int64_t>(blockIdx.x);
    if (gx >= 3) return;
    const int32_t v1 = static_cast<int32_t>(0 + gx);
    for (int64_t gy = blockIdx.y; gy < 1; gy += gridDim.y) {
        const int32_t v3 = static_cast<int32_t>(0 + gy);
        const int64_t gz_end = static_cast<int64_t>(p16 * static_cast<int64_t>(1));
        for (int64_t gz = blockIdx.z; gz < gz_end; gz += gridDim.z) {
            int64_t rest = gz;
            const int32_t v2 = static_cast<int32_t>(0 + rest % 1);
            rest /= 1;
            const int64_t v0 = static_cast<int64_t>(p15 + rest);
            int32_t t0 = -2147483648;
            {
                const int64_t n_outer = p1;
                for (int64_t r66 = threadIdx.x; r66 < n_outer; r66 += blockDim.x) {
                    {
                        const int64_t t1 = r66 * 3;
                        const int64_t t2 = -p11;
                        const int64_t t3 = t2 + v0;
                        const int64_t t4 = t3 * p24;
                        const int64_t t5 = p13 * -3;
                        const int64_t t6 = t5 + t4;
                        const int64_t t7 = t6 + v1;
                        const int64_t t8 = t7 + t1;
                        const int32_t t9 = b6[t8];
                        t0 = t_rmax(t0, t9);
                    }
                }
            }
            t0 = t_block_reduce<int32_t>(t0, static_cast<int32_t>(-2147483648), t_op_max());
            const int64_t t10 = v0 * 3;
            const int64_t t11 = p15 * -3;
            const int64_t t12 = t11 + t10;
            const int64_t t13 = t12 + v1;
            if (threadIdx.x == 0) b2[t13] = t0;
        }
    }
}

// kernel_4
//   computes op0.cum (op 0 (equalize))
//   realize: requested by its decomposition
//   bounds: computes only the region of v0 its consumers read
//   layout: channels_last
//   loop order: v0, v2, v3, v1 (memory order of the output)
//   unroll v1: 3 iterations per thread, innermost in memory
//   grid x: v3 (128 threads a block, coalesced along the dense dim)
//   grid y: v2
//   grid z: v0 (collapsed)
//   fuse t1: no (also read by kernel 5)
extern "C" __global__ void __launch_bounds__(128) toroid_kernel_4(const toroid_args args) {
    const int32_t* __restrict__ b1 = static_cast<const int32_t*>(args.buffers[1]);  // op0.hist
    int32_t* __restrict__ b3 = static_cast<int32_t*>(args.buffers[3]);  // op0.cum
    const int64_t p0 = static_cast<int64_t>(args.params[0]);  // input.n
    const int64_t p1 = static_cast<int64_t>(args.params[1]);  // input.h
    const int64_t p2 = static_cast<int64_t>(args.params[2]);  // input.w
    const int64_t p3 = static_cast<int64_t>(args.params[3]);  // input.stride_n
    const int64_t p4 = static_cast<int64_t>(args.params[4]);  // input.stride_h
    const int64_t p5 = static_cast<int64_t>(args.params[5]);  // op0.hist.rows.region_origin0
    const int64_t p6 = static_cast<int64_t>(args.params[6]);  // op0.hist.rows.region_extent0
    const int64_t p7 = static_cast<int64_t>(args.params[7]);  // op0.hist.rows.region_origin3
    const int64_t p8 = static_cast<int64_t>(args.params[8]);  // op0.hist.rows.region_extent3
    const int64_t p9 = static_cast<int64_t>(args.params[9]);  // op0.hist.region_origin0
    const int64_t p10 = static_cast<int64_t>(args.params[10]);  // op0.hist.region_extent0
    const int64_t p11 = static_cast<int64_t>(args.params[11]);  // op0.top.rows.region_origin0
    const int64_t p12 = static_cast<int64_t>(args.params[12]);  // op0.top.rows.region_extent0
    const int64_t p13 = static_cast<int64_t>(args.params[13]);  // op0.top.rows.region_origin3
    const int64_t p14 = static_cast<int64_t>(args.params[14]);  // op0.top.rows.region_extent3
    const int64_t p15 = static_cast<int64_t>(args.params[15]);  // op0.top.region_origin0
    const int64_t p16 = static_cast<int64_t>(args.params[16]);  // op0.top.region_extent0
    const int64_t p17 = static_cast<int64_t>(args.params[17]);  // op0.cum.region_origin0
    const int64_t p18 = static_cast<int64_t>(args.params[18]);  // op0.cum.region_extent0
    const int64_t p19 = static_cast<int64_t>(args.params[19]);  // op0.equalize.stride2
    const int64_t p20 = static_cast<int64_t>(args.params[20]);  // op0.equalize.stride0
    const int64_t p21 = static_cast<int64_t>(args.params[21]);  // op0.hist.rows.stride2
    const int64_t p22 = static_cast<int64_t>(args.params[22]);  // op0.hist.rows.stride0
    const int64_t p23 = static_cast<int64_t>(args.params[23]);  // op0.top.rows.stride2
    const int64_t p24 = static_cast<int64_t>(args.params[24]);  // op0.top.rows.stride0
    const int64_t gx = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x);
    if (gx >= 1) return;
    const int32_t v3 = static_cast<int32_t>(0 + gx);
    for (int64_t gy = blockIdx.y; gy < 256; gy += gridDim.y) {
        const int32_t v2 = static_cast<int32_t>(0 + gy);
        const int64_t gz_end = static_cast<int64_t>(p18);
        for (int64_t gz = blockIdx.z; gz < gz_end; gz += gridDim.z) {
            int64_t rest = gz;
            const int64_t v0 = static_cast<int64_t>(p17 + rest);
            int32_t t0 = 0;
            int32_t t1 = 0;
            int32_t t2 = 0;
            const int64_t t3 = v0 * 768;
            const int64_t t4 = p9 * -768;
            const int64_t t5 = t4 + t3;
            #pragma unroll 4
            for (int32_t r68 = 0; r68 < 256; ++r68) {
                const int32_t t6 = r68 * 3;
                const int64_t t7 = t5 + t6;
                const int32_t t8 = b1[t7];
                const bool t9 = r68 <= v2;
                const int32_t t10 = t9 ? t8 : 0;
                t0 += t10;
                const int64_t t11 = t7 + 1;
                const int32_t t12 = b1[t11];
                const int32_t t13 = t9 ? t12 : 0;
                t1 += t13;
                const int64_t t14 = t7 + 2;
                const int32_t t15 = b1[t14];
                const int32_t t16 = t9 ? t15 : 0;
                t2 += t16;
            }
            const int32_t t17 = v2 * 3;
            const int64_t t18 = p17 * -768;
            const int64_t t19 = t18 + t3;
            const int64_t t20 = t19 + t17;
            b3[t20] = t0;
            const int64_t t21 = t20 + 1;
            b3[t21] = t1;
            const int64_t t22 = t20 + 2;
            b3[t22] = t2;
        }
    }
}

// kernel_5
//   computes op0.equalize (op 0 (equalize))
//   realize: the pipeline's result
//   layout: channels_last
//   loop order: v0, v2, v3, v1 (memory order of the output)
//   unroll v1: 3 iterations per thread, innermost in memory
//   grid x: v3 (128 threads a block, coalesced along the dense dim)
//   grid y: v2
//   grid z: v0 (collapsed)
//   fuse t1: no (also read by kernel 4)
//   fuse t2: no (a block of threads computes each output or plane of one of them (a block-wide reduction or a histogram))
//   fuse t3: no (dim 2 is read at indices of several variables)
extern "C" __global__ void __launch_bounds__(128) toroid_kernel_5(const toroid_args args) {
    const uint8_t* __restrict__ b0 = static_cast<const uint8_t*>(args.buffers[0]);  // input
    const int32_t* __restrict__ b1 = static_cast<const int32_t*>(args.buffers[1]);  // op0.hist
    const int32_t* __restrict__ b2 = static_cast<const int32_t*>(args.buffers[2]);  // op0.top
    const int32_t* __restrict__ b3 = static_cast<const int32_t*>(args.buffers[3]);  // op0.cum
    uint8_t* __restrict__ b4 = static_cast<uint8_t*>(args.buffers[4]);  // op0.equalize
    const int64_t p0 = static_cast<int64_t>(args.params[0]);  // input.n
    const int64_t p1 = static_cast<int64_t>(args.params[1]);  // input.h
    const int64_t p2 = static_cast<int64_t>(args.params[2]);  // input.w
    const int64_t p3 = static_cast<int64_t>(args.params[3]);  // input.stride_n
    const int64_t p4 = static_cast<int64_t>(args.params[4]);  // input.stride_h
    const int64_t p5 = static_cast<int64_t>(args.params[5]);  // op0.hist.rows.region_origin0
    const int64_t p6 = static_cast<int64_t>(args.params[6]);  // op0.hist.rows.region_extent0
    const int64_t p7 = static_cast<int64_t>(args.params[7]);  // op0.hist.rows.region_origin3
    const int64_t p8 = static_cast<int64_t>(args.params[8]);  // op0.hist.rows.region_extent3
    const int64_t p9 = static_cast<int64_t>(args.params[9]);  // op0.hist.region_origin0
    const int64_t p10 = static_cast<int64_t>(args.params[10]);  // op0.hist.region_extent0
    const int64_t p11 = static_cast<int64_t>(args.params[11]);  // op0.top.rows.region_origin0
    const int64_t p12 = static_cast<int64_t>(args.params[12]);  // op0.top.rows.region_extent0
    const int64_t p13 = static_cast<int64_t>(args.params[13]);  // op0.top.rows.region_origin3
    const int64_t p14 = static_cast<int64_t>(args.params[14]);  // op0.top.rows.region_extent3
    const int64_t p15 = static_cast<int64_t>(args.params[15]);  // op0.top.region_origin0
    const int64_t p16 = static_cast<int64_t>(args.params[16]);  // op0.top.region_extent0
    const int64_t p17 = static_cast<int64_t>(args.params[17]);  // op0.cum.region_origin0
    const int64_t p18 = static_cast<int64_t>(args.params[18]);  // op0.cum.region_extent0
    const int64_t p19 = static_cast<int64_t>(args.params[19]);  // op0.equalize.stride2
    const int64_t p20 = static_cast<int64_t>(args.params[20]);  // op0.equalize.stride0
    const int64_t p21 = static_cast<int64_t>(args.params[21]);  // op0.hist.rows.stride2
    const int64_t p22 = static_cast<int64_t>(args.params[22]);  // op0.hist.rows.stride0
    const int64_t p23 = static_cast<int64_t>(args.params[23]);  // op0.top.rows.stride2
    const int64_t p24 = static_cast<int64_t>(args.params[24]);  // op0.top.rows.stride0
    const int64_t gx = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x);
    if (gx >= p2) return;
    const int64_t v3 = static_cast<int64_t>(0 + gx);
    for (int64_t gy = blockIdx.y; gy < p1; gy += gridDim.y) {
        const int64_t v2 = static_cast<int64_t>(0 + gy);
        const int64_t gz_end = static_cast<int64_t>(p0);
        for (int64_t gz = blockIdx.z; gz < gz_end; gz += gridDim.z) {
            int64_t rest = gz;
            const int64_t v0 = static_cast<int64_t>(0 + rest);
            const int64_t t0 = v3 * 3;
            const int64_t t1 = v2 * p19;
            const int64_t t2 = v0 * p20;
            const int64_t t3 = t2 + t1;
            const int64_t t4 = t3 + t0;
            const int64_t t5 = v2 * p4;
            const int64_t t6 = v0 * p3;
            const int64_t t7 = t6 + t5;
            const int64_t t8 = t7 + t0;
            const uint8_t t9 = b0[t8];
            const int32_t t10 = static_cast<int32_t>(t9);
            const int64_t t11 = v0 * 768;
            const int64_t t12 = v0 * 3;
            const int64_t t13 = p15 * -3;
            const int64_t t14 = t13 + t12;
            const int32_t t15 = b2[t14];
            const int32_t t16 = t_max<int32_t>(t15, 0);
            const int32_t t17 = t_min<int32_t>(t16, 255);
            const int32_t t18 = static_cast<int32_t>(t17);
            const int32_t t19 = t18 * 3;
            const int64_t t20 = p9 * -768;
            const int64_t t21 = t20 + t19;
            const int64_t t22 = t21 + t11;
            const int32_t t23 = b1[t22];
            const int64_t t24 = p1 * p2;
            const int32_t t25 = static_cast<int32_t>(t24);
            const int32_t t26 = t25 - t23;
            const int32_t t27 = t_floordiv<int64_t>(t26, 255);
            const int32_t t28 = t_max<int32_t>(t27, 1);
            const int32_t t29 = t_floordiv<int64_t>(t27, 2);
            const int32_t t30 = t10 - 1;
            const int32_t t31 = t_max<int32_t>(t30, 0);
            const int32_t t32 = static_cast<int32_t>(t31);
            const int32_t t33 = t32 * 3;
            const int64_t t34 = p17 * -768;
            const int64_t t35 = t34 + t33;
            const int64_t t36 = t35 + t11;
            const int32_t t37 = b3[t36];
            const int32_t t38 = t37 + t29;
            const int32_t t39 = t_floordiv<int64_t>(t38, t28);
            const int32_t t40 = t_max<int32_t>(t39, 0);
            const int32_t t41 = t_min<int32_t>(t40, 255);
            const bool t42 = t10 == 0;
            const int32_t t43 = t42 ? 0 : t41;
            const bool t44 = t27 != 0;
            const int32_t t45 = t44 ? t43 : t10;
            const uint8_t t46 = static_cast<uint8_t>(t45);
            b4[t4] = t46;
            const int64_t t47 = t4 + 1;
            const int64_t t48 = t8 + 1;
            const uint8_t t49 = b0[t48];
            const int32_t t50 = static_cast<int32_t>(t49);
            const int64_t t51 = t14 + 1;
            const int32_t t52 = b2[t51];
            const int32_t t53 = t_max<int32_t>(t52, 0);
            const int32_t t54 = t_min<int32_t>(t53, 255);
            const int32_t t55 = static_cast<int32_t>(t54);
            const int32_t t56 = t55 * 3;
            const int64_t t57 = t20 + t56;
            const int64_t t58 = t57 + t11;
            const int64_t t59 = t58 + 1;
            const int32_t t60 = b1[t59];
            const int32_t t61 = t25 - t60;
            const int32_t t62 = t_floordiv<int64_t>(t61, 255);
            const int32_t t63 = t_max<int32_t>(t62, 1);
            const int32_t t64 = t_floordiv<int64_t>(t62, 2);
            const int32_t t65 = t50 - 1;
            const int32_t t66 = t_max<int32_t>(t65, 0);
            const int32_t t67 = static_cast<int32_t>(t66);
            const int32_t t68 = t67 * 3;
            const int64_t t69 = t34 + t68;
            const int64_t t70 = t69 + t11;
            const int64_t t71 = t70 + 1;
            const int32_t t72 = b3[t71];
            const int32_t t73 = t72 + t64;
            const int32_t t74 = t_floordiv<int64_t>(t73, t63);
            const int32_t t75 = t_max<int32_t>(t74, 0);
            const int32_t t76 = t_min<int32_t>(t75, 255);
            const bool t77 = t50 == 0;
            const int32_t t78 = t77 ? 0 : t76;
            const bool t79 = t62 != 0;
            const int32_t t80 = t79 ? t78 : t50;
            const uint8_t t81 = static_cast<uint8_t>(t80);
            b4[t47] = t81;
            const int64_t t82 = t4 + 2;
            const int64_t t83 = t8 + 2;
            const uint8_t t84 = b0[t83];
            const int32_t t85 = static_cast<int32_t>(t84);
            const int64_t t86 = t14 + 2;
            const int32_t t87 = b2[t86];
            const int32_t t88 = t_max<int32_t>(t87, 0);
            const int32_t t89 = t_min<int32_t>(t88, 255);
            const int32_t t90 = static_cast<int32_t>(t89);
            const int32_t t91 = t90 * 3;
            const int64_t t92 = t20 + t91;
            const int64_t t93 = t92 + t11;
            const int64_t t94 = t93 + 2;
            const int32_t t95 = b1[t94];
            const int32_t t96 = t25 - t95;
            const int32_t t97 = t_floordiv<int64_t>(t96, 255);
            const int32_t t98 = t_max<int32_t>(t97, 1);
            const int32_t t99 = t_floordiv<int64_t>(t97, 2);
            const int32_t t100 = t85 - 1;
            const int32_t t101 = t_max<int32_t>(t100, 0);
            const int32_t t102 = static_cast<int32_t>(t101);
            const int32_t t103 = t102 * 3;
            const int64_t t104 = t34 + t103;
            const int64_t t105 = t104 + t11;
            const int64_t t106 = t105 + 2;
            const int32_t t107 = b3[t106];
            const int32_t t108 = t107 + t99;
            const int32_t t109 = t_floordiv<int64_t>(t108, t98);
            const int32_t t110 = t_max<int32_t>(t109, 0);
            const int32_t t111 = t_min<int32_t>(t110, 255);
            const bool t112 = t85 == 0;
            const int32_t t113 = t112 ? 0 : t111;
            const bool t114 = t97 != 0;
            const int32_t t115 = t114 ? t113 : t85;
            const uint8_t t116 = static_cast<uint8_t>(t115);
            b4[t82] = t116;
        }
    }
}
