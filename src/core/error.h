// The one error type of the library. Every failure a user can cause (bad pipeline,
// bad file, impossible size) is reported as toroid::Error with a one-line message
// that names the problem; fronts turn it into exit code 2 or a C status code.
#pragma once

#include <fmt/format.h>

#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>

namespace toroid {

class Error : public std::runtime_error {
public:
    explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Throws toroid::Error with a {fmt}-formatted message.
template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
    throw Error(fmt::format(format, std::forward<Args>(args)...));
}

// The one-line message of a caught exception, as the fronts report it: a toroid::Error's
// own, "out of memory", or "internal error: ..." for anything else.
inline std::string error_message(const std::exception_ptr& e) {
    try {
        std::rethrow_exception(e);
    } catch (const Error& err) {
        return err.what();
    } catch (const std::bad_alloc&) {
        return "out of memory";
    } catch (const std::exception& err) {
        return fmt::format("internal error: {}", err.what());
    } catch (...) {
        return "internal error: unknown exception";
    }
}

// `s` made safe to quote in a message: control bytes become \n, \t, \xNN (so text taken
// from a file, a pipeline or a path cannot break the one-line rule), and text longer than
// `max` bytes is cut with "...". Other bytes, UTF-8 included, pass unchanged.
inline std::string printable(std::string_view s, std::size_t max = std::string_view::npos) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (i >= max) return out + "...";
        auto c = static_cast<unsigned char>(s[i]);
        if (c == '\n') out += "\\n";
        else if (c == '\r') out += "\\r";
        else if (c == '\t') out += "\\t";
        else if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
        else out += static_cast<char>(c);
    }
    return out;
}

}  // namespace toroid
