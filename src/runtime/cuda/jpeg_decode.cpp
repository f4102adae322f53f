// GPU JPEG decoding through nvJPEG (jpeg_decode.h): one decoder per device, its handles made
// on first use, the jobs sorted into the hardware batch, nvJPEG's CUDA decoder and the CPU.
#include "runtime/cuda/jpeg_decode.h"

#include "core/error.h"
#include "io/exif.h"
#include "io/file.h"
#include "io/jpeg.h"

#include <fmt/format.h>

#include <cstring>
#include <map>
#include <memory>
#include <mutex>

namespace toroid::cuda {

namespace {

const char* status_name(nvjpegStatus_t s) {
    switch (s) {
    case 1: return "not initialized";
    case 2: return "invalid parameter";
    case 3: return "bad JPEG";
    case 4: return "JPEG not supported";
    case 5: return "allocator failure";
    case 6: return "execution failed";
    case 7: return "architecture mismatch";
    case 8: return "internal error";
    case 9: return "implementation not supported";
    case 10: return "incomplete bitstream";
    default: return "unknown status";
    }
}

std::string status_text(const char* call, nvjpegStatus_t s) { return fmt::format("nvJPEG: {}: {} ({})", call, status_name(s), s); }

void check_nvjpeg(nvjpegStatus_t s, const char* call) {
    if (s != NVJPEG_STATUS_SUCCESS) fail("{}", status_text(call, s));
}

// How one job is decoded.
enum class Route { Hardware, Cuda, Cpu };

struct Plan {
    Route route = Route::Cpu;
    int format = NVJPEG_OUTPUT_RGB;  // NVJPEG_OUTPUT_RGB or NVJPEG_OUTPUT_Y
    bool replicate = false;          // a grey file asked for as RGB: Y, then copied to G and B
};

class Decoder {
public:
    explicit Decoder(const Device& device) : device_(device) {
        const NvjpegApi& nv = nvjpeg();
        device.make_current();
        // The hardware decoder where the GPU has one (any failure: the CUDA decoder serves).
        // The CUDA decoder is made on first use (cuda_handle): a batch of baseline files on
        // a GPU with the hardware decoder never needs it, and making it costs process start.
        if (nv.nvjpegCreateEx(NVJPEG_BACKEND_HARDWARE, nullptr, nullptr, 0, &hw_) == NVJPEG_STATUS_SUCCESS) {
            if (nv.nvjpegJpegStateCreate(hw_, &hw_state_) != NVJPEG_STATUS_SUCCESS ||
                nv.nvjpegJpegStreamCreate(hw_, &hw_stream_) != NVJPEG_STATUS_SUCCESS) {
                nv.nvjpegDestroy(hw_);
                hw_ = nullptr;
            }
        } else {
            hw_ = nullptr;
        }
        if (hw_ == nullptr && !cuda_handle())
            fail("nvJPEG: cannot make its CUDA decoder on {}: {}", device.name(), cuda_error_);
        check(driver().cuEventCreate(&done_, CU_EVENT_DEFAULT), "cuEventCreate");
    }
    // Kept for the life of the process, like the modules: nvJPEG's teardown at exit races the
    // driver's own.
    ~Decoder() = default;

    bool hardware() const { return hw_ != nullptr; }

