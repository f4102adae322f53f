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
