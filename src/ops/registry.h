// The op registry: one OpDef per kind of op (an alternative of toroid::Op), holding
// everything ops/ knows about it: the JSON names it is parsed from and their parsers (with
// every validation message), the canonical JSON writer (pipeline_to_json, cache keys), the
// shape rule (infer_shape) and the data it carries beyond its JSON (keys digest it).
//
// The layers below ops/ add their own hook per kind without ops/ knowing them: decomp/ a
// decomposition, reference/ a reference implementation, each in an OpTable indexed by
// OpKind whose completeness is a static_assert where it is defined (and a test). Adding an
// op: its struct in ops.h (an alternative of Op and an OpKind), its OpDef (ops/*_op(s).cpp,
// listed in registry.cpp), its decomposition and its reference (docs/architecture.md,
// "Adding an op").
#pragma once

#include "ops/ops.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace toroid {

class OpReader;    // ops/define.h: the fields of one op's JSON object
class JsonWriter;  // ops/define.h: one op's canonical JSON object

// One kind per alternative of Op, in the variant's order.
enum class OpKind : std::uint8_t { Resize, Affine, GridSample, Flip, Crop, Convert, Normalize, Perspective, Color, Pad, Erase, Blur };
inline constexpr std::size_t kOpKinds = std::variant_size_v<Op>;

namespace detail {
template <typename T, typename... Ts>
constexpr std::size_t index_in(const std::variant<Ts...>*) {
    constexpr bool same[] = {std::is_same_v<T, Ts>...};
    for (std::size_t i = 0; i < sizeof...(Ts); ++i)
        if (same[i]) return i;
    return sizeof...(Ts);
}
}  // namespace detail

// The kind of an op struct, and of an op.
template <typename T>
inline constexpr OpKind op_kind_of = static_cast<OpKind>(detail::index_in<T>(static_cast<const Op*>(nullptr)));
inline OpKind op_kind(const Op& op) { return static_cast<OpKind>(op.index()); }

static_assert(kOpKinds == static_cast<std::size_t>(OpKind::Blur) + 1, "every alternative of Op needs an OpKind");
static_assert(op_kind_of<ResizeOp> == OpKind::Resize && op_kind_of<AffineOp> == OpKind::Affine &&
                  op_kind_of<GridSampleOp> == OpKind::GridSample && op_kind_of<FlipOp> == OpKind::Flip &&
                  op_kind_of<CropOp> == OpKind::Crop && op_kind_of<ConvertOp> == OpKind::Convert &&
                  op_kind_of<NormalizeOp> == OpKind::Normalize && op_kind_of<PerspectiveOp> == OpKind::Perspective &&
                  op_kind_of<ColorOp> == OpKind::Color && op_kind_of<PadOp> == OpKind::Pad &&
                  op_kind_of<EraseOp> == OpKind::Erase && op_kind_of<BlurOp> == OpKind::Blur,
              "OpKind follows the order of Op's alternatives");

// What parsing an op needs besides its JSON object.
struct ParseContext {
    std::filesystem::path base_dir;  // relative grid paths are resolved against it
    bool allow_paths = false;        // grid paths may also leave base_dir (io::resolve_pipeline_path)
};

// How an op takes images of the narrow dtypes (uint16, float16, bfloat16): its row of the
// type table. uint8 and float32 every op takes.
enum class NarrowTypes : std::uint8_t {
    Refused,     // not yet: a one-line error names the dtypes it takes
    Native,      // moves or fills elements of any dtype (flip, crop, pad, nearest resizes)
    ViaFloat32,  // computes in float32 and rounds once to the input's dtype, as torchvision.v2
                 // casts these dtypes (uint16: half to even, clamped); the shape rule and the
                 // layers below see a float32 op between two conversions
    Own,         // the op's own rules for each dtype (convert, normalize)
};

struct OpDef {
    // One JSON spelling of the kind: crop has two ("crop", and "center_crop", a CropOp with
    // `center` set). The first is the kind's name.
    struct Syntax {
        std::string_view name;
        std::function<Op(OpReader&, const ParseContext&)> parse;  // every field read and validated
    };
    OpKind kind{};
    std::vector<Syntax> syntax;
    // Which syntax an op of this kind is written in and named by (op_name); empty: the first.
    std::function<std::size_t(const Op&)> syntax_of;
    // The op's fields (not "op") in canonical form; parse(write(op)) gives op back.
    std::function<void(const Op&, JsonWriter&)> write;
    // The result's dtype and shape for an input's, with every check that depends on the
    // input (infer_shape adds the ones common to all ops).
    std::function<ShapeInfo(const Op&, const ShapeInfo&)> shape;
    // Data the op carries that its JSON only names (grid_sample's grid), which cache keys
    // digest; empty or returning null: none.
    std::function<const Tensor*(const Op&)> data;
    // Its row of the type table for a uint16, float16 or bfloat16 input (an op's fields may
    // choose it: a nearest resize moves elements, a bilinear one computes); empty: Refused.
    std::function<NarrowTypes(const Op&, DType)> narrow;

    std::string_view name() const { return syntax.front().name; }
    std::string_view name_of(const Op& op) const { return syntax[syntax_of ? syntax_of(op) : 0].name; }
};

// Every OpDef, in OpKind order.
std::span<const OpDef> op_defs();
const OpDef& op_def(OpKind kind);
inline const OpDef& op_def(const Op& op) { return op_def(op_kind(op)); }

// The def and syntax whose JSON name is `name`, or {nullptr, nullptr}.
struct FoundSyntax {
    const OpDef* def = nullptr;
    const OpDef::Syntax* syntax = nullptr;
};
FoundSyntax find_op_syntax(std::string_view name);

// How `op` takes an image of `dtype` (Native for uint8 and float32).
NarrowTypes narrow_types(const Op& op, DType dtype);

// Every JSON op name in registry order, for messages: "resize, affine, ... or normalize".
const std::string& op_names_text();

// A table of one hook per op kind, for a layer below ops/ (decomp/, reference/): entry
// op_slot<T> is the hook of op struct T (an adapter that unwraps the Op and calls the
// layer's function for T), and op_table_complete, in a static_assert where the table is
// defined, makes a kind without a hook a compile error.
template <typename Fn>
using OpTable = std::array<Fn*, kOpKinds>;

template <typename Fn>
constexpr bool op_table_complete(const OpTable<Fn>& t) {
    for (Fn* f : t)
        if (f == nullptr) return false;
    return true;
}

template <typename T>
constexpr std::size_t op_slot = static_cast<std::size_t>(op_kind_of<T>);

}  // namespace toroid
