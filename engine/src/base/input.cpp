#include "tally/base/input.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "tally/base/error.h"

namespace tally {

namespace {

// Length of the well-formed UTF-8 sequence at text[i] (RFC 3629, section 4), or 0 if there is none.
std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char lead = byte(i);
    if (lead < 0x80) return 1;
    std::size_t length = 0;
    unsigned char low = 0x80, high = 0xBF;  // range of the first continuation byte
    if (lead >= 0xC2 && lead <= 0xDF)
        length = 2;
    else if (lead == 0xE0) {
        length = 3;
        low = 0xA0;
    } else if (lead >= 0xE1 && lead <= 0xEC)
        length = 3;
    else if (lead == 0xED) {
        length = 3;
        high = 0x9F;
    }  // no UTF-16 surrogates
    else if (lead >= 0xEE && lead <= 0xEF)
        length = 3;
    else if (lead == 0xF0) {
        length = 4;
        low = 0x90;
    } else if (lead >= 0xF1 && lead <= 0xF3)
        length = 4;
    else if (lead == 0xF4) {
        length = 4;
        high = 0x8F;
    }  // nothing above U+10FFFF
    else
        return 0;
    if (i + length > text.size()) return 0;
    if (byte(i + 1) < low || byte(i + 1) > high) return 0;
    for (std::size_t k = 2; k < length; ++k)
        if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
    return length;
}

std::uint32_t decode_code_point(std::string_view text, std::size_t i, std::size_t length) {
    const auto byte = [&](std::size_t k) { return static_cast<std::uint32_t>(static_cast<unsigned char>(text[k])); };
    if (length == 1) return byte(i);
    std::uint32_t cp = byte(i) & (0x7Fu >> length);
    for (std::size_t k = 1; k < length; ++k) cp = (cp << 6) | (byte(i + k) & 0x3F);
    return cp;
}

// Characters that change how a terminal shows the text around them: controls, line and paragraph
// separators, and the bidirectional overrides and isolates (the "Trojan Source" characters).
bool needs_escape(std::uint32_t cp) {
    return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029 || (cp >= 0x202A && cp <= 0x202E) ||
           (cp >= 0x2066 && cp <= 0x2069);
}

std::string hex_escape(const char* format, unsigned value) {
    char buffer[16];
    std::snprintf(buffer, sizeof buffer, format, value);
    return buffer;
}

}  // namespace

std::optional<std::size_t> find_invalid_utf8(std::string_view text) {
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t length = utf8_sequence_length(text, i);
        if (length == 0) return i;
        i += length;
    }
    return std::nullopt;
}

namespace {

// The printable form of the character at text[i], and how many bytes of text it stands for.
std::pair<std::string, std::size_t> printable_piece(std::string_view text, std::size_t i) {
    const std::size_t length = utf8_sequence_length(text, i);
    if (length == 0) return {hex_escape("\\x%02x", static_cast<unsigned char>(text[i])), 1};
    const std::uint32_t cp = decode_code_point(text, i, length);
    if (cp == '\n') return {"\\n", length};
    if (cp == '\t') return {"\\t", length};
    if (cp == '\r') return {"\\r", length};
    if (cp < 0x80 && needs_escape(cp)) return {hex_escape("\\x%02x", cp), length};
    if (needs_escape(cp)) return {hex_escape("\\u%04x", cp), length};
    return {std::string(text.substr(i, length)), length};
}

// Escapes text until the output would pass max_out bytes; returns the output and the input bytes consumed.
std::pair<std::string, std::size_t> printable_prefix(std::string_view text, std::size_t max_out) {
    std::string out;
    std::size_t i = 0;
    while (i < text.size()) {
        auto [piece, length] = printable_piece(text, i);
        if (out.size() + piece.size() > max_out) break;
        out += piece;
        i += length;
    }
    return {out, i};
}

}  // namespace

std::string printable(std::string_view text, std::size_t max_bytes) {
    std::string out;
    std::size_t i = 0;
    while (i < text.size()) {
        if (i >= max_bytes) {
            out += "... (" + std::to_string(text.size()) + " bytes)";
            break;
        }
        auto [piece, length] = printable_piece(text, i);
        out += piece;
        i += length;
    }
    return out;
}

