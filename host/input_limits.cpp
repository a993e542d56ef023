// SPDX-License-Identifier: MIT
#include "input_limits.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <vector>

namespace nhvk {

namespace {

bool continuation_byte(char c) { return (static_cast<unsigned char>(c) & 0xC0u) == 0x80u; }

/** The largest cut at or below `at` that does not split a UTF-8 sequence. */
std::size_t cut_before(std::string_view s, std::size_t at) {
    while (at > 0 && at < s.size() && continuation_byte(s[at])) --at;
    return at;
}

/** The smallest cut at or above `at` that does not split a UTF-8 sequence. */
std::size_t cut_after(std::string_view s, std::size_t at) {
    while (at < s.size() && continuation_byte(s[at])) ++at;
    return at;
}

} // namespace

std::string clip(std::string_view text, std::size_t max) {
    if (text.size() <= max) return std::string(text);
    const std::size_t keep = cut_before(text, max);
    return std::string(text.substr(0, keep)) + "\u2026 (" + std::to_string(text.size() - keep) + " more bytes)";
}

std::string clip_message(std::string_view message, std::size_t max) {
    if (message.size() <= max) return std::string(message);
    const std::size_t head = cut_before(message, max * 3 / 4);
    const std::size_t tail = cut_after(message, message.size() - max / 4);
    return std::string(message.substr(0, head)) + " \u2026 (" + std::to_string(tail - head) +
           " bytes left out) \u2026 " + std::string(message.substr(tail));
}

std::optional<NestingExcess> toml_nesting_excess(std::string_view text, int limit) {
    // NOTE: a small state machine, not a TOML parser: it tells keys from values (a dot counts in a key, `a.b.c`, not
    // in a value, `1.5`), follows the open arrays and inline tables, and skips strings and comments, so that it
    // counts what a parser would nest and no more. On malformed text it may count wrongly; the parser that reads the
    // text next then reports the syntax error.
    struct Open {
        char kind; // '[' an array, '{' an inline table
        int depth; // the depth of that array or table
    };
    std::vector<Open> open;
    std::size_t line = 1;
    int header = 0;           // the parts of the last [table] header: the depth of the keys below it
    bool in_header = false;   // between the brackets of a header
    bool key_position = true; // a key may start or go on here (else a value)
    int parts = 0;            // the parts of the key read so far
    int value_depth = 0;      // the depth of the value being read
    const std::size_t n = text.size();
    auto key_base = [&] {
        if (in_header) return 0;
        if (!open.empty() && open.back().kind == '{') return open.back().depth;
        return header;
    };
    auto too_deep = [&](int depth) { return depth > limit; };
    for (std::size_t i = 0; i < n; ++i) {
        const char c = text[i];
        if (c == '\n') {
            ++line;
            if (open.empty()) key_position = true, parts = 0, in_header = false;
            continue;
        }
        if (c == '#') {
            while (i + 1 < n && text[i + 1] != '\n') ++i;
            continue;
        }
        if (c == '"' || c == '\'') {
            if (key_position && parts == 0) parts = 1;
            const bool triple = i + 2 < n && text[i + 1] == c && text[i + 2] == c;
            const bool escapes = c == '"';
            i += triple ? 3 : 1;
            for (; i < n; ++i) {
                if (text[i] == '\n') {
                    if (!triple) break; // unterminated: the parser says so
                    ++line;
                } else if (escapes && text[i] == '\\') {
                    if (i + 1 < n && text[i + 1] == '\n') ++line;
                    ++i;
                } else if (text[i] == c && (!triple || (i + 2 < n && text[i + 1] == c && text[i + 2] == c))) {
                    if (triple) i += 2;
                    break;
                }
            }
            if (i < n && text[i] == '\n') --i; // the newline is counted above
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r') continue;
        if (key_position) {
            if (c == '[' && open.empty() && parts == 0 && !in_header) {
                in_header = true;
                if (i + 1 < n && text[i + 1] == '[') ++i;
            } else if (c == ']' && in_header) {
                header = std::max(parts, 1);
                in_header = false;
                key_position = false;
                if (i + 1 < n && text[i + 1] == ']') ++i;
            } else if (c == '.') {
                ++parts;
                if (too_deep(key_base() + parts)) return NestingExcess{line, key_base() + parts};
            } else if (c == '=') {
                value_depth = key_base() + std::max(parts, 1);
                key_position = false;
                parts = 0;
            } else if (c == '}' && !open.empty()) { // `{}`
                open.pop_back();
                key_position = false;
                if (!open.empty() && open.back().kind == '[') value_depth = open.back().depth + 1;
            } else if (parts == 0) {
                parts = 1;
                if (too_deep(key_base() + 1)) return NestingExcess{line, key_base() + 1};
            }
            continue;
        }
        if (c == '[' || c == '{') {
            if (too_deep(value_depth + 1)) return NestingExcess{line, value_depth + 1};
            open.push_back({c, value_depth});
            if (c == '{') key_position = true, parts = 0;
            else ++value_depth;
        } else if (c == ',' && !open.empty()) {
            if (open.back().kind == '{') key_position = true, parts = 0;
            else value_depth = open.back().depth + 1;
        } else if ((c == ']' || c == '}') && !open.empty()) {
            open.pop_back();
            if (!open.empty() && open.back().kind == '[') value_depth = open.back().depth + 1;
        }
    }
    return std::nullopt;
}

std::string non_regular_kind(unsigned st_mode) {
    const mode_t m = static_cast<mode_t>(st_mode);
    if (S_ISREG(m)) return {};
    if (S_ISDIR(m)) return "a folder";
    if (S_ISFIFO(m)) return "a FIFO (named pipe)";
    if (S_ISSOCK(m)) return "a socket";
    if (S_ISCHR(m) || S_ISBLK(m)) return "a device";
    return "not a regular file";
}

} // namespace nhvk
