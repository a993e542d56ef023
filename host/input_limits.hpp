// SPDX-License-Identifier: MIT
/** @file
 *  @brief Limits on what nhvk reads and echoes: how deep a parsed input may nest (the TOML and JSON parsers and
 *         the code that walks their trees recurse, so a deep enough input overflows the stack), and how much of a
 *         user's text an error message repeats (a 30 MB line must not come back as a 30 MB message).
 */
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace nhvk {

/** @brief The deepest nesting read from any input: TOML tables, dotted keys, arrays and inline tables together, or
 *         JSON objects and arrays. nhvk's own files nest at most 5 deep; tens of thousands overflow the stack. */
inline constexpr int max_nesting_depth = 64;

/** @brief The most bytes of one piece of user text (a key, a value, a line, a path) that a message repeats. */
inline constexpr std::size_t max_echo_bytes = 200;

/** @brief The most bytes of a whole error message as printed (the last line of defence behind `clip`). */
inline constexpr std::size_t max_message_bytes = 4096;

/** @brief `text` as a message repeats it: whole when at most `max` bytes, else its first `max` bytes (never cutting
 *         a UTF-8 sequence), then "…" and how many bytes were left out. */
std::string clip(std::string_view text, std::size_t max = max_echo_bytes);

/** @brief A message of at most about `max` bytes: its head and its tail (where "expected …" usually is) around a
 *         "…" saying how many bytes were left out. */
std::string clip_message(std::string_view message, std::size_t max = max_message_bytes);

/** @brief What a file of mode `st_mode` (stat) is when it is not a regular file: "a folder", "a FIFO (named pipe)",
 *         "a device", "a socket"; empty for a regular file. nhvk reads its inputs from regular files only: opening a
 *         FIFO waits for a writer, a device may never end, a folder reads as nothing. */
std::string non_regular_kind(unsigned st_mode);

/** @brief Where a TOML text first nests deeper than a limit. */
struct NestingExcess {
    std::size_t line = 0; ///< 1-based
    int depth = 0;        ///< the depth reached there
};

/** @brief The first place where `text`, read as TOML, nests deeper than `limit`: the parts of a table header or a
 *         dotted key, plus the table it is in, plus each enclosing array and inline table. Strings and comments are
 *         skipped. Meant to run before a TOML parser sees the text; it does not validate the syntax. */
std::optional<NestingExcess> toml_nesting_excess(std::string_view text, int limit = max_nesting_depth);

} // namespace nhvk
