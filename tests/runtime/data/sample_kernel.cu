// A sample in the style the CUDA code generator writes: no #include, extern "C" kernels,
// helpers marked __device__ (clang has no -default-device), float math from NVRTC's
// built-in declarations. Compiled by NVRTC in cuda_test and by clang, without an SDK, in
// the check_cuda_source test (scripts/check-cuda-source.sh).
__device__ __forceinline__ int clamp_index(int i, int size) { return i < 0 ? 0 : (i >= size ? size - 1 : i); }

// Bilinear resize of one float32 plane, align_corners=false, with the row weights of a
// block staged in shared memory.
extern "C" __global__ void resize_bilinear_f32(const float* __restrict__ in, float* __restrict__ out, int in_h,
                                               int in_w, int out_h, int out_w, float scale_h, float scale_w) {
    __shared__ float row_weight[32];
    __shared__ int row_index[32];
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (threadIdx.x == 0 && threadIdx.y < 32) {
        const int yy = blockIdx.y * blockDim.y + threadIdx.y;
        const float src = fmaxf((static_cast<float>(yy) + 0.5f) * scale_h - 0.5f, 0.0f);
        const int y0 = static_cast<int>(floorf(src));
        row_index[threadIdx.y] = clamp_index(y0, in_h);
        row_weight[threadIdx.y] = src - static_cast<float>(y0);
    }
    __syncthreads();
    if (x >= out_w || y >= out_h) return;
    const float sx = fmaxf((static_cast<float>(x) + 0.5f) * scale_w - 0.5f, 0.0f);
    const int x0 = clamp_index(__float2int_rd(sx), in_w);
    const int x1 = min(x0 + 1, in_w - 1);
    const float lx = sx - static_cast<float>(x0);
    const int y0 = row_index[threadIdx.y];
    const int y1 = min(y0 + 1, in_h - 1);
    const float ly = row_weight[threadIdx.y];
    const float top = in[y0 * in_w + x0] * (1.0f - lx) + in[y0 * in_w + x1] * lx;
    const float bottom = in[y1 * in_w + x0] * (1.0f - lx) + in[y1 * in_w + x1] * lx;
    out[y * out_w + x] = top * (1.0f - ly) + bottom * ly;
}

// uint8 -> float32 with a per-channel normalization, the tail op of many pipelines.
extern "C" __global__ void normalize_u8(const unsigned char* __restrict__ in, float* __restrict__ out,
                                        long long count, int plane, const float* __restrict__ mean,
                                        const float* __restrict__ inv_std) {
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<long long>(gridDim.x) * blockDim.x) {
        const int c = static_cast<int>(i / plane % 3);
        out[i] = (static_cast<float>(in[i]) / 255.0f - mean[c]) * inv_std[c];
    }
}
