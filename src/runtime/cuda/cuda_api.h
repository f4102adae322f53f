// The part of the CUDA driver API, NVRTC and nvJPEG that toroid uses, declared here (types,
// enum values, function signatures as in CUDA 13's cuda.h, nvrtc.h and nvjpeg.h) and loaded at run
// time with dlopen/dlsym, so that building toroid needs no CUDA SDK and CPU use needs no GPU.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace toroid::cuda {

// ---- driver API (libcuda.so.1) ------------------------------------------------------

using CUresult = int;  // an enum in cuda.h; values below
using CUdevice = int;
using CUdeviceptr = unsigned long long;  // CUdeviceptr_v2 on 64-bit hosts
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;

inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr CUresult CUDA_ERROR_NOT_INITIALIZED = 3;
inline constexpr CUresult CUDA_ERROR_DEINITIALIZED = 4;
inline constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
inline constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;
inline constexpr CUresult CUDA_ERROR_NOT_READY = 600;

// CUdevice_attribute values used by Device.
enum CUdevice_attribute : int {
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
    CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
};

// CUfunction_attribute: the most dynamic shared memory a launch of the function may ask for.
inline constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;

inline constexpr unsigned CU_STREAM_NON_BLOCKING = 0x1;
inline constexpr unsigned CU_EVENT_DEFAULT = 0x0;

// Each member is loaded by dlsym under the symbol that cuda.h maps the plain name to
// (cuMemAlloc -> cuMemAlloc_v2 and so on), written beside it.
struct DriverApi {
    CUresult (*cuInit)(unsigned flags);                                              // cuInit
    CUresult (*cuDriverGetVersion)(int* version);                                    // cuDriverGetVersion
    CUresult (*cuGetErrorName)(CUresult error, const char** name);                   // cuGetErrorName
    CUresult (*cuGetErrorString)(CUresult error, const char** text);                 // cuGetErrorString
    CUresult (*cuDeviceGetCount)(int* count);                                        // cuDeviceGetCount
    CUresult (*cuDeviceGet)(CUdevice* device, int ordinal);                          // cuDeviceGet
    CUresult (*cuDeviceGetName)(char* name, int length, CUdevice device);            // cuDeviceGetName
    CUresult (*cuDeviceGetAttribute)(int* value, int attribute, CUdevice device);    // cuDeviceGetAttribute
    CUresult (*cuDeviceTotalMem)(std::size_t* bytes, CUdevice device);               // cuDeviceTotalMem_v2
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext* context, CUdevice device);       // cuDevicePrimaryCtxRetain
    CUresult (*cuDevicePrimaryCtxRelease)(CUdevice device);                          // cuDevicePrimaryCtxRelease_v2
    CUresult (*cuCtxSetCurrent)(CUcontext context);                                  // cuCtxSetCurrent
    CUresult (*cuCtxSynchronize)();                                                  // cuCtxSynchronize
    CUresult (*cuModuleLoadData)(CUmodule* module, const void* image);               // cuModuleLoadData
    CUresult (*cuModuleUnload)(CUmodule module);                                     // cuModuleUnload
    CUresult (*cuModuleGetFunction)(CUfunction* function, CUmodule module, const char* name);  // cuModuleGetFunction
    CUresult (*cuLaunchKernel)(CUfunction f, unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x,
                               unsigned block_y, unsigned block_z, unsigned shared_bytes, CUstream stream,
                               void** params, void** extra);                         // cuLaunchKernel
    CUresult (*cuMemAlloc)(CUdeviceptr* pointer, std::size_t bytes);                 // cuMemAlloc_v2
    CUresult (*cuMemFree)(CUdeviceptr pointer);                                      // cuMemFree_v2
    CUresult (*cuMemcpyHtoD)(CUdeviceptr dst, const void* src, std::size_t bytes);   // cuMemcpyHtoD_v2
    CUresult (*cuMemcpyDtoH)(void* dst, CUdeviceptr src, std::size_t bytes);         // cuMemcpyDtoH_v2
    CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr dst, const void* src, std::size_t bytes, CUstream stream);  // cuMemcpyHtoDAsync_v2
    CUresult (*cuMemcpyDtoHAsync)(void* dst, CUdeviceptr src, std::size_t bytes, CUstream stream);        // cuMemcpyDtoHAsync_v2
    CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes, CUstream stream);  // cuMemcpyDtoDAsync_v2
    CUresult (*cuMemHostAlloc)(void** pointer, std::size_t bytes, unsigned flags);  // cuMemHostAlloc
    CUresult (*cuMemFreeHost)(void* pointer);                                       // cuMemFreeHost
    CUresult (*cuFuncSetAttribute)(CUfunction f, int attribute, int value);                             // cuFuncSetAttribute
    CUresult (*cuMemsetD8)(CUdeviceptr dst, unsigned char value, std::size_t count);                    // cuMemsetD8_v2
    CUresult (*cuMemsetD8Async)(CUdeviceptr dst, unsigned char value, std::size_t count, CUstream stream);  // cuMemsetD8Async
    CUresult (*cuStreamCreate)(CUstream* stream, unsigned flags);                    // cuStreamCreate
    CUresult (*cuStreamDestroy)(CUstream stream);                                    // cuStreamDestroy_v2
    CUresult (*cuStreamSynchronize)(CUstream stream);                                // cuStreamSynchronize
    CUresult (*cuEventCreate)(CUevent* event, unsigned flags);                       // cuEventCreate
    CUresult (*cuEventDestroy)(CUevent event);                                       // cuEventDestroy_v2
    CUresult (*cuEventRecord)(CUevent event, CUstream stream);                       // cuEventRecord
    CUresult (*cuEventSynchronize)(CUevent event);                                   // cuEventSynchronize
    CUresult (*cuEventQuery)(CUevent event);                                         // cuEventQuery
    // Whether a stream is being captured into a graph (CUDA 10+; null on older drivers).
    CUresult (*cuStreamIsCapturing)(CUstream stream, int* status);                   // cuStreamIsCapturing
    // cuEventElapsedTime_v2 (CUDA 12.8+, same signature), else the older cuEventElapsedTime.
    CUresult (*cuEventElapsedTime)(float* milliseconds, CUevent start, CUevent end);
    // Stream-ordered allocation (CUDA 11.2+); null on older drivers, which then serialize
    // workspace use across streams instead.
    CUresult (*cuMemAllocAsync)(CUdeviceptr* pointer, std::size_t bytes, CUstream stream);  // cuMemAllocAsync
    CUresult (*cuMemFreeAsync)(CUdeviceptr pointer, CUstream stream);                      // cuMemFreeAsync
};

