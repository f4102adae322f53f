// The definition of gaussian_blur and adjust_sharpness (one BlurOp kind, two JSON names), with
// torchvision.transforms.v2.functional's checks and wording, and their kernel weights.
//
// The arithmetic the decomposition and the reference both follow (torchvision 0.26 on CPU
// tensors, PyTorch's CPU kernels; checked bit for bit against Debian's PyTorch 1.13):
// - gaussian_blur pads the image (uint8 converted to float32) by (kx / 2, ky / 2) in torch's
//   reflect mode and convolves it with the 2-D kernel (conv2d with groups = C). PyTorch runs
//   that on oneDNN's depthwise convolution, whose sum for one output pixel is a chain of
//   fused multiply-adds from 0 over the kernel's rows, and within a row over its columns:
//   acc = fma(x[y + i][x + j], w[i][j], acc). uint8 results are rounded half to even.
// - the weights (gaussian_kernel2d): torch.linspace(-l, l, k) in float32 (l = (k - 1) /
//   (2 sqrt 2)): its scalar loop computes fma(step, i, start) below the middle and
//   fma(-step, k - 1 - i, end) from it; the elements of its vectorized loop (blocks of two
//   L-lane vectors, k >= 2 L) are base + j * step, rounded twice. Then x / float(sigma),
//   squared, negated, and softmax: max subtracted, SLEEF's expf (u10, with FMA), the sum
//   over L lanes (k < L: in order; else each lane in order, then lane j plus lane j + L/2,
//   halving down to one, as the shuffles add them), times 1 / sum. The 2-D kernel is
//   wy[i] * wx[j]. L (BlurOp::lanes) is PyTorch's float vector: 8 for AVX2, 16 for AVX-512
//   (the default: the conformance cases' PyTorch 2.11 dispatches to AVX-512; toroid.transforms
//   reads it from the installed torch). It changes the last bit of some weights of kernels of
//   8 taps or more.
// - adjust_sharpness (1 or 3 channels; images of height or width <= 2 are returned as they
//   are): the 3x3 kernel [[a, a, a], [a, b, a], [a, a, a]] with a = float(1 / 13), b =
//   float(5 / 13) convolved (the same fma chain) over the interior, rounded half to even for
//   uint8; then x + float(1 - factor) * (blurred - x) as one fused multiply-add (add_ with
//   alpha), clamped to [0, max], truncated to uint8. The border rows and columns are kept.
//   (PyTorch's vectorized add_ fuses; its scalar remainder is fused only where its build
//   contracts, as for the colour ops' blend.)
#include "ops/define.h"

#include <cmath>

