// kernel_0
//   computes op0.min.rows: op0.min's reduction for each r64 (a block of threads or a histogram each, in parallel)
//   bounds: computes only the region of v0, v3 its consumers read
//   layout: contiguous
//   loop order: v0, v1, v2, v3 (memory order of the output)
//   a block per output: its threads share the reduction over r65 (the least term: the same in any grouping), combined across the block
//   grid x: v3 (a block of 128 threads per output)
//   grid y: v2
//   grid z: v0 x v1 (collapsed)
extern "C" __global__ void __launch_bounds__(128) toroid_kernel_0(const toroid_args args) {
    const uint8_t* __restrict__ b0 = static_cast<const uint8_t*>(args.buffers[0]);  // input
    float* __restrict__ b4 = static_cast<float*>(args.buffers[4]);  // op0.min.rows
    const int64_t p0 = static_cast<int64_t>(args.params[0]);  // input.n
    const int64_t p1 = static_cast<int64_t>(args.params[1]);  // input.h
    const int64_t p2 = static_cast<int64_t>(args.params[2]);  // input.w
    const int64_t p3 = static_cast<int64_t>(args.params[3]);  // input.stride_n
    const int64_t p4 = static_cast<int64_t>(args.params[4]);  // input.stride_c
    const int64_t p5 = static_cast<int64_t>(args.params[5]);  // input.stride_h
    const int64_t p6 = static_cast<int64_t>(args.params[6]);  // op0.min.rows.region_origin0
    const int64_t p7 = static_cast<int64_t>(args.params[7]);  // op0.min.rows.region_extent0
    const int64_t p8 = static_cast<int64_t>(args.params[8]);  // op0.min.rows.region_origin3
    const int64_t p9 = static_cast<int64_t>(args.params[9]);  // op0.min.rows.region_extent3
    const int64_t p10 = static_cast<int64_t>(args.params[10]);  // op0.min.region_origin0
    const int64_t p11 = static_cast<int64_t>(args.params[11]);  // op0.min.region_extent0
    const int64_t p12 = static_cast<int64_t>(args.params[12]);  // op0.max.rows.region_origin0
    const int64_t p13 = static_cast<int64_t>(args.params[13]);  // op0.max.rows.region_extent0
    const int64_t p14 = static_cast<int64_t>(args.params[14]);  // op0.max.rows.region_origin3
    const int64_t p15 = static_cast<int64_t>(args.params[15]);  // op0.max.rows.region_extent3
    const int64_t p16 = static_cast<int64_t>(args.params[16]);  // op0.max.region_origin0
    const int64_t p17 = static_cast<int64_t>(args.params[17]);  // op0.max.region_extent0
    const int64_t p18 = static_cast<int64_t>(args.params[18]);  // op0.autocontrast.stride2
    const int64_t p19 = static_cast<int64_t>(args.params[19]);  // op0.autocontrast.stride1
    const int64_t p20 = static_cast<int64_t>(args.params[20]);  // op0.autocontrast.stride0
    const int64_t p21 = static_cast<int64_t>(args.params[21]);  // op0.min.rows.stride2
    const int64_t p22 = static_cast<int64_t>(args.params[22]);  // op0.min.rows.stride1
    const int64_t p23 = static_cast<int64_t>(args.params[23]);  // op0.min.rows.stride0
    const int64_t p24 = static_cast<int64_t>(args.params[24]);  // op0.max.rows.stride2
    const int64_t p25 = static_cast<int64_t>(args.params[25]);  // op0.max.rows.stride1
    const int64_t p26 = static_cast<int64_t>(args.params[26]);  // op0.max.rows.stride0
    const int64_t gx = static_cast<int64_t>(blockIdx.x);
    if (gx >= p9) return;
    const int64_t v3 = static_cast<int64_t>(p8 + gx);
    for (int64_t gy = blockIdx.y; gy < 1; gy += gridDim.y) {
        const int32_t v2 = static_cast<int32_t>(0 + gy);
        const int64_t gz_end = static_cast<int64_t>(p7 * static_cast<int64_t>(3));
        for (int64_t gz = blockIdx.z; gz < gz_end; gz += gridDim.z) {
            int64_t rest = gz;
            const int32_t v1 = static_cast<int32_t>(0 + rest % 3);
            rest /= 3;
            const int64_t v0 = static_cast<int64_t>(p6 + rest);
            float t0 = INFINITY;
            {
                const int64_t n_outer = p2;
                for (int64_t r65 = threadIdx.x; r65 < n_outer; r65 += blockDim.x) {
                    {
                        const int64_t t1 = v3 * p5;
                        const int64_t t2 = v1 * p4;
                        const int64_t t3 = v0 * p3;
                        const int64_t t4 = t3 + t2;
                        const int64_t t5 = t4 + t1;
                        const int64_t t6 = t5 + r65;
                        const uint8_t t7 = b0[t6];
                        const float t8 = static_cast<float>(t7);
                        t0 = t_rmin(t0, t8);
                    }
                }
            }
            t0 = t_block_reduce<float>(t0, static_cast<float>(INFINITY), t_op_min());
            const int64_t t9 = -p6;
            const int64_t t10 = t9 + v0;
            const int64_t t11 = t10 * p23;
            const int64_t t12 = v1 * p22;
            const int64_t t13 = -p8;
            const int64_t t14 = t13 + t12;
            const int64_t t15 = t14 + t11;
            const int64_t t16 = t15 + v3;
            if (threadIdx.x == 0) b4[t16] = t0;
        }
    }
}

