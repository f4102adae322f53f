// Devices, the NVRTC compiler with its disk and memory caches, modules, launches, memory,
// streams and events, as declared in cuda.h, over the dlopen'ed tables of cuda_api.h.
#include "runtime/cuda/cuda.h"

#include "core/error.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <sstream>

namespace toroid::cuda {

namespace fs = std::filesystem;

// ---- Device ----------------------------------------------------------------------------

Device& Device::get(int ordinal) {
    const DriverApi& api = driver();
    int count = 0;
    check(api.cuDeviceGetCount(&count), "cuDeviceGetCount");
    if (ordinal < 0 || ordinal >= count)
        fail("no CUDA device {}: {} device{} found", ordinal, count, count == 1 ? "" : "s");
    static std::mutex mutex;
    // A deque keeps the objects in place as it grows; they live as long as the process,
    // like the retained primary contexts (the driver cleans those up at exit).
    static std::deque<std::unique_ptr<Device>> devices;
    std::lock_guard lock(mutex);
    for (auto& d : devices)
        if (d->ordinal() == ordinal) return *d;
    devices.push_back(std::unique_ptr<Device>(new Device(ordinal)));
    return *devices.back();
}

Device::Device(int ordinal) : ordinal_(ordinal) {
    const DriverApi& api = driver();
    check(api.cuDeviceGet(&device_, ordinal), "cuDeviceGet");
    check(api.cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
    make_current();
    char name[256] = {};
    check(api.cuDeviceGetName(name, sizeof name - 1, device_), "cuDeviceGetName");
    name_ = name;
    auto attribute = [&](CUdevice_attribute which, const char* what) {
        int value = 0;
        check(api.cuDeviceGetAttribute(&value, which, device_), what);
        return value;
    };
    major_ = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "cuDeviceGetAttribute(compute capability)");
    minor_ = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "cuDeviceGetAttribute(compute capability)");
    multiprocessors_ = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "cuDeviceGetAttribute(multiprocessors)");
    l2_bytes_ = attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "cuDeviceGetAttribute(L2 size)");
    max_shared_optin_ =
        attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "cuDeviceGetAttribute(shared memory)");
    max_threads_per_block_ = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "cuDeviceGetAttribute(threads)");
    warp_size_ = attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE, "cuDeviceGetAttribute(warp size)");
    check(api.cuDeviceTotalMem(&total_memory_, device_), "cuDeviceTotalMem");
}

void Device::make_current() const { check(driver().cuCtxSetCurrent(context_), "cuCtxSetCurrent"); }

