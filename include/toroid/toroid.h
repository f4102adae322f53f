/* toroid's C API: the one stable door for every other language (Python's ctypes
 * package included). Opaque handles for pipelines and compiled functions, tensors as
 * (data, dtype, shape, strides in elements, device), a status code plus a message for
 * every failure. */
#ifndef TOROID_TOROID_H
#define TOROID_TOROID_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define TOROID_API __declspec(dllexport)
#else
#define TOROID_API __attribute__((visibility("default")))
#endif

/* Bumped when a struct or a signature below changes incompatibly. */
#define TOROID_ABI_VERSION 1

/* ---- status ------------------------------------------------------------------------ */

typedef enum toroid_status {
    TOROID_OK = 0,
    /* A bad argument: invalid pipeline JSON, null pointer, tensor that does not match
     * the spec the function was compiled for, impossible size... */
    TOROID_ERROR_INVALID_ARGUMENT = 1,
    /* Valid but not supported: reserved dtypes (float16, bfloat16, float64), or a device
     * this build or machine cannot run (no CUDA driver). */
    TOROID_ERROR_UNSUPPORTED = 2,
    TOROID_ERROR_OUT_OF_MEMORY = 3,
    /* A bug in toroid (or a broken installation, e.g. no C++ compiler for the JIT). */
    TOROID_ERROR_INTERNAL = 4
} toroid_status;

/* The message of the last failed call on this thread (one line, UTF-8), or "" when no
 * call on this thread has failed. Valid until the next failing call on this thread. */
TOROID_API const char* toroid_last_error(void);
/* "ok", "invalid argument", "unsupported", "out of memory", "internal error". */
TOROID_API const char* toroid_status_name(toroid_status status);
/* The library's version ("0.1.0") and TOROID_ABI_VERSION as built. */
TOROID_API const char* toroid_version(void);
TOROID_API int toroid_abi_version(void);

/* ---- tensors ------------------------------------------------------------------------ */

/* Values are fixed forever; reserved ones are rejected with TOROID_ERROR_UNSUPPORTED. */
typedef enum toroid_dtype {
    TOROID_UINT8 = 0,
    TOROID_FLOAT32 = 1,
    TOROID_FLOAT16 = 2,
    TOROID_BFLOAT16 = 3,
    TOROID_FLOAT64 = 4,  /* reserved */
    TOROID_UINT16 = 5
} toroid_dtype;

typedef enum toroid_device {
    TOROID_CPU = 0,
    TOROID_CUDA = 1 /* device memory of CUDA device `device_index` (its primary context) */
} toroid_device;

#define TOROID_MAX_DIMS 4

/* What a tensor is, without its data. ndim is 2 (H, W), 3 (C, H, W) or 4 (N, C, H, W);
 * only the first ndim entries of shape and strides are read. Strides count elements,
 * not bytes, and must not be negative; any other strides work (channels-last, crops,
 * every other row...). */
typedef struct toroid_tensor_desc {
    int32_t dtype;        /* toroid_dtype */
    int32_t device;       /* toroid_device */
    int32_t device_index; /* 0 for the CPU */
    int32_t ndim;
    int64_t shape[TOROID_MAX_DIMS];
    int64_t strides[TOROID_MAX_DIMS];
} toroid_tensor_desc;

/* A tensor: `data` points at element (0, ..., 0) of caller memory, which toroid never
 * frees and never keeps after the call returns. */
typedef struct toroid_tensor {
    void* data;
    toroid_tensor_desc desc;
} toroid_tensor;

/* ---- pipelines ---------------------------------------------------------------------- */

typedef struct toroid_pipeline toroid_pipeline;

/* Parses a pipeline (a JSON list of ops, the schema of `toroid apply`; flip dims refer to
 * (N, C, H, W)). Grid paths are read from `base_dir` (NULL: the current folder) and may not
 * be absolute or leave it (see toroid_pipeline_from_json_flags).
 * A grid_sample op may leave out "grid" (or set it to null): its grid is then given with
 * toroid_pipeline_set_grid before compiling. */
