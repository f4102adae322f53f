// Loop IR helpers and the Program dump used by --explain and the scheduler's debug
// output: buffers first (role, type, shape, strides), then each kernel's loop nest with
// the stored value, the scheduler's reasons and cost estimates.
#include "ir/loop.h"

#include <fmt/format.h>

#include <cstdlib>

namespace toroid::ir {

std::string_view buffer_role_name(BufferRole r) {
    switch (r) {
        case BufferRole::Input: return "input";
        case BufferRole::Constant: return "constant";
        case BufferRole::Temp: return "temp";
        case BufferRole::Output: return "output";
    }
    return "?";
}

std::string_view loop_kind_name(LoopKind k) {
    switch (k) {
        case LoopKind::Serial: return "serial";
        case LoopKind::Parallel: return "parallel";
        case LoopKind::Vector: return "vector";
        case LoopKind::Unrolled: return "unrolled";
    }
    return "?";
}

std::int64_t Buffer::numel() const {
    std::int64_t n = 1;
    for (const std::int64_t d : shape) n *= d;
    return n;
}

std::int64_t Buffer::span() const {
    if (numel() == 0) return 0;
    // Strides not chosen yet: the buffer would be dense.
    if (strides.size() != shape.size()) return numel();
    std::int64_t s = 1;
    for (std::size_t i = 0; i < shape.size(); ++i) s += (shape[i] - 1) * std::llabs(strides[i]);
    return s;
}

namespace {

std::string dims(const std::vector<std::int64_t>& v) { return fmt::format("[{}]", fmt::join(v, ", ")); }

bool all_zero(const std::vector<std::int64_t>& v) {
    for (const std::int64_t x : v)
        if (x != 0) return false;
    return true;
}

}  // namespace

std::string Program::to_string() const {
    std::string out = fmt::format("program: input t{}, output t{}\n", input, output);
    for (const Buffer& b : buffers) {
        out += fmt::format("buffer t{} {} '{}' {}{}", b.id, buffer_role_name(b.role), b.name, type_name(b.type),
                           dims(b.shape));
        if (!b.strides.empty()) out += fmt::format(" strides {}", dims(b.strides));
        if (!b.origin.empty() && !all_zero(b.origin)) out += fmt::format(" origin {}", dims(b.origin));
        if (!b.data.empty()) out += fmt::format(" ({} bytes of data)", b.data.size());
        out += '\n';
    }
    for (std::size_t ki = 0; ki < kernels.size(); ++ki) {
        const Kernel& k = kernels[ki];
        out += fmt::format("kernel {} '{}' -> t{}\n", ki, k.name, k.output);
        std::string indent = "  ";
        std::vector<std::string> index;
        for (const Loop& l : k.loops) {
            std::string kind;
            switch (l.kind) {
                case LoopKind::Serial: break;
                case LoopKind::Parallel: kind = "parallel "; break;
                case LoopKind::Vector: kind = fmt::format("vector({}) ", k.vector_width); break;
                case LoopKind::Unrolled: kind = "unrolled "; break;
            }
            out += fmt::format("{}{}for v{} in {}..{}\n", indent, kind, l.var, l.begin, l.begin + l.extent);
            indent += "  ";
        }
        // The stored element is indexed by the output dims in order, whatever the loop order.
        std::size_t rank = k.loops.size();
        if (k.output >= 0 && static_cast<std::size_t>(k.output) < buffers.size())
            rank = buffers[static_cast<std::size_t>(k.output)].shape.size();
        for (std::size_t d = 0; d < rank; ++d) index.push_back(fmt::format("v{}", d));
        out += fmt::format("{}t{}[{}] = {}\n", indent, k.output, fmt::join(index, ", "), ir::to_string(k.value));
        for (const std::string& why : k.decisions) out += fmt::format("  # {}\n", why);
        if (k.bytes_read || k.bytes_written || k.flops)
            out += fmt::format("  cost: {} bytes read, {} bytes written, {} flops\n", k.bytes_read, k.bytes_written,
                               k.flops);
    }
    return out;
}

}  // namespace toroid::ir