    std::vector<std::string> decode(std::vector<JpegJob> jobs, const io::DecodeOptions& options, CUstream stream) {
        std::lock_guard<std::mutex> lock(mutex_);
        device_.make_current();
        const DriverApi& d = driver();
        // The previous call's work: its states and host images are free once it ends.
        if (pending_) check(d.cuEventSynchronize(done_), "cuEventSynchronize");
        pending_ = false;
        held_ = std::move(jobs);
        host_.clear();
        std::vector<std::string> messages(held_.size());
        std::vector<Plan> plans(held_.size());
        for (std::size_t i = 0; i < held_.size(); ++i) plans[i] = plan(held_[i], options);

        // The hardware batch, one per output format; a batch nvJPEG refuses is retried image
        // by image on the CUDA decoder, so that one file cannot fail the others.
        for (int format : {NVJPEG_OUTPUT_RGB, NVJPEG_OUTPUT_Y}) {
            std::vector<std::size_t> batch;
            for (std::size_t i = 0; i < held_.size(); ++i)
                if (plans[i].route == Route::Hardware && plans[i].format == format) batch.push_back(i);
            if (batch.empty()) continue;
            if (!decode_hardware(batch, format, stream))
                for (std::size_t i : batch) plans[i].route = Route::Cuda;
        }
        for (std::size_t i = 0; i < held_.size(); ++i) {
            if (plans[i].route != Route::Cuda) continue;
            NvjpegImage image = planes(held_[i], plans[i].format == NVJPEG_OUTPUT_Y ? 1 : 3);
            const std::string_view b = held_[i].bytes;
            if (!cuda_handle()) {  // libjpeg-turbo decodes it
                plans[i].route = Route::Cpu;
                continue;
            }
            const nvjpegStatus_t s = nvjpeg().nvjpegDecode(cuda_, cuda_state_, reinterpret_cast<const unsigned char*>(b.data()),
                                                           b.size(), plans[i].format, &image, stream);
            // What nvJPEG refuses, libjpeg-turbo may still decode (or name the fault).
            if (s != NVJPEG_STATUS_SUCCESS) plans[i].route = Route::Cpu;
        }
        for (std::size_t i = 0; i < held_.size(); ++i) {
            try {
                if (plans[i].route == Route::Cpu) decode_cpu(held_[i], options, stream);
                else if (plans[i].replicate) replicate_grey(held_[i], stream);
            } catch (const Error& e) {
                messages[i] = e.what();
            }
        }
        check(d.cuEventRecord(done_, stream), "cuEventRecord");
        pending_ = true;
        held_.clear();
        return messages;
    }

private:
    // Whether the CUDA decoder's handle and state exist, made on the first call (under
    // mutex_, or from the constructor); a failure is kept in cuda_error_ and not retried.
    bool cuda_handle() {
        if (cuda_ != nullptr) return true;
        if (!cuda_error_.empty()) return false;
        try {
            const NvjpegApi& nv = nvjpeg();
            check_nvjpeg(nv.nvjpegCreateEx(NVJPEG_BACKEND_DEFAULT, nullptr, nullptr, 0, &cuda_), "nvjpegCreateEx");
            if (const nvjpegStatus_t s = nv.nvjpegJpegStateCreate(cuda_, &cuda_state_); s != NVJPEG_STATUS_SUCCESS) {
                nv.nvjpegDestroy(cuda_);
                cuda_ = nullptr;
                check_nvjpeg(s, "nvjpegJpegStateCreate");
            }
        } catch (const Error& e) {
            cuda_ = nullptr;
            cuda_error_ = e.what();
            return false;
        }
        return true;
    }

    Plan plan(const JpegJob& job, const io::DecodeOptions& options) {
        Plan p;
        const auto [c, h, w] = job.info;
        if (c != 1 && c != 3) return p;  // CMYK kept as stored
        // A file whose marker walk stops short of its end marker (truncated, or broken
        // between segments) is libjpeg-turbo's to judge: it decodes one whose scans are whole
        // and names the fault of one cut inside them, where nvJPEG's hardware decoder may give
        // pixels of nothing without an error.
        if (!io::jpeg_reaches_end_marker(job.bytes)) return p;
        if (options.apply_exif_orientation) {
            const int o = io::jpeg_exif_orientation(job.bytes);
            if (o > 1) return p;  // the turn: done by io::decode_image
        }
        int components = 0, subsampling = 0;
        int widths[NVJPEG_MAX_COMPONENT] = {}, heights[NVJPEG_MAX_COMPONENT] = {};
        const auto* data = reinterpret_cast<const unsigned char*>(job.bytes.data());
        if (nvjpeg().nvjpegGetImageInfo(hw_ != nullptr ? hw_ : cuda_, data, job.bytes.size(), &components, &subsampling,
                                        widths, heights) !=
                NVJPEG_STATUS_SUCCESS ||
            subsampling == NVJPEG_CSS_UNKNOWN || (components != 1 && components != 3) || widths[0] != w ||
            heights[0] != h)
            return p;
        p.format = c == 1 || components == 1 ? NVJPEG_OUTPUT_Y : NVJPEG_OUTPUT_RGB;
        p.replicate = c == 3 && components == 1;
        p.route = Route::Cuda;
        if (hw_ != nullptr) {
            int unsupported = 1;
            if (nvjpeg().nvjpegJpegStreamParseHeader(hw_, data, job.bytes.size(), hw_stream_) == NVJPEG_STATUS_SUCCESS &&
                nvjpeg().nvjpegDecodeBatchedSupported(hw_, hw_stream_, &unsupported) == NVJPEG_STATUS_SUCCESS &&
                unsupported == 0)
                p.route = Route::Hardware;
        }
        return p;
    }

    // The job's output planes for nvJPEG: `planes` of H x W bytes, one after another.
    static NvjpegImage planes(const JpegJob& job, int count) {
        NvjpegImage image{};
        const auto h = static_cast<std::size_t>(job.info[1]), w = static_cast<std::size_t>(job.info[2]);
        for (int c = 0; c < count; ++c) {
            image.channel[c] = reinterpret_cast<unsigned char*>(job.out + static_cast<std::size_t>(c) * h * w);
            image.pitch[c] = w;
        }
        return image;
    }

