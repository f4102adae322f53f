// Loading the CUDA driver and NVRTC declared in cuda_api.h: dlopen of libcuda.so.1 and of
// the first NVRTC found, dlsym of each function, and one-line errors that say what is
// missing. Both are loaded at most once per process; failures are remembered as well.
#include "runtime/cuda/cuda_api.h"

#include "core/error.h"

#include <fmt/format.h>

#include <cstdlib>
#include <functional>
#include <mutex>
#include <optional>

#include <dlfcn.h>
#include <link.h>
#include <glob.h>

namespace toroid::cuda {

namespace {

std::string dl_error() {
    const char* why = ::dlerror();
    return why ? std::string(why) : std::string("unknown dlopen error");
}

// The symbol `name` of `handle` as the pointer type of `slot`; false when absent.
template <typename Fn>
bool bind(void* handle, Fn*& slot, const char* name) {
    slot = reinterpret_cast<Fn*>(::dlsym(handle, name));
    return slot != nullptr;
}

// A value computed once; a failure is kept and thrown again on every later call, so
// that a process without a GPU does not retry the loader on each use.
template <typename T>
class Once {
public:
    const T& get(const std::function<T()>& make) {
        std::call_once(flag_, [&] {
            try {
                value_ = make();
            } catch (const Error& e) {
                error_ = e.what();
            }
        });
        if (!value_) throw Error(error_);
        return *value_;
    }

private:
    std::once_flag flag_;
    std::optional<T> value_;
    std::string error_;
};

DriverApi load_driver() {
    ::dlerror();
    void* handle = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr)
        fail("CUDA is not available: cannot load libcuda.so.1 (the NVIDIA driver): {}", printable(dl_error(), 300));
    // Kept loaded for the life of the process: modules and buffers may outlive any owner.
    DriverApi api{};
    std::string missing;
    auto need = [&](auto*& slot, const char* name) {
        if (!bind(handle, slot, name)) missing += (missing.empty() ? "" : ", ") + std::string(name);
    };
    need(api.cuInit, "cuInit");
    need(api.cuDriverGetVersion, "cuDriverGetVersion");
    need(api.cuGetErrorName, "cuGetErrorName");
    need(api.cuGetErrorString, "cuGetErrorString");
    need(api.cuDeviceGetCount, "cuDeviceGetCount");
    need(api.cuDeviceGet, "cuDeviceGet");
    need(api.cuDeviceGetName, "cuDeviceGetName");
    need(api.cuDeviceGetAttribute, "cuDeviceGetAttribute");
    need(api.cuDeviceTotalMem, "cuDeviceTotalMem_v2");
    need(api.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    need(api.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
    need(api.cuCtxSetCurrent, "cuCtxSetCurrent");
    need(api.cuCtxSynchronize, "cuCtxSynchronize");
    need(api.cuModuleLoadData, "cuModuleLoadData");
    need(api.cuModuleUnload, "cuModuleUnload");
    need(api.cuModuleGetFunction, "cuModuleGetFunction");
    need(api.cuLaunchKernel, "cuLaunchKernel");
    need(api.cuMemAlloc, "cuMemAlloc_v2");
    need(api.cuMemFree, "cuMemFree_v2");
    need(api.cuMemcpyHtoD, "cuMemcpyHtoD_v2");
    need(api.cuMemcpyDtoH, "cuMemcpyDtoH_v2");
    need(api.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
    need(api.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
    need(api.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
    need(api.cuMemHostAlloc, "cuMemHostAlloc");
    need(api.cuMemFreeHost, "cuMemFreeHost");
    need(api.cuFuncSetAttribute, "cuFuncSetAttribute");
    need(api.cuMemsetD8, "cuMemsetD8_v2");
    need(api.cuMemsetD8Async, "cuMemsetD8Async");
    need(api.cuStreamCreate, "cuStreamCreate");
    need(api.cuStreamDestroy, "cuStreamDestroy_v2");
    need(api.cuStreamSynchronize, "cuStreamSynchronize");
    need(api.cuEventCreate, "cuEventCreate");
    need(api.cuEventDestroy, "cuEventDestroy_v2");
    need(api.cuEventRecord, "cuEventRecord");
    need(api.cuEventSynchronize, "cuEventSynchronize");
    need(api.cuEventQuery, "cuEventQuery");
    if (!bind(handle, api.cuStreamIsCapturing, "cuStreamIsCapturing")) api.cuStreamIsCapturing = nullptr;
    if (!bind(handle, api.cuEventElapsedTime, "cuEventElapsedTime_v2")) need(api.cuEventElapsedTime, "cuEventElapsedTime");
    if (!bind(handle, api.cuMemAllocAsync, "cuMemAllocAsync") || !bind(handle, api.cuMemFreeAsync, "cuMemFreeAsync"))
        api.cuMemAllocAsync = nullptr, api.cuMemFreeAsync = nullptr;
    if (!missing.empty())
        fail("CUDA is not available: the NVIDIA driver (libcuda.so.1) is too old, it lacks {}", missing);

    CUresult rc = api.cuInit(0);
    if (rc == CUDA_ERROR_NO_DEVICE) fail("no CUDA device found");
    if (rc != CUDA_SUCCESS) {
        const char* name = nullptr;
        api.cuGetErrorName(rc, &name);
        fail("CUDA is not available: cuInit failed: {} ({})", name ? name : "unknown error", rc);
    }
    int count = 0;
    if (api.cuDeviceGetCount(&count) != CUDA_SUCCESS || count <= 0) fail("no CUDA device found");
    return api;
}

std::vector<std::string> glob_files(const std::string& pattern) {
    std::vector<std::string> out;
    glob_t found{};
    if (::glob(pattern.c_str(), 0, nullptr, &found) == 0) {
        for (std::size_t i = 0; i < found.gl_pathc; ++i) out.emplace_back(found.gl_pathv[i]);
    }
    ::globfree(&found);
    // Newest first: glob sorts libnvrtc.so.12 before libnvrtc.so.13.
    return {out.rbegin(), out.rend()};
}

// The search folders as one phrase for the error message.
std::string search_summary(const std::string& stem) {
    return fmt::format(
        "{0}.so.13, {0}.so.12, {0}.so on the loader's path, /usr/local/cuda/lib64, "
        "and nvidia/*/lib of Python wheels under /usr/local/lib/python3*, /usr/lib/python3, /opt/*/.venv, "
        "/opt/*/lib, $VIRTUAL_ENV, $CONDA_PREFIX, ~/.local",
        stem);
}

NvrtcApi bind_nvrtc(void* handle, std::string* missing) {
    NvrtcApi api{};
    auto need = [&](auto*& slot, const char* name) {
        if (!bind(handle, slot, name)) *missing += (missing->empty() ? "" : ", ") + std::string(name);
    };
    need(api.nvrtcGetErrorString, "nvrtcGetErrorString");
    need(api.nvrtcVersion, "nvrtcVersion");
    need(api.nvrtcGetNumSupportedArchs, "nvrtcGetNumSupportedArchs");
    need(api.nvrtcGetSupportedArchs, "nvrtcGetSupportedArchs");
    need(api.nvrtcCreateProgram, "nvrtcCreateProgram");
    need(api.nvrtcDestroyProgram, "nvrtcDestroyProgram");
    need(api.nvrtcCompileProgram, "nvrtcCompileProgram");
    need(api.nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize");
    need(api.nvrtcGetProgramLog, "nvrtcGetProgramLog");
    need(api.nvrtcGetCUBINSize, "nvrtcGetCUBINSize");
    need(api.nvrtcGetCUBIN, "nvrtcGetCUBIN");
    need(api.nvrtcGetPTXSize, "nvrtcGetPTXSize");
    need(api.nvrtcGetPTX, "nvrtcGetPTX");
    return api;
}

// NVRTC 12 and 13 dlopen their builtins library (libnvrtc-builtins.so.13.0) by name, which
// the loader finds only on its search path, not beside libnvrtc. When libnvrtc is taken
// from a folder (a Python wheel, TOROID_NVRTC), the builtins beside it are loaded first:
// a later dlopen by name then finds the already loaded library by its soname.
void preload_builtins(const std::string& nvrtc_file) {
    const auto slash = nvrtc_file.rfind('/');
    if (slash == std::string::npos) return;
    for (const auto& builtins : glob_files(nvrtc_file.substr(0, slash) + "/libnvrtc-builtins.so.*")) {
        if (::dlopen(builtins.c_str(), RTLD_NOW | RTLD_LOCAL) != nullptr) return;
    }
}

// A library loaded by load_first: its bound functions and the file they came from.
template <typename Api>
struct Loaded {
    Api api;
    std::string path;
};

// The first of `candidates` that dlopens and has every function `bind_all` binds (one that
// lacks some is too old: the search goes on); `before` runs ahead of each dlopen. `name` and
// `env` word the errors: "cannot load NVRTC from TOROID_NVRTC=...: <why>" when the variable
// is set, else "cannot load NVRTC (set TOROID_NVRTC to <hint>): tried <where stem is looked
// for>".
template <typename Api, typename Bind, typename Before>
Loaded<Api> load_first(const char* name, const char* env, const std::string& stem, const std::string& hint,
                       const std::vector<std::string>& candidates, Bind bind_all, Before before) {
    const char* forced = std::getenv(env);
    const bool is_forced = forced != nullptr && *forced != '\0';
    std::string errors;
    for (const auto& candidate : candidates) {
        before(candidate);
        ::dlerror();
        void* handle = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle == nullptr) {
            if (is_forced) errors = dl_error();
            continue;
        }
        std::string missing;
        Loaded<Api> loaded{bind_all(handle, &missing), candidate};
        if (!missing.empty()) {
            errors += fmt::format("{}{} lacks {}", errors.empty() ? "" : "; ", candidate, missing);
            ::dlclose(handle);
            continue;
        }
        // The file the loader chose (a bare soname names no folder).
        struct link_map* map = nullptr;
        if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr && *map->l_name)
            loaded.path = map->l_name;
        return loaded;
    }
    if (is_forced) fail("cannot load {} from {}={}: {}", name, env, printable(forced, 300), printable(errors, 300));
    fail("cannot load {} (set {} to {}): tried {}{}{}", name, env, hint, search_summary(stem),
         errors.empty() ? "" : "; ", printable(errors, 300));
}

Loaded<NvrtcApi> load_nvrtc() {
    // A candidate that lacks a function is too old (CUBIN output came with CUDA 11.1).
    return load_first<NvrtcApi>("NVRTC", "TOROID_NVRTC", "libnvrtc", "libnvrtc.so", nvrtc_candidates(), bind_nvrtc,
                                preload_builtins);
}

NvjpegApi bind_nvjpeg(void* handle, std::string* missing) {
    NvjpegApi api{};
    auto need = [&](auto*& slot, const char* name) {
        if (!bind(handle, slot, name)) *missing += (missing->empty() ? "" : ", ") + std::string(name);
    };
    need(api.nvjpegGetProperty, "nvjpegGetProperty");
    need(api.nvjpegCreateEx, "nvjpegCreateEx");
    need(api.nvjpegDestroy, "nvjpegDestroy");
    need(api.nvjpegJpegStateCreate, "nvjpegJpegStateCreate");
    need(api.nvjpegJpegStateDestroy, "nvjpegJpegStateDestroy");
    need(api.nvjpegGetImageInfo, "nvjpegGetImageInfo");
    need(api.nvjpegDecode, "nvjpegDecode");
    need(api.nvjpegDecodeBatchedInitialize, "nvjpegDecodeBatchedInitialize");
    need(api.nvjpegDecodeBatched, "nvjpegDecodeBatched");
    need(api.nvjpegJpegStreamCreate, "nvjpegJpegStreamCreate");
    need(api.nvjpegJpegStreamDestroy, "nvjpegJpegStreamDestroy");
    need(api.nvjpegJpegStreamParseHeader, "nvjpegJpegStreamParseHeader");
    need(api.nvjpegDecodeBatchedSupported, "nvjpegDecodeBatchedSupported");
    return api;
}

Loaded<NvjpegApi> load_nvjpeg() {
    return load_first<NvjpegApi>("nvJPEG", "TOROID_NVJPEG", "libnvjpeg",
                                 "libnvjpeg.so; it ships with the CUDA toolkit and PyTorch's CUDA wheels",
                                 nvjpeg_candidates(), bind_nvjpeg, [](const std::string&) {});
}

Once<Loaded<NvjpegApi>>& nvjpeg_once() {
    static Once<Loaded<NvjpegApi>> once;
    return once;
}

Once<DriverApi>& driver_once() {
    static Once<DriverApi> once;
    return once;
}

Once<Loaded<NvrtcApi>>& nvrtc_once() {
    static Once<Loaded<NvrtcApi>> once;
    return once;
}

}  // namespace

const DriverApi& driver() { return driver_once().get(load_driver); }

const NvrtcApi& nvrtc() { return nvrtc_once().get(load_nvrtc).api; }

std::string nvrtc_path() { return nvrtc_once().get(load_nvrtc).path; }

namespace {

// The files a CUDA library `stem` ("libnvrtc") is looked for in, as nvrtc_candidates() says.
std::vector<std::string> library_candidates(const char* env, const std::string& stem) {
    const char* forced = std::getenv(env);
    if (forced != nullptr && *forced != '\0') return {forced};

    std::vector<std::string> out = {stem + ".so.13", stem + ".so.12", stem + ".so"};
    std::vector<std::string> patterns = {"/usr/local/cuda/lib64/" + stem + ".so*", "/usr/local/cuda/lib/" + stem + ".so*"};
    // Python wheels (nvidia-cuda-nvrtc, nvidia-nvjpeg, as PyTorch's CUDA builds depend on) put
    // the library in site-packages/nvidia/<part>/lib/: cuda_nvrtc or nvjpeg for CUDA 12, cu13
    // for CUDA 13.
    std::vector<std::string> roots = {"/usr/local/lib/python3*/dist-packages", "/usr/local/lib/python3*/site-packages",
                                      "/usr/lib/python3/dist-packages", "/opt/*/.venv/lib/python3*/site-packages",
                                      "/opt/*/lib/python3*/site-packages"};
    if (const char* venv = std::getenv("VIRTUAL_ENV"); venv && *venv)
        roots.insert(roots.begin(), std::string(venv) + "/lib/python3*/site-packages");
    if (const char* conda = std::getenv("CONDA_PREFIX"); conda && *conda) {
        patterns.push_back(std::string(conda) + "/lib/" + stem + ".so*");
        roots.push_back(std::string(conda) + "/lib/python3*/site-packages");
    }
    if (const char* home = std::getenv("HOME"); home && *home)
        roots.push_back(std::string(home) + "/.local/lib/python3*/site-packages");
    for (const auto& root : roots) patterns.push_back(root + "/nvidia/*/lib/" + stem + ".so*");
    for (const auto& pattern : patterns)
        for (auto& file : glob_files(pattern)) out.push_back(std::move(file));
    return out;
}

}  // namespace

std::vector<std::string> nvrtc_candidates() { return library_candidates("TOROID_NVRTC", "libnvrtc"); }

std::vector<std::string> nvjpeg_candidates() { return library_candidates("TOROID_NVJPEG", "libnvjpeg"); }

const NvjpegApi& nvjpeg() { return nvjpeg_once().get(load_nvjpeg).api; }

std::string nvjpeg_path() { return nvjpeg_once().get(load_nvjpeg).path; }

std::string driver_error_text(CUresult result) {
    const DriverApi& api = driver();
    const char* name = nullptr;
    const char* text = nullptr;
    api.cuGetErrorName(result, &name);
    api.cuGetErrorString(result, &text);
    return fmt::format("{} ({})", name ? name : fmt::format("CUresult {}", result), text ? text : "no description");
}

void check(CUresult result, const char* what) {
    if (result != CUDA_SUCCESS) fail("CUDA: {} failed: {}", what, driver_error_text(result));
}

}  // namespace toroid::cuda
