// The differential sweep's library: draws a random pipeline and input from a seed, runs
// both engines, compares them element by element, shrinks failing cases and drives a
// whole sweep (see sweep.h). Used by sweep_test.cpp and sweep_main.cpp (toroid_sweep).
#include "sweep.h"

#include "core/error.h"
#include "decomp/decompose.h"
#include "engine/engine.h"
#include "io/file.h"
#include "io/npy.h"
#include "ops/pipeline_json.h"
#include "schedule/bind.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <map>
#include <mutex>
#include <numbers>
#include <set>
#include <thread>
#include <tuple>

#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace toroid::sweep {

// ---------------------------------------------------------------------------------------
// Random numbers

std::uint64_t Rng::next() {
    state_ += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

std::int64_t Rng::uniform_int(std::int64_t lo, std::int64_t hi) {
    if (hi <= lo) return lo;
    const auto range = static_cast<std::uint64_t>(hi - lo) + 1;
    return lo + static_cast<std::int64_t>(next() % range);
}

double Rng::uniform(double lo, double hi) {
    const double u = static_cast<double>(next() >> 11) * 0x1.0p-53;
    return lo + (hi - lo) * u;
}

std::size_t Rng::weighted(std::initializer_list<double> weights) {
    double total = 0;
    for (double w : weights) total += w;
    double x = uniform(0.0, total);
    std::size_t i = 0;
    for (double w : weights) {
        if (x < w) return i;
        x -= w;
        ++i;
    }
    return weights.size() - 1;
}

namespace {

// ---------------------------------------------------------------------------------------
// Case generation

std::int64_t elements(const Dims& s) { return s[0] * s[1] * s[2] * s[3]; }

// An image height or width: mostly small, sometimes a few hundred.
std::int64_t draw_dim(Rng& r) {
    switch (r.weighted({5, 50, 30, 12, 3})) {
        case 0: return 1;
        case 1: return r.uniform_int(2, 12);
        case 2: return r.uniform_int(13, 64);
        case 3: return r.uniform_int(65, 200);
        default: return r.uniform_int(201, 400);
    }
}

// A grid height or width (grids are constants of the compiled code: keep them modest).
std::int64_t draw_grid_dim(Rng& r) {
    switch (r.weighted({6, 50, 34, 10})) {
        case 0: return 1;
        case 1: return r.uniform_int(2, 12);
        case 2: return r.uniform_int(13, 64);
        default: return r.uniform_int(65, 160);
    }
}

// An output extent for resize / affine from an input extent.
std::int64_t draw_extent(Rng& r, std::int64_t in) {
    switch (r.weighted({15, 10, 10, 10, 55})) {
        case 0: return in;
        case 1: return 2 * in;
        case 2: return std::max<std::int64_t>(1, in / 2);
        case 3: return std::max<std::int64_t>(1, in + r.uniform_int(-1, 1));
        default: return r.uniform_int(1, std::min<std::int64_t>(2 * in + 8, 320));
    }
}

double draw_scale(Rng& r) {
    static constexpr double common[] = {0.5, 2.0, 1.5, 1.0, 0.25, 3.0, 0.75, 1.0 / 3.0, 0.6, 1.7, 4.0, 0.1};
    if (r.chance(0.5)) return common[r.uniform_int(0, std::size(common) - 1)];
    double s = r.uniform(0.1, 4.0);
    if (r.chance(0.5)) s = std::round(s * 100.0) / 100.0;
    return s;
}

template <typename T>
void fill_values(Rng& r, T* data, std::int64_t n) {
    if constexpr (std::is_same_v<T, float>) {
        // 0: uniform [-2, 17]; 1: exact halves in [-2, 17]; 2: [0, 1]; 3: a mix per element.
        const std::size_t kind = r.weighted({45, 20, 15, 20});
        for (std::int64_t i = 0; i < n; ++i) {
            const std::size_t k = kind == 3 ? static_cast<std::size_t>(r.uniform_int(0, 2)) : kind;
            float v = 0;
            if (k == 0) v = static_cast<float>(r.uniform(-2.0, 17.0));
            else if (k == 1) v = static_cast<float>(r.uniform_int(-4, 34)) * 0.5f;
            else v = static_cast<float>(r.uniform(0.0, 1.0));
            data[i] = v;
        }
    } else if constexpr (!std::is_same_v<T, std::uint8_t>) {
        // uint16, float16, bfloat16: the float draws, scaled to uint16's range or rounded.
        std::vector<float> f(static_cast<std::size_t>(n));
        fill_values(r, f.data(), n);
        for (std::int64_t i = 0; i < n; ++i) {
            const float v = f[static_cast<std::size_t>(i)];
            if constexpr (std::is_same_v<T, std::uint16_t>) data[i] = static_cast<std::uint16_t>(std::clamp(v * 3855.0f, 0.0f, 65535.0f));
            else data[i] = T(v);
        }
    } else {
        // 0: uniform 0..255; 1: only 0 and 255; 2: a narrow band.
        const std::size_t kind = r.weighted({60, 15, 25});
        const std::int64_t band = r.uniform_int(0, 247);
        for (std::int64_t i = 0; i < n; ++i) {
            std::int64_t v = 0;
            if (kind == 0) v = r.uniform_int(0, 255);
            else if (kind == 1) v = r.chance(0.5) ? 255 : 0;
            else v = band + r.uniform_int(0, 8);
            data[i] = static_cast<std::uint8_t>(v);
        }
    }
}

// An image (height, width): mostly independent draws, sometimes a degenerate one (a
// single pixel, one row, one column, 2x2) where edge handling and tap clamping meet.
std::pair<std::int64_t, std::int64_t> draw_image_size(Rng& r) {
    switch (r.weighted({88, 3, 3, 3, 3})) {
        case 0: return {draw_dim(r), draw_dim(r)};
        case 1: return {1, 1};
        case 2: return {1, r.uniform_int(2, 300)};
        case 3: return {r.uniform_int(2, 300), 1};
        default: return {2, 2};
    }
}

// An input of `dtype`, `layout` and (n, c, h, w), possibly a strided view (`view`) of a
// larger tensor; `origin` says how it was made.
Tensor make_input_of(Rng& r, DType dtype, const Dims& shape, Layout layout, bool view, std::string& origin) {
    Dims base = shape, start{0, 0, 0, 0};
    if (view) {
        for (std::size_t d = 0; d < 4; ++d) {
            const std::int64_t extra = r.chance(0.6) ? r.uniform_int(1, d < 2 ? 2 : 7) : 0;
            base[d] += extra;
            start[d] = r.uniform_int(0, extra);
        }
    }
    Tensor t = Tensor::empty(dtype, base, layout);
    dispatch_dtype(dtype, [&](auto tag) { fill_values(r, t.data_as<decltype(tag)>(), t.numel()); });
    origin = std::string(layout_name(layout));
    if (view && base != shape) {
        for (int d = 0; d < 4; ++d) t = t.slice(d, start[static_cast<std::size_t>(d)], shape[static_cast<std::size_t>(d)]);
        origin += fmt::format(" view of ({}) at ({})", fmt::join(base, ", "), fmt::join(start, ", "));
    }
    return t;
}

Tensor make_input(Rng& r, std::string& origin) {
    const DType dtype = r.chance(0.5) ? DType::UInt8 : DType::Float32;
    const auto [h, w] = draw_image_size(r);
    const Dims shape{static_cast<std::int64_t>(1 + r.weighted({60, 25, 15})),
                     static_cast<std::int64_t>(1 + r.weighted({25, 15, 30, 15, 15})), h, w};
    const Layout layout = r.chance(0.5) ? Layout::Contiguous : Layout::ChannelsLast;
    return make_input_of(r, dtype, shape, layout, r.chance(0.25), origin);
}

ResizeOp gen_resize(Rng& r, const ShapeInfo& cur) {
    ResizeOp op;
    op.mode = static_cast<ResizeMode>(r.uniform_int(0, 3));
    if (op.mode == ResizeMode::Bilinear || op.mode == ResizeMode::Bicubic) {
        op.align_corners = r.chance(0.3);
        op.antialias = r.chance(0.35);
    }
    const std::size_t how = r.weighted({40, 40, 20});
    if (how == 2) {
        // torchvision's Resize(int): the smaller edge, the other in proportion, the longer
        // one capped by max_size (larger than the smaller edge), or max_size alone.
        const std::int64_t shorter = std::min(cur.shape[2], cur.shape[3]);
        switch (r.weighted({50, 30, 20})) {
            case 0: op.smaller_edge = draw_extent(r, shorter); break;
            case 1:
                op.smaller_edge = draw_extent(r, shorter);
                op.max_size = *op.smaller_edge + r.uniform_int(1, 2 * *op.smaller_edge + 8);
                break;
            default: op.max_size = draw_extent(r, std::max(cur.shape[2], cur.shape[3])); break;
        }
    } else if (how == 0) {
        op.size = std::array<std::int64_t, 2>{draw_extent(r, cur.shape[2]), draw_extent(r, cur.shape[3])};
    } else {
        const double sh = draw_scale(r);
        const double sw = r.chance(0.4) ? sh : draw_scale(r);
        op.scale_factor = std::array<double, 2>{sh, sw};
        op.recompute_scale_factor = r.chance(0.3);
    }
    return op;
}

std::array<std::array<double, 3>, 2> draw_theta(Rng& r) {
    using Theta = std::array<std::array<double, 3>, 2>;
    switch (r.weighted({10, 25, 30, 15, 10, 10})) {
        case 0: return Theta{{{1, 0, 0}, {0, 1, 0}}};
        case 1: {
            Theta t{{{1, 0, 0}, {0, 1, 0}}};
            for (auto& row : t)
                for (double& v : row) v += r.uniform(-0.05, 0.05);
            return t;
        }
        case 2: {
            const double angle = r.chance(0.3) ? static_cast<double>(r.uniform_int(0, 3)) * std::numbers::pi / 2
                                               : r.uniform(-std::numbers::pi, std::numbers::pi);
            const double s = r.chance(0.3) ? 1.0 : r.uniform(0.5, 2.0);
            const double tx = r.chance(0.3) ? 0.0 : r.uniform(-0.5, 0.5);
            const double ty = r.chance(0.3) ? 0.0 : r.uniform(-0.5, 0.5);
            return Theta{{{s * std::cos(angle), -s * std::sin(angle), tx}, {s * std::sin(angle), s * std::cos(angle), ty}}};
        }
        case 3: {
            const double a = r.chance(0.3) ? 0.0 : r.uniform(-1, 1), b = r.chance(0.3) ? 0.0 : r.uniform(-1, 1);
            return Theta{{{1, a, r.uniform(-0.3, 0.3)}, {b, 1, r.uniform(-0.3, 0.3)}}};
        }
        case 4: {
            Theta t{};
            for (auto& row : t)
                for (double& v : row) v = r.uniform(-2, 2);
            return t;
        }
        default: {
            // Far out: huge zoom or translation, a zero or tiny matrix.
            switch (r.weighted({30, 30, 20, 20})) {
                case 0: {
                    const double s = r.uniform(50, 1e4) * (r.chance(0.5) ? 1 : -1);
                    return Theta{{{s, r.uniform(-1, 1), r.uniform(-2, 2)}, {r.uniform(-1, 1), s, r.uniform(-2, 2)}}};
                }
                case 1: {
                    const double tx = r.uniform(10, 1e6) * (r.chance(0.5) ? 1 : -1);
                    return Theta{{{1, 0, tx}, {0, 1, r.chance(0.5) ? 0.0 : -tx}}};
                }
                case 2: return Theta{};
                default: {
                    Theta t{};
                    for (auto& row : t)
                        for (double& v : row) v = r.uniform(-1e-6, 1e-6);
                    return t;
                }
            }
        }
    }
}

AffineOp gen_affine(Rng& r, const ShapeInfo& cur) {
    AffineOp op;
    op.theta = draw_theta(r);
    op.mode = static_cast<GridMode>(r.uniform_int(0, 2));
    op.padding_mode = static_cast<PaddingMode>(r.uniform_int(0, 2));
    op.align_corners = r.chance(0.5);
    if (r.chance(0.4))
        op.size = std::array<std::int64_t, 2>{draw_extent(r, cur.shape[2]), draw_extent(r, cur.shape[3])};
    return op;
}

// A normalized coordinate that lands exactly on a pixel centre or half-way between two
// (nearest-mode ties) of an axis of `size`.
float tie_coordinate(Rng& r, std::int64_t size, bool align_corners) {
    const double c = 0.5 * static_cast<double>(r.uniform_int(-4, 2 * size + 2));
    if (align_corners) return size > 1 ? static_cast<float>(c / static_cast<double>(size - 1) * 2.0 - 1.0) : 0.0f;
    return static_cast<float>((2.0 * c + 1.0) / static_cast<double>(size) - 1.0);
}

GridSampleOp gen_grid_sample(Rng& r, const ShapeInfo& cur, std::size_t op_index) {
    GridSampleOp op;
    op.mode = static_cast<GridMode>(r.uniform_int(0, 2));
    op.padding_mode = static_cast<PaddingMode>(r.uniform_int(0, 2));
    op.align_corners = r.chance(0.5);
    op.grid_path = fmt::format("grid{}.npy", op_index);
    const std::int64_t n = r.chance(0.97) ? cur.shape[0] : r.uniform_int(1, 3);
    const std::int64_t gh = draw_grid_dim(r), gw = draw_grid_dim(r);
    op.grid = Tensor::empty(DType::Float32, {n, gh, gw, 2});
    float* g = op.grid.data_as<float>();
    const std::size_t kind = r.weighted({55, 20, 15, 10});
    for (std::int64_t b = 0; b < n; ++b)
        for (std::int64_t i = 0; i < gh; ++i)
            for (std::int64_t j = 0; j < gw; ++j) {
                float* p = g + ((b * gh + i) * gw + j) * 2;
                switch (kind) {
                    case 0:
                        p[0] = static_cast<float>(r.uniform(-1.3, 1.3));
                        p[1] = static_cast<float>(r.uniform(-1.3, 1.3));
                        break;
                    case 1:
                        p[0] = tie_coordinate(r, cur.shape[3], op.align_corners);
                        p[1] = tie_coordinate(r, cur.shape[2], op.align_corners);
                        break;
                    case 2: {
                        // Close to the identity warp.
                        auto base = [](std::int64_t k, std::int64_t steps) {
                            return steps > 1 ? -1.0 + 2.0 * static_cast<double>(k) / static_cast<double>(steps - 1) : 0.0;
                        };
                        p[0] = static_cast<float>(base(j, gw) + r.uniform(-0.02, 0.02));
                        p[1] = static_cast<float>(base(i, gh) + r.uniform(-0.02, 0.02));
                        break;
                    }
                    default:
                        p[0] = static_cast<float>(r.uniform_int(-13, 13)) * 0.1f;
                        p[1] = static_cast<float>(r.uniform_int(-13, 13)) * 0.1f;
                        break;
                }
            }
    if (r.chance(0.15)) {
        static constexpr float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                                             std::numeric_limits<float>::infinity(),
                                             -std::numeric_limits<float>::infinity(),
                                             1e30f, -1e30f, 3e9f, -3e9f, 1e6f, -1e6f, 1.0000001f, -1.0f, 0.0f};
        const double p = r.chance(0.2) ? 0.5 : 0.03;
        for (std::int64_t i = 0; i < op.grid.numel(); ++i)
            if (r.chance(p)) g[i] = specials[r.uniform_int(0, std::size(specials) - 1)];
    }
    return op;
}

FlipOp gen_flip(Rng& r) {
    FlipOp op;
    for (int d = 0; d < 4; ++d)
        if (r.chance(0.4)) op.dims.push_back(d);
    return op;
}

// (start, length) of a crop along an axis of `in`: inside, overlapping an edge, or outside.
std::pair<std::int64_t, std::int64_t> draw_crop_axis(Rng& r, std::int64_t in) {
    switch (r.weighted({60, 30, 10})) {
        case 0: {
            const std::int64_t start = r.uniform_int(0, in - 1);
            return {start, r.uniform_int(1, in - start)};
        }
        case 1: return {r.uniform_int(-in / 2 - 3, in - 1), r.uniform_int(1, in + 6)};
        default: {
            const std::int64_t len = r.uniform_int(1, in + 2);
            return {r.chance(0.5) ? in + r.uniform_int(0, 5) : -len - r.uniform_int(0, 5), len};
        }
    }
}

CropOp gen_crop(Rng& r, const ShapeInfo& cur) {
    CropOp op;
    if (r.chance(0.3)) {
        // torchvision's center_crop: sometimes larger than the image (zero padding).
        op.center = true;
        op.height = r.chance(0.3) ? cur.shape[2] + r.uniform_int(1, 9) : r.uniform_int(1, cur.shape[2] + 4);
        op.width = r.chance(0.3) ? cur.shape[3] + r.uniform_int(1, 9) : r.uniform_int(1, cur.shape[3] + 4);
        return op;
    }
    std::tie(op.top, op.height) = draw_crop_axis(r, cur.shape[2]);
    std::tie(op.left, op.width) = draw_crop_axis(r, cur.shape[3]);
    return op;
}

ConvertOp gen_convert(Rng& r, const ShapeInfo& cur) {
    ConvertOp op;
    const DType other = cur.dtype == DType::UInt8 ? DType::Float32 : DType::UInt8;
    op.dtype = r.chance(0.85) ? other : cur.dtype;
    op.scale = r.chance(0.5);
    return op;
}

NormalizeOp gen_normalize(Rng& r, const ShapeInfo& cur) {
    NormalizeOp op;
    const auto channels = static_cast<std::size_t>(cur.shape[1]);
    const std::size_t nm = r.chance(0.6) ? channels : 1, ns = r.chance(0.6) ? channels : 1;
    for (std::size_t i = 0; i < nm; ++i) op.mean.push_back(r.uniform(-1.0, 2.0));
    for (std::size_t i = 0; i < ns; ++i) {
        switch (r.weighted({80, 10, 10})) {
            case 0: op.std.push_back(r.uniform(0.1, 3.0)); break;
            case 1: op.std.push_back(r.uniform(-2.0, -0.1)); break;
            default: op.std.push_back(r.uniform(1e-3, 1e-2)); break;
        }
    }
    return op;
}

// torchvision's perspective: corners moved by up to a third of the image (the usual case),
// near-identity coefficients, or wild ones (a denominator that crosses zero: infinite and
// NaN coordinates); nearest or bilinear, a fill sometimes.
PerspectiveOp gen_perspective(Rng& r, const ShapeInfo& cur) {
    PerspectiveOp op;
    op.mode = r.chance(0.5) ? GridMode::Nearest : GridMode::Bilinear;
    const double w = static_cast<double>(cur.shape[3]), h = static_cast<double>(cur.shape[2]);
    std::array<double, 8> c{1, 0, 0, 0, 1, 0, 0, 0};
    switch (r.weighted({60, 25, 15})) {
        case 0:
            c = {1 + r.uniform(-0.3, 0.3), r.uniform(-0.3, 0.3), r.uniform(-w / 3, w / 3),
                 r.uniform(-0.3, 0.3), 1 + r.uniform(-0.3, 0.3), r.uniform(-h / 3, h / 3),
                 r.uniform(-0.5, 0.5) / w, r.uniform(-0.5, 0.5) / h};
            break;
        case 1:
            for (double& v : c) v += r.uniform(-1e-3, 1e-3);
            break;
        default:
            for (double& v : c) v = r.uniform(-3.0, 3.0);
            break;
    }
    for (std::size_t i = 0; i < 8; ++i) op.coefficients[i] = static_cast<float>(c[i]);
    if (r.chance(0.4)) {
        const std::size_t n = r.chance(0.5) ? 1 : static_cast<std::size_t>(cur.shape[1]);
        for (std::size_t i = 0; i < n; ++i) op.fill.push_back(cur.dtype == DType::UInt8 ? r.uniform_int(0, 255) : r.uniform(-2, 2));
    }
    op.grid_fma = r.chance(0.5);
    op.sample_fma = r.chance(0.5);
    return op;
}

// gaussian_blur (kernel sides 1 to 9, sometimes up to 15; sigmas across torchvision's
// GaussianBlur range and past it, sometimes the default; either vector width) or
// adjust_sharpness (factors 0, 1 and around them).
BlurOp gen_blur(Rng& r, const ShapeInfo&) {
    BlurOp op;
    if (r.chance(0.35)) {
        op.fn = BlurFn::Sharpness;
        switch (r.weighted({60, 15, 15, 10})) {
            case 0: op.factor = r.uniform(0.0, 3.0); break;
            case 1: op.factor = 0; break;
            case 2: op.factor = 1; break;
            default: op.factor = r.uniform(5.0, 30.0); break;
        }
        return op;
    }
    auto side = [&] { return 2 * (r.chance(0.85) ? r.uniform_int(0, 4) : r.uniform_int(5, 7)) + 1; };
    op.kernel_size = {side(), side()};
    if (r.chance(0.2)) {
        for (int a = 0; a < 2; ++a) op.sigma[a] = static_cast<double>(op.kernel_size[a]) * 0.15 + 0.35;
    } else {
        op.sigma[0] = r.uniform(0.1, 2.0);
        op.sigma[1] = r.chance(0.5) ? op.sigma[0] : r.uniform(0.05, 6.0);
    }
    op.lanes = r.chance(0.5) ? 16 : 8;
    return op;
}

// One of the colour ops, with factors at and around torchvision's edges (0, 1, above 1)
// and thresholds at the dtype's bounds.
ColorOp gen_color(Rng& r, const ShapeInfo& cur) {
    ColorOp op;
    op.fn = static_cast<ColorFn>(r.uniform_int(0, 10));
    const double max = cur.dtype == DType::UInt8 ? 255.0 : 1.0;
    switch (op.fn) {
        case ColorFn::Invert: break;
        case ColorFn::Posterize: op.bits = r.uniform_int(0, 8); break;
        case ColorFn::Solarize:
            switch (r.weighted({60, 20, 20})) {
                case 0: op.value = r.uniform(-0.1 * max, max); break;
                case 1: op.value = max; break;
                default: op.value = cur.dtype == DType::UInt8 ? static_cast<double>(r.uniform_int(0, 255)) : 0.5; break;
            }
            break;
        case ColorFn::Brightness:
        case ColorFn::Saturation:
        case ColorFn::Contrast:
            switch (r.weighted({60, 15, 15, 10})) {
                case 0: op.value = r.uniform(0.0, 2.5); break;
                case 1: op.value = 0; break;
                case 2: op.value = 1; break;
                default: op.value = r.uniform(5.0, 50.0); break;
            }
            break;
        case ColorFn::Grayscale: op.out_channels = r.chance(0.5) ? 1 : 3; break;
        case ColorFn::Gamma:
            // PyTorch's special exponents (0, 0.5, 1, 2, 3) and any other; a gain or none.
            op.value = r.chance(0.4) ? std::array{0.0, 0.5, 1.0, 2.0, 3.0}[static_cast<std::size_t>(r.uniform_int(0, 4))]
                                     : r.uniform(0.0, 4.0);
            op.gain = r.chance(0.5) ? 1.0 : r.uniform(0.0, 2.0);
            break;
        case ColorFn::Hue: op.value = r.chance(0.1) ? (r.chance(0.5) ? -0.5 : 0.5) : r.uniform(-0.5, 0.5); break;
        case ColorFn::Autocontrast:
        case ColorFn::Equalize: break;
    }
    return op;
}

// One side's padding along an axis of `in`: mostly small and positive, sometimes negative
// (a crop), sometimes up to the axis's size (the most reflect and symmetric allow).
std::int64_t draw_padding(Rng& r, std::int64_t in) {
    switch (r.weighted({55, 20, 15, 10})) {
        case 0: return r.uniform_int(0, std::min<std::int64_t>(in - 1, 6));
        case 1: return -r.uniform_int(0, (in - 1) / 2);
        case 2: return r.uniform_int(0, in - 1);
        default: return in;  // refused by reflect, the largest symmetric takes
    }
}

PadOp gen_pad(Rng& r, const ShapeInfo& cur) {
    PadOp op;
    op.mode = static_cast<PadMode>(r.weighted({40, 20, 20, 20}));
    op.left = draw_padding(r, cur.shape[3]);
    op.right = draw_padding(r, cur.shape[3]);
    op.top = draw_padding(r, cur.shape[2]);
    op.bottom = draw_padding(r, cur.shape[2]);
    const bool u8 = cur.dtype == DType::UInt8;
    if (op.mode == PadMode::Constant && r.chance(0.4)) {
        // One fill per channel: uint8 values outside 0..255 wrap, as torchvision's do.
        op.fill.clear();
        for (std::int64_t c = 0; c < cur.shape[1]; ++c) op.fill.push_back(u8 ? r.uniform(-300.0, 600.0) : r.uniform(-2.0, 3.0));
    } else {
        op.fill = {u8 ? (r.chance(0.5) ? static_cast<double>(r.uniform_int(0, 255)) : r.uniform(0.0, 255.0))
                      : r.uniform(-2.0, 3.0)};
    }
    return op;
}

EraseOp gen_erase(Rng& r, const ShapeInfo& cur) {
    EraseOp op;
    const std::int64_t H = cur.shape[2], W = cur.shape[3];
    // Mostly inside; sometimes at or past the edges, negative (from the end) or empty.
    if (r.chance(0.6)) {
        op.top = r.uniform_int(0, H - 1);
        op.left = r.uniform_int(0, W - 1);
        op.height = r.uniform_int(1, H - op.top);
        op.width = r.uniform_int(1, W - op.left);
    } else {
        op.top = r.uniform_int(-H - 2, H + 2);
        op.left = r.uniform_int(-W - 2, W + 2);
        op.height = r.uniform_int(-2, H + 3);
        op.width = r.uniform_int(-2, W + 3);
    }
    const bool u8 = cur.dtype == DType::UInt8;
    const std::int64_t n = r.chance(0.5) ? cur.shape[1] : 1;
    op.value.clear();
    for (std::int64_t c = 0; c < n; ++c) op.value.push_back(u8 ? r.uniform(-0.99, 255.99) : r.uniform(-2.0, 3.0));
    return op;
}

// infer_shape of `op` on `cur`, or nothing when the op is rejected or too large.
std::optional<ShapeInfo> try_shape(const Op& op, const ShapeInfo& cur) {
    try {
        ShapeInfo out = infer_shape(op, cur);
        if (elements(out.shape) > kMaxOutputElements) return std::nullopt;
        return out;
    } catch (const Error&) {
        return std::nullopt;
    }
}

// The pipeline is accepted and no result along it is too large.
bool valid(const Pipeline& p, const ShapeInfo& in) {
    if (p.ops.empty()) return false;
    ShapeInfo cur = in;
    for (const Op& op : p.ops) {
        auto next = try_shape(op, cur);
        if (!next) return false;
        cur = *next;
    }
    return true;
}

bool needs_float(std::size_t kind) { return kind == 1 || kind == 2 || kind == 6; }

}  // namespace