TOROID_API toroid_status toroid_pipeline_from_json(const char* json, const char* base_dir,
                                                   toroid_pipeline** out);
/* toroid_pipeline_from_json with flags: TOROID_ALLOW_PATHS lets grid paths be absolute or
 * leave base_dir (toroid_pipeline_from_json refuses them, without reading the file). */
#define TOROID_ALLOW_PATHS 1u
TOROID_API toroid_status toroid_pipeline_from_json_flags(const char* json, const char* base_dir, uint32_t flags,
                                                         toroid_pipeline** out);
/* Gives grid_sample op `op_index` the grid `grid`: float32 on the CPU, shape
 * (N, H', W', 2) (or (H', W', 2) for N = 1), any strides. The values are copied. */
TOROID_API toroid_status toroid_pipeline_set_grid(toroid_pipeline* pipeline, size_t op_index,
                                                  const toroid_tensor* grid);
TOROID_API toroid_status toroid_pipeline_num_ops(const toroid_pipeline* pipeline, size_t* out);
/* The canonical JSON of the pipeline; owned by the pipeline, valid until it changes or
 * is freed. Grids given with toroid_pipeline_set_grid print as "<array>". */
TOROID_API toroid_status toroid_pipeline_to_json(const toroid_pipeline* pipeline, const char** out);
TOROID_API void toroid_pipeline_free(toroid_pipeline* pipeline); /* NULL is fine */

/* ---- compiled functions ------------------------------------------------------------- */

typedef struct toroid_options {
    /* sizeof(toroid_options) as the caller was built with (toroid_options_init sets it;
     * 0 reads as this version's size), so that later versions can add fields. */
    uint32_t struct_size;
    int32_t threads;       /* worker threads; 0: every core */
    const char* engine;    /* "compiled" or "reference"; NULL: "compiled" */
    const char* debug_dir; /* compiled engine: dump IR and generated code here; NULL: none */
} toroid_options;

/* Fills `options` with the defaults (compiled engine, every core, no debug dump). */
TOROID_API void toroid_options_init(toroid_options* options);

typedef struct toroid_function toroid_function;

/* Prepares `pipeline` for inputs described by `input` (dtype, shape and strides; data is
 * not read). An input on TOROID_CUDA compiles CUDA kernels (NVRTC, loaded at run time)
 * for that device; the function then runs on device memory only. The compiled engine compiles here (or loads its
 * cache). `options` may be NULL. The function keeps its own copy of the pipeline. */
TOROID_API toroid_status toroid_compile(const toroid_pipeline* pipeline, const toroid_tensor_desc* input,
                                        const toroid_options* options, toroid_function** out);
/* DLPack (dlpack.h, the DLManagedTensor of DLPack 0.6 and later): `out` describes the
 * DLTensor's memory without copying it (data + byte_offset; strides NULL is compact row
 * major; CPU and CUDA devices; uint8, float32, float16, bfloat16, float64 element types,
 * one lane; at most TOROID_MAX_DIMS dims). The tensor is borrowed: its deleter is not
 * called, and the caller keeps it alive while `out` is used. Frameworks that export
 * DLPack (NumPy, PyTorch, CuPy, JAX, ...) hand their arrays to toroid_compile and
 * toroid_run this way. */
struct DLManagedTensor;
TOROID_API toroid_status toroid_tensor_from_dlpack(const struct DLManagedTensor* managed, toroid_tensor* out);
/* The input spec compiled for, and the result's dtype, shape (of the input's ndim: ops
 * never change N or C) and dense strides in the layout toroid writes it in (channels-last
 * for a channels-last input): allocate that and toroid_run writes it without a
 * reordering copy. */
