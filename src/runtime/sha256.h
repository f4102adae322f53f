// SHA-256 through OpenSSL's libcrypto (EVP), used by the JIT runtime to key its on-disk
// cache and to check that a cached shared object is intact. A thin header-only wrapper
// so that callers see neither OpenSSL's types nor its 1-on-success return codes.
#pragma once

#include "core/error.h"

#include <openssl/evp.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>

namespace toroid {

namespace sha256_detail {

class Hasher {
public:
    Hasher() : ctx_(EVP_MD_CTX_new()) {
        if (!ctx_ || EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) != 1)
            fail("SHA-256: OpenSSL could not start a digest");
    }
    void update(const void* data, std::size_t size) {
        if (EVP_DigestUpdate(ctx_.get(), data, size) != 1) fail("SHA-256: OpenSSL digest update failed");
    }
    // Lower-case hexadecimal of the digest; the object must not be updated afterwards.
    std::string finish_hex() {
        unsigned char digest[EVP_MAX_MD_SIZE];
        unsigned int size = 0;
        if (EVP_DigestFinal_ex(ctx_.get(), digest, &size) != 1) fail("SHA-256: OpenSSL digest failed");
        static constexpr char kDigits[] = "0123456789abcdef";
        std::string hex;
        hex.reserve(2 * size);
        for (unsigned int i = 0; i < size; ++i) {
            hex += kDigits[digest[i] >> 4];
            hex += kDigits[digest[i] & 0xf];
        }
        return hex;
    }

private:
    struct Free {
        void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
    };
    std::unique_ptr<EVP_MD_CTX, Free> ctx_;
};

}  // namespace sha256_detail

// 64 lower-case hex digits.
inline std::string sha256_hex(std::string_view bytes) {
    sha256_detail::Hasher hasher;
    hasher.update(bytes.data(), bytes.size());
    return hasher.finish_hex();
}

// Hashes a file's contents; throws toroid::Error if it cannot be read.
inline std::string sha256_file_hex(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail("cannot read {}: {}", path.string(), std::strerror(errno));
    sha256_detail::Hasher hasher;
    char buffer[16384];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0)
        hasher.update(buffer, static_cast<std::size_t>(in.gcount()));
    if (in.bad()) fail("cannot read {}: {}", path.string(), std::strerror(errno));
    return hasher.finish_hex();
}

}  // namespace toroid