Case make_case(std::uint64_t seed) {
    Rng r(seed * 0x2545f4914f6cdd1dULL + 0x632be59bd9b4e019ULL);
    for (;;) {
        Case c;
        c.seed = seed;
        c.input = make_input(r, c.input_origin);
        c.threads = static_cast<int>(1 + r.weighted({60, 25, 15}));
        ShapeInfo cur{c.input.dtype(), c.input.shape()};
        const std::int64_t nops = r.uniform_int(1, 4);
        for (std::int64_t k = 0; k < nops; ++k) {
            for (int attempt = 0; attempt < 6; ++attempt) {
                // resize, affine, grid_sample, flip, crop, convert, normalize, perspective, colour, pad,
                // erase, blur
                const std::size_t kind = r.weighted({25, 14, 12, 10, 12, 14, 13, 8, 12, 9, 7, 7});
                std::vector<Op> ops;
                ShapeInfo s = cur;
                if (needs_float(kind) && s.dtype != DType::Float32) {
                    ops.push_back(ConvertOp{DType::Float32, r.chance(0.5)});
                    s.dtype = DType::Float32;
                }
                switch (kind) {
                    case 0: ops.push_back(gen_resize(r, s)); break;
                    case 1: ops.push_back(gen_affine(r, s)); break;
                    case 2: ops.push_back(gen_grid_sample(r, s, c.pipeline.ops.size() + ops.size())); break;
                    case 3: ops.push_back(gen_flip(r)); break;
                    case 4: ops.push_back(gen_crop(r, s)); break;
                    case 5: ops.push_back(gen_convert(r, s)); break;
                    case 6: ops.push_back(gen_normalize(r, s)); break;
                    case 7: ops.push_back(gen_perspective(r, s)); break;
                    case 8: ops.push_back(gen_color(r, s)); break;
                    case 9: ops.push_back(gen_pad(r, s)); break;
                    case 10: ops.push_back(gen_erase(r, s)); break;
                    default: ops.push_back(gen_blur(r, s)); break;
                }
                std::optional<ShapeInfo> next = cur;
                for (const Op& op : ops)
                    if (next) next = try_shape(op, *next);
                if (!next) continue;
                for (Op& op : ops) c.pipeline.ops.push_back(std::move(op));
                cur = *next;
                break;
            }
        }
        if (!valid(c.pipeline, ShapeInfo{c.input.dtype(), c.input.shape()})) continue;
        // Sometimes the same pipeline on more sizes of the same kind of input (dtype,
        // batch, channels, layout, view or not): one compiled program should serve them.
        if (r.chance(0.25)) {
            const Layout layout = c.input.suggested_layout();
            const bool view = !c.input.is_dense(Layout::Contiguous) && !c.input.is_dense(Layout::ChannelsLast);
            const std::int64_t more = r.uniform_int(1, 3);
            for (std::int64_t k = 0, attempts = 0; k < more && attempts < 12; ++attempts) {
                const auto [h, w] = draw_image_size(r);
                const Dims shape{c.input.dim(0), c.input.dim(1), h, w};
                if (!valid(c.pipeline, ShapeInfo{c.input.dtype(), shape})) continue;
                std::string origin;
                c.more_inputs.push_back(make_input_of(r, c.input.dtype(), shape, layout, view, origin));
                ++k;
            }
        }
        return c;
    }
}

