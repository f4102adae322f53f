// Included (clang -include) ahead of each CUDA source that scripts/check-cuda-source.sh
// compiles with clang's CUDA front end and no CUDA SDK: it declares what NVRTC provides
// without any #include (the execution-space keywords, threadIdx and friends, __syncthreads,
// the device math functions), from headers that ship with clang itself.
#pragma once
// clang's own CUDA headers check the SDK version; 11.5 is the newest clang 14 knows.
#define CUDA_VERSION 11050
#include <stddef.h>
#include <limits.h>
#define HUGE_VAL __builtin_huge_val()
#define HUGE_VALF __builtin_huge_valf()
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#include <__clang_cuda_builtin_vars.h>
#include <__clang_cuda_libdevice_declares.h>
#include <__clang_cuda_device_functions.h>
#include <__clang_cuda_math.h>
// The integer atomic add and the warp shuffles NVRTC declares (clang's own header for them
// needs the SDK's sm_70 file).
__device__ __forceinline__ int atomicAdd(int* p, int v) { return __nvvm_atom_add_gen_i(p, v); }
__device__ __forceinline__ int __shfl_down_sync(unsigned m, int v, unsigned d) {
    return __nvvm_shfl_sync_down_i32(m, v, d, 0x1f);
}
__device__ __forceinline__ unsigned __shfl_down_sync(unsigned m, unsigned v, unsigned d) {
    return static_cast<unsigned>(__nvvm_shfl_sync_down_i32(m, static_cast<int>(v), d, 0x1f));
}
__device__ __forceinline__ float __shfl_down_sync(unsigned m, float v, unsigned d) {
    return __nvvm_shfl_sync_down_f32(m, v, d, 0x1f);
}
__device__ __forceinline__ long long __shfl_down_sync(unsigned m, long long v, unsigned d) {
    const int lo = __shfl_down_sync(m, static_cast<int>(v), d), hi = __shfl_down_sync(m, static_cast<int>(v >> 32), d);
    return static_cast<long long>((static_cast<unsigned long long>(static_cast<unsigned>(hi)) << 32) | static_cast<unsigned>(lo));
}
__device__ __forceinline__ double __shfl_down_sync(unsigned m, double v, unsigned d) {
    return __longlong_as_double(__shfl_down_sync(m, __double_as_longlong(v), d));
}