TOROID_API toroid_status toroid_function_input_desc(const toroid_function* fn, toroid_tensor_desc* out);
TOROID_API toroid_status toroid_function_output_desc(const toroid_function* fn, toroid_tensor_desc* out);
/* A summary of what runs (kernels, loop nests, bytes); owned by the function. */
TOROID_API toroid_status toroid_function_explain(const toroid_function* fn, const char** out);
/* Runs on `in`, whose dtype, shape and strides must equal the compiled spec (strides of
 * size-1 dims are ignored), and writes the result into `out`: caller memory of the output
 * dtype and shape, any non-negative strides under which no two elements share memory. `out` must not
 * overlap `in`. Safe to call from several threads at once on one function. */
TOROID_API toroid_status toroid_run(const toroid_function* fn, const toroid_tensor* in, toroid_tensor* out);
/* toroid_run on a CUDA stream (a CUstream, e.g. PyTorch's current stream; NULL: the legacy
 * default stream): the kernels are enqueued there and the call returns without waiting.
 * For a CUDA function the output must be dense in the layout of toroid_function_output_desc
 * up to its outer strides (views of a larger tensor work); for a CPU function the stream
 * must be NULL. */
TOROID_API toroid_status toroid_run_on_stream(const toroid_function* fn, const toroid_tensor* in, toroid_tensor* out,
                                              void* stream);
/* The fastest run: `input` is memory laid out exactly as toroid_function_input_desc says
 * and `output` memory laid out as toroid_function_output_desc says (same dtype, shape and
 * strides; not overlapping the input; on the function's device). No desc is read or
 * checked, so nothing but the two pointers is validated: a caller that compiled for its
 * own tensors' layout pays only for the kernels (on CUDA: their launches). Safe to call
 * from several threads at once on one function. A CUDA function runs on the legacy
 * default stream; toroid_run_data_on_stream names the stream (NULL for CPU functions). */
TOROID_API toroid_status toroid_run_data(const toroid_function* fn, const void* input, void* output);
TOROID_API toroid_status toroid_run_data_on_stream(const toroid_function* fn, const void* input, void* output,
                                                   void* stream);
TOROID_API void toroid_function_free(toroid_function* fn); /* NULL is fine */

/* The window window[4] = {top, left, height, width} of an input described by `input` that
 * the pipeline's result depends on: where the pipeline starts with a crop inside the image,
 * or a resize then a crop inside the resized image, the crop's region or the rows and
 * columns the resize's taps read for it; else the whole image. A decoder need decode only
 * the window (toroid_decode_image_into). */
TOROID_API toroid_status toroid_read_window(const toroid_pipeline* pipeline, const toroid_tensor_desc* input,
                                            int64_t window[4]);

/* ---- batches of images of any sizes ------------------------------------------------- */
/* The result's dtype, shape (of the input's ndim) and dense strides (channels-last for a
 * channels-last input), on the input's device, for an input described by `input`, without
 * compiling anything. */
TOROID_API toroid_status toroid_output_desc(const toroid_pipeline* pipeline, const toroid_tensor_desc* input,
                                            toroid_tensor_desc* out);
/* Runs the pipeline on `count` images, each of its own size (and dtype and strides), into
 * outputs[i] (caller memory of the result's dtype and shape, toroid_output_desc; any
 * non-overlapping strides: views of one stacked tensor work). Images of any size share the
 * compiled code of their pipeline; the CPU images run as one parallel loop over the images
 * on options->threads threads. Images in CUDA memory (input and output on one device, every
 * CUDA image of the call on the same one) run on that device, enqueued on the legacy default
 * stream (toroid_run_batch_on_stream names another) and not waited for: the images whose
 * sizes share compiled kernels and launch plan run as one launch per kernel, the others in
 * further launch sequences; their outputs must be dense in the layout toroid_output_desc
 * gives up to their outer strides (views of one stacked tensor work). A bad image does not stop the others: item_status[i] (optional,
 * `count` entries) gets its status, and when `messages` is given, messages + i *
 * message_size holds its one-line message (NUL-terminated, cut to message_size - 1
 * bytes). Returns TOROID_OK when every image succeeded, else the first failing image's
 * status (toroid_last_error() holds its message). */