// ---------------------------------------------------------------------------------------
// Comparison

bool values_match(float got, float expected) {
    if (std::isnan(got) || std::isnan(expected)) return std::isnan(got) && std::isnan(expected);
    if (got == expected) return true;  // also equal infinities
    if (std::isinf(got) || std::isinf(expected)) return false;
    const double a = got, b = expected, d = std::fabs(a - b);
    return d <= 1e-4 || d <= 1e-5 * std::max(std::fabs(a), std::fabs(b));
}

Comparison compare(const Tensor& got, const Tensor& expected) {
    Comparison cmp;
    if (got.dtype() != expected.dtype() || got.shape() != expected.shape()) {
        cmp.ok = false;
        cmp.first = fmt::format("result is {} ({}), expected {} ({})", dtype_name(got.dtype()),
                                fmt::join(got.shape(), ", "), dtype_name(expected.dtype()),
                                fmt::join(expected.shape(), ", "));
        return cmp;
    }
    const Dims& s = got.shape();
    for (std::int64_t n = 0; n < s[0]; ++n)
        for (std::int64_t c = 0; c < s[1]; ++c)
            for (std::int64_t h = 0; h < s[2]; ++h)
                for (std::int64_t w = 0; w < s[3]; ++w) {
                    bool match = false;
                    std::string a, b;
                    if (got.dtype() == DType::UInt8) {
                        const int x = got.at<std::uint8_t>(n, c, h, w), y = expected.at<std::uint8_t>(n, c, h, w);
                        match = x == y;
                        if (!match) {
                            cmp.max_abs_error = std::max(cmp.max_abs_error, std::fabs(double(x - y)));
                            a = std::to_string(x), b = std::to_string(y);
                        }
                    } else {
                        const float x = got.at<float>(n, c, h, w), y = expected.at<float>(n, c, h, w);
                        match = values_match(x, y);
                        if (!match) {
                            if (std::isfinite(x) && std::isfinite(y))
                                cmp.max_abs_error = std::max(cmp.max_abs_error, std::fabs(double(x) - double(y)));
                            a = fmt::format("{}", x), b = fmt::format("{}", y);
                        }
                    }
                    if (match) continue;
                    if (cmp.mismatches++ == 0) {
                        cmp.first_index = {n, c, h, w};
                        cmp.first = fmt::format("at (n={}, c={}, h={}, w={}): compiled {} vs reference {}", n, c, h, w, a, b);
                    }
                }
    cmp.ok = cmp.mismatches == 0;
    return cmp;
}