namespace toroid {

namespace {

// SLEEF's xexpf (the u10 single-precision exp PyTorch's Vectorized<float>::exp calls), with
// its multiply-adds fused as in its FMA builds.
float sleef_expf(float d) {
    const float qf = std::nearbyint(d * 1.442695040888963407359924681001892137426645954152985934135449406931f);
    const int q = static_cast<int>(qf);
    float s = std::fma(qf, -0.693145751953125f, d);
    s = std::fma(qf, -1.428606765330187045e-06f, s);
    float u = 0.000198527617612853646278381f;
    u = std::fma(u, s, 0.00139304355252534151077271f);
    u = std::fma(u, s, 0.00833336077630519866943359f);
    u = std::fma(u, s, 0.0416664853692054748535156f);
    u = std::fma(u, s, 0.166666671633720397949219f);
    u = std::fma(u, s, 0.5f);
    u = 1.0f + std::fma(s * s, u, s);
    const int q1 = q >> 1;
    u = u * std::ldexp(1.0f, q1) * std::ldexp(1.0f, q - q1);
    if (d < -104.0f) u = 0.0f;
    return u;
}

std::vector<float> gaussian_kernel1d(std::int64_t k, double sigma, std::int64_t lanes) {
    const auto n = static_cast<std::size_t>(k);
    std::vector<float> x(n);
    const double lim = static_cast<double>(k - 1) / (2.0 * std::sqrt(2.0));
    const auto start = static_cast<float>(-lim), end = static_cast<float>(lim);
    if (k == 1) {
        x[0] = start;
    } else {
        const float step = (end - start) / static_cast<float>(k - 1);
        const std::int64_t half = k / 2;
        auto scalar_at = [&](std::int64_t i) {
            return i < half ? std::fma(step, static_cast<float>(i), start)
                            : std::fma(-step, static_cast<float>(k - 1 - i), end);
        };
        const std::int64_t vector_end = k / (2 * lanes) * (2 * lanes);
        for (std::int64_t v = 0; v < vector_end; v += lanes) {
            const float base = scalar_at(v);
            for (std::int64_t j = 0; j < lanes; ++j) {
                const float offset = static_cast<float>(j) * step;  // rounded, then added
                x[static_cast<std::size_t>(v + j)] = base + offset;
            }
        }
        for (std::int64_t i = vector_end; i < k; ++i) x[static_cast<std::size_t>(i)] = scalar_at(i);
    }
    const auto sf = static_cast<float>(sigma);
    float max = -INFINITY;
    for (float& v : x) {
        const float t = v / sf;
        v = -(t * t);
        max = std::max(max, v);
    }
    std::vector<float> e(n);
    for (std::size_t i = 0; i < n; ++i) e[i] = sleef_expf(x[i] - max);
    float sum = 0;
    if (k < lanes) {
        for (float v : e) sum += v;
    } else {
        const auto L = static_cast<std::size_t>(lanes);
        std::vector<float> lane(L);
        const std::size_t full = n / L * L;
        for (std::size_t j = 0; j < L; ++j) lane[j] = e[j];
        for (std::size_t d = L; d < full; d += L)
            for (std::size_t j = 0; j < L; ++j) lane[j] += e[d + j];
        for (std::size_t j = 0; j < n - full; ++j) lane[j] += e[full + j];
        // The shuffles' halvings: lane j plus lane j + half, down to one lane.
        for (std::size_t half = L / 2; half >= 1; half /= 2)
            for (std::size_t j = 0; j < half; ++j) lane[j] += lane[j + half];
        sum = lane[0];
    }
    const float inv = 1.0f / sum;
    for (float& v : e) v *= inv;
    return e;
}

std::string int_list(const std::array<std::int64_t, 2>& v) { return fmt::format("[{}, {}]", v[0], v[1]); }

// The largest kernel side toroid compiles (every tap is a term of the unrolled sum).
constexpr std::int64_t kMaxKernel = 99;

BlurOp parse_gaussian(OpReader& r, const ParseContext&) {
    BlurOp op{BlurFn::Gaussian};
    const json* k = r.get("kernel_size");
    if (!k) fail("{}: missing field 'kernel_size'", r.where());
    if (k->is_array()) {
        if (k->size() != 2)
            fail("{}: If kernel_size is a sequence its length should be 2. Got {}", r.where(), k->size());
        op.kernel_size = {r.integer((*k)[0], "kernel_size"), r.integer((*k)[1], "kernel_size")};
    } else {
        const std::int64_t v = r.integer(*k, "kernel_size");
        op.kernel_size = {v, v};
    }
    for (std::int64_t v : op.kernel_size) {
        if (v % 2 == 0 || v < 0)
            fail("{}: kernel_size should have odd and positive integers. Got {}", r.where(), int_list(op.kernel_size));
        if (v > kMaxKernel)
            fail("{}: kernel_size {} is larger than toroid's limit of {}", r.where(), int_list(op.kernel_size),
                 kMaxKernel);
    }
    const json* s = r.get("sigma");
    if (!s || s->is_null()) {
        for (int a = 0; a < 2; ++a) op.sigma[a] = static_cast<double>(op.kernel_size[a]) * 0.15 + 0.35;
    } else if (s->is_array()) {
        if (s->size() == 1) {
            const double v = r.number((*s)[0], "sigma");
            op.sigma = {v, v};
        } else if (s->size() == 2) {
            op.sigma = {r.number((*s)[0], "sigma"), r.number((*s)[1], "sigma")};
        } else {
            fail("{}: If sigma is a sequence, its length should be 2. Got {}", r.where(), s->size());
        }
    } else {
        const double v = r.number(*s, "sigma");
        op.sigma = {v, v};
    }
    if (op.sigma[0] <= 0 || op.sigma[1] <= 0)
        fail("{}: sigma should have positive values. Got [{}, {}]", r.where(), op.sigma[0], op.sigma[1]);
    if (const json* l = r.get("lanes")) {
        op.lanes = r.integer(*l, "lanes");
        if (op.lanes != 8 && op.lanes != 16) fail("{}: lanes must be 8 (AVX2) or 16 (AVX-512), got {}", r.where(), op.lanes);
    }
    return op;
}

BlurOp parse_sharpness(OpReader& r, const ParseContext&) {
    BlurOp op{BlurFn::Sharpness};
    const json* v = r.get("factor");
    if (!v) fail("{}: missing field 'factor'", r.where());
    op.factor = r.number(*v, "factor");
    if (op.factor < 0) fail("{}: sharpness_factor ({}) is not non-negative.", r.where(), op.factor);
    return op;
}

std::size_t blur_syntax(const BlurOp& o) { return static_cast<std::size_t>(o.fn); }

void write_blur(const BlurOp& o, JsonWriter& w) {
    if (o.fn == BlurFn::Sharpness) {
        w.field("factor", o.factor);
        return;
    }
    w.field("kernel_size", o.kernel_size);
    w.field("sigma", o.sigma);
    w.field("lanes", o.lanes);
}

ShapeInfo blur_shape(const BlurOp& o, const ShapeInfo& in) {
    const Dims& s = in.shape;
    if (o.fn == BlurFn::Sharpness) {
        if (s[1] != 1 && s[1] != 3)
            fail("adjust_sharpness: Input image tensor can have 1 or 3 channels, but found {}", s[1]);
        return in;
    }
    // torch's reflect pad: each padding below the padded dimension.
    const std::int64_t px = o.kernel_size[0] / 2, py = o.kernel_size[1] / 2;
    if (px >= s[3] || py >= s[2])
        fail("gaussian_blur: Padding size should be less than the corresponding input dimension, but got: padding "
             "({}, {}, {}, {}) for a {}x{} input (kernel_size {})",
             px, px, py, py, s[2], s[3], int_list(o.kernel_size));
    return in;
}

// A uint16 image blurs as torchvision blurs integer images: in float32, rounded back.
// (Sharpness blends with its own integer rules, and the 16-bit floats blur in their own
// dtype there: not taken.)
NarrowTypes blur_narrow(const BlurOp& o, DType t) {
    return o.fn == BlurFn::Gaussian && t == DType::UInt16 ? NarrowTypes::ViaFloat32 : NarrowTypes::Refused;
}

}  // namespace

std::vector<float> gaussian_kernel2d(const BlurOp& op) {
    const std::vector<float> wx = gaussian_kernel1d(op.kernel_size[0], op.sigma[0], op.lanes);
    const std::vector<float> wy = gaussian_kernel1d(op.kernel_size[1], op.sigma[1], op.lanes);
    std::vector<float> w;
    w.reserve(wx.size() * wy.size());
    for (float y : wy)
        for (float x : wx) w.push_back(y * x);
    return w;
}

std::vector<float> sharpness_kernel() {
    const auto a = static_cast<float>(1.0 / 13.0), b = static_cast<float>(5.0 / 13.0);
    return {a, a, a, a, b, a, a, a, a};
}

OpDef blur_op_def() {
    // The syntaxes follow BlurFn's order (blur_syntax is the enum's value).
    return make_op_def(TypedOpDef<BlurOp>{
        .syntax = {{"gaussian_blur", parse_gaussian}, {"adjust_sharpness", parse_sharpness}},
        .syntax_of = blur_syntax,
        .write = write_blur,
        .shape = blur_shape,
        .narrow = blur_narrow,
    });
}

}  // namespace toroid
