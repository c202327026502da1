// Names, parsing and exact decimal expansion for tally::fp (precision_text.h; the codec itself is header-only in precision.h).
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

#include "tally/base/error.h"
#include "tally/numerics/precision_text.h"

namespace tally::fp {

namespace {
constexpr std::array<Format, kFormatCount> kFormats = {
    Format::fp64,     Format::fp32,     Format::tf32, Format::fp16, Format::bf16, Format::e4m3, Format::e5m2,
    Format::e4m3fnuz, Format::e5m2fnuz, Format::e2m3, Format::e3m2, Format::e2m1, Format::e8m0};

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = (char)std::tolower((unsigned char)c);
    return out;
}

std::string trim(std::string_view s) {
    size_t b = 0, e = s.size();
    while (b < e && std::isspace((unsigned char)s[b])) ++b;
    while (e > b && std::isspace((unsigned char)s[e - 1])) --e;
    return std::string(s.substr(b, e - b));
}

// Unsigned big integer in base 10^9, least significant limb first.
struct BigDec {
    std::vector<uint32_t> limbs{0};
    static constexpr uint32_t kBase = 1000000000u;

    explicit BigDec(uint64_t v) {
        limbs.clear();
        do {
            limbs.push_back((uint32_t)(v % kBase));
            v /= kBase;
        } while (v);
    }
    void mul(uint32_t factor) {  // factor < 2^32
        uint64_t carry = 0;
        for (uint32_t& limb : limbs) {
            const uint64_t t = (uint64_t)limb * factor + carry;
            limb = (uint32_t)(t % kBase);
            carry = t / kBase;
        }
        while (carry) {
            limbs.push_back((uint32_t)(carry % kBase));
            carry /= kBase;
        }
    }
    std::string str() const {
        std::string s = std::to_string(limbs.back());
        for (size_t i = limbs.size() - 1; i-- > 0;) {
            std::string part = std::to_string(limbs[i]);
            s += std::string(9 - part.size(), '0') + part;
        }
        return s;
    }
};
}  // namespace

std::span<const Format> all_formats() { return kFormats; }

std::optional<Format> format_from_name(std::string_view name) {
    const std::string n = lower(trim(name));
    for (Format f : kFormats)
        if (n == format_info(f).name) return f;
    return std::nullopt;
}

const char* format_name(Format f) { return format_info(f).name; }

std::string format_names_list() {
    std::string s;
    for (Format f : kFormats) {
        if (!s.empty()) s += ", ";
        s += format_info(f).name;
    }
    return s;
}

std::optional<Round> round_from_name(std::string_view name) {
    const std::string n = lower(trim(name));
    if (n == "nearest_even" || n == "rn" || n == "rne") return Round::nearest_even;
    if (n == "nearest_away" || n == "rna") return Round::nearest_away;
    if (n == "toward_zero" || n == "rz") return Round::toward_zero;
    if (n == "up" || n == "ru") return Round::up;
    if (n == "down" || n == "rd") return Round::down;
    return std::nullopt;
}

const char* round_name(Round r) {
    switch (r) {
        case Round::nearest_even: return "nearest_even";
        case Round::nearest_away: return "nearest_away";
        case Round::toward_zero: return "toward_zero";
        case Round::up: return "up";
        case Round::down: return "down";
    }
    return "?";
}

const char* class_name(Class c) {
    switch (c) {
        case Class::zero: return "zero";
        case Class::subnormal: return "subnormal";
        case Class::normal: return "normal";
        case Class::inf: return "inf";
        case Class::nan: return "nan";
    }
    return "?";
}

std::string exact_decimal(double x) {
    const uint64_t b = double_bits(x);
    const bool neg = b >> 63;
    const uint64_t exp = (b >> 52) & 0x7FF, man = b & 0xFFFFFFFFFFFFFull;
    if (exp == 0x7FF) return man ? "nan" : (neg ? "-inf" : "inf");
    if (exp == 0 && man == 0) return neg ? "-0" : "0";
    uint64_t m = exp ? (man | (1ull << 52)) : man;
    int k = exp ? (int)exp - 1075 : -1074;
    while ((m & 1) == 0) {  // shortest m: fewer digits to strip later
        m >>= 1;
        ++k;
    }
    std::string digits;
    if (k >= 0) {
        BigDec v(m);
        for (int i = 0; i < k; ++i) v.mul(2);
        digits = v.str();
    } else {
        // m * 2^k = m * 5^-k / 10^-k
        BigDec v(m);
        int fives = -k;
        while (fives >= 13) {
            v.mul(1220703125u);  // 5^13
            fives -= 13;
        }
        uint32_t rest = 1;
        while (fives-- > 0) rest *= 5;
        v.mul(rest);
        std::string s = v.str();
        const size_t frac = (size_t)(-k);
        if (s.size() <= frac) s = std::string(frac - s.size() + 1, '0') + s;
        digits = s.substr(0, s.size() - frac) + "." + s.substr(s.size() - frac);
        // m is odd, so the last digit (5) is non-zero: no trailing zeros to strip.
    }
    return neg ? "-" + digits : digits;
}