// ---------------------------------------------------------------------------------------
// Running one case

namespace {

std::string spec_text(const Tensor& t);  // (Reports, below)

bool bytes_equal(const Tensor& a, const Tensor& b) {
    const Tensor x = a.to_layout(Layout::Contiguous), y = b.to_layout(Layout::Contiguous);
    return x.nbytes() == y.nbytes() && std::memcmp(x.data(), y.data(), x.nbytes()) == 0;
}


}  // namespace

// The structure the compiled engine keys its programs by (sizes are parameters of it):
// inputs with equal structures must share one compiled program.
std::string structure_of(const Pipeline& p, const TensorSpec& in) {
    const ir::Graph g = decomp::decompose(p, in);
    return fmt::format("int{}\n{}", schedule::fits_index32(g) ? 32 : 64, g.structure());
}

CaseResult run_case(const Case& c) {
    CaseResult res;
    // One compiled engine for every input of the case, as a data loader uses it.
    EngineOptions options;
    options.threads = c.threads;
    std::unique_ptr<Engine> compiled;
    std::map<std::string, std::size_t> structures;  // structure -> first input index
    for (std::size_t i = 0; i <= c.more_inputs.size(); ++i) {
        const Tensor& input = i == 0 ? c.input : c.more_inputs[i - 1];
        res.input_index = i;
        const std::string which =
            c.more_inputs.empty() ? "" : fmt::format(" on input {} ({})", i, spec_text(input));
        const TensorSpec spec = input.spec();
        const Tensor before = input.to_layout(Layout::Contiguous);
        try {
            auto ref = make_engine("reference", EngineOptions{});
            res.expected = ref->prepare(c.pipeline, spec)->run(input);
        } catch (const std::exception& e) {
            res.ok = false;
            res.kind = Failure::ReferenceThrew;
            res.failure = fmt::format("reference engine threw{}: {}", which, e.what());
            return res;
        }
        PrepareStats stats;
        try {
            if (!compiled) compiled = make_engine("compiled", options);
            auto prepared = compiled->prepare(c.pipeline, spec);
            stats = prepared->stats();
            res.got = prepared->run(input);
        } catch (const std::bad_alloc&) {
            res.ok = false;
            res.kind = Failure::CompiledThrew;
            res.failure = fmt::format(
                "compiled engine threw{}: std::bad_alloc (ran out of memory while preparing or running)", which);
            return res;
        } catch (const std::exception& e) {
            res.ok = false;
            res.kind = Failure::CompiledThrew;
            res.failure = fmt::format("compiled engine threw{}: {}", which, e.what());
            return res;
        }
        if (!bytes_equal(before, input)) {
            res.ok = false;
            res.kind = Failure::InputChanged;
            res.failure = fmt::format("compiled engine wrote into its input{}", which);
            return res;
        }
        if (!c.more_inputs.empty()) {
            const auto [it, fresh] = structures.emplace(structure_of(c.pipeline, spec), i);
            if (!fresh && (stats.compiled != 0 || stats.disk_hits != 0)) {
                res.ok = false;
                res.kind = Failure::Recompiled;
                res.failure = fmt::format(
                    "compiled engine built a program again{} (compiled {}, disk hits {}): input {} has the same "
                    "structure and should have reused its program",
                    which, stats.compiled, stats.disk_hits, it->second);
                return res;
            }
        }
        res.comparison = compare(res.got, res.expected);
        if (!res.comparison.ok) break;
    }
    res.programs = structures.size();
    const std::string which = c.more_inputs.empty()
                                  ? ""
                                  : fmt::format(" on input {} ({})", res.input_index,
                                                spec_text(res.input_index == 0 ? c.input
                                                                               : c.more_inputs[res.input_index - 1]));
    res.comparison = compare(res.got, res.expected);
    if (!res.comparison.ok) {
        res.ok = false;
        res.kind = Failure::Mismatch;
        res.failure = fmt::format("mismatch{}: {} of {} elements differ (largest finite difference {}); first {}",
                                  which, res.comparison.mismatches, res.expected.numel(), res.comparison.max_abs_error,
                                  res.comparison.first);
        if (res.comparison.first_index[0] >= 0) {
            // The neighbourhood of the first mismatch, both engines, one channel.
            const Dims& s = res.expected.shape();
            const Dims& i = res.comparison.first_index;
            const std::int64_t h0 = std::max<std::int64_t>(0, i[2] - 2), h1 = std::min(s[2], i[2] + 3);
            const std::int64_t w0 = std::max<std::int64_t>(0, i[3] - 2), w1 = std::min(s[3], i[3] + 3);
            for (const auto& [name, t] : {std::pair<const char*, const Tensor*>{"compiled", &res.got},
                                          std::pair<const char*, const Tensor*>{"reference", &res.expected}}) {
                res.failure += fmt::format("\n  {} rows {}..{}, cols {}..{} of (n={}, c={}):", name, h0, h1 - 1, w0,
                                           w1 - 1, i[0], i[1]);
                for (std::int64_t h = h0; h < h1; ++h) {
                    res.failure += "\n   ";
                    for (std::int64_t w = w0; w < w1; ++w) {
                        if (t->dtype() == DType::UInt8) res.failure += fmt::format(" {:>4}", t->at<std::uint8_t>(i[0], i[1], h, w));
                        else res.failure += fmt::format(" {:>12}", t->at<float>(i[0], i[1], h, w));
                    }
                }
            }
        }
    }
    return res;
}

