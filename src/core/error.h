// The one error type of the library. Every failure a user can cause (bad pipeline,
// bad file, impossible size) is reported as toroid::Error with a one-line message
// that names the problem; fronts turn it into exit code 2 or a C status code.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

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

}  // namespace toroid