// kernel_1
//   computes op0.min (op 0 (autocontrast))
//   realize: requested by its decomposition
//   combines the float values of op0.min.rows (its reduction split along r64: few outputs of long reductions would keep few blocks busy)
//   bounds: computes only the region of v0 its consumers read
//   layout: contiguous
//   loop order: v0, v1, v2, v3 (memory order of the output)
//   a block per output: its threads share the reduction over r64 (the least term: the same in any grouping), combined across the block
//   grid x: v3 (a block of 128 threads per output)
//   grid y: v2
//   grid z: v0 x v1 (collapsed)
//   fuse t4: no (a block of threads computes each output or plane of one of them (a block-wide reduction or a histogram))
extern "C" __global__ void __launch_bounds__(128) toroid_kernel_1(const toroid_args args) {
    float* __restrict__ b1 = static_cast<float*>(args.buffers[1]);  // op0.min
    const float* __restrict__ b4 = static_cast<const float*>(args.buffers[4]);  // op0.min.rows
    const int64_t p0 = static_cast<int64_t>(args.params[0]);  // input.n
    const int64_t p1 = static_cast<int64_t>(args.params[1]);  // input.h
    const int64_t p2 = static_cast<int64_t>(args.params[2]);  // input.w
    const int64_t p3 = static_cast<int64_t>(args.params[3]);  // input.stride_n
    const int64_t p4 = static_cast<int64_t>(args.params[4]);  // input.stride_c
    const int64_t p5 = static_cast<int64_t>(args.params[5]);  // input.stride_h
    const int64_t p6 = static_cast<int64_t>(args.params[6]);  // op0.min.rows.region_origin0
    const int64_t p7 = static_cast<int64_t>(args.params[7]);  // op0.min.rows.region_extent0
    const int64_t p8 = static_cast<int64_t>(args.params[8]);  // op0.min.rows.region_origin3
    const int64_t p9 = static_cast<int64_t>(args.params[9]);  // op0.min.rows.region_extent3
    const int64_t p10 = static_cast<int64_t>(args.params[10]);  // op0.min.region_origin0
    const int64_t p11 = static_cast<int64_t>(args.params[11]);  // op0.min.region_extent0
    const int64_t p12 = static_cast<int64_t>(args.params[12]);  // op0.max.rows.region_origin0
    const int64_t p13 = static_cast<int64_t>(args.params[13]);  // op0.max.rows.region_extent0
    const int64_t p14 = static_cast<int64_t>(args.params[14]);  // op0.max.rows.region_origin3
    const int64_t p15 = static_cast<int64_t>(args.params[15]);  // op0.max.rows.region_extent3
    const int64_t p16 = static_cast<int64_t>(args.params[16]);  // op0.max.region_origin0
    const int64_t p17 = static_cast<int64_t>(args.params[17]);  // op0.max.region_extent0
    const int64_t p18 = static_cast<int64_t>(args.params[18]);  // op0.autocontrast.stride2
    const int64_t p19 = static_cast<int64_t>(args.params[19]);  // op0.autocontrast.stride1
    const int64_t p20 = static_cast<int64_t>(args.params[20]);  // op0.autocontrast.stride0
    const int64_t p21 = static_cast<int64_t>(args.params[21]);  // op0.min.rows.stride2
    const int64_t p22 = static_cast<int64_t>(args.params[22]);  // op0.min.rows.stride1
    const int64_t p23 = static_cast<int64_t>(args.params[23]);  // op0.min.rows.stride0
    const int64_t p24 = static_cast<int64_t>(args.params[24]);  // op0.max.rows.stride2
    const int64_t p25 = static_cast<int64_t>(args.params[25]);  // op0.max.rows.stride1
    const int64_t p26 = static_cast<int64_t>(args.params[26]);  // op0.max.rows.stride0
    const int64_t gx = static_cast<int64_t>(blockIdx.x);
    if (gx >= 1) return;
    const int32_t v3 = static_cast<int32_t>(0 + gx);
    for (int64_t gy = blockIdx.y; gy < 1; gy += gridDim.y) {
        const int32_t v2 = static_cast<int32_t>(0 + gy);
        const int64_t gz_end = static_cast<int64_t>(p11 * static_cast<int64_t>(3));
        for (int64_t gz = blockIdx.z; gz < gz_end; gz += gridDim.z) {
            int64_t rest = gz;
            const int32_t v1 = static_cast<int32_t>(0 + rest % 3);
            rest /= 3;
            const int64_t v0 = static_cast<int64_t>(p10 + rest);
            float t0 = INFINITY;
            {
                const int64_t n_outer = p1;
                for (int64_t r64 = threadIdx.x; r64 < n_outer; r64 += blockDim.x) {
                    {
                        const int64_t t1 = -p6;
                        const int64_t t2 = t1 + v0;
                        const int64_t t3 = t2 * p23;
                        const int64_t t4 = v1 * p22;
                        const int64_t t5 = -p8;
                        const int64_t t6 = t5 + t4;
                        const int64_t t7 = t6 + t3;
                        const int64_t t8 = t7 + r64;
                        const float t9 = b4[t8];
                        t0 = t_rmin(t0, t9);
                    }
                }
            }
            t0 = t_block_reduce<float>(t0, static_cast<float>(INFINITY), t_op_min());
            const int64_t t10 = v0 * 3;
            const int64_t t11 = p10 * -3;
            const int64_t t12 = t11 + t10;
            const int64_t t13 = t12 + v1;
            if (threadIdx.x == 0) b1[t13] = t0;
        }
    }
}