// ---------------------------------------------------------------------------------------
// Reports

namespace {

std::string spec_text(const Tensor& t) {
    return fmt::format("{} ({}) strides ({})", dtype_name(t.dtype()), fmt::join(t.shape(), ", "),
                       fmt::join(t.strides(), ", "));
}

// All values of a small tensor, one row per (n, c, h) of the NCHW view.
std::string values_text(const Tensor& t, const std::string& indent) {
    std::string out;
    const Dims& s = t.shape();
    for (std::int64_t n = 0; n < s[0]; ++n)
        for (std::int64_t c = 0; c < s[1]; ++c)
            for (std::int64_t h = 0; h < s[2]; ++h) {
                out += fmt::format("{}[{},{},{},:]", indent, n, c, h);
                for (std::int64_t w = 0; w < s[3]; ++w) {
                    if (t.dtype() == DType::UInt8) out += fmt::format(" {}", t.at<std::uint8_t>(n, c, h, w));
                    else out += fmt::format(" {}", t.at<float>(n, c, h, w));
                }
                out += "\n";
            }
    return out;
}

constexpr std::int64_t kPrintLimit = 256;

}  // namespace

std::string describe_case(const Case& c) {
    std::string s = fmt::format("seed {}: input {} [{}], compiled engine threads {}\n  pipeline: {}\n", c.seed,
                                spec_text(c.input), c.input_origin, c.threads, pipeline_to_json(c.pipeline));
    for (const Op& op : c.pipeline.ops)
        if (const auto* g = std::get_if<GridSampleOp>(&op)) {
            s += fmt::format("  {}: {}\n", g->grid_path, spec_text(g->grid));
            if (g->grid.numel() <= kPrintLimit) s += values_text(g->grid, "    ");
        }
    if (c.input.numel() <= kPrintLimit) s += "  input values:\n" + values_text(c.input, "    ");
    for (std::size_t k = 0; k < c.more_inputs.size(); ++k) {
        const Tensor& t = c.more_inputs[k];
        s += fmt::format("  then input {}: {}\n", k + 1, spec_text(t));
        if (t.numel() <= kPrintLimit) s += values_text(t, "    ");
    }
    return s;
}