// ---- NVRTC (libnvrtc.so) ---------------------------------------------------------------

using nvrtcResult = int;  // an enum in nvrtc.h
using nvrtcProgram = struct _nvrtcProgram*;
inline constexpr nvrtcResult NVRTC_SUCCESS = 0;
inline constexpr nvrtcResult NVRTC_ERROR_COMPILATION = 6;

struct NvrtcApi {
    const char* (*nvrtcGetErrorString)(nvrtcResult result);
    nvrtcResult (*nvrtcVersion)(int* major, int* minor);
    nvrtcResult (*nvrtcGetNumSupportedArchs)(int* count);
    nvrtcResult (*nvrtcGetSupportedArchs)(int* archs);
    nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram* program, const char* source, const char* name, int header_count,
                                      const char* const* headers, const char* const* include_names);
    nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram* program);
    nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram program, int option_count, const char* const* options);
    nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram program, std::size_t* size);
    nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram program, char* log);
    nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram program, std::size_t* size);
    nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram program, char* cubin);
    nvrtcResult (*nvrtcGetPTXSize)(nvrtcProgram program, std::size_t* size);
    nvrtcResult (*nvrtcGetPTX)(nvrtcProgram program, char* ptx);
};

// ---- nvJPEG (libnvjpeg.so) -------------------------------------------------------------

using nvjpegStatus_t = int;  // an enum in nvjpeg.h
using nvjpegHandle_t = struct nvjpegHandle*;
using nvjpegJpegState_t = struct nvjpegJpegState*;
using nvjpegJpegStream_t = struct nvjpegJpegStream*;
inline constexpr nvjpegStatus_t NVJPEG_STATUS_SUCCESS = 0;
inline constexpr nvjpegStatus_t NVJPEG_STATUS_ARCH_MISMATCH = 7;
inline constexpr int NVJPEG_MAX_COMPONENT = 4;
// nvjpegBackend_t
inline constexpr int NVJPEG_BACKEND_DEFAULT = 0;
inline constexpr int NVJPEG_BACKEND_HARDWARE = 3;
// nvjpegOutputFormat_t
inline constexpr int NVJPEG_OUTPUT_Y = 2;
inline constexpr int NVJPEG_OUTPUT_RGB = 3;
// nvjpegChromaSubsampling_t: NVJPEG_CSS_UNKNOWN
inline constexpr int NVJPEG_CSS_UNKNOWN = -1;
// libraryPropertyType
inline constexpr int MAJOR_VERSION = 0;
inline constexpr int MINOR_VERSION = 1;