TOROID_API toroid_status toroid_run_batch(const toroid_pipeline* pipeline, const toroid_tensor* inputs,
                                          const toroid_tensor* outputs, size_t count, const toroid_options* options,
                                          int32_t* item_status, char* messages, size_t message_size);
/* toroid_run_batch with the CUDA images enqueued on `stream` (a CUstream of their device,
 * e.g. PyTorch's current stream; NULL: the legacy default stream). A CUDA image's status
 * covers what can be checked before its kernels are enqueued; a fault inside a kernel
 * surfaces at the stream's next synchronization. */
TOROID_API toroid_status toroid_run_batch_on_stream(const toroid_pipeline* pipeline, const toroid_tensor* inputs,
                                                    const toroid_tensor* outputs, size_t count,
                                                    const toroid_options* options, int32_t* item_status,
                                                    char* messages, size_t message_size, void* stream);

/* toroid_run_batch_on_stream with a pipeline per image: inputs[i] runs pipelines[i] (a
 * random transform's own draws for each image: crop offsets, matrices, on/off choices).
 * Pipelines of one structure share their compiled programs, so their images group as
 * toroid_run_batch's do (one launch per kernel per group on CUDA); only their values differ.
 * A NULL pipeline fails the call; a bad image is reported in item_status and skipped. stream:
 * as toroid_run_batch_on_stream (NULL for CPU images). */
TOROID_API toroid_status toroid_run_batch_each(const toroid_pipeline* const* pipelines, const toroid_tensor* inputs,
                                               const toroid_tensor* outputs, size_t count,
                                               const toroid_options* options, int32_t* item_status, char* messages,
                                               size_t message_size, void* stream);

/* ---- cache counters ----------------------------------------------------------------- */

/* What the compiling engines' caches did since the process started (every thread, every
 * pipeline). A pipeline run on many sizes of one structure compiles once (or loads once
 * from the disk cache) and binds once per size. */
typedef struct toroid_cache_counts {
    uint32_t struct_size;  /* sizeof as the caller was built with (0: this header's) */
    int64_t prepares;      /* functions prepared (toroid_compile, and per size in batches and files) */
    int64_t compiles;      /* compiler runs that produced a module (background ones included) */
    int64_t disk_hits;     /* modules loaded from the on-disk cache */
    int64_t memory_hits;   /* prepares answered from memory: a bound instance or a loaded program */
    int64_t binds;         /* instances bound (a pipeline and input spec bound to its program) */
    int64_t prebuilt_hits; /* programs loaded from a prebuilt folder (`toroid prebuild`, the
                              catalogue): built ahead of time, no compile (set when struct_size
                              covers it) */
    int64_t background_compiles; /* of `compiles`, the full builds compiled in the background
                                    while a quick build served (set when struct_size covers it) */
} toroid_cache_counts;

TOROID_API toroid_status toroid_cache_stats(toroid_cache_counts* out);

/* A program compiled for the first time runs a quick build at first while its full build
 * compiles in the background (the same results; the full build's code is faster and
 * replaces it once loaded). Waits until every such build of this process is done (a
 * process also waits for them before fork and at exit). For benchmarks and tests. */
TOROID_API toroid_status toroid_wait_for_background_builds(void);

/* Interrupts every prepare in progress in this process (toroid_compile, and the prepares of
 * toroid_run_batch and toroid_process_file): each stops at its next check (between ops,
 * passes and kernels; within milliseconds: a C++ compiler it waits for is killed, and so is
 * a wait for another process's cache lock) and fails with TOROID_ERROR_INVALID_ARGUMENT and
 * the message "interrupted". Background builds of programs already prepared go on. Prepares
 * that begin after the
 * call are not affected: there is nothing to clear. Safe to call from any thread and from
 * a signal handler (one atomic increment). */