// kernel_2
//   computes op0.max.rows: op0.max's reduction for each r66 (a block of threads or a histogram each, in parallel)
//   bounds: computes only the region of v0, v3 its consumers read
//   layout: contiguous
//   loop order: v0, v1, v2, v3 (memory order of the output)
//   a block per output: its threads share the reduction over r67 (the greatest term: the same in any grouping), combined across the block
//   grid x: v3 (a block of 128 threads per output)
//   grid y: v2
//   grid z: v0 x v1 (collapsed)
extern "C" __global__ void __launch_bounds__(128) toroid_kernel_2(const toroid_args args) {
    const uint8_t* __restrict__ b0 = static_cast<const uint8_t*>(args.buffers[0]);  // input
    float* __restrict__ b5 = static_cast<float*>(args.buffers[5]);  // op0.max.rows
    const int64_t p0 = static_cast<int64_t>(args.params[0]);  // input.n
    const int64_t p1 = static_cast<int64_t>(args.params[1]);  // input.h
    const int64_t p2 = static_cast<int64_t>(args.params[2]);  // input.w
    const int64_t p3 = static_cast<int64_t>(args.params[3]);  // input.stride_n
    const int64_t p4 = static_cast<int64_t>(args.params[4]);  // input.stride_c
    const int64_t p5 = static_cast<int64_t>(args.params[5]);  // input.stride_h
    const int64_t p6 = static_cast<int64_t>(args.params[6]);  // op0.min.rows.region_origin0
    const int64_t p7 = static_cast<int64_t>(args.params[7]);  // op0.min.rows.region_extent0
    const int64_t p8 = static_cast<int64_t>(args.params[8]);  // op0.min.rows.region_origin3
    const int64_t p9 = static_cast<int64_t>(args.params[9]);  // op0.min.rows.region_extent3
    const int64_t p10 = static_cast<int64_t>(args.params[10]);  // op0.min.region_origin0
    const int64_t p11 = static_cast<int64_t>(args.params[11]);  // op0.min.region_extent0
    const int64_t p12 = static_cast<int64_t>(args.params[12]);  // op0.max.rows.region_origin0
    const int64_t p13 = static_cast<int64_t>(args.params[13]);  // op0.max.rows.region_extent0
    const int64_t p14 = static_cast<int64_t>(args.params[14]);  // op0.max.rows.region_origin3
    const int64_t p15 = static_cast<int64_t>(args.params[15]);  // op0.max.rows.region_extent3
    const int64_t p16 = static_cast<int64_t>(args.params[16]);  // op0.max.region_origin0
    const int64_t p17 = static_cast<int64_t>(args.params[17]);  // op0.max.region_extent0
    const int64_t p18 = static_cast<int64_t>(args.params[18]);  // op0.autocontrast.stride2
    const int64_t p19 = static_cast<int64_t>(args.params[19]);  // op0.autocontrast.stride1
    const int64_t p20 = static_cast<int64_t>(args.params[20]);  // op0.autocontrast.stride0
    const int64_t p21 = static_cast<int64_t>(args.params[21]);  // op0.min.rows.stride2
    const int64_t p22 = static_cast<int64_t>(args.params[22]);  // op0.min.rows.stride1
    const int64_t p23 = static_cast<int64_t>(args.params[23]);  // op0.min.rows.stride0
    const int64_t p24 = static_cast<int64_t>(args.params[24]);  // op0.max.rows.stride2
    const int64_t p25 = static_cast<int64_t>(args.params[25]);  // op0.max.rows.stride1
    const int64_t p26 = static_cast<int64_t>(args.params[26]);  // op0.max.rows.stride0
    const int64_t gx = static_cast<int64_t>(blockIdx.x);
    if (gx >= p15) return;
    const int64_t v3 = static_cast<int64_t>(p14 + gx);
    for (int64_t gy = blockIdx.y; gy < 1; gy += gridDim.y) {
        const int32_t v2 = static_cast<int32_t>(0 + gy);
        const int64_t gz_end = static_cast<int64_t>(p13 * static_cast<int64_t>(3));
        for (int64_t gz = blockIdx.z; gz < gz_end; gz += gridDim.z) {
            int64_t rest = gz;
            const int32_t v1 = static_cast<int32_t>(0 + rest % 3);
            rest /= 3;
            const int64_t v0 = static_cast<int64_t>(p12 + rest);
            float t0 = (-INFINITY);
            {
                const int64_t n_outer = p2;
                for (int64_t r67 = threadIdx.x; r67 < n_outer; r67 += blockDim.x) {
                    {
                        const int64_t t1 = v3 * p5;
                        const int64_t t2 = v1 * p4;
                        const int64_t t3 = v0 * p3;
                        const int64_t t4 = t3 + t2;
                        const int64_t t5 = t4 + t1;
                        const int64_t t6 = t5 + r67;
                        const uint8_t t7 = b0[t6];
                        const float t8 = static_cast<float>(t7);
                        t0 = t_rmax(t0, t8);
                    }
                }
            }
            t0 = t_block_reduce<float>(t0, static_cast<float>((-INFINITY)), t_op_max());
            const int64_t t9 = v1 * p25;
            const int64_t t10 = -p12;
            const int64_t t11 = t10 + v0;
            const int64_t t12 = t11 * p26;
            const int64_t t13 = -p14;
            const int64_t t14 = t13 + t12;
            const int64_t t15 = t14 + t9;
            const int64_t t16 = t15 + v3;
            if (threadIdx.x == 0) b5[t16] = t0;
        }
    }
}