std::string report(const Case& c, const CaseResult& r) {
    std::string s = describe_case(c) + "  " + r.failure + "\n";
    if (!r.got.defined() || !r.expected.defined() || r.expected.numel() > kPrintLimit || r.got.numel() > kPrintLimit)
        return s;
    return s + "  compiled result:\n" + values_text(r.got, "    ") + "  reference result:\n" +
           values_text(r.expected, "    ");
}

void dump_case(const Case& c, const CaseResult& r, const std::filesystem::path& dir) {
    std::filesystem::create_directories(dir);
    io::write_file_atomic(dir / "pipeline.json", pipeline_to_json(c.pipeline) + "\n");
    io::write_file_atomic(dir / "input.npy", io::encode_npy(c.input));
    for (std::size_t k = 0; k < c.more_inputs.size(); ++k)
        io::write_file_atomic(dir / fmt::format("input_{}.npy", k + 1), io::encode_npy(c.more_inputs[k]));
    for (const Op& op : c.pipeline.ops)
        if (const auto* g = std::get_if<GridSampleOp>(&op)) io::write_file_atomic(dir / g->grid_path, io::encode_npy(g->grid));
    if (r.expected.defined() && r.expected.numel() > 0) io::write_file_atomic(dir / "expected.npy", io::encode_npy(r.expected));
    if (r.got.defined() && r.got.numel() > 0) io::write_file_atomic(dir / "got.npy", io::encode_npy(r.got));
    io::write_file_atomic(dir / "report.txt", report(c, r));
}

// ---------------------------------------------------------------------------------------
// Minimizing

