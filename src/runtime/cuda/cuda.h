// The CUDA runtime layer of toroid: devices (their primary contexts, shared with PyTorch),
// NVRTC compilation of generated kernel sources into cubins kept in the shared disk cache,
// loaded modules and kernel launches, device memory, streams and events.
#pragma once

#include "runtime/cuda/cuda_api.h"
#include "runtime/disk_cache.h"

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace toroid::cuda {

// One GPU, with its primary context retained for the life of the process (the context the
// CUDA runtime, and so PyTorch, uses on that device). Obtained through Device::get.
class Device {
public:
    // Device `ordinal`; throws toroid::Error when the driver or the device is missing.
    // The same object for every call with one ordinal.
    static Device& get(int ordinal = 0);

    // Makes the primary context current on the calling thread. Every operation of this
    // layer calls it first, so callers need not.
    void make_current() const;

    int ordinal() const { return ordinal_; }
    CUdevice handle() const { return device_; }
    CUcontext context() const { return context_; }
    const std::string& name() const { return name_; }
    int compute_major() const { return major_; }
    int compute_minor() const { return minor_; }
    std::string arch() const;  // "sm_90"
    int multiprocessors() const { return multiprocessors_; }
    int l2_bytes() const { return l2_bytes_; }
    int max_shared_per_block_optin() const { return max_shared_optin_; }
    int max_threads_per_block() const { return max_threads_per_block_; }
    int warp_size() const { return warp_size_; }
    std::size_t total_memory() const { return total_memory_; }

    // A non-blocking stream of this device's own for the synchronous copies and memsets of
    // DeviceBuffer (made on first use; see DeviceBuffer::copy_from_host).
    CUstream transfer_stream() const;

    Device(const Device&) = delete;
    Device& operator=(const Device&) = delete;

private:
    explicit Device(int ordinal);

    int ordinal_;
    CUdevice device_ = 0;
    CUcontext context_ = nullptr;
    std::string name_;
    int major_ = 0, minor_ = 0, multiprocessors_ = 0, l2_bytes_ = 0, max_shared_optin_ = 0;
    int max_threads_per_block_ = 0, warp_size_ = 0;
    std::size_t total_memory_ = 0;
    mutable std::once_flag transfer_once_;
    mutable CUstream transfer_ = nullptr;
};

// "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 50 MiB L2, 79 GiB), driver CUDA 13.0, NVRTC 13.0":
// one line for benchmark output. Throws toroid::Error like Device::get and nvrtc().
std::string describe(int ordinal = 0);

// NVRTC's version as "13.0" (throws when NVRTC does not load).
std::string nvrtc_version();
// The architectures NVRTC can compile for, as numbers (75, 80, ... 120).
std::vector<int> nvrtc_supported_archs();

// A kernel entry point of a loaded module. Valid while its module is alive.
struct Function {
    CUfunction handle = nullptr;
    std::string name;
};

struct Dim3 {
    unsigned x = 1, y = 1, z = 1;
};

// A cubin loaded into a device's primary context (cuModuleLoadData); unloaded on destruction.
class Module {
public:
    Module(const Device& device, const std::string& cubin, std::string key = {});
    ~Module();
    Module(const Module&) = delete;
    Module& operator=(const Module&) = delete;

    // The kernel `name` (an extern "C" __global__ function); throws toroid::Error naming it
    // when the module has none.
    Function function(const std::string& name) const;

    const Device& device() const { return *device_; }
    const std::string& key() const { return key_; }

private:
    const Device* device_;
    CUmodule module_ = nullptr;
    std::string key_;
};

// Launches `function` with kernel parameters `args` (one pointer per parameter, as
// cuLaunchKernel takes them) on `stream` (nullptr: the legacy default stream). Throws
// toroid::Error naming the kernel when the launch fails; with TOROID_CUDA_SYNC=1 it also
// waits for the kernel, so that faults surface at the launch that caused them.
void launch(const Function& function, Dim3 grid, Dim3 block, unsigned shared_bytes, CUstream stream, void** args);

// Whether TOROID_CUDA_SYNC=1 is set (read once per process).
bool sync_after_launch();

// Lets launches of `function` ask for up to `bytes` of dynamic shared memory (above 48 KiB
// a kernel must opt in).
void set_max_dynamic_shared(const Function& function, int bytes);

// Copies `bytes` between two device buffers in `stream`'s order (a device-to-device copy:
// the bandwidth benchmarks compare kernels with).
void copy_device_async(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes, CUstream stream);

class Stream;

// Device memory of a fixed size (cuMemAlloc / cuMemFree).
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    DeviceBuffer(const Device& device, std::size_t bytes);
    ~DeviceBuffer();
    DeviceBuffer(DeviceBuffer&& other) noexcept;
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;

    CUdeviceptr pointer() const { return pointer_; }
    std::size_t size() const { return size_; }
    // &pointer, for a kernel parameter list.
    void* arg() { return &pointer_; }

    // Copies of `bytes` bytes (at most size()); the async ones are ordered in `stream`.
    // copy_from_host and memset return when the bytes are on the device: they run on the
    // device's transfer stream and wait for it, ordered after nothing else. (The driver's
    // synchronous cuMemcpyHtoD from pageable memory returns once the bytes are staged, before
    // its DMA lands, and on the legacy stream, which kernels on non-blocking streams do not
    // wait for: a kernel launched right after it could read the old bytes, and did whenever
    // other processes kept the copy engines busy.) copy_to_host is the driver's synchronous
    // copy: complete when it returns, ordered after the legacy stream's work only, so
    // synchronize the stream that wrote the buffer first.
    void copy_from_host(const void* source, std::size_t bytes);
    void copy_to_host(void* destination, std::size_t bytes) const;
    // The async ones start `offset` bytes into the buffer (offset + bytes at most size()).
    void copy_from_host_async(const void* source, std::size_t bytes, const Stream& stream, std::size_t offset = 0);
    void copy_to_host_async(void* destination, std::size_t bytes, const Stream& stream, std::size_t offset = 0) const;
    void memset(unsigned char value);
    void memset_async(unsigned char value, const Stream& stream);

private:
    void check_size(std::size_t bytes, const char* what) const;
    const Device* device_ = nullptr;
    CUdeviceptr pointer_ = 0;
    std::size_t size_ = 0;
};