// nvjpegImage_t: one plane pointer and row pitch per channel.
struct NvjpegImage {
    unsigned char* channel[NVJPEG_MAX_COMPONENT];
    std::size_t pitch[NVJPEG_MAX_COMPONENT];
};

struct NvjpegApi {
    nvjpegStatus_t (*nvjpegGetProperty)(int type, int* value);
    nvjpegStatus_t (*nvjpegCreateEx)(int backend, void* device_allocator, void* pinned_allocator, unsigned flags,
                                     nvjpegHandle_t* handle);
    nvjpegStatus_t (*nvjpegDestroy)(nvjpegHandle_t handle);
    nvjpegStatus_t (*nvjpegJpegStateCreate)(nvjpegHandle_t handle, nvjpegJpegState_t* state);
    nvjpegStatus_t (*nvjpegJpegStateDestroy)(nvjpegJpegState_t state);
    nvjpegStatus_t (*nvjpegGetImageInfo)(nvjpegHandle_t handle, const unsigned char* data, std::size_t length,
                                         int* components, int* subsampling, int* widths, int* heights);
    nvjpegStatus_t (*nvjpegDecode)(nvjpegHandle_t handle, nvjpegJpegState_t state, const unsigned char* data,
                                   std::size_t length, int output_format, NvjpegImage* destination, CUstream stream);
    nvjpegStatus_t (*nvjpegDecodeBatchedInitialize)(nvjpegHandle_t handle, nvjpegJpegState_t state, int batch_size,
                                                    int max_cpu_threads, int output_format);
    nvjpegStatus_t (*nvjpegDecodeBatched)(nvjpegHandle_t handle, nvjpegJpegState_t state,
                                          const unsigned char* const* data, const std::size_t* lengths,
                                          NvjpegImage* destinations, CUstream stream);
    nvjpegStatus_t (*nvjpegJpegStreamCreate)(nvjpegHandle_t handle, nvjpegJpegStream_t* stream);
    nvjpegStatus_t (*nvjpegJpegStreamDestroy)(nvjpegJpegStream_t stream);
    nvjpegStatus_t (*nvjpegJpegStreamParseHeader)(nvjpegHandle_t handle, const unsigned char* data, std::size_t length,
                                                  nvjpegJpegStream_t stream);
    nvjpegStatus_t (*nvjpegDecodeBatchedSupported)(nvjpegHandle_t handle, nvjpegJpegStream_t stream, int* is_supported);
};

// The driver, loaded and initialized (cuInit) once per process; later calls return the
// same table or throw the same toroid::Error, e.g. "CUDA is not available: cannot load
// libcuda.so.1 (the NVIDIA driver): ..." or "no CUDA device found".
const DriverApi& driver();

// NVRTC, loaded once per process from the first of nvrtc_candidates() that loads; throws
// toroid::Error "cannot load NVRTC (set TOROID_NVRTC to libnvrtc.so): tried ..." otherwise.
const NvrtcApi& nvrtc();
// The file NVRTC was loaded from (as dlinfo reports it), after nvrtc() succeeded.
std::string nvrtc_path();

// Where NVRTC is looked for, in order: $TOROID_NVRTC alone when set; else the loader's
// search path (libnvrtc.so.13, .so.12, .so), /usr/local/cuda/lib64, and the nvidia/*/lib
// folders of Python wheels (PyTorch's) under the usual site-packages roots.
std::vector<std::string> nvrtc_candidates();

// nvJPEG, loaded once per process like NVRTC (from $TOROID_NVJPEG alone when set, else
// libnvjpeg.so.13, .so.12, .so and the same folders); throws toroid::Error "cannot load
// nvJPEG (set TOROID_NVJPEG to libnvjpeg.so): tried ..." otherwise.
const NvjpegApi& nvjpeg();
std::string nvjpeg_path();
std::vector<std::string> nvjpeg_candidates();

// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" for a driver result.
std::string driver_error_text(CUresult result);

// Throws toroid::Error "CUDA: <what> failed: <driver_error_text>" unless result is success.
void check(CUresult result, const char* what);

}  // namespace toroid::cuda