    bool decode_hardware(const std::vector<std::size_t>& batch, int format, CUstream stream) {
        const NvjpegApi& nv = nvjpeg();
        const int n = static_cast<int>(batch.size());
        if (n != hw_batch_ || format != hw_format_) {
            if (nv.nvjpegDecodeBatchedInitialize(hw_, hw_state_, n, 1, format) != NVJPEG_STATUS_SUCCESS) {
                hw_batch_ = 0;
                return false;
            }
            hw_batch_ = n;
            hw_format_ = format;
        }
        std::vector<const unsigned char*> data;
        std::vector<std::size_t> sizes;
        std::vector<NvjpegImage> images;
        for (std::size_t i : batch) {
            data.push_back(reinterpret_cast<const unsigned char*>(held_[i].bytes.data()));
            sizes.push_back(held_[i].bytes.size());
            images.push_back(planes(held_[i], format == NVJPEG_OUTPUT_Y ? 1 : 3));
        }
        return nv.nvjpegDecodeBatched(hw_, hw_state_, data.data(), sizes.data(), images.data(), stream) ==
               NVJPEG_STATUS_SUCCESS;
    }

    void decode_cpu(const JpegJob& job, const io::DecodeOptions& options, CUstream stream) {
        const Tensor t = io::decode_image(std::string(job.bytes), "image", io::ImageFormat::Jpeg, options);
        const auto [c, h, w] = job.info;
        if (t.shape() != Dims{1, c, h, w})
            fail("image: decoded to {} channels of {}x{}, its header says {} of {}x{}", t.shape()[1], t.shape()[3],
                 t.shape()[2], c, w, h);
        auto& host = host_.emplace_back(static_cast<std::size_t>(c * h * w));
        std::size_t k = 0;
        for (std::int64_t ch = 0; ch < c; ++ch)
            for (std::int64_t y = 0; y < h; ++y)
                for (std::int64_t x = 0; x < w; ++x) host[k++] = t.at<std::uint8_t>(0, ch, y, x);
        check(driver().cuMemcpyHtoDAsync(job.out, host.data(), host.size(), stream), "cuMemcpyHtoDAsync");
    }

    static void replicate_grey(const JpegJob& job, CUstream stream) {
        const auto plane = static_cast<std::size_t>(job.info[1] * job.info[2]);
        for (std::size_t c = 1; c < 3; ++c)
            check(driver().cuMemcpyDtoDAsync(job.out + c * plane, job.out, plane, stream), "cuMemcpyDtoDAsync");
    }

    const Device& device_;
    std::mutex mutex_;
    nvjpegHandle_t cuda_ = nullptr;  // the CUDA decoder: made on first use (cuda_handle)
    nvjpegJpegState_t cuda_state_ = nullptr;
    std::string cuda_error_;  // why it could not be made
    nvjpegHandle_t hw_ = nullptr;
    nvjpegJpegState_t hw_state_ = nullptr;
    nvjpegJpegStream_t hw_stream_ = nullptr;
    int hw_batch_ = 0, hw_format_ = -1;
    CUevent done_ = nullptr;
    bool pending_ = false;
    std::vector<JpegJob> held_;  // this call's jobs (their bytes are the caller's)
    std::vector<std::vector<std::uint8_t>> host_;
};

Decoder& decoder(const Device& device) {
    static std::mutex mutex;
    static std::map<int, std::unique_ptr<Decoder>>* decoders = new std::map<int, std::unique_ptr<Decoder>>();
    std::lock_guard<std::mutex> lock(mutex);
    auto& slot = (*decoders)[device.ordinal()];
    if (!slot) slot = std::make_unique<Decoder>(device);
    return *slot;
}

}  // namespace

std::array<std::int64_t, 3> jpeg_image_info(const std::string& bytes, const std::string& name,
                                            const io::DecodeOptions& options) {
    if (bytes.size() < 2 || static_cast<unsigned char>(bytes[0]) != 0xFF || static_cast<unsigned char>(bytes[1]) != 0xD8)
        fail("{}: not a JPEG file (no start-of-image marker)", name);
    return io::image_info(bytes, name, io::ImageFormat::Jpeg, options);
}

std::vector<std::string> decode_jpegs(const Device& device, std::vector<JpegJob> jobs, const io::DecodeOptions& options,
                                      CUstream stream) {
    for (const JpegJob& job : jobs)
        if (job.out == 0) fail("decode_jpegs: a job without an output buffer");
    return decoder(device).decode(std::move(jobs), options, stream);
}

std::string describe_jpeg_decoder(const Device& device) {
    const NvjpegApi& nv = nvjpeg();
    int major = 0, minor = 0;
    nv.nvjpegGetProperty(MAJOR_VERSION, &major);
    nv.nvjpegGetProperty(MINOR_VERSION, &minor);
    return fmt::format("nvJPEG {}.{} ({} decoder)", major, minor, decoder(device).hardware() ? "hardware" : "CUDA");
}

}  // namespace toroid::cuda
