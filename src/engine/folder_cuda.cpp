// A folder of images through a pipeline on a GPU, in batches: read (and decode on the GPU),
// run every image of the batch in one launch per kernel, copy the results back, and encode
// and write them while the next batch is read and run (files.h, process_folder_cuda).
#include "core/error.h"
#include "core/parallel.h"
#include "engine/cuda_engine.h"
#include "engine/driver.h"
#include "engine/files.h"
#include "io/file.h"
#include "io/paths.h"
#include "runtime/cuda/cuda.h"
#include "runtime/cuda/jpeg_decode.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <future>
#include <memory>
#include <optional>
#include <utility>

namespace toroid {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kAlign = 256;  // each image's buffer starts on a 256-byte boundary
std::size_t aligned(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// Bytes from a tensor's first element to one past its last.
std::size_t span_bytes(DType dtype, const Dims& shape, const Dims& strides) {
    return static_cast<std::size_t>(span_elements(shape, strides)) * dtype_size(dtype);
}

// One file on its way through a batch.
struct Item {
    std::size_t index = 0;  // in the plan
    std::string error;      // set: the file failed (the message names it)
    // A JPEG that decodes on the GPU: its bytes and its (C, H, W); else `host`, the image
    // decoded on the CPU.
    std::string bytes;
    bool on_gpu = false;
    std::array<std::int64_t, 3> chw{};
    Tensor host;
    TensorSpec spec;  // the input on the device
    std::shared_ptr<CudaPipeline> prepared;
    ShapeInfo out;
    Dims out_strides{};
    std::size_t in_offset = 0, in_bytes = 0, out_offset = 0, out_bytes = 0;
    Tensor result;  // a view of the batch's page-locked results
};

class FolderRun {
public:
    FolderRun(const Pipeline& pipeline, const FolderPlan& plan, const FolderOptions& options,
              const CudaFolderOptions& cuda, FolderReport& report)
        : pipeline_(pipeline),
          plan_(plan),
          options_(options),
          cuda_(cuda),
          report_(report),
          device_(cuda::Device::get(cuda.device)),
          stream_(device_),
          jobs_(options.jobs > 0 ? options.jobs : default_threads()),
          budget_(cuda.device_budget > 0 ? cuda.device_budget
                                         : std::max<std::size_t>(std::size_t{64} << 20, device_.total_memory() / 8)) {}

    ~FolderRun() {
        if (writer_.valid()) writer_.wait();
    }

    void run() {
        const std::size_t n = plan_.inputs.size(), step = std::max<std::size_t>(cuda_.batch, 1);
        for (std::size_t from = 0; from < n; from += step) {
            auto items = std::make_shared<std::vector<Item>>(std::min(step, n - from));
            for (std::size_t k = 0; k < items->size(); ++k) (*items)[k].index = from + k;
            read(*items);
            prepare(*items);
            // The files that failed before the GPU are reported now (the writers change
            // the others' errors from here on).
            for (const Item& it : *items)
                if (!it.error.empty()) report_.done(it.error);
            // Groups within the device budget, in order; a file alone above it goes alone.
            std::vector<std::size_t> group;
            std::size_t bytes = 0;
            for (std::size_t k = 0; k < items->size(); ++k) {
                const Item& it = (*items)[k];
                if (!it.error.empty()) continue;
                const std::size_t need = aligned(it.in_bytes) + aligned(it.out_bytes);
                if (!group.empty() && bytes + need > budget_) {
                    launch(items, std::exchange(group, {}));
                    bytes = 0;
                }
                group.push_back(k);
                bytes += need;
            }
            if (!group.empty()) launch(items, std::move(group));
        }
        if (writer_.valid()) writer_.get();
    }

private:
    // Reads each file; JPEGs that decode on the GPU keep their bytes and header, the others
    // decode here as process_file decodes them.
    void read(std::vector<Item>& items) {
        const FileOptions& file = options_.file;
        const bool gpu_layout = !file.layout || *file.layout == Layout::Contiguous;
        parallel_each(items.size(), jobs_, [&](std::size_t k) {
            Item& it = items[k];
            const fs::path& in = plan_.inputs[it.index];
            it.error = plan_.clash[it.index];
            if (!it.error.empty()) return;
            try {
                output_format(plan_.outputs[it.index], file);
                const bool jpeg = io::image_format_of(in) == io::ImageFormat::Jpeg;
                it.on_gpu = cuda_.gpu_decode && jpeg && !file.draft && gpu_layout;
                if (it.on_gpu) {
                    it.bytes = io::read_file(in, io::max_image_file_bytes());
                    it.chw = cuda::jpeg_image_info(it.bytes, io::printable_path(in), file.decode);
                    const Dims shape{1, it.chw[0], it.chw[1], it.chw[2]};
                    it.spec = TensorSpec{DType::UInt8, shape, dense_strides(shape, Layout::Contiguous)};
                } else {
                    it.host = read_file_input(in, pipeline_, file);
                    it.spec = it.host.spec();
                }
                it.in_bytes = span_bytes(it.spec.dtype, it.spec.shape, it.spec.strides);
            } catch (...) {
                it.error = message_for(in, std::current_exception());
            }
        });
    }

    // Prepares the pipeline once per input spec of the batch (on the jobs threads), and
    // sizes each result.
    void prepare(std::vector<Item>& items) {
        std::vector<std::optional<std::string>> keys(items.size());
        for (std::size_t k = 0; k < items.size(); ++k)
            if (items[k].error.empty()) keys[k] = driver::spec_key(items[k].spec);
        auto made = parallel_once_per_key(keys, jobs_, [&](std::size_t k) {
            return std::shared_ptr<CudaPipeline>(prepare_cuda(pipeline_, items[k].spec, cuda_.engine, cuda_.device));
        });
        for (std::size_t k = 0; k < items.size(); ++k) {
            Item& it = items[k];
            if (!keys[k]) continue;
            if (!made[k].error.empty()) {
                it.error = fmt::format("{}: {}", io::printable_path(plan_.inputs[it.index]), made[k].error);
                continue;
            }
            it.prepared = made[k].value;
            it.out = it.prepared->output();
            it.out_strides = dense_strides(it.out.shape, it.prepared->output_layout());
            it.out_bytes = span_bytes(it.out.dtype, it.out.shape, it.out_strides);
        }
    }

    // Runs one group on the GPU and hands its results to the writer.
    void launch(const std::shared_ptr<std::vector<Item>>& items, std::vector<std::size_t> group) {
        std::vector<Item*> g;
        for (std::size_t k : group) g.push_back(&(*items)[k]);
        cuda::HostBuffer& results = pinned_[turn_++ % 2];
        try {
            run_group(g, results);
        } catch (...) {
            // The group's buffers or its stream failed: every file of it fails with the reason.
            for (Item* it : g)
                if (it->error.empty()) it->error = fmt::format("{}: {}", io::printable_path(plan_.inputs[it->index]),
                                                               error_message(std::current_exception()));
        }
        // The previous group's writes end before this group's begin: `results` alternates
        // between two buffers, and the writer of the group before last has finished.
        if (writer_.valid()) writer_.get();
        writer_ = std::async(std::launch::async, [this, items, g = std::move(g)] {
            parallel_each(g.size(), jobs_, [&](std::size_t j) {
                Item& it = *g[j];
                if (it.error.empty()) {
                    try {
                        write_result(plan_.inputs[it.index], plan_.outputs[it.index], it.result, options_.file);
                    } catch (...) {
                        it.error = message_for(plan_.inputs[it.index], std::current_exception());
                    }
                }
                it.result = Tensor();
                it.host = Tensor();
                report_.done(it.error);
            });
        });
    }

    void grow(cuda::DeviceBuffer& buffer, std::size_t bytes) {
        if (buffer.size() >= std::max<std::size_t>(bytes, 1)) return;
        stream_.synchronize();  // the work that used it is done
        buffer = cuda::DeviceBuffer();
        buffer = cuda::DeviceBuffer(device_, std::max<std::size_t>(bytes, 1));
    }

    void run_group(const std::vector<Item*>& g, cuda::HostBuffer& results) {
        std::size_t in_total = 0, out_total = 0;
        for (Item* it : g) {
            it->in_offset = in_total;
            it->out_offset = out_total;
            in_total += aligned(it->in_bytes);
            out_total += aligned(it->out_bytes);
        }
        // The device buffers only grow (an allocation is a synchronization, and costly).
        grow(din_, in_total);
        grow(dout_, out_total);
        cuda::DeviceBuffer &din = din_, &dout = dout_;
        // Uploads and decodes, then the runs, then the download: all in the stream's order.
        std::vector<cuda::JpegJob> jobs;
        std::vector<Item*> decoding;
        for (Item* it : g) {
            if (it->on_gpu) {
                jobs.push_back({it->bytes, din.pointer() + it->in_offset, it->chw});
                decoding.push_back(it);
            } else if (it->in_bytes > 0) {
                din.copy_from_host_async(it->host.data(), it->in_bytes, stream_, it->in_offset);
            }
        }
        if (!jobs.empty()) {
            std::vector<std::string> failed;
            try {
                failed = cuda::decode_jpegs(device_, std::move(jobs), options_.file.decode, stream_.handle());
            } catch (const Error& e) {  // no nvJPEG here
                fail("{} (--decode exact decodes on the CPU)", e.what());
            }
            for (std::size_t j = 0; j < decoding.size(); ++j)
                if (!failed[j].empty()) decoding[j]->error = failed[j];
        }
        std::vector<CudaBatchRun> runs;
        std::vector<Item*> running;
        for (Item* it : g) {
            if (!it->error.empty()) continue;
            CudaBatchRun r;
            r.pipeline = it->prepared.get();
            r.input = reinterpret_cast<const void*>(din.pointer() + it->in_offset);
            r.output = reinterpret_cast<void*>(dout.pointer() + it->out_offset);
            r.output_strides = it->out_strides;
            runs.push_back(r);
            running.push_back(it);
        }
        if (!runs.empty()) run_device_batch(runs, stream_.handle());
        if (results.size() < out_total) {
            results = cuda::HostBuffer();  // the old one first: the two never held at once
            results = cuda::HostBuffer(device_, out_total);
        }
        if (out_total > 0) dout.copy_to_host_async(results.data(), out_total, stream_);
        stream_.synchronize();
        for (std::size_t j = 0; j < running.size(); ++j) {
            Item* it = running[j];
            if (!runs[j].ok) {
                it->error = fmt::format("{}: {}", io::printable_path(plan_.inputs[it->index]), runs[j].error);
                continue;
            }
            it->result = Tensor::borrow(results.data() + it->out_offset, it->out.dtype, it->out.shape, it->out_strides);
        }
        for (Item* it : g) it->bytes.clear();
    }

    const Pipeline& pipeline_;
    const FolderPlan& plan_;
    const FolderOptions& options_;
    const CudaFolderOptions& cuda_;
    FolderReport& report_;
    const cuda::Device& device_;
    cuda::Stream stream_;
    int jobs_;
    std::size_t budget_;
    cuda::DeviceBuffer din_, dout_;
    std::array<cuda::HostBuffer, 2> pinned_;
    std::size_t turn_ = 0;
    std::future<void> writer_;  // the last group's encodes and writes
};

}  // namespace

FolderResult process_folder_cuda(const Pipeline& pipeline, const fs::path& input_dir, const fs::path& output_dir,
                                 const FolderOptions& options, const CudaFolderOptions& cuda) {
    const cuda::Device& device = cuda::Device::get(cuda.device);  // no GPU: one error before any file is written
    // nvJPEG's start (loading it, making its decoders: most of a second) runs beside the
    // folder's scan and the first batch's reads; the first decode waits for it.
    std::future<void> warm;
    if (cuda.gpu_decode)
        warm = std::async(std::launch::async, [&device] {
            try {
                cuda::describe_jpeg_decoder(device);
            } catch (const Error&) {  // the decode says why, per file
            }
        });
    const FolderPlan plan = plan_folder(pipeline, input_dir, output_dir, options);
    FolderReport report(options, static_cast<std::int64_t>(plan.inputs.size()), plan.ignored);
    FolderRun(pipeline, plan, options, cuda, report).run();
    return report.result();
}

}  // namespace toroid
