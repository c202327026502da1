// Words about float codes: display names, rounding labels, the value as a formula, and what storing did.
// The CLI and the widgets show these texts as they are, so each sentence has one home.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "tally/numerics/precision.h"
#include "tally/numerics/precision_text.h"

namespace tally::fp {

const char* format_display_name(Format f) {
    switch (f) {
        case Format::fp64: return "fp64 (IEEE double)";
        case Format::fp32: return "fp32 (IEEE single)";
        case Format::tf32: return "tf32 (19 bits)";
        case Format::fp16: return "fp16 (IEEE half)";
        case Format::bf16: return "bf16 (bfloat16)";
        case Format::e4m3: return "fp8 E4M3 (OCP)";
        case Format::e5m2: return "fp8 E5M2 (OCP)";
        case Format::e4m3fnuz: return "fp8 E4M3FNUZ";
        case Format::e5m2fnuz: return "fp8 E5M2FNUZ";
        case Format::e2m3: return "fp6 E2M3 (MX)";
        case Format::e3m2: return "fp6 E3M2 (MX)";
        case Format::e2m1: return "fp4 E2M1 (MX)";
        case Format::e8m0: return "E8M0 (MX scale)";
    }
    return "?";
}

const char* round_label(Round r) {
    switch (r) {
        case Round::nearest_even: return "nearest, ties to even";
        case Round::nearest_away: return "nearest, ties away (TF32)";
        case Round::toward_zero: return "toward zero";
        case Round::up: return "up (toward +∞)";
        case Round::down: return "down (toward −∞)";
    }
    return "?";
}

namespace {

// Exact decimals of tiny or huge values run to hundreds of digits; a formula shows 17 significant ones.
std::string short_number(double v) {
    std::string e = exact_decimal(v);
    if (e.size() <= 40) return e;
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return std::string("≈") + buf;
}

// Cuts a long exact decimal for a one-line note: the first max - 1 characters and an ellipsis.
std::string clip(const std::string& text, std::size_t max) {
    return text.size() <= max ? text : text.substr(0, max - 1) + "…";
}

}  // namespace

const char* nan_rule_text(Format f) {
    const FormatInfo fi = format_info(f);
    switch (fi.nan) {
        case NaN::ieee: return "exponent all ones, mantissa non-zero";
        case NaN::all_ones: return fi.man_bits ? "S.1111.111 only (exponent and mantissa all ones)" : "0xFF only";
        case NaN::neg_zero: return "0x80 only (the would-be negative zero)";
        case NaN::none: break;
    }
    return "none (NaN inputs become +max)";
}

std::vector<Binade> binades(Format f) {
    const FormatInfo fi = format_info(f);
    std::vector<Binade> rows;
    const int p = fi.man_bits;
    const int emin = fi.has_subnormals ? 1 - fi.bias : -fi.bias;
    const int emax = (int)(fi.max_mag >> p) - fi.bias;
    if (fi.has_subnormals)
        rows.push_back(
            {true, emin, pow2(emin - p), decode_to_double(f, (1ull << p) - 1), pow2(emin - p), (1ull << p) - 1});
    for (int e = emin; e <= emax; ++e) {
        const uint64_t first = (uint64_t)(e + fi.bias) << p;
        const uint64_t last = std::min(first | man_mask(fi), fi.max_mag);
        rows.push_back(
            {false, e, decode_to_double(f, first), decode_to_double(f, last), pow2(e - p), last - first + 1});
    }
    return rows;
}

std::string value_formula(Format f, uint64_t code) {
    const FormatInfo fi = format_info(f);
    const Fields fl = fields(f, code);
    const Class c = classify(f, code);
    const double v = decode_to_double(f, code);
    const std::string sgn = "(−1)^" + std::to_string(fl.sign) + " × ";
    const std::string den = std::to_string(1ull << fi.man_bits);
    switch (c) {
        case Class::nan: return "NaN: this bit pattern is reserved for not-a-number";
        case Class::inf: return sgn + "∞ (exponent all ones, mantissa zero)";
        case Class::zero: return sgn + "0 = " + exact_decimal(v);
        case Class::subnormal:
            return sgn + "2^(1−" + std::to_string(fi.bias) + ") × (0 + " + std::to_string(fl.mantissa) + "/" + den +
                   ") = " + short_number(v);
        case Class::normal: break;
    }
    if (fi.man_bits == 0 && !fi.has_sign)
        return "2^(" + std::to_string(fl.exponent) + "−" + std::to_string(fi.bias) + ") = " + short_number(v);
    return sgn + "2^(" + std::to_string(fl.exponent) + "−" + std::to_string(fi.bias) + ") × (1 + " +
           std::to_string(fl.mantissa) + "/" + den + ") = " + short_number(v);
}

std::string significand_text(Format f, uint64_t code) {
    const FormatInfo fi = format_info(f);
    const Fields fl = fields(f, code);
    const Class c = classify(f, code);
    if (c == Class::nan || c == Class::inf) return "";
    const bool lead = c == Class::normal;
    const double sig = ((lead ? (double)(1ull << fi.man_bits) : 0.0) + (double)fl.mantissa) * pow2(-fi.man_bits);
    return exact_decimal(sig);
}

std::vector<StoreNote> store_notes(Format f, double input, Encoded stored, Round rounding) {
    const FormatInfo fi = format_info(f);
    const Class c = classify(f, stored.code);
    const std::string name = fi.name;
    const std::string exact = exact_decimal(decode_to_double(f, stored.code));
    const std::string sign = !exact.empty() && exact[0] == '-' ? "−" : "+";
    const std::string mode = round_label(rounding);
    const bool became_nan = c == Class::nan && !std::isnan(input);
    std::vector<StoreNote> notes;
    if (std::isnan(input)) {
        notes.push_back(c == Class::nan ? StoreNote{"NaN stays NaN", ""}
                                        : StoreNote{"no NaN in " + name + ": stored " + sign + "max", "warn"});
    } else if (std::isinf(input) && c != Class::inf) {
        notes.push_back(
            c == Class::nan
                ? StoreNote{"no infinity in " + name + ": became NaN", "warn"}
                : StoreNote{"no infinity in " + name + ": saturated to " + sign + "max (" + exact + ")", "warn"});
    } else if ((stored.flags & kOverflow) && !(stored.flags & kInfInput)) {
        notes.push_back({(stored.flags & kSaturated) ? "overflowed: saturated to " + sign + "max"
                         : c == Class::inf           ? std::string("overflowed to inf")
                                                     : std::string("overflowed to NaN"),
                         "warn"});
    } else if (became_nan) {
        notes.push_back({"became NaN", "warn"});
    } else if (stored.flags & kUnderflow) {
        if (c == Class::zero)
            notes.push_back({"underflowed to 0", "warn"});
        else if (!fi.has_subnormals)  // E8M0 has no zero: the smallest code stands in for it
            notes.push_back(
                {"no zero in " + name + ": stored 2^" + std::to_string(-(int)fi.bias) + ", its smallest value",
                 "warn"});
        else
            notes.push_back({"underflowed: rounded to " + clip(exact, 14) + " (" + mode + ")", "warn"});
    } else if (stored.flags & kInexact) {
        notes.push_back({"rounded (" + mode + ")", ""});
    } else {
        notes.push_back({"exact", "good"});
    }
    if (c == Class::subnormal) notes.push_back({"subnormal: fewer significant bits", ""});
    return notes;
}

std::vector<StoreNote> decode_notes(Format f, uint64_t code) {
    if (classify(f, code) == Class::subnormal) return {{"subnormal: fewer significant bits", "warn"}};
    return {};
}

}  // namespace tally::fp
