// The instruction-set levels' table.
#include "target/isa_level.h"

#include "core/error.h"

namespace toroid {

namespace {

// `march`'s flag (a level whose own features are `base`), then those of `features` it lacks.
IsaLevel make_level(std::string name, const char* march, const CpuFeatures& base, const CpuFeatures& features) {
    IsaLevel l{std::move(name), features, {std::string("-march=") + march}};
    for (std::string& f : features.minus(base).compiler_flags()) l.flags.push_back(std::move(f));
    l.flags.emplace_back("-mtune=generic");
    return l;
}

}  // namespace

const std::vector<IsaLevel>& isa_levels() {
    static const std::vector<IsaLevel> levels = [] {
        const CpuFeatures v3 = CpuFeatures::x86_64_v3(), v4 = CpuFeatures::x86_64_v4();
        return std::vector<IsaLevel>{
            make_level("x86-64-v4-vbmi-vnni", "x86-64-v4", v4,
                       v4 | CpuFeatures{CpuFeature::Avx512Vbmi, CpuFeature::Avx512Vnni}),
            make_level("x86-64-v4", "x86-64-v4", v4, v4),
            make_level("x86-64-v3", "x86-64-v3", v3, v3),
        };
    }();
    return levels;
}

const IsaLevel& isa_level(std::string_view name) {
    std::string known;
    for (const IsaLevel& l : isa_levels()) {
        if (l.name == name) return l;
        known += (known.empty() ? "" : ", ") + l.name;
    }
    fail("unknown instruction-set level '{}' (known: {})", printable(std::string(name)), known);
}

const IsaLevel& isa_level_of(const CpuFeatures& features) {
    for (const IsaLevel& l : isa_levels())
        if (features.contains(l.features)) return l;
    return isa_levels().back();
}

bool isa_supported(std::string_view name) {
#if defined(__x86_64__)
    // The -march levels also let the compiler use what no feature of the set names (BMI2,
    // MOVBE, F16C...): the CPU is asked for the level itself too.
    __builtin_cpu_init();
    bool level = false;
    if (name == "x86-64-v3") level = __builtin_cpu_supports("x86-64-v3");
    else if (name == "x86-64-v4" || name == "x86-64-v4-vbmi-vnni") level = __builtin_cpu_supports("x86-64-v4");
    for (const IsaLevel& l : isa_levels())
        if (l.name == name) return level && CpuFeatures::host().contains(l.features);
#else
    (void)name;
#endif
    return false;
}

}  // namespace toroid