std::string printable_message(std::string_view text, std::size_t max_bytes) {
    auto whole = printable_prefix(text, max_bytes);
    if (whole.second == text.size()) return whole.first;
    const std::string note = "... (" + std::to_string(text.size()) + " bytes)";
    if (note.size() >= max_bytes) return printable_prefix(text, max_bytes).first;
    return printable_prefix(text, max_bytes - note.size()).first + note;
}

std::optional<double> parse_decimal(std::string_view text) {
    // Grammar: [+-] (digits [. digits?] | . digits) [(e|E) [+-] digits]
    std::size_t i = 0;
    const auto digit = [&](std::size_t k) { return k < text.size() && text[k] >= '0' && text[k] <= '9'; };
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    bool mantissa_digits = false, nonzero = false;
    while (digit(i)) {
        nonzero |= text[i] != '0';
        mantissa_digits = true;
        ++i;
    }
    if (i < text.size() && text[i] == '.') {
        ++i;
        while (digit(i)) {
            nonzero |= text[i] != '0';
            mantissa_digits = true;
            ++i;
        }
    }
    if (!mantissa_digits) return std::nullopt;
    if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
        ++i;
        if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
        if (!digit(i)) return std::nullopt;
        while (digit(i)) ++i;
    }
    if (i != text.size()) return std::nullopt;
    const std::string copy(text);
    errno = 0;
    const double value = std::strtod(copy.c_str(), nullptr);
    if (!std::isfinite(value)) return std::nullopt;
    if (value == 0 && nonzero) return std::nullopt;  // underflow: "1e-400" is not zero
    return value;
}

int json_nesting_depth(std::string_view text, int limit) {
    int depth = 0, deepest = 0;
    bool in_string = false, escaped = false;
    for (const char c : text) {
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                in_string = false;
            continue;
        }
        if (c == '"')
            in_string = true;
        else if (c == '[' || c == '{') {
            deepest = std::max(deepest, ++depth);
            if (deepest > limit) return deepest;
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return deepest;
}

std::string python_json_infinities(std::string_view text) {
    std::string out(text);
    bool in_string = false;
    for (std::size_t i = 0; i < out.size(); ++i) {
        const char c = out[i];
        if (in_string) {
            if (c == '\\')
                ++i;  // the escaped character cannot end the string
            else if (c == '"')
                in_string = false;
            continue;
        }
        if (c == '"') {
            in_string = true;
            continue;
        }
        const bool negative = c == '-' && out.compare(i + 1, 8, "Infinity") == 0;
        if (!negative && out.compare(i, 8, "Infinity") != 0) continue;
        const std::size_t length = negative ? 9 : 8;
        const std::string number = negative ? "-1e308" : "1e308";
        out.replace(i, length, number + std::string(length - number.size(), ' '));
        i += length - 1;
    }
    return out;
}

nlohmann::json parse_json_input(std::string_view text, const std::string& field, const std::string& what) {
    if (text.size() > kMaxJsonBytes)
        throw InputError(field, what + " is " + std::to_string(text.size()) + " bytes; the limit is " +
                                    std::to_string(kMaxJsonBytes) + " bytes (1 MiB)");
    if (auto offset = find_invalid_utf8(text))
        throw InputError(field, what + " is not valid UTF-8: byte " + std::to_string(*offset) + " (" +
                                    hex_escape("0x%02x", static_cast<unsigned char>(text[*offset])) +
                                    ") does not start a well-formed character (save it as UTF-8)");
    if (json_nesting_depth(text, kMaxJsonDepth) > kMaxJsonDepth)
        throw InputError(field,
                         what + " nests arrays and objects deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    // Drops the "[json.exception.parse_error.101] " prefix; what is left quotes the last token read,
    // so it goes through printable() like any other input.
    const auto detail = [](const nlohmann::json::exception& error) {
        std::string text = error.what();
        if (auto close = text.find("] "); text.rfind("[json.exception.", 0) == 0 && close != std::string::npos)
            text.erase(0, close + 2);
        return printable(text, 200);
    };
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& error) {
        throw InputError(field,
                         what + " is not valid JSON at byte " + std::to_string(error.byte) + ": " + detail(error));
    } catch (const nlohmann::json::exception& error) {
        throw InputError(field, what + " is not valid JSON: " + detail(error));  // e.g. a number beyond a double
    }
}

}  // namespace tally
