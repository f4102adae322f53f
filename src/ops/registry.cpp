// The op registry's table: every OpDef, in OpKind order, checked once when first used.
#include "ops/registry.h"

#include "ops/define.h"

namespace toroid {
namespace {

struct Registry {
    std::vector<OpDef> defs;
    std::string names;

    Registry() {
        // One line per op kind, in OpKind order.
        defs.push_back(resize_op_def());
        defs.push_back(affine_op_def());
        defs.push_back(grid_sample_op_def());
        defs.push_back(flip_op_def());
        defs.push_back(crop_op_def());
        defs.push_back(convert_op_def());
        defs.push_back(normalize_op_def());
        defs.push_back(perspective_op_def());
        defs.push_back(color_op_def());
        defs.push_back(pad_op_def());
        defs.push_back(erase_op_def());
        defs.push_back(blur_op_def());

        if (defs.size() != kOpKinds) fail("internal: the op registry has {} defs for {} kinds", defs.size(), kOpKinds);
        std::vector<std::string_view> all;
        for (std::size_t k = 0; k < defs.size(); ++k) {
            const OpDef& d = defs[k];
            if (static_cast<std::size_t>(d.kind) != k || d.syntax.empty() || !d.write || !d.shape)
                fail("internal: op def {} of the registry is incomplete or out of order", k);
            for (const OpDef::Syntax& s : d.syntax) {
                if (!s.parse || std::find(all.begin(), all.end(), s.name) != all.end())
                    fail("internal: op name '{}' has no parser or is registered twice", s.name);
                all.push_back(s.name);
            }
        }
        for (std::size_t i = 0; i < all.size(); ++i) {
            if (i > 0) names += i + 1 == all.size() ? " or " : ", ";
            names += all[i];
        }
    }
};

const Registry& registry() {
    static const Registry r;
    return r;
}

}  // namespace

std::span<const OpDef> op_defs() { return registry().defs; }

const OpDef& op_def(OpKind kind) {
    const auto k = static_cast<std::size_t>(kind);
    if (k >= kOpKinds) fail("internal: op kind {} is out of range", k);
    return registry().defs[k];
}

FoundSyntax find_op_syntax(std::string_view name) {
    for (const OpDef& d : registry().defs)
        for (const OpDef::Syntax& s : d.syntax)
            if (s.name == name) return {&d, &s};
    return {};
}

const std::string& op_names_text() { return registry().names; }

}  // namespace toroid