CUstream Device::transfer_stream() const {
    std::call_once(transfer_once_, [&] {
        make_current();
        check(driver().cuStreamCreate(&transfer_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    });
    return transfer_;
}

std::string Device::arch() const { return fmt::format("sm_{}{}", major_, minor_); }

std::string nvrtc_version() {
    int major = 0, minor = 0;
    const NvrtcApi& api = nvrtc();
    if (api.nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) fail("NVRTC: nvrtcVersion failed");
    return fmt::format("{}.{}", major, minor);
}

std::vector<int> nvrtc_supported_archs() {
    const NvrtcApi& api = nvrtc();
    int count = 0;
    if (api.nvrtcGetNumSupportedArchs(&count) != NVRTC_SUCCESS || count < 0)
        fail("NVRTC: nvrtcGetNumSupportedArchs failed");
    std::vector<int> archs(static_cast<std::size_t>(count));
    if (count > 0 && api.nvrtcGetSupportedArchs(archs.data()) != NVRTC_SUCCESS)
        fail("NVRTC: nvrtcGetSupportedArchs failed");
    return archs;
}

std::string describe(int ordinal) {
    const Device& d = Device::get(ordinal);
    int driver_version = 0;
    check(driver().cuDriverGetVersion(&driver_version), "cuDriverGetVersion");
    return fmt::format("{} ({}, {} SMs, {} MiB L2, {} GiB), driver CUDA {}.{}, NVRTC {}", d.name(), d.arch(),
                       d.multiprocessors(), d.l2_bytes() >> 20, d.total_memory() >> 30, driver_version / 1000,
                       driver_version % 1000 / 10, nvrtc_version());
}

// ---- Module and launch -------------------------------------------------------------------

Module::Module(const Device& device, const std::string& cubin, std::string key)
    : device_(&device), key_(std::move(key)) {
    device.make_current();
    check(driver().cuModuleLoadData(&module_, cubin.data()), "cuModuleLoadData");
}

Module::~Module() {
    // Errors are ignored: at process exit the driver may already be shutting down.
    if (module_ != nullptr) driver().cuModuleUnload(module_);
}

Function Module::function(const std::string& name) const {
    Function f;
    f.name = name;
    CUresult rc = driver().cuModuleGetFunction(&f.handle, module_, name.c_str());
    if (rc == CUDA_ERROR_NOT_FOUND)
        fail("CUDA module {} has no kernel '{}' (is it declared extern \"C\" __global__?)", key_, printable(name, 200));
    check(rc, "cuModuleGetFunction");
    return f;
}

bool sync_after_launch() {
    static const bool sync = [] {
        const char* v = std::getenv("TOROID_CUDA_SYNC");
        return v != nullptr && std::string(v) == "1";
    }();
    return sync;
}

void set_max_dynamic_shared(const Function& function, int bytes) {
    check(driver().cuFuncSetAttribute(function.handle, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes),
          "cuFuncSetAttribute(max dynamic shared memory)");
}

void copy_device_async(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes, CUstream stream) {
    check(driver().cuMemcpyDtoDAsync(dst, src, bytes, stream), "cuMemcpyDtoDAsync");
}

void launch(const Function& function, Dim3 grid, Dim3 block, unsigned shared_bytes, CUstream stream, void** args) {
    const DriverApi& api = driver();
    CUresult rc = api.cuLaunchKernel(function.handle, grid.x, grid.y, grid.z, block.x, block.y, block.z, shared_bytes,
                                     stream, args, nullptr);
    if (rc != CUDA_SUCCESS)
        fail("CUDA: launch of kernel '{}' (grid {}x{}x{}, block {}x{}x{}, {} bytes shared) failed: {}",
             printable(function.name, 200), grid.x, grid.y, grid.z, block.x, block.y, block.z, shared_bytes,
             driver_error_text(rc));
    if (sync_after_launch()) {
        rc = api.cuCtxSynchronize();
        if (rc != CUDA_SUCCESS)
            fail("CUDA: kernel '{}' failed (TOROID_CUDA_SYNC=1): {}", printable(function.name, 200),
                 driver_error_text(rc));
    }
}

// ---- Memory, streams, events ------------------------------------------------------------------

DeviceBuffer::DeviceBuffer(const Device& device, std::size_t bytes) : device_(&device), size_(bytes) {
    device.make_current();
    // cuMemAlloc rejects 0 bytes; an empty buffer is a null pointer.
    if (bytes > 0) {
        CUresult rc = driver().cuMemAlloc(&pointer_, bytes);
        if (rc != CUDA_SUCCESS) fail("CUDA: cannot allocate {} bytes on {}: {}", bytes, device.name(), driver_error_text(rc));
    }
}

DeviceBuffer::~DeviceBuffer() {
    if (pointer_ != 0) driver().cuMemFree(pointer_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : device_(other.device_), pointer_(std::exchange(other.pointer_, 0)), size_(std::exchange(other.size_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
        if (pointer_ != 0) driver().cuMemFree(pointer_);
        device_ = other.device_;
        pointer_ = std::exchange(other.pointer_, 0);
        size_ = std::exchange(other.size_, 0);
    }
    return *this;
}

void DeviceBuffer::check_size(std::size_t bytes, const char* what) const {
    if (bytes > size_) fail("CUDA: {} of {} bytes into a buffer of {}", what, bytes, size_);
    if (device_ != nullptr) device_->make_current();
}

void DeviceBuffer::copy_from_host(const void* source, std::size_t bytes) {
    check_size(bytes, "copy to the device");
    if (bytes == 0) return;
    const CUstream s = device_->transfer_stream();
    check(driver().cuMemcpyHtoDAsync(pointer_, source, bytes, s), "cuMemcpyHtoDAsync");
    check(driver().cuStreamSynchronize(s), "cuStreamSynchronize");
}

void DeviceBuffer::copy_to_host(void* destination, std::size_t bytes) const {
    check_size(bytes, "copy from the device");
    // The driver's synchronous device-to-host copy is complete when it returns, and ordered
    // after the legacy stream's work.
    if (bytes > 0) check(driver().cuMemcpyDtoH(destination, pointer_, bytes), "cuMemcpyDtoH");
}

void DeviceBuffer::copy_from_host_async(const void* source, std::size_t bytes, const Stream& stream,
                                        std::size_t offset) {
    if (offset > size_) fail("CUDA: copy to the device at offset {} of a buffer of {} bytes", offset, size_);
    check_size(offset + bytes, "copy to the device");
    if (bytes > 0)
        check(driver().cuMemcpyHtoDAsync(pointer_ + offset, source, bytes, stream.handle()), "cuMemcpyHtoDAsync");
}

void DeviceBuffer::copy_to_host_async(void* destination, std::size_t bytes, const Stream& stream,
                                      std::size_t offset) const {
    if (offset > size_) fail("CUDA: copy from the device at offset {} of a buffer of {} bytes", offset, size_);
    check_size(offset + bytes, "copy from the device");
    if (bytes > 0)
        check(driver().cuMemcpyDtoHAsync(destination, pointer_ + offset, bytes, stream.handle()), "cuMemcpyDtoHAsync");
}

// CU_MEMHOSTALLOC_PORTABLE: pinned for every context, not only the current one.
constexpr unsigned kHostAllocPortable = 0x01;

HostBuffer::HostBuffer(const Device& device, std::size_t bytes) : size_(bytes) {
    device.make_current();
    if (bytes > 0) {
        void* p = nullptr;
        CUresult rc = driver().cuMemHostAlloc(&p, bytes, kHostAllocPortable);
        if (rc != CUDA_SUCCESS) fail("CUDA: cannot allocate {} bytes of page-locked host memory: {}", bytes, driver_error_text(rc));
        data_ = static_cast<unsigned char*>(p);
    }
}

HostBuffer::~HostBuffer() {
    if (data_ != nullptr) driver().cuMemFreeHost(data_);
}

HostBuffer::HostBuffer(HostBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

HostBuffer& HostBuffer::operator=(HostBuffer&& other) noexcept {
    if (this != &other) {
        if (data_ != nullptr) driver().cuMemFreeHost(data_);
        data_ = std::exchange(other.data_, nullptr);
        size_ = std::exchange(other.size_, 0);
    }
    return *this;
}

void DeviceBuffer::memset(unsigned char value) {
    check_size(0, "memset");
    if (size_ == 0) return;
    const CUstream s = device_->transfer_stream();
    check(driver().cuMemsetD8Async(pointer_, value, size_, s), "cuMemsetD8Async");
    check(driver().cuStreamSynchronize(s), "cuStreamSynchronize");
}

void DeviceBuffer::memset_async(unsigned char value, const Stream& stream) {
    check_size(0, "memset");
    if (size_ > 0) check(driver().cuMemsetD8Async(pointer_, value, size_, stream.handle()), "cuMemsetD8Async");
}

Stream::Stream(const Device& device) : device_(&device) {
    device.make_current();
    check(driver().cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
}

Stream::~Stream() {
    if (stream_ != nullptr) driver().cuStreamDestroy(stream_);
}

void Stream::synchronize() const {
    device_->make_current();
    check(driver().cuStreamSynchronize(stream_), "cuStreamSynchronize");
}

Event::Event(const Device& device) : device_(&device) {
    device.make_current();
    check(driver().cuEventCreate(&event_, CU_EVENT_DEFAULT), "cuEventCreate");
}

Event::~Event() {
    if (event_ != nullptr) driver().cuEventDestroy(event_);
}

void Event::record(const Stream& stream) {
    device_->make_current();
    check(driver().cuEventRecord(event_, stream.handle()), "cuEventRecord");
}

void Event::record(CUstream stream) {
    device_->make_current();
    check(driver().cuEventRecord(event_, stream), "cuEventRecord");
}

void Event::synchronize() const { check(driver().cuEventSynchronize(event_), "cuEventSynchronize"); }

bool Event::done() const {
    const CUresult r = driver().cuEventQuery(event_);
    if (r == CUDA_ERROR_NOT_READY) return false;
    check(r, "cuEventQuery");
    return true;
}

bool capturing(CUstream stream) {
    const auto& api = driver();
    int status = 0;  // CU_STREAM_CAPTURE_STATUS_NONE
    return api.cuStreamIsCapturing != nullptr && api.cuStreamIsCapturing(stream, &status) == CUDA_SUCCESS && status != 0;
}

float elapsed_ms(const Event& start, const Event& end) {
    end.synchronize();
    float ms = 0;
    check(driver().cuEventElapsedTime(&ms, start.handle(), end.handle()), "cuEventElapsedTime");
    return ms;
}

// ---- Compiler -------------------------------------------------------------------------------

namespace {

// The log line most worth quoting: the first that mentions an error, else the first.
std::string first_error_line(const std::string& log) {
    std::istringstream in(log);
    std::string first;
    for (std::string line; std::getline(in, line);) {
        if (first.empty() && line.find_first_not_of(" \t\r") != std::string::npos) first = line;
        if (line.find("error") != std::string::npos) return printable(line, 300);
    }
    return first.empty() ? std::string("(empty NVRTC log)") : printable(first, 300);
}

std::string join_lines(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& item : items) out += item + "\n";
    return out;
}

}  // namespace

Compiler::Compiler(fs::path cache_dir, std::vector<std::string> extra_options)
    : cache_(cache_dir.empty() ? default_cache_dir() : cache_dir), extra_options_(std::move(extra_options)) {}

std::vector<std::string> Compiler::options(const std::string& arch) const {
    std::vector<std::string> out = {"--gpu-architecture=" + arch, "-std=c++17", "--fmad=false", "-default-device"};
    out.insert(out.end(), extra_options_.begin(), extra_options_.end());
    return out;
}

std::string Compiler::key(const std::string& source, const std::string& arch) const {
    std::vector<std::string> parts = {source, "nvrtc " + nvrtc_version(), arch};
    for (const auto& option : options(arch)) parts.push_back(option);
    return cache_key("toroid-cuda-key-v1", parts);
}

CompiledCubin Compiler::compile(const std::string& source, const std::string& arch) {
    const NvrtcApi& api = nvrtc();
    // A device newer than this NVRTC (or a mistyped architecture) gets a clear error before
    // anything is written, rather than NVRTC's "invalid option".
    if (arch.rfind("sm_", 0) == 0 && arch.size() > 3 &&
        arch.find_first_not_of("0123456789", 3) == std::string::npos) {
        const auto archs = nvrtc_supported_archs();
        if (!archs.empty() && std::find(archs.begin(), archs.end(), std::stoi(arch.substr(3))) == archs.end())
            fail("NVRTC {} ({}) cannot compile for {}: it supports sm_{} to sm_{} (set TOROID_NVRTC to another libnvrtc)",
                 nvrtc_version(), printable(nvrtc_path(), 200), arch, archs.front(), archs.back());
    }
    const std::vector<std::string> opts = options(arch);
    CompiledCubin out;
    out.key = key(source, arch);

    DiskCache::Recipe recipe;
    recipe.key = out.key;
    recipe.checked_files = {"kernel.cubin"};
    recipe.source_files = {"kernel.cu"};  // kept in failed builds, and in entries when asked
    recipe.build = [&](const fs::path& dir) -> nlohmann::json {
        write_file_bytes(dir / "kernel.cu", source);
        write_file_bytes(dir / "options.txt", join_lines(opts));
        nvrtcProgram program = nullptr;
        nvrtcResult rc = api.nvrtcCreateProgram(&program, source.c_str(), "kernel.cu", 0, nullptr, nullptr);
        if (rc != NVRTC_SUCCESS) fail("NVRTC: nvrtcCreateProgram failed: {}", api.nvrtcGetErrorString(rc));
        struct Destroy {
            const NvrtcApi& api;
            nvrtcProgram* program;
            ~Destroy() { api.nvrtcDestroyProgram(program); }
        } destroy{api, &program};

        std::vector<const char*> argv;
        for (const auto& o : opts) argv.push_back(o.c_str());
        rc = api.nvrtcCompileProgram(program, static_cast<int>(argv.size()), argv.data());
        std::size_t log_size = 0;
        std::string log;
        if (api.nvrtcGetProgramLogSize(program, &log_size) == NVRTC_SUCCESS && log_size > 1) {
            log.resize(log_size);
            if (api.nvrtcGetProgramLog(program, log.data()) != NVRTC_SUCCESS) log.clear();
            while (!log.empty() && log.back() == '\0') log.pop_back();
        }
        write_file_bytes(dir / "nvrtc_log.txt", log);
        if (rc != NVRTC_SUCCESS) {
            std::string why = api.nvrtcGetErrorString(rc);
            std::string quoted = first_error_line(log);
            throw BuildFailure{[why, quoted, arch](const fs::path& kept) {
                return fmt::format("NVRTC failed for {} ({}); kernel.cu, options.txt and nvrtc_log.txt are in {}/: {}",
                                   arch, why, printable(kept.string(), 300), quoted);
            }};
        }
        std::size_t size = 0;
        if (api.nvrtcGetCUBINSize(program, &size) != NVRTC_SUCCESS || size == 0)
            fail("NVRTC produced no cubin for {} (is '{}' a real architecture, not compute_XY?)", arch, arch);
        std::string cubin(size, '\0');
        if (api.nvrtcGetCUBIN(program, cubin.data()) != NVRTC_SUCCESS) fail("NVRTC: nvrtcGetCUBIN failed");
        write_file_bytes(dir / "kernel.cubin", cubin);
        return {{"options", opts}, {"nvrtc", nvrtc_version()}, {"nvrtc_library", nvrtc_path()}, {"arch", arch}};
    };

    DiskCache::Result result;
    try {
        result = cache_.get(recipe);
    } catch (...) {
        std::lock_guard lock(mutex_);
        stats_.compile_seconds += result.build_seconds;
        throw;
    }
    {
        std::lock_guard lock(mutex_);
        stats_.corrupt_entries += result.corrupt_entries;
        stats_.compile_seconds += result.build_seconds;
        if (result.built) ++stats_.compiled;
        else ++stats_.disk_hits;
    }
    out.directory = result.directory;
    out.cubin = read_file_bytes(result.directory / "kernel.cubin");
    out.built = result.built;
    return out;
}

std::shared_ptr<Module> Compiler::load(const Device& device, const std::string& source, CompilerStats* own) {
    std::lock_guard load_lock(load_mutex_);
    const std::string k = key(source, device.arch());
    const std::string memory_key = fmt::format("{}/{}", device.ordinal(), k);
    {
        std::lock_guard lock(mutex_);
        if (auto it = modules_.find(memory_key); it != modules_.end()) {
            ++stats_.memory_hits;
            if (own) ++own->memory_hits;
            return it->second;
        }
    }
    CompiledCubin cubin = compile(source, device.arch());
    if (own) ++(cubin.built ? own->compiled : own->disk_hits);
    auto module = std::make_shared<Module>(device, cubin.cubin, cubin.key);
    std::lock_guard lock(mutex_);
    modules_.emplace(memory_key, module);
    return module;
}

CompilerStats Compiler::stats() const {
    std::lock_guard lock(mutex_);
    return stats_;
}

}  // namespace toroid::cuda
