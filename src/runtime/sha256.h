// SHA-256 (FIPS 180-4), used by the JIT runtime to key its on-disk cache and to check
// that a cached shared object is intact. Small and dependency-free; not constant-time,
// which is fine because nothing here is secret.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace toroid {

class Sha256 {
public:
    using Digest = std::array<std::uint8_t, 32>;

    Sha256();
    Sha256& update(const void* data, std::size_t size);
    Sha256& update(std::string_view bytes) { return update(bytes.data(), bytes.size()); }
    // Pads and returns the digest; the object must not be updated afterwards.
    Digest finish();

private:
    void compress(const std::uint8_t* block);

    std::array<std::uint32_t, 8> state_;
    std::array<std::uint8_t, 64> buffer_{};
    std::size_t buffered_ = 0;
    std::uint64_t total_bytes_ = 0;
};

// Lower-case hexadecimal of `bytes` (first `count` bytes; all when count exceeds the size).
std::string to_hex(const Sha256::Digest& digest, std::size_t count = 32);

std::string sha256_hex(std::string_view bytes);
// Hashes a file's contents; throws toroid::Error if it cannot be read.
std::string sha256_file_hex(const std::filesystem::path& path);

}  // namespace toroid