TOROID_API void toroid_interrupt(void);

/* ---- image files -------------------------------------------------------------------- */

typedef struct toroid_file_options {
    uint32_t struct_size;   /* sizeof as the caller was built with; toroid_file_options_init sets it */
    int32_t threads;        /* threads for this file's kernels; 0: every core */
    int32_t jpeg_quality;   /* 1..100; default 90 */
    const char* format;     /* "jpg", "png", "npy", or NULL: from output_path's extension */
    const char* engine;     /* "compiled" or "reference"; NULL: "compiled" */
    /* The channels PNG and JPEG inputs decode to, as torchvision.io.decode_image's mode
     * converts them: "rgb", "gray", "rgb_alpha", "gray_alpha" or "unchanged"; NULL:
     * "unchanged" (a palette PNG expands to RGB or RGBA). */
    const char* mode;
    int32_t apply_exif_orientation; /* nonzero (default): PNG/JPEG inputs turned as EXIF says */
    /* Nonzero: draft decoding (not exact). A JPEG whose pipeline starts with a resize to a
     * size (not a scale factor) smaller than the image decodes at the smallest of 1/2, 1/4,
     * 1/8 scale that is still at least that size (libjpeg-turbo's DCT scaling). 0 (default):
     * every file decodes whole. */
    int32_t draft;
} toroid_file_options;

/* Fills `options` with the defaults (every core, quality 90, format from the extension,
 * compiled engine, mode unchanged, EXIF orientation applied). */
TOROID_API void toroid_file_options_init(toroid_file_options* options);
/* The pixel limit of the image decoders (PNG, JPEG, .npy), applied to the header before
 * anything is allocated: `pixels` > 0 sets it for the process, 0 removes it, < 0 goes back
 * to $TOROID_MAX_IMAGE_PIXELS or the default 178956970. */
TOROID_API toroid_status toroid_set_max_image_pixels(int64_t pixels);
/* Decodes input_path (.jpg/.jpeg/.png/.npy), runs the pipeline, encodes the result to
 * output_path (its folder is created if missing) atomically. Safe to call from several
 * threads at once. On failure nothing is written and toroid_last_error() says why. An
 * output_path that is input_path (after resolving symlinks, or a hard link) is refused.
 * When `format` is given, output_path is used as is. `options` may be NULL. */
TOROID_API toroid_status toroid_process_file(const toroid_pipeline* pipeline, const char* input_path,
                                             const char* output_path, const toroid_file_options* options);

/* An image decoded by toroid_decode_image: uint8 (1, C, H, W) for PNG and JPEG, the array
 * stored for .npy. Owned by toroid until toroid_image_free. */
typedef struct toroid_image toroid_image;
/* Decodes PNG, JPEG or .npy bytes (told apart by their signature) with `mode` (as in
 * toroid_file_options; NULL: "unchanged") and the EXIF orientation applied when
 * apply_exif_orientation is nonzero. The pixel limit applies (toroid_set_max_image_pixels). */
TOROID_API toroid_status toroid_decode_image(const void* data, size_t size, const char* mode,
                                             int32_t apply_exif_orientation, toroid_image** out);
/* Only the region region[4] = {top, left, height, width} of the image toroid_decode_image
 * would give (inside it): the same pixels, and a JPEG without an EXIF rotation or flip to
 * apply decodes only the rows down to the region's bottom and the iMCU columns around it. */
TOROID_API toroid_status toroid_decode_image_region(const void* data, size_t size, const char* mode,
                                                    int32_t apply_exif_orientation, const int64_t region[4],
                                                    toroid_image** out);