namespace {

// `c` with the input batch (and every grid batch) cut to [start, start + len).
std::optional<Case> slice_batch(const Case& c, std::int64_t start, std::int64_t len) {
    Case m = c;
    m.input = c.input.slice(0, start, len);
    for (Op& op : m.pipeline.ops)
        if (auto* g = std::get_if<GridSampleOp>(&op)) {
            if (g->grid.dim(0) != c.input.dim(0)) return std::nullopt;
            g->grid = g->grid.slice(0, start, len).to_layout(Layout::Contiguous);
        }
    return m;
}

// `c` with the input channels cut to [start, start + len); per-channel normalize lists follow.
std::optional<Case> slice_channels(const Case& c, std::int64_t start, std::int64_t len) {
    Case m = c;
    m.input = c.input.slice(1, start, len);
    for (Op& op : m.pipeline.ops)
        if (auto* n = std::get_if<NormalizeOp>(&op)) {
            for (auto* v : {&n->mean, &n->std})
                if (v->size() > 1)
                    *v = std::vector<double>(v->begin() + start, v->begin() + start + len);
        } else if (auto* p = std::get_if<PadOp>(&op); p && p->fill.size() > 1) {
            p->fill = std::vector<double>(p->fill.begin() + start, p->fill.begin() + start + len);
        } else if (auto* e = std::get_if<EraseOp>(&op); e && e->value.size() > 1) {
            e->value = std::vector<double>(e->value.begin() + start, e->value.begin() + start + len);
        }
    return m;
}

// Candidate simplifications of `c`, most drastic first. Each is a new case.
std::vector<Case> candidates(const Case& c, const CaseResult& r) {
    std::vector<Case> out;
    auto add = [&](std::optional<Case> m) {
        if (m) out.push_back(std::move(*m));
    };
    // One input: the one that failed.
    if (!c.more_inputs.empty()) {
        Case m = c;
        if (r.input_index > 0) m.input = c.more_inputs[r.input_index - 1];
        m.more_inputs.clear();
        add(m);
    }
    // Start later: the reference result of the first k ops becomes the input.
    for (std::size_t k = c.pipeline.ops.size() - 1; k >= 1; --k) {
        Pipeline head;
        head.ops.assign(c.pipeline.ops.begin(), c.pipeline.ops.begin() + static_cast<std::ptrdiff_t>(k));
        Case m = c;
        m.pipeline.ops.erase(m.pipeline.ops.begin(), m.pipeline.ops.begin() + static_cast<std::ptrdiff_t>(k));
        try {
            m.input = make_engine("reference", EngineOptions{})->prepare(head, c.input.spec())->run(c.input);
        } catch (const std::exception&) {
            continue;
        }
        m.input_origin = fmt::format("{}: reference result of {}", layout_name(m.input.suggested_layout()),
                                     pipeline_to_json(head));
        add(m);
    }
    // Drop one op.
    for (std::size_t i = 0; i < c.pipeline.ops.size(); ++i) {
        Case m = c;
        m.pipeline.ops.erase(m.pipeline.ops.begin() + static_cast<std::ptrdiff_t>(i));
        add(m);
    }
    if (c.threads != 1) {
        Case m = c;
        m.threads = 1;
        add(m);
    }
    // A dense input, then the other layout.
    for (Layout l : {Layout::Contiguous, Layout::ChannelsLast}) {
        if (c.input.is_dense(l)) continue;
        Case m = c;
        m.input = c.input.to_layout(l);
        m.input_origin = std::string(layout_name(l));
        add(m);
    }
    const Dims& s = c.input.shape();
    const Dims& at = r.comparison.first_index;
    // One batch, the failing one first.
    if (s[0] > 1) {
        if (at[0] >= 0 && at[0] < s[0]) add(slice_batch(c, at[0], 1));
        for (std::int64_t b = 0; b < s[0]; ++b)
            if (b != at[0]) add(slice_batch(c, b, 1));
    }
    if (s[1] > 1) {
        if (at[1] >= 0 && at[1] < s[1]) add(slice_channels(c, at[1], 1));
        for (std::int64_t ch = 0; ch < s[1]; ++ch)
            if (ch != at[1]) add(slice_channels(c, ch, 1));
    }
    // Rows and columns: halves, then quarters, then one off each end.
    for (int d : {2, 3}) {
        const std::int64_t n = s[static_cast<std::size_t>(d)];
        std::vector<std::pair<std::int64_t, std::int64_t>> cuts;
        if (n >= 2) cuts.push_back({0, n - n / 2}), cuts.push_back({n / 2, n - n / 2});
        if (n >= 4) cuts.push_back({0, n - n / 4}), cuts.push_back({n / 4, n - n / 4});
        if (n >= 2) cuts.push_back({0, n - 1}), cuts.push_back({1, n - 1});
        for (auto [start, len] : cuts) {
            Case m = c;
            m.input = c.input.slice(d, start, len);
            add(m);
        }
    }
    // Op parameters.
    for (std::size_t i = 0; i < c.pipeline.ops.size(); ++i) {
        auto with = [&](auto&& edit) {
            Case m = c;
            edit(m.pipeline.ops[i]);
            add(m);
        };
        const Op& op = c.pipeline.ops[i];
        if (const auto* o = std::get_if<ResizeOp>(&op)) {
            if (o->antialias) with([](Op& x) { std::get<ResizeOp>(x).antialias = false; });
            if (o->align_corners) with([](Op& x) { std::get<ResizeOp>(x).align_corners = false; });
            if (o->recompute_scale_factor) with([](Op& x) { std::get<ResizeOp>(x).recompute_scale_factor = false; });
            if (o->size)
                for (std::size_t a = 0; a < 2; ++a)
                    if ((*o->size)[a] > 1) {
                        with([a](Op& x) { auto& v = (*std::get<ResizeOp>(x).size)[a]; v -= v / 2; });
                        with([a](Op& x) { (*std::get<ResizeOp>(x).size)[a] -= 1; });
                    }
        } else if (const auto* o = std::get_if<AffineOp>(&op)) {
            if (o->size) {
                with([](Op& x) { std::get<AffineOp>(x).size.reset(); });
                for (std::size_t a = 0; a < 2; ++a)
                    if ((*o->size)[a] > 1) {
                        with([a](Op& x) { auto& v = (*std::get<AffineOp>(x).size)[a]; v -= v / 2; });
                        with([a](Op& x) { (*std::get<AffineOp>(x).size)[a] -= 1; });
                    }
            }
        } else if (const auto* o = std::get_if<GridSampleOp>(&op)) {
            for (int d : {1, 2}) {
                const std::int64_t n = o->grid.dim(d);
                std::vector<std::pair<std::int64_t, std::int64_t>> cuts;
                if (n >= 2) cuts.push_back({0, n - n / 2}), cuts.push_back({n / 2, n - n / 2});
                if (n >= 2) cuts.push_back({0, n - 1}), cuts.push_back({1, n - 1});
                for (auto [start, len] : cuts)
                    with([&, d, start, len](Op& x) {
                        auto& g = std::get<GridSampleOp>(x).grid;
                        g = g.slice(d, start, len).to_layout(Layout::Contiguous);
                    });
            }
        } else if (const auto* o = std::get_if<FlipOp>(&op)) {
            for (std::size_t k = 0; k < o->dims.size(); ++k)
                with([k](Op& x) { auto& v = std::get<FlipOp>(x).dims; v.erase(v.begin() + static_cast<std::ptrdiff_t>(k)); });
        } else if (const auto* o = std::get_if<CropOp>(&op)) {
            if (o->height > 1) {
                with([](Op& x) { auto& v = std::get<CropOp>(x); v.height -= v.height / 2; });
                with([](Op& x) { auto& v = std::get<CropOp>(x); v.top += v.height / 2; v.height -= v.height / 2; });
            }
            if (o->width > 1) {
                with([](Op& x) { auto& v = std::get<CropOp>(x); v.width -= v.width / 2; });
                with([](Op& x) { auto& v = std::get<CropOp>(x); v.left += v.width / 2; v.width -= v.width / 2; });
            }
        } else if (const auto* o = std::get_if<ConvertOp>(&op)) {
            if (o->scale) with([](Op& x) { std::get<ConvertOp>(x).scale = false; });
        } else if (const auto* o = std::get_if<NormalizeOp>(&op)) {
            if (o->mean.size() > 1) with([](Op& x) { auto& v = std::get<NormalizeOp>(x).mean; v.resize(1); });
            if (o->std.size() > 1) with([](Op& x) { auto& v = std::get<NormalizeOp>(x).std; v.resize(1); });
        } else if (const auto* o = std::get_if<PadOp>(&op)) {
            // Fewer sides padded, then a simpler mode.
            for (std::int64_t PadOp::*side : {&PadOp::left, &PadOp::top, &PadOp::right, &PadOp::bottom})
                if (o->*side != 0) with([side](Op& x) { std::get<PadOp>(x).*side = 0; });
            if (o->mode != PadMode::Constant) with([](Op& x) { std::get<PadOp>(x).mode = PadMode::Constant; });
        } else if (const auto* o = std::get_if<EraseOp>(&op)) {
            if (o->height > 1) with([](Op& x) { auto& v = std::get<EraseOp>(x); v.height -= v.height / 2; });
            if (o->width > 1) with([](Op& x) { auto& v = std::get<EraseOp>(x); v.width -= v.width / 2; });
        } else if (const auto* o = std::get_if<BlurOp>(&op); o && o->fn == BlurFn::Gaussian) {
            // Smaller kernels, one side at a time.
            for (std::size_t a : {0u, 1u})
                if (o->kernel_size[a] > 1)
                    with([a](Op& x) { auto& k = std::get<BlurOp>(x).kernel_size[a]; k = (k / 2) | 1; });
        }
    }
    return out;
}

}  // namespace