std::string code_hex(Format f, uint64_t code) {
    const int width = (format_info(f).bits + 3) / 4;
    static const char* kHex = "0123456789abcdef";
    std::string s(width, '0');
    for (int i = width - 1; i >= 0; --i, code >>= 4) s[i] = kHex[code & 0xF];
    return "0x" + s;
}

std::string code_binary(Format f, uint64_t code) {
    const int bits = format_info(f).bits;
    std::string s(bits, '0');
    for (int i = 0; i < bits; ++i)
        if ((code >> (bits - 1 - i)) & 1) s[i] = '1';
    return s;
}

double parse_value(const char* field, std::string_view text) {
    const std::string t = trim(text);
    const std::string f = field;
    if (t.empty()) throw InputError(f, f + " is empty: type a number such as 0.1, 1e-8, -0, inf or nan");
    const std::string l = lower(t);
    std::string body = l;
    bool neg = false;
    if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
        neg = body[0] == '-';
        body = body.substr(1);
    }
    if (body == "inf" || body == "infinity") return neg ? -HUGE_VAL : HUGE_VAL;
    if (body == "nan") return neg ? -std::nan("") : std::nan("");
    // strtod accepts "inf"/"nan" spellings with payloads and leading spaces we do not want: allow only
    // digits, one dot, an exponent, a sign, and C hex floats.
    for (char c : l) {
        if (!(std::isxdigit((unsigned char)c) || c == '.' || c == '+' || c == '-' || c == 'x' || c == 'p'))
            throw InputError(f, f + " must be a number (e.g. 0.1, 1e-8, -0, inf, nan), got \"" + t + "\"");
    }
    const char* begin = t.c_str();
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(begin, &end);
    if (end == begin || end != begin + t.size())
        throw InputError(f, f + " must be a number (e.g. 0.1, 1e-8, -0, inf, nan), got \"" + t + "\"");
    return v;  // ERANGE is fine: overflow gives ±inf, underflow the correctly rounded tiny value or ±0
}

uint64_t parse_code_text(const char* field, Format fmt, std::string_view text) {
    const FormatInfo fi = format_info(fmt);
    const std::string f = field;
    std::string t = trim(text);
    const int max_digits = (fi.bits + 3) / 4;
    const std::string range = "a hex code of at most " + std::to_string(max_digits) + " digit" +
                              (max_digits == 1 ? "" : "s") + " for " + fi.name + " (" + std::to_string(fi.bits) +
                              " bits, 0x0 to " + code_hex(fmt, code_mask(fi)) + ")";
    if (t.empty()) throw InputError(f, f + " is empty: expected " + range);
    std::string digits = t;
    if (digits.size() >= 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) digits = digits.substr(2);
    if (digits.empty()) throw InputError(f, f + " has no digits after 0x: expected " + range);
    for (char c : digits)
        if (!std::isxdigit((unsigned char)c)) throw InputError(f, f + " must be " + range + ", got \"" + t + "\"");
    size_t first = digits.find_first_not_of('0');
    const std::string significant = first == std::string::npos ? "0" : digits.substr(first);
    if ((int)digits.size() > max_digits && (int)significant.size() > max_digits)
        throw InputError(f, f + " \"" + t + "\" is too long: expected " + range);
    if ((int)significant.size() > 16) throw InputError(f, f + " \"" + t + "\" is too long: expected " + range);
    const uint64_t v = std::strtoull(significant.c_str(), nullptr, 16);
    if (fi.bits < 64 && v >> fi.bits) throw InputError(f, f + " \"" + t + "\" does not fit: expected " + range);
    return v;
}

}  // namespace tally::fp
