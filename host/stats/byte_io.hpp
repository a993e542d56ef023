// SPDX-License-Identifier: MIT
/** @file
 *  @brief Little helpers to write and read the binary state files of a run (partial states for `nhvk merge`, resume
 *         records): trivially copyable values, strings and vectors appended to a byte string, and a reader that
 *         refuses to read past the end (a truncated file is an error, never undefined behaviour).
 */
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace nhvk::bytes {

inline void put_raw(std::string& out, const void* p, std::size_t n) { out.append(static_cast<const char*>(p), n); }

template <class T> void put(std::string& out, const T& v) {
    static_assert(std::is_trivially_copyable_v<T>, "put: trivially copyable values only");
    put_raw(out, &v, sizeof v);
}

inline void put_string(std::string& out, const std::string& s) {
    put<std::uint64_t>(out, s.size());
    out += s;
}

template <class T, class A> void put_vector(std::string& out, const std::vector<T, A>& v) {
    static_assert(std::is_trivially_copyable_v<T>, "put_vector: trivially copyable elements only");
    put<std::uint64_t>(out, v.size());
    if (!v.empty()) put_raw(out, v.data(), v.size() * sizeof(T));
}

/** @brief Reads what the `put` functions wrote, in the same order; throws std::runtime_error("<what>: truncated")
 *         when the data ends early. */
class Reader {
public:
    Reader(const std::string& data, std::string what) : data_(data), what_(std::move(what)) {}

    void get_raw(void* p, std::size_t n) {
        if (n > data_.size() - pos_) throw std::runtime_error(what_ + ": truncated (the file ends early)");
        if (n) std::memcpy(p, data_.data() + pos_, n);
        pos_ += n;
    }
    template <class T> T get() {
        static_assert(std::is_trivially_copyable_v<T>, "get: trivially copyable values only");
        T v;
        get_raw(&v, sizeof v);
        return v;
    }
    std::string get_string() {
        const std::uint64_t n = get<std::uint64_t>();
        if (n > data_.size() - pos_) throw std::runtime_error(what_ + ": truncated (the file ends early)");
        std::string s = data_.substr(pos_, static_cast<std::size_t>(n));
        pos_ += static_cast<std::size_t>(n);
        return s;
    }
    template <class T, class A = std::allocator<T>> std::vector<T, A> get_vector() {
        const std::uint64_t n = get<std::uint64_t>();
        if (n > (data_.size() - pos_) / (sizeof(T) ? sizeof(T) : 1))
            throw std::runtime_error(what_ + ": truncated (the file ends early)");
        std::vector<T, A> v(static_cast<std::size_t>(n));
        get_raw(v.data(), v.size() * sizeof(T));
        return v;
    }
    std::size_t remaining() const { return data_.size() - pos_; }
    const std::string& what() const { return what_; }

private:
    const std::string& data_;
    std::string what_;
    std::size_t pos_ = 0;
};

/** @brief FNV-1a, 64 bits: the checksum of a state file and the identity hash of a configuration (not a
 *         cryptographic hash: it detects accidents, not forgeries). */
inline std::uint64_t fnv1a64(const void* p, std::size_t n, std::uint64_t h = 0xcbf29ce484222325ull) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

} // namespace nhvk::bytes