namespace {

// FNV-1a of a tensor's values in NCHW order.
std::uint64_t content_hash(const Tensor& t, std::uint64_t h = 0xcbf29ce484222325ULL) {
    const Tensor d = t.to_layout(Layout::Contiguous);
    const auto* p = static_cast<const unsigned char*>(d.data());
    for (std::size_t i = 0; i < d.nbytes(); ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

// What makes a case distinct: pipeline, input spec and values, grids, threads.
std::string case_key(const Case& c) {
    std::uint64_t h = content_hash(c.input);
    for (const Op& op : c.pipeline.ops)
        if (const auto* g = std::get_if<GridSampleOp>(&op)) h = content_hash(g->grid, h);
    for (const Tensor& t : c.more_inputs) h = content_hash(t, h);
    return fmt::format("{} {} {} {} {} {}", pipeline_to_json(c.pipeline), spec_text(c.input), c.threads, h,
                       c.input.suggested_layout() == Layout::ChannelsLast, c.more_inputs.size());
}

}  // namespace

Case minimize(const Case& failing, std::ostream* log) {
    Case best = failing;
    CaseResult best_result = run_case(best);
    const Failure kind = best_result.kind;
    if (kind == Failure::None) return best;
    std::set<std::string> tried{case_key(best)};
    int tries = 0;
    constexpr int kMaxTries = 300;
    for (bool progress = true; progress && tries < kMaxTries;) {
        progress = false;
        for (Case& m : candidates(best, best_result)) {
            if (!valid(m.pipeline, ShapeInfo{m.input.dtype(), m.input.shape()})) continue;
            if (!tried.insert(case_key(m)).second) continue;
            if (++tries > kMaxTries) break;
            CaseResult r = run_case(m);
            if (r.kind != kind) continue;
            best = std::move(m);
            best_result = std::move(r);
            if (log)
                *log << fmt::format("  minimize (try {}): input ({}), pipeline {}\n    {}\n", tries,
                                    fmt::join(best.input.shape(), ", "), pipeline_to_json(best.pipeline),
                                    best_result.failure.substr(0, best_result.failure.find('\n')))
                     << std::flush;
            progress = true;
            break;
        }
    }
    return best;
}

// ---------------------------------------------------------------------------------------
// Sweeps

namespace {

// One case of a sweep: runs it (and minimizes and dumps it when asked). Returns whether
// it passed and the text to log: the failure report, or the one-line summary.
std::pair<bool, std::string> sweep_one(std::uint64_t seed, const Options& options) {
    const auto t0 = std::chrono::steady_clock::now();
    Case c = make_case(seed);
    CaseResult r = run_case(c);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r.ok)
        return {true, fmt::format("seed {}: ok ({:.2f} s) {} {} -> {}\n", seed, secs, spec_text(c.input),
                                  pipeline_to_json(c.pipeline), fmt::join(r.expected.shape(), "x"))};
    std::string text = "FAILED " + report(c, r);
    if (!options.dump_dir.empty()) dump_case(c, r, options.dump_dir / fmt::format("seed_{}", seed));
    if (options.minimize) {
        Case m = minimize(c, options.verbose ? options.log : nullptr);
        CaseResult mr = run_case(m);
        text += "  minimized:\n" + report(m, mr);
        if (!options.dump_dir.empty()) dump_case(m, mr, options.dump_dir / fmt::format("seed_{}_minimized", seed));
    }
    return {false, std::move(text)};
}

// The shared bookkeeping of a sweep: failures by seed and progress lines.
struct Tally {
    Tally(const Options& o, std::size_t n) : options(o), total(n) {}
    const Options& options;
    std::size_t total;
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    std::map<std::uint64_t, std::string> failures;
    std::size_t done = 0;
    std::mutex mutex;

    void record(std::uint64_t seed, bool ok, std::string text) {
        std::lock_guard lock(mutex);
        if (options.log && (!ok || options.verbose)) *options.log << text << std::flush;
        if (!ok) failures[seed] = std::move(text);
        if (options.log && !options.verbose && ++done % 100 == 0)
            *options.log << fmt::format("{} of {} cases run, {} failed ({:.0f} s)\n", done, total, failures.size(),
                                        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count())
                         << std::flush;
    }
};

void sweep_in_process(const std::vector<std::uint64_t>& seeds, const Options& options, Tally& tally) {
    std::atomic<std::size_t> next{0};
    auto worker = [&] {
        for (std::size_t k; (k = next.fetch_add(1)) < seeds.size();) {
            auto [ok, text] = sweep_one(seeds[k], options);
            tally.record(seeds[k], ok, std::move(text));
        }
    };
    std::vector<std::thread> threads;
    for (int j = 1; j < options.jobs; ++j) threads.emplace_back(worker);
    worker();
    for (auto& t : threads) t.join();
}

// Each case in a child process with a memory limit and a timeout; a crash, a timeout or
// running out of memory is reported as that case's failure, and the sweep goes on.
void sweep_isolated(const std::vector<std::uint64_t>& seeds, const Options& options, Tally& tally) {
    struct Child {
        pid_t pid;
        int fd;
        std::uint64_t seed;
        std::string out;
    };
    std::vector<Child> running;
    std::size_t next = 0;
    std::cout.flush();
    std::cerr.flush();
    while (next < seeds.size() || !running.empty()) {
        while (next < seeds.size() && running.size() < static_cast<std::size_t>(std::max(1, options.jobs))) {
            const std::uint64_t seed = seeds[next++];
            int fds[2];
            if (::pipe(fds) != 0) fail("sweep: pipe failed");
            const pid_t pid = ::fork();
            if (pid < 0) fail("sweep: fork failed");
            if (pid == 0) {
                ::close(fds[0]);
                if (options.memory_limit_bytes > 0) {
                    const rlimit lim{static_cast<rlim_t>(options.memory_limit_bytes),
                                     static_cast<rlim_t>(options.memory_limit_bytes)};
                    ::setrlimit(RLIMIT_AS, &lim);
                }
                // Minimizing reruns the case many times: it gets twenty times as long.
                if (options.timeout_seconds > 0)
                    ::alarm(static_cast<unsigned>(options.timeout_seconds) * (options.minimize ? 20u : 1u));
                Options o = options;
                o.log = nullptr;  // the child's text goes through the pipe
                std::pair<bool, std::string> result{false, ""};
                try {
                    result = sweep_one(seed, o);
                } catch (const std::exception& e) {
                    result = {false, fmt::format("FAILED seed {}: the sweep itself threw: {}\n", seed, e.what())};
                }
                const std::string& text = result.second;
                for (std::size_t off = 0; off < text.size();) {
                    const ssize_t n = ::write(fds[1], text.data() + off, text.size() - off);
                    if (n <= 0) break;
                    off += static_cast<std::size_t>(n);
                }
                ::_exit(result.first ? 0 : 1);
            }
            ::close(fds[1]);
            running.push_back({pid, fds[0], seed, {}});
        }
        std::vector<pollfd> polls;
        for (const Child& c : running) polls.push_back({c.fd, POLLIN, 0});
        if (::poll(polls.data(), polls.size(), -1) < 0) continue;
        for (std::size_t i = 0; i < polls.size(); ++i) {
            if (!(polls[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            Child& c = running[i];
            char buf[65536];
            const ssize_t n = ::read(c.fd, buf, sizeof buf);
            if (n > 0) {
                c.out.append(buf, static_cast<std::size_t>(n));
                continue;
            }
            ::close(c.fd);
            c.fd = -1;
            int status = 0;
            ::waitpid(c.pid, &status, 0);
            if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
                tally.record(c.seed, true, std::move(c.out));
            } else if (WIFEXITED(status) && WEXITSTATUS(status) == 1 && !c.out.empty()) {
                tally.record(c.seed, false, std::move(c.out));
            } else {
                std::string why;
                if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
                    why = fmt::format("timed out after {} s", options.timeout_seconds);
                else if (WIFSIGNALED(status))
                    why = fmt::format("crashed: signal {} ({})", WTERMSIG(status), ::strsignal(WTERMSIG(status)));
                else
                    why = fmt::format("exited with status {}", WEXITSTATUS(status));
                tally.record(c.seed, false, "FAILED " + describe_case(make_case(c.seed)) + "  the case's process " + why +
                                                (c.out.empty() ? "" : "; it wrote:\n" + c.out) + "\n");
            }
        }
        running.erase(std::remove_if(running.begin(), running.end(), [](const Child& c) { return c.fd < 0; }),
                      running.end());
    }
}

}  // namespace

Summary run_sweep(const Options& options) {
    std::vector<std::uint64_t> seeds;
    for (std::int64_t i = 0; i < options.cases; ++i)
        if (options.shards <= 1 || i % options.shards == options.shard) seeds.push_back(case_seed(options.seed, i));
    Tally tally{options, seeds.size()};
    if (options.isolate) sweep_isolated(seeds, options, tally);
    else sweep_in_process(seeds, options, tally);
    Summary s;
    s.cases = static_cast<std::int64_t>(seeds.size());
    for (auto& [seed, text] : tally.failures) {
        s.failing_seeds.push_back(seed);
        s.reports.push_back(std::move(text));
    }
    s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - tally.start).count();
    return s;
}

}  // namespace toroid::sweep