// kernel_3
//   computes op0.max (op 0 (autocontrast))
//   realize: requested by its decomposition
//   combines the float values of op0.max.rows (its reduction split along r66: few outputs of long reductions would keep few blocks busy)
//   bounds: computes only the region of v0 its consumers read
//   layout: contiguous
//   loop order: v0, v1, v2, v3 (memory order of the output)
//   a block per output: its threads share the reduction over r66 (the greatest term: the same in any grouping), combined across the block
//   grid x: v3 (a block of 128 threads per output)
//   grid y: v2
//   grid z: v0 x v1 (collapsed)
//   fuse t5: no (a block of threads computes each output or plane of one of them (a block-wide reduction or a histogram))
extern "C" __global__ void __launch_bounds__(128) toroid_kernel_3(const toroid_args args) {
    float* __restrict__ b2 = static_cast<float*>(args.buffers[2]);  // op0.max
    const float* __restrict__ b5 = static_cast<const float*>(args.buffers[5]);  // op0.max.rows
    const int64_t p0 = static_cast<int64_t>(args.params[0]);  // input.n
    const int64_t p1 = static_cast<int64_t>(args.params[1]);  // input.h
    const int64_t p2 = static_cast<int64_t>(args.params[2]);  // input.w
    const int64_t p3 = static_cast<int64_t>(args.params[3]);  // input.stride_n
    const int64_t p4 = static_cast<int64_t>(args.params[4]);  // input.stride_c
    const int64_t p5 = static_cast<int64_t>(args.params[5]);  // input.stride_h
    const int64_t p6 = static_cast<int64_t>(args.params[6]);  // op0.min.rows.region_origin0
    const int64_t p7 = static_cast<int64_t>(args.params[7]);  // op0.min.rows.region_extent0
    const int64_t p8 = static_cast<int64_t>(args.params[8]);  // op0.min.rows.region_origin3
    const int64_t p9 = static_cast<int64_t>(args.params[9]);  // op0.min.rows.region_extent3
    const int64_t p10 = static_cast<int64_t>(args.params[10]);  // op0.min.region_origin0
    const int64_t p11 = static_cast<int64_t>(args.params[11]);  // op0.min.region_extent0
    const int64_t p12 = static_cast<int64_t>(args.params[12]);  // op0.max.rows.region_origin0
    const int64_t p13 = static_cast<int64_t>(args.params[13]);  // op0.max.rows.region_extent0
    const int64_t p14 = static_cast<int64_t>(args.params[14]);  // op0.max.rows.region_origin3
    const int64_t p15 = static_cast<int64_t>(args.params[15]);  // op0.max.rows.region_extent3
    const int64_t p16 = static_cast<int64_t>(args.params[16]);  // op0.max.region_origin0
    const int64_t p17 = static_cast<int64_t>(args.params[17]);  // op0.max.region_extent0
    const int64_t p18 = static_cast<int64_t>(args.params[18]);  // op0.autocontrast.stride2
    const int64_t p19 = static_cast<int64_t>(args.params[19]);  // op0.autocontrast.stride1
    const int64_t p20 = static_cast<int64_t>(args.params[20]);  // op0.autocontrast.stride0
    const int64_t p21 = static_cast<int64_t>(args.params[21]);  // op0.min.rows.stride2
    const int64_t p22 = static_cast<int64_t>(args.params[22]);  // op0.min.rows.stride1
    const int64_t p23 = static_cast<int64_t>(args.params[23]);  // op0.min.rows.stride0
    const int64_t p24 = static_cast<int64_t>(args.params[24]);  // op0.max.rows.stride2
    const int64_t p25 = static_cast<int64_t>(args.params[25]);  // op0.max.rows.stride1
    const int64_t p26 = static_cast<int64_t>(args.params[26]);  // op0.max.rows.stride0
    const int64_t gx = static_cast<int64_t>(blockIdx.x);
    if (gx >= 1) return;
    const int32_t v3 = static_cast<int32_t>(0 + gx);
    for (int64_t gy = blockIdx.y; gy < 1; gy += gridDim.y) {
        const int32_t v2 = static_cast<int32_t>(0 + gy);
        const int64_t gz_end = static_cast<int64_t>(p17 * static_cast<int64_t>(3));
        for (int64_t gz = blockIdx.z; gz < gz_end; gz += gridDim.z) {
            int64_t rest = gz;
            const int32_t v1 = static_cast<int32_t>(0 + rest % 3);
            rest /= 3;
            const int64_t v0 = static_cast<int64_t>(p16 + rest);
            float t0 = (-INFINITY);
            {
                const int64_t n_outer = p1;
                for (int64_t r66 = threadIdx.x; r66 < n_outer; r66 += blockDim.x) {
                    {
                        const int64_t t1 = v1 * p25;
                        const int64_t t2 = -p12;
                        const int64_t t3 = t2 + v0;
                        const int64_t t4 = t3 * p26;
                        const int64_t t5 = -p14;
                        const int64_t t6 = t5 + t4;
                        const int64_t t7 = t6 + t1;
                        const int64_t t8 = t7 + r66;
                        const float t9 = b5[t8];
                        t0 = t_rmax(t0, t9);
                    }
                }
            }
            t0 = t_block_reduce<float>(t0, static_cast<float>((-INFINITY)), t_op_max());
            const int64_t t10 = v0 * 3;
            const int64_t t11 = p16 * -3;
            const int64_t t12 = t11 + t10;
            const int64_t t13 = t12 + v1;
            if (threadIdx.x == 0) b2[t13] = t0;
        }
    }
}

