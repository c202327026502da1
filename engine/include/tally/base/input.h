// Untrusted input text (API arguments, CLI flags, config files): limits checked before parsing,
// strict number syntax, and a printable form for quoting input back in messages.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace tally {

// Largest JSON text the API or a config file accepts: a Hugging Face config.json is a few KiB,
// so 1 MiB is generous while keeping a hostile input from costing more than milliseconds.
constexpr std::size_t kMaxJsonBytes = std::size_t{1} << 20;
// Deepest nesting of arrays and objects: real arguments nest 3 levels; the JSON library's
// serialiser, comparison and copy recurse, so deep nesting would overflow the stack.
constexpr int kMaxJsonDepth = 64;
// Longest method name the API looks up (the longest real one is under 32 bytes).
constexpr std::size_t kMaxMethodNameBytes = 64;

// Byte offset of the first byte that does not start a well-formed UTF-8 sequence (overlong forms,
// surrogates and code points above U+10FFFF are ill-formed), or nullopt when all of `text` is UTF-8.
std::optional<std::size_t> find_invalid_utf8(std::string_view text);

// `text` safe to print in a message or a terminal: control characters (C0, DEL, C1) and bytes that
// are not UTF-8 become escapes (\n, \x1b, \u009b), and text longer than max_bytes is cut at a
// character boundary with "... (N bytes)" appended.
std::string printable(std::string_view text, std::size_t max_bytes = 80);

// Longest error or warning message, escapes and the "... (N bytes)" note included (docs/API.md).
constexpr std::size_t kMaxMessageBytes = 1000;

// printable(text) cut so that the whole result, "... (N bytes)" included, is at most max_bytes long:
// escapes make the printable form up to six times longer than the text, so printable's input cap is not enough.
std::string printable_message(std::string_view text, std::size_t max_bytes = kMaxMessageBytes);

// A decimal or scientific-notation number ("70e9", "-1.5", ".5", "2E+3"): no hex, no "inf" or
// "nan", no spaces; nullopt when the text is not one or its value is not a finite double.
std::optional<double> parse_decimal(std::string_view text);

// Parses untrusted JSON text after checking its size, its UTF-8 and its nesting depth; throws
// InputError on `field`, naming `what` ("arguments", "config.json") and the byte at fault, and never
// quoting raw input.
nlohmann::json parse_json_input(std::string_view text, const std::string& field, const std::string& what);

// A config.json as Python's json module writes it may hold the bare literals Infinity and -Infinity (transformers'
// time_step_limit (0.0, inf) in Mamba-2 configs), which JSON has not: each one outside a string becomes the finite
// 1e308 / -1e308, padded with spaces to the same length so byte positions in later errors still match the text.
std::string python_json_infinities(std::string_view text);

// Deepest nesting of [ and { in a JSON text (brackets inside strings do not count); stops counting
// at `limit` + 1.
int json_nesting_depth(std::string_view text, int limit);

}  // namespace tally