/* Decodes straight into caller memory: `out` (out_size bytes) is the image of the size
 * toroid_image_info gives as dense uint8 rows (H, W, C) (a 16-bit PNG is an error: use
 * toroid_decode_image). With region (NULL: the whole image) the region's pixels are written
 * at their place, the pixels toroid_decode_image gives; a JPEG without an EXIF rotation or
 * flip to apply decodes only around the region (pixels near it may be written too, the
 * others are left as they were). */
TOROID_API toroid_status toroid_decode_image_into(const void* data, size_t size, const char* mode,
                                                  int32_t apply_exif_orientation, const int64_t region[4], void* out,
                                                  size_t out_size);
/* The (channels, height, width) toroid_decode_image would give, into chw[3]: from a JPEG's
 * header without decoding it; other files are decoded. */
TOROID_API toroid_status toroid_image_info(const void* data, size_t size, const char* mode,
                                           int32_t apply_exif_orientation, int64_t chw[3]);
/* The (channels, height, width) toroid_decode_jpegs_cuda decodes a JPEG to with `mode` and
 * the EXIF flag (toroid_image_info's answer), into chw[3], after checking that the file is a
 * JPEG whose header parses, within the pixel limit. */
TOROID_API toroid_status toroid_jpeg_info(const void* data, size_t size, const char* mode,
                                          int32_t apply_exif_orientation, int64_t chw[3]);
/* Decodes `count` JPEG files on CUDA device `device_index` into its memory, enqueued on
 * `stream` (a CUstream of that device, e.g. PyTorch's current stream; NULL: the legacy
 * default stream): file i (data[i], size[i] bytes) into out[i], planar uint8 (C, H, W) with
 * (C, H, W) = chw[3i..3i+2], toroid_jpeg_info's answer for it with the same mode and EXIF
 * flag (the files are not parsed again; a file nvJPEG or libjpeg-turbo finds of another
 * size fails with a message and nothing past its buffer is written). Baseline files go
 * through the GPU's hardware JPEG decoder in one batch where it has one, the others through
 * nvJPEG's CUDA decoder (both within a few levels of libjpeg-turbo's pixels: nvJPEG's own
 * IDCT and chroma upsampling), and what nvJPEG cannot decode as asked (CMYK, an EXIF turn)
 * or should not (a file whose markers stop before the end-of-image marker: libjpeg-turbo
 * decodes one whose scans are whole and names the fault of a cut one) through libjpeg-turbo
 * on the CPU, copied up. nvJPEG is loaded at run time
 * ($TOROID_NVJPEG, else libnvjpeg.so.13/.12 from the loader's path, the CUDA toolkit or
 * PyTorch's wheels). failed[i] is 0 where file i decoded, else 1, with its one-line message
 * at errors + i * error_stride (NUL-terminated, cut to error_stride bytes): one bad file
 * never fails the others. The call fails as a whole only when the device or nvJPEG is
 * unavailable. The bytes may be freed when it returns. */
TOROID_API toroid_status toroid_decode_jpegs_cuda(int32_t device_index, int64_t count, const void* const* data,
                                                  const size_t* size, const int64_t* chw, const char* mode,
                                                  int32_t apply_exif_orientation, void* const* out, void* stream,
                                                  int32_t* failed, char* errors, size_t error_stride);
/* "nvJPEG 13.0 (hardware decoder)" (or "CUDA decoder") for device `device_index`, into
 * `buffer` (NUL-terminated, cut to `size` bytes). */
TOROID_API toroid_status toroid_jpeg_decoder_cuda(int32_t device_index, char* buffer, size_t size);
/* The decoded image: `out->data` stays valid until toroid_image_free. */
TOROID_API toroid_status toroid_image_tensor(const toroid_image* image, toroid_tensor* out);
TOROID_API void toroid_image_free(toroid_image* image); /* NULL is fine */

#ifdef __cplusplus
}
#endif

#endif /* TOROID_TOROID_H */