// kernel_4
//   computes op0.autocontrast (op 0 (autocontrast))
//   realize: the pipeline's result
//   layout: contiguous
//   loop order: v0, v1, v2, v3 (memory order of the output)
//   grid x: v3 (128 threads a block, coalesced along the dense dim)
//   16 outputs along v3 a thread: one 16-byte store; one access each for the loads of input forwards
//   grid y: v2
//   grid z: v0 x v1 (collapsed)
//   fuse t1: no (a block of threads computes each output or plane of one of them (a block-wide reduction or a histogram))
//   fuse t2: no (a block of threads computes each output or plane of one of them (a block-wide reduction or a histogram))
extern "C" __global__ void __launch_bounds__(128) toroid_kernel_4(const toroid_args args) {
    const uint8_t* __restrict__ b0 = static_cast<const uint8_t*>(args.buffers[0]);  // input
    const float* __restrict__ b1 = static_cast<const float*>(args.buffers[1]);  // op0.min
    const float* __restrict__ b2 = static_cast<const float*>(args.buffers[2]);  // op0.max
    uint8_t* __restrict__ b3 = static_cast<uint8_t*>(args.buffers[3]);  // op0.autocontrast
    const int64_t p0 = static_cast<int64_t>(args.params[0]);  // input.n
    const int64_t p1 = static_cast<int64_t>(args.params[1]);  // input.h
    const int64_t p2 = static_cast<int64_t>(args.params[2]);  // input.w
    const int64_t p3 = static_cast<int64_t>(args.params[3]);  // input.stride_n
    const int64_t p4 = static_cast<int64_t>(args.params[4]);  // input.stride_c
    const int64_t p5 = static_cast<int64_t>(args.params[5]);  // input.stride_h
    const int64_t p6 = static_cast<int64_t>(args.params[6]);  // op0.min.rows.region_origin0
    const int64_t p7 = static_cast<int64_t>(args.params[7]);  // op0.min.rows.region_extent0
    const int64_t p8 = static_cast<int64_t>(args.params[8]);  // op0.min.rows.region_origin3
    const int64_t p9 = static_cast<int64_t>(args.params[9]);  // op0.min.rows.region_extent3
    const int64_t p10 = static_cast<int64_t>(args.params[10]);  // op0.min.region_origin0
    const int64_t p11 = static_cast<int64_t>(args.params[11]);  // op0.min.region_extent0
    const int64_t p12 = static_cast<int64_t>(args.params[12]);  // op0.max.rows.region_origin0
    const int64_t p13 = static_cast<int64_t>(args.params[13]);  // op0.max.rows.region_extent0
    const int64_t p14 = static_cast<int64_t>(args.params[14]);  // op0.max.rows.region_origin3
    const int64_t p15 = static_cast<int64_t>(args.params[15]);  // op0.max.rows.region_extent3
    const int64_t p16 = static_cast<int64_t>(args.params[16]);  // op0.max.region_origin0
    const int64_t p17 = static_cast<int64_t>(args.params[17]);  // op0.max.region_extent0
    const int64_t p18 = static_cast<int64_t>(args.params[18]);  // op0.autocontrast.stride2
    const int64_t p19 = static_cast<int64_t>(args.params[19]);  // op0.autocontrast.stride1
    const int64_t p20 = static_cast<int64_t>(args.params[20]);  // op0.autocontrast.stride0
    const int64_t p21 = static_cast<int64_t>(args.params[21]);  // op0.min.rows.stride2
    const int64_t p22 = static_cast<int64_t>(args.params[22]);  // op0.min.rows.stride1
    const int64_t p23 = static_cast<int64_t>(args.params[23]);  // op0.min.rows.stride0
    const int64_t p24 = static_cast<int64_t>(args.params[24]);  // op0.max.rows.stride2
    const int64_t p25 = static_cast<int64_t>(args.params[25]);  // op0.max.rows.stride1
    const int64_t p26 = static_cast<int64_t>(args.params[26]);  // op0.max.rows.stride0
    const int64_t gx = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * 16;
    if (gx >= p2) return;
    for (int64_t gy = blockIdx.y; gy < p1; gy += gridDim.y) {
        const int64_t v2 = static_cast<int64_t>(0 + gy);
        const int64_t gz_end = static_cast<int64_t>(p0 * static_cast<int64_t>(3));
        for (int64_t gz = blockIdx.z; gz < gz_end; gz += gridDim.z) {
            int64_t rest = gz;
            const int32_t v1 = static_cast<int32_t>(0 + rest % 3);
            rest /= 3;
            const int64_t v0 = static_cast<int64_t>(0 + rest);
            int64_t xo0;
            int64_t xs;
            {
                const int64_t v3 = static_cast<int64_t>(0 + gx);
                const int64_t t0 = v2 * p5;
                const int64_t t1 = v1 * p4;
                const int64_t t2 = v0 * p3;
                const int64_t t3 = t2 + t1;
                const int64_t t4 = t3 + t0;
                const int64_t t5 = t4 + v3;
                xo0 = t5;
                const int64_t t6 = v1 * p19;
                const int64_t t7 = v0 * p20;
                const int64_t t8 = v2 * p18;
                const int64_t t9 = t8 + t7;
                const int64_t t10 = t9 + t6;
                const int64_t t11 = t10 + v3;
                xs = t11;
            }
            if (gx + 16 <= p2 && t_aligned<16>(b3 + xs) && t_aligned<16>(b0 + xo0)) {
                const t_pack<uint8_t, 16> xl0 = t_load_pack<uint8_t, 16>(b0 + xo0);
                t_pack<uint8_t, 16> xv;
                {
                    const int64_t v3 = static_cast<int64_t>(0 + gx + 0);
                    const int64_t t12 = v0 * 3;
                    const int64_t t13 = p10 * -3;
                    const int64_t t14 = t13 + t12;
                    const int64_t t15 = t14 + v1;
                    const float t16 = b1[t15];
                    const int64_t t17 = p16 * -3;
                    const int64_t t18 = t17 + t12;
                    const int64_t t19 = t18 + v1;
                    const float t20 = b2[t19];
                    const float t21 = t20 - t16;
                    const float t22 = t21 * 0x1.010102p-8f;
                    const bool t23 = t20 == t16;
                    const float t24 = t23 ? 0x1p+0f : t22;
                    const float t25 = t23 ? 0x0p+0f : t16;
                    const float t26 = static_cast<float>(xl0.v[0]);
                    const float t27 = t26 - t25;
                    const float t28 = t27 / t24;
                    const float t29 = t_max<float>(t28, 0x0p+0f);
                    const float t30 = t_min<float>(t29, 0x1.fep+7f);
                    const uint8_t t31 = static_cast<uint8_t>(t30);
                    xv.v[0] = t31;
                }
                {
                    const int64_t v3 = static_cast<int64_t>(0 + gx + 1);
                    const int64_t t32 = v0 * 3;
                    const int64_t t33 = p10 * -3;
                    const int64_t t34 = t33 + t32;
                    const int64_t t35 = t34 + v1;
                    const float t36 = b1[t35];
                    const int64_t t37 = p16 * -3;
                    const int64_t t38 = t37 + t32;
                    const int64_t t39 = t38 + v1;
                    const float t40 = b2[t39];
                    const float t41 = t40 - t36;
                    const float t42 = t41 * 0x1.010102p-8f;
                    const bool t43 = t40 == t36;
                    const float t44 = t43 ? 0x1p+0f : t42;
                    const float t45 = t43 ? 0x0p+0f : t36;
                    const float t46 = static_cast<float>(xl0.v[1]);
                    const float t47 = t46 - t45;
                    const float t48 = t47 / t44;
                    const float t49 = t_max<float>(t48, 0x0p+0f);
                    const float t50 = t_min<float>(t49, 0x1.fep+7f);
                    const uint8_t t51 = static_cast<uint8_t>(t50);
                    xv.v[1] = t51;
                }
                {
                    const int64_t v3 = static_cast<int64_t>(0 + gx + 2);
                    const int64_t t52 = v0 * 3;
                    const int64_t t53 = p10 * -3;
                    const int64_t t54 = t53 + t52;
                    const int64_t t55 = t54 + v1;
                    const float t56 = b1[t55];
                    const int64_t t57 = p16 * -3;
                    const int64_t t58 = t57 + t52;
                    const int64_t t59 = t58 + v1;
                    const float t60 = b2[t59];
                    const float t61 = t60 - t56;
                    const float t62 = t61 * 0x1.010102p-8f;
                    const bool t63 = t60 == t56;
                    const float t64 = t63 ? 0x1p+0f : t62;
                    const float t65 = t63 ? 0x0p+0f : t56;
                    const float t66 = static_cast<float>(xl0.v[2]);
                    const float t67 = t66 - t65;
                    const float t68 = t67 / t64;
                    const float t69 = t_max<float>(t68, 0x0p+0f);
                    const float t70 = t_min<float>(t69, 0x1.fep+7f);
                    const uint8_t t71 = static_cast<uint8_t>(t70);
                    xv.v[2] = t71;
                }
                {
                    const int64_t v3 = static_cast<int64_t>(0 + gx + 3);
                    const int64_t t72 = v0 * 3;
                    const int64_t t73 = p10 * -3;
                    const int64_t t74 = t73 + t72;
                    const int64_t t75 = t74 + v1;
                    const float t76 = b1[t75];
                    const int64_t t77 = p16 * -3;
                    const int64_t t78 = t77 + t72;
                    const int64_t t79 = t78 + v1;
                    const float t80 = b2[t79];
                    const float t81 = t80 - t76;
                    const float t82 = t81 * 0x1.010102p-8f;
                    const bool t83 = t80 == t76;
                    const float t84 = t83 ? 0x1p+0f : t82;
                    const float t85 = t83 ? 0x0p+0f : t76;
                    const float t86 = static_cast<float>(xl0.v[3]);
                    const float t87 = t86 - t85;
                    const float t88 = t87 / t84;
                    const float t89 = t_max<float>(t88, 0x0p+0f);
                    const float t90 = t_min<float>(t89, 0x1.fep+7f);
                    const uint8_t t91 = static_cast<uint8_t>(t90);
                    xv.v[3] = t91;
                }
                {
                    const int64_t v3 = static_cast<int64_t>(0 + gx + 4);
                    const int64_t t92 = v0 * 3;
                    const int64_t t93 = p10 * -3;
                    const int64_t t94 = t93 + t92;
                    const int64_t t95 = t94 + v1;
                    const float t96 = b1[t95];
                    const int64_t t97 = p16 * -3;
                    const int64_t t98 = t97 + t92;
                    const int64_t t99 = t98 + v1;
                    const float t100 = b2[t99];
                    const float t101 = t100 - t96;
                    const float t102 = t101 * 0x1.010102p-8f;
                    const bool t103 = t100 == t96;
                    const float t104 = t103 ? 0x1p+0f : t102;
                    const float t105 = t103 ? 0x0p+0f : t96;
                    const float t106 = static_cast<float>(xl0.v[4]);
                    const float t107 = t106 - t105;
                    const float t108 = t107 / t104;
                    const float t109 = t_max<float>(t108, 0x0p+0f);
                    const float t110 = t_min<float>(t109, 0x1.fep+7f);
                    const uint8_t t111 = static_cast<uint8_t>(t110);
                    xv.v[4] = t111;
                }
                {
                    const int64_t v3 = static_cast<int64_t>(0 + gx + 5);
                    const int64_t t112 = v0 * 3;
                    const int64_t t113 = p10 * -3;
                    const int64_t t114 = t113 + t112;
                    const int64_t t115 = t114 + v1;
                    const float t116 = b1[t115];
                    const int64_t t117 = p16 * -3;
                    const int64_t t118 = t117 + t112;
                    const int64_t t119 = t118 + v1;
                    const float t120 = b2[t119];
                    const float t121 = t120 - t116;
                    const float t122 = t121 * 0x1.010102p-8f;
                    const bool t123 = t120 == t116;
                    const float t124 = t123 ? 0x1p+0f : t122;
                    const float t125 = t123 ? 0x0p+0f : t116;
                    const float t126 = static_cast<float>(xl0.v[5]);
                    const float t127 = t126 - t125;
                    const float t128 = t127 / t124;
                    const float t129 = t_max<float>(t128, 0x0p+0f);
                    const float t130 = t_min<float>(t129, 0x1.fep+7f);
                    const uint8_t t131 = static_cast<uint8_t>(t130);
                    xv.v[5] = t131;
                }
                {
                    const int64_t v3 = static_cast<int64_t>(0 + gx + 6);
                    const int64_t t132 = v0 * 3;
                    const int64_t t133 = p10 * -3;
                    const int64_t t134 = t133 + t132;
                    const int64_t t135 = t134 + v1;
                    const float t136 = b1[t135];
                    const int64_t t137 = p16 * -3;
                    const int64_t t138 = t137 + t132;
                    const int64_t t139 = t138 + v1;
                    const float t140 = b2[t139];
                    const float t141 = t140 - t136;
                    const float t142 = t141 * 0x1.010102p-8f;
                    const bool t143 = t140 == t136;
                    const float t144 = t143 ? 0x1p+0f : t142;
                    const float t145 = t143 ? 0x0p+0f : t136;
                    const float t146 = static_cast<float>(xl0.v[6]);
                    const float t147 = t146 - t145;
                    const float t148 = t147 / t144;
                    const float t149 = t_max<float>(t148, 0x0p+0f);
                    const float t150 = t_min<float>(t149, 0x1.fep+7f);
                    const uint8_t t151 = static_cast<uint8_t>(t150);
                    xv.v[6] = t151;
                }
                {
                    const int64_t v3 = static_cast<int64_t>(0 + gx + 7);
                    const int64_t t152 = v0 * 3;
                    const int64_t t153 = p10 * -3;
                    const int64_t t154 = t153 + t152;
                    const int64_t t155 = t154 + v1;
                    const float t156 = b1[t155];
                    const int64_t t157 = p16 * -3;
                    const int64_t t158 = t157 + t152;
                    const int64_t t159 = t158 + v1;
                    const float t160 = b2[t159];
                    const float t161 = t160 - t156;
                    const float t162 = t161 * 0x1.010102p-8f;
                    const bool t163 = t160 == t156;
                    const float t164 = t163 ? 0x1p+0f : t162;
                    const float t165 = t163 ? 0x0p+0f : t156;
                    const float t166 = static_cast<float>(xl0.v[7]);
                    const float t167 = t166 - t165;
                    const float t168 = t167 / t164;
                    const float t169 = t_max<float>(t168, 0x0p+0f);
                    const float t170 = t_min<float>(t169, 0x1.fep+7f);
                    const uint8_t t171 = static_cast<uint8_t>(t170);
                    xv.v[7] = t171;
                }
                {
                    const int64_t v3 = static_cast<int64_t>(0 + gx + 8);
                    const int64_t t172 = v0 * 3;
                    const int64_t t173 = p10 * -3;
                    const int64_t t174 = t173 + t172;
                    const int64_t t175 = t174 + v1;
                    const float t176 = b1[t175];
                    const int64_t t177 = p16 * -3;
                    const int64_t t178 = t177 + t172;
                    const int64_t t179 = t178 + v1;
                    const float t180 = b2[t179];
                    const float t181 = t180 - t176;
                    const float t182 = t181 * 0x1.010102p-8f;
                    const bool t183 = t180 == t176;
                    const float t184 = t183 ? 0x1p+0f : t182;
                    const float t185 = t183 ? 0x0p+0f : t176;
                    const float t186 = static_cast<float>(xl0.v[8]);
                    const float t187 = t186 - t185;
                    const float t188 = t187 / t184;
                    const float t189 = t_max<float>(t188, 0x0p+0f);
                    const float t190 = t_min<float>(t189, 0x1.fep+7f);
                    const uint8_t t191 = static_cast<uint8_t>(t190);
                    xv.v[8] = t191;
                }
                {
                    const int64_t v3 = static_cast<int64_t>(0 + gx + 9);
                    const int64_t t192 = v0 * 3;
                    const int64_t t193 = p10 * -3;
                    const int64_t t194 = t193 + t192;
                    const int64_t t195 = t194 + v1;
                    const float t196 = b1[t195];
                    const int64_t t197 = p16 * -3;
                    const int64_t t198 = t197 + t192;
                    const int64_t t199 = t198 + v1;
                    const float t200 = b2[t199];
                    const float t201 = t200 - t196;
                    const float t202 = t201 * 0x1.010102p-8f;
                    const bool t203 = t200 == t196;
                    const float t204 = t203 ? 0x1p+0f : t202;
                    const float t205 = t203 ? 0x0p+0f : t196;
                    const float t206 = static_cast<float>(xl0.v[9]);
                    const float t207 = t206 - t205;
                    const float t208 = t207 / t204;
                    const float t209 = t_max<float>(t208, 0x0p+0f);
                    const float t210 = t_min<float>(t209, 0x1.fep+7f);
                    const uint8_t t211 = static_cast<uint8_t>(t210);
                    xv.v[9] = t211;
                }
                {
                    const int64_t v3 = static_cast<int64_t>(0 + gx + 10);
                    const int64_t t212 = v0 * 3;
                    const int64_t t213 = p10 * -3;
                    const int64_t t214 = t213 + t212;
                    const int64_t t215 = t214 + v1;
                    const float t216 = b1[t215];
                    const int64_t t217 = p16 * -3;
                    const int64_t t218 = t217 + t212;
                    const int64_t t219 = t218 + v1;
                    const float t220 = b2[t219];
                    const float t221 = t220 - t216;
                    const float t222 = t221 * 0x1.010102p-8f;
                    const bool t223 = t220 == t216;
                    const float t224 = t223 ? 0x1p+0f : t222;
                    const float t225 = t223 ? 0x0p+0f : t216;
                    const float t226 = static_cast<float>(xl0.v[10]);
                    const float t227 = t226 - t225;
                    const float t228 = t227 / t224;
                    const float t229 = t_max<float>(t228, 0x0p+0f);
                    const float t230 = t_min<float>(t229, 0x1.fep+7f);
                    const uint8_t t231 = static_cast<uint8_t>(t230);
                    xv.v[10] = t231;
                }
                {
                    const int64_t v3 = static_cast<int64_t>(0 + gx + 11);
                    const int64_t t232 = v0 * 3;
                    const int64_t t233 = p10 * -3;
                    const int64_t t234 = t233 + t232;
                    const int64_t t235 = t234 + v1;
                    const float t236 = b1[t235];
                    const int64_t t237 = p16 * -3;
                    const int64_t t238 = t237 + t232;
                    const int64_t t239 = t238 + v1;
                    const float t240 = b2[t239];
                    const float t241 = t240 - t236;
                    const float t242 = t241 * 0x1.010102p-8f;
                    const bool t243 = t240 == t236;
                    const float t244 = t243 ? 0x1p+0f : t242;
                    const float t245 = t243 ? 0x0p+0f : t236;
                    const float t246 = static_cast<float>(xl0.v[11]);
                    const float t247 = t246 - t245;
                    const float t248 = t247 / t244;
                    const float t249 = t_max<float>(t248, 0x0p+0f);
                    const float t250 = t_min<float>(t249, 0x1.fep+7f);
                    const uint8_t t251 = static_cast<uint8_t>(t250);
                    xv.v[11] = t251;
                }
                {
                    const int64_t v3 = static_cast<int64_t>(0 + gx + 12);
                    const int64_t t252 = v0 * 3;
                    const int64_t t253 = p10 * -3;
                    const int64_t t254 = t253 + t252;
                    const int64_t t255 = t254 + v1;
                    const float t256 = b1[t255];
                    const int64_t t257 = p16 * -3;
                    const int64_t t258 = t257 + t252;
                    const int64_t t259 = t258 + v1;
                    const float t260 = b2[t259];
                    const float t261 = t260 - t256;
                    const float t262 = t261 * 0x1.010102p-8f;
                    const bool t263 = t260 == t256;
                    const float t264 = t263 ? 0x1p+0f : t262;
                    const float t265 = t263 ? 0x0p+0f : t256;
                    const float t266 = static_cast<float>(xl0.v[12]);
                    const float t267 = t266 - t265;
                    const float t268 = t267 / t264;
                    const float t269 = t_max<float>(t268, 0x0p+0f);
                    const float t270 = t_min<float>(t269, 0x1.fep+7f);
                    const uint8_t t271 = static_cast<uint8_t>(t270);
                    xv.v[12] = t271;
                }
                {
                    const int64_t v3 = static_cast<int64_t>(0 + gx + 13);
                    const int64_t t272 = v0 * 3;
                    const int64_t t273 = p10 * -3;
                    const int64_t t274 = t273 + t272;
                    const int64_t t275 = t274 + v1;
                    const float t276 = b1[t275];
                    const int64_t t277 = p16 * -3;
                    const int64_t t278 = t277 + t272;
                    const int64_t t279 = t278 + v1;
                    const float t280 = b2[t279];
                    const float t281 = t280 - t276;
                    const float t282 = t281 * 0x1.010102p-8f;
                    const bool t283 = t280 == t276;
                    const float t284 = t283 ? 0x1p+0f : t282;
                    const float t285 = t283 ? 0x0p+0f : t276;
                    const float t286 = static_cast<float>(xl0.v[13]);
                    const float t287 = t286 - t285;
                    const float t288 = t287 / t284;
                    const float t289 = t_max<float>(t288, 0x0p+0f);
                    const float t290 = t_min<float>(t289, 0x1.fep+7f);
                    const uint8_t t291 = static_cast<uint8_t>(t290);
                    xv.v[13] = t291;
                }
                {
                    const int64_t v3 = static_cast<int64_t>(0 + gx + 14);
                    const int64_t t292 = v0 * 3;
                    const int64_t t293 = p10 * -3;
                    const int64_t t294 = t293 + t292;
                    const int64_t t295 = t294 + v1;
                    const float t296 = b1[t295];
                    const int64_t t297 = p16 * -3;
                    const int64_t t298 = t297 + t292;
                    const int64_t t299 = t298 + v1;
                    const float t300 = b2[t299];
                    const float t301 = t300 - t296;
                    const float t302 = t301 * 0x1.010102p-8f;
                    const bool t303 = t300 == t296;
                    const float t304 = t303 ? 0x1p+0f : t302;
                    const float t305 = t303 ? 0x0p+0f : t296;
                    const float t306 = static_cast<float>(xl0.v[14]);
                    const float t307 = t306 - t305;
                    const float t308 = t307 / t304;
                    const float t309 = t_max<float>(t308, 0x0p+0f);
                    const float t310 = t_min<float>(t309, 0x1.fep+7f);
                    const uint8_t t311 = static_cast<uint8_t>(t310);
                    xv.v[14] = t311;
                }
                {
                    const int64_t v3 = static_cast<int64_t>(0 + gx + 15);
                    const int64_t t312 = v0 * 3;
                    const int64_t t313 = p10 * -3;
                    const int64_t t314 = t313 + t312;
                    const int64_t t315 = t314 + v1;
                    const float t316 = b1[t315];
                    const int64_t t317 = p16 * -3;
                    const int64_t t318 = t317 + t312;
                    const int64_t t319 = t318 + v1;
                    const float t320 = b2[t319];
                    const float t321 = t320 - t316;
                    const float t322 = t321 * 0x1.010102p-8f;
                    const bool t323 = t320 == t316;
                    const float t324 = t323 ? 0x1p+0f : t322;
                    const float t325 = t323 ? 0x0p+0f : t316;
                    const float t326 = static_cast<float>(xl0.v[15]);
                    const float t327 = t326 - t325;
                    const float t328 = t327 / t324;
                    const float t329 = t_max<float>(t328, 0x0p+0f);
                    const float t330 = t_min<float>(t329, 0x1.fep+7f);
                    const uint8_t t331 = static_cast<uint8_t>(t330);
                    xv.v[15] = t331;
                }
                t_store_pack<uint8_t, 16>(b3 + xs, xv);
            }
            else {
                for (int32_t u = 0; u < 16 && gx + u < p2; ++u) {
                    const int64_t v3 = static_cast<int64_t>(0 + gx + u);
                    const int64_t t332 = v1 * p19;
                    const int64_t t333 = v0 * p20;
                    const int64_t t334 = v2 * p18;
                    const int64_t t335 = t334 + t333;
                    const int64_t t336 = t335 + t332;
                    const int64_t t337 = t336 + v3;
                    const int64_t t338 = v0 * 3;
                    const int64_t t339 = p10 * -3;
                    const int64_t t340 = t339 + t338;
                    const int64_t t341 = t340 + v1;
                    const float t342 = b1[t341];
                    const int64_t t343 = p16 * -3;
                    const int64_t t344 = t343 + t338;
                    const int64_t t345 = t344 + v1;
                    const float t346 = b2[t345];
                    const float t347 = t346 - t342;
                    const float t348 = t347 * 0x1.010102p-8f;
                    const bool t349 = t346 == t342;
                    const float t350 = t349 ? 0x1p+0f : t348;
                    const float t351 = t349 ? 0x0p+0f : t342;
                    const int64_t t352 = v2 * p5;
                    const int64_t t353 = v1 * p4;
                    const int64_t t354 = v0 * p3;
                    const int64_t t355 = t354 + t353;
                    const int64_t t356 = t355 + t352;
                    const int64_t t357 = t356 + v3;
                    const uint8_t t358 = b0[t357];
                    const float t359 = static_cast<float>(t358);
                    const float t360 = t359 - t351;
                    const float t361 = t360 / t350;
                    const float t362 = t_max<float>(t361, 0x0p+0f);
                    const float t363 = t_min<float>(t362, 0x1.fep+7f);
                    const uint8_t t364 = static_cast<uint8_t>(t363);
                    b3[t337] = t364;
                }
            }
        }
    }
}