// Page-locked host memory (cuMemHostAlloc, portable to every context): the device copies it
// by DMA at full speed, and async copies from and to it overlap the host's work.
class HostBuffer {
public:
    HostBuffer() = default;
    HostBuffer(const Device& device, std::size_t bytes);
    ~HostBuffer();
    HostBuffer(HostBuffer&& other) noexcept;
    HostBuffer& operator=(HostBuffer&& other) noexcept;
    unsigned char* data() const { return data_; }
    std::size_t size() const { return size_; }

private:
    unsigned char* data_ = nullptr;
    std::size_t size_ = 0;
};

// A non-blocking stream of the device's primary context.
class Stream {
public:
    explicit Stream(const Device& device);
    ~Stream();
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    CUstream handle() const { return stream_; }
    void synchronize() const;

private:
    const Device* device_;
    CUstream stream_ = nullptr;
};

class Event {
public:
    explicit Event(const Device& device);
    ~Event();
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    void record(const Stream& stream);
    void record(CUstream stream);
    void synchronize() const;
    // Whether the work recorded before it has completed (without waiting).
    bool done() const;
    CUevent handle() const { return event_; }

private:
    const Device* device_;
    CUevent event_ = nullptr;
};

// Whether `stream` is being captured into a CUDA graph (false where the driver cannot say).
bool capturing(CUstream stream);

// Milliseconds between two recorded events (waits for `end`).
float elapsed_ms(const Event& start, const Event& end);

// Counters of one Compiler since it was made.
struct CompilerStats {
    int compiled = 0;            // NVRTC runs that produced a cubin
    int disk_hits = 0;           // cubins read from an intact disk entry
    int memory_hits = 0;         // loads answered by a module already held
    int corrupt_entries = 0;     // broken disk entries removed and rebuilt
    double compile_seconds = 0;  // wall time in NVRTC
};

struct CompiledCubin {
    std::string key;
    std::filesystem::path directory;  // the cache entry: kernel.cu, kernel.cubin, nvrtc_log.txt
    std::string cubin;
    bool built = false;  // NVRTC ran (else the disk cache had it)
};

// Compiles CUDA C++ sources with NVRTC into cubins, cached on disk (in the folder the C++
// kernels use, runtime/disk_cache.h) and, as loaded modules, in memory.
//
// Disk layout: <key>/kernel.cu, kernel.cubin, options.txt, nvrtc_log.txt, manifest.json;
// failed/<key>/kernel.cu, options.txt, nvrtc_log.txt for the last failed compile. The key
// covers the source, NVRTC's version, the architecture and every option.
class Compiler {
public:
    // cache_dir defaults to default_cache_dir(); extra_options go after the fixed ones.
    explicit Compiler(std::filesystem::path cache_dir = {}, std::vector<std::string> extra_options = {});

    // The full NVRTC option list for `arch` ("sm_90"): --gpu-architecture=sm_90 -std=c++17
    // --fmad=false (no contraction of a*b+c: results round like the CPU's) -default-device,
    // then the extra options.
    std::vector<std::string> options(const std::string& arch) const;

    // The cache key (32 hex digits); loads NVRTC to learn its version.
    std::string key(const std::string& source, const std::string& arch) const;

    // The cubin of `source` for `arch`, from disk when cached. Throws toroid::Error when
    // NVRTC is missing or the source does not compile (the message quotes NVRTC's log and
    // names failed/<key>/, where source, options and log are kept).
    CompiledCubin compile(const std::string& source, const std::string& arch);

    // The module of `source` compiled for and loaded on `device`, cached in memory. `own`,
    // when given, counts this load alone (compiled, disk hit or memory hit): stats() counts
    // every thread's loads.
    std::shared_ptr<Module> load(const Device& device, const std::string& source, CompilerStats* own = nullptr);

    CompilerStats stats() const;
    const DiskCache& cache() const { return cache_; }

private:
    DiskCache cache_;
    std::vector<std::string> extra_options_;
    std::mutex load_mutex_;     // held through a whole load(): one compile per source
    mutable std::mutex mutex_;  // guards stats_ and modules_
    CompilerStats stats_;
    std::unordered_map<std::string, std::shared_ptr<Module>> modules_;  // by "<ordinal>/<key>"
};

}  // namespace toroid::cuda
