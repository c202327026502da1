// The JSON API of the precision area: float formats (encode, decode, tables, constants) and block scaling.
// Every number a widget shows about a float format comes from here; the page decodes nothing itself.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "api_args.h"
#include "tally/api.h"
#include "tally/base/error.h"
#include "tally/numerics/precision.h"
#include "tally/numerics/precision_text.h"

namespace tally::api {

namespace {

using namespace tally::fp;

// ---------------------------------------------------------------- result objects
json number_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json brief(Format f, uint64_t code) {
    const double v = decode_to_double(f, code);
    return {{"code", code},
            {"hex", code_hex(f, code)},
            {"value", number_or_null(v)},
            {"exact", exact_decimal(v)},
            {"class", class_name(classify(f, code))}};
}

json notes_json(const std::vector<StoreNote>& notes) {
    json list = json::array();
    for (const StoreNote& n : notes) list.push_back({{"text", n.text}, {"kind", n.kind}});
    return list;
}

json describe(Format f, uint64_t code) {
    const FormatInfo fi = format_info(f);
    const Fields fl = fields(f, code);
    const Class c = classify(f, code);
    const double v = decode_to_double(f, code);
    const std::string bits = code_binary(f, code);
    const size_t sb = fi.has_sign ? 1 : 0;
    json out = brief(f, code);
    out["format"] = fi.name;
    out["bits"] = bits;
    out["sign"] = fl.sign;
    out["fields"] = TALLY_MEMBERS(fl, sign, exponent, mantissa);
    out["field_bits"] = {{"sign", bits.substr(0, sb)},
                         {"exponent", bits.substr(sb, fi.exp_bits)},
                         {"mantissa", bits.substr(sb + fi.exp_bits)}};
    if (c == Class::normal)
        out["unbiased_exponent"] = (int)fl.exponent - fi.bias;
    else if (c == Class::subnormal)
        out["unbiased_exponent"] = 1 - fi.bias;
    else
        out["unbiased_exponent"] = nullptr;
    out["significand"] = significand_text(f, code);
    out["formula"] = value_formula(f, code);
    out["subnormal"] = c == Class::subnormal;
    uint64_t nb;
    out["next"] = next_up(f, code, &nb) ? brief(f, nb) : json(nullptr);
    out["prev"] = next_down(f, code, &nb) ? brief(f, nb) : json(nullptr);
    const double u = ulp(f, code);
    out["ulp"] = (c == Class::nan || c == Class::inf) ? json(nullptr) : json(u);
    out["ulp_exact"] = (c == Class::nan || c == Class::inf) ? json(nullptr) : json(exact_decimal(u));
    out["notes"] = notes_json(decode_notes(f, code));
    (void)v;
    return out;
}

json encode_result(Format f, const ValueArg& in, Round rnd, bool sat) {
    const Encoded e = encode(f, in.value, rnd, sat);
    json out = describe(f, e.code);
    const double v = decode_to_double(f, e.code);
    out["input"] = in.text;
    out["input_value"] = number_or_null(in.value);
    out["input_exact"] = exact_decimal(in.value);
    out["rounding"] = round_name(rnd);
    out["saturate"] = sat || (format_info(f).inf == Inf::none && format_info(f).nan == NaN::none);
    const bool finite_pair = std::isfinite(in.value) && std::isfinite(v);
    const double err = finite_pair ? std::fabs(v - in.value) : NAN;
    out["error_abs"] = number_or_null(err);
    if (!finite_pair)
        out["error_rel"] = nullptr;
    else if (in.value == 0)
        out["error_rel"] = err == 0 ? json(0.0) : json(nullptr);
    else
        out["error_rel"] = err / std::fabs(in.value);
    out["exact_match"] = finite_pair ? (v == in.value) : (std::isnan(in.value) ? false : v == in.value);
    out["inexact"] = (e.flags & kInexact) != 0;
    out["overflowed"] = (e.flags & kOverflow) != 0 && !(e.flags & kInfInput);
    out["saturated"] = (e.flags & kSaturated) != 0;
    out["underflowed"] = (e.flags & kUnderflow) != 0;
    out["became_nan"] = classify(f, e.code) == Class::nan && !std::isnan(in.value);
    out["nan_input"] = std::isnan(in.value);
    out["notes"] = notes_json(store_notes(f, in.value, e, rnd));
    return out;
}

// ---------------------------------------------------------------- methods

using namespace arg;
constexpr Arg kFormat = text("format", "required", "a float format name (see float_formats)");
constexpr Arg kValue = any("value", "required", "a number, or text such as \"1e-8\", \"-0\", \"inf\", \"nan\"");
constexpr Arg kRounding = choice("rounding", "nearest_even", "rounding mode (or rn, rna, rz, ru, rd)",
                                 "nearest_even|nearest_away|toward_zero|up|down");
constexpr Arg kSaturate = any("saturate", "depends: the format's NVIDIA default",
                              "true, false, or \"default\": clamp overflow to the largest finite value");
constexpr Arg kCode = any("code", "depends: required without hex", "the bit pattern: an integer, or hex text");
constexpr Arg kHex = text("hex", "none", "the bit pattern as hex text, e.g. \"0x7e\"");
constexpr Arg kFlipBit = number("flip_bit", "", "none", "a bit index to flip before decoding");
constexpr std::array kEncodeArgs{kFormat, kValue, kRounding, kSaturate};
constexpr std::array kCompareArgs{kValue, kRounding, kSaturate};
constexpr std::array kDecodeArgs{kFormat, kCode, kHex, kFlipBit};
constexpr std::array kTableArgs{
    kFormat, choice("kind", "gaps", "gaps per binade, or every value (formats of at most 16 bits)", "gaps|values")};
constexpr std::array kExploreArgs{
    kFormat,
    any("value", "depends: give value, or code / hex", kValue.doc),
    kCode,
    kHex,
    kFlipBit,
    kRounding,
    kSaturate,
    boolean("table", "false", "also the gap table (and values up to 8 bits)"),
    Arg{"blocks", Obj, "", -kNo, kNo, "none", "block_compare's arguments: a block comparison beside"}};
constexpr std::array kBatchArgs{kFormat, kRounding, kSaturate,
                                integer("count", "", 1, 1 << 24, "required", "bit patterns encoded"),
                                integer("seed", "", 0, std::int64_t{1} << 52, "1", "seed of the patterns")};
constexpr std::array kFormatsResult = std::to_array<Field>({
    {"formats", "", "every format with its layout, special-value rules and constants"},
    {"roundings", "", "the rounding modes"},
});
// What describe() returns for a bit pattern: float_decode's result.
constexpr std::array kDecodeResult = std::to_array<Field>({
    {"code", "", "the bit pattern"},
    {"hex", "", "the pattern in hex"},
    {"bits", "", "the pattern in binary"},
    {"format", "", "the format"},
    {"class", "", "zero, subnormal, normal, inf or nan"},
    {"value", "", "its value"},
    {"exact", "", "the value in exact decimal"},
    {"sign", "", "the sign bit"},
    {"fields", "", "{sign, exponent, mantissa} as integers"},
    {"field_bits", "", "{sign, exponent, mantissa} as bit strings"},
    {"unbiased_exponent", "", "the exponent less the bias (null: inf or nan)"},
    {"significand", "", "the significand in decimal (1.m or 0.m)"},
    {"subnormal", "", "whether the pattern is subnormal"},
    {"formula", "", "sign x significand x 2^exponent"},
    {"next", "", "the next pattern up {class, code, exact, hex, value} (null: none)"},
    {"prev", "", "the next pattern down (null: none)"},
    {"ulp", "", "the gap to the next value (null: inf or nan)"},
    {"ulp_exact", "", "the gap in exact decimal (null: inf or nan)"},
    {"notes", "", "what to know about the pattern"},
});
// describe()'s fields (float_decode's) interleaved with the encode's own.
constexpr std::array kEncodeResult = std::to_array<Field>({
    {"code", "", "the bit pattern"},
    {"input", "", "the value as given"},
    {"hex", "", "the pattern in hex"},
    {"input_exact", "", "the input in exact decimal"},
    {"value", "", "its value"},
    {"input_value", "", "the input as a double (null: not finite)"},
    {"exact", "", "the value in exact decimal"},
    {"error_abs", "", "|stored - input|"},
    {"bits", "", "the pattern in binary"},
    {"error_rel", "", "error_abs / |input|"},
    {"format", "", "the format"},
    {"rounding", "", "the rounding mode used"},
    {"class", "", "zero, subnormal, normal, inf or nan"},
    {"saturate", "", "whether overflow saturates to the largest finite value"},
    {"sign", "", "the sign bit"},
    {"fields", "", "{sign, exponent, mantissa} as integers"},
    {"exact_match", "", "stored == input"},
    {"field_bits", "", "{sign, exponent, mantissa} as bit strings"},
    {"unbiased_exponent", "", "the exponent less the bias (null: inf or nan)"},
    {"inexact", "", "the input was rounded"},
    {"significand", "", "the significand in decimal (1.m or 0.m)"},
    {"subnormal", "", "whether the pattern is subnormal"},
    {"overflowed", "", "the input was above the largest finite value"},
    {"formula", "", "sign x significand x 2^exponent"},
    {"next", "", "the next pattern up {class, code, exact, hex, value} (null: none)"},
    {"saturated", "", "the result was clamped to the largest finite value"},
    {"prev", "", "the next pattern down (null: none)"},
    {"ulp", "", "the gap to the next value (null: inf or nan)"},
    {"underflowed", "", "the input rounded to a subnormal or zero"},
    {"ulp_exact", "", "the gap in exact decimal (null: inf or nan)"},
    {"notes", "", "what happened (rounded, overflowed, saturated, ...)"},
    {"became_nan", "", "a non-NaN input stored as NaN"},
    {"nan_input", "", "the input was NaN"},
});
constexpr std::array kCompareResult = std::to_array<Field>({
    {"input", "", "the value as given"},
    {"input_exact", "", "the input in exact decimal"},
    {"input_value", "", "the input as a double (null: not finite)"},
    {"results", "", "the encode result in every format"},
});
constexpr std::array kTableResult = std::to_array<Field>({
    {"format", "", "the format"},
    {"kind", "", "gaps or values"},
    {"binades", "", "gaps: {exponent, low, high, gap, count} per binade"},
    {"codes", "", "values: the non-negative codes (NaN left out), ascending"},
    {"values", "", "values: the value of each of those codes"},
});
constexpr std::array kExploreResult = std::to_array<Field>({
    {"stored", "", "the encode (or decode) result"},
    {"compare", "", "float_compare of the value"},
    {"table", "", "with table: gaps and values"},
    {"blocks", "", "with blocks: block_compare's result"},
    {"blocks_error", "", "with blocks: the error block_compare gave, if any"},
});
constexpr std::array kBatchResult = std::to_array<Field>({
    {"hash", "", "FNV-1a 64 of the codes"},
    {"nan_codes", "", "codes that are NaN"},
    {"first_codes", "", "the first codes"},
    {"format", "", "the format"},
    {"rounding", "", "the rounding mode used"},
    {"saturate", "", "whether overflow saturates"},
    {"count", "", "patterns encoded"},
    {"seed", "", "seed of the pseudo-random patterns"},
    {"first_patterns", "", "the first 8 float32 input bit patterns, as integers"},
});

json float_formats(const json&) {
    json list = json::array();
    for (Format f : all_formats()) {
        const FormatInfo fi = format_info(f);
        const double eps = pow2(-fi.man_bits);
        json eps_obj = brief(f, encode_from_double(f, eps));
        json constants = {{"max", brief(f, max_code(f))},
                          {"min_normal", brief(f, min_normal_code(f))},
                          {"min_subnormal", fi.has_subnormals ? brief(f, min_subnormal_code(f)) : json(nullptr)},
                          {"epsilon", eps_obj},
                          {"canonical_nan", fi.nan != NaN::none ? brief(f, canonical_nan_code(f)) : json(nullptr)},
                          {"finite_count", finite_count(f)}};
        list.push_back(json{{"display_name", format_display_name(f)},
                            {"exponent_bits", fi.exp_bits},
                            {"mantissa_bits", fi.man_bits},
                            {"sign_bits", fi.has_sign ? 1 : 0},
                            {"has_inf", fi.inf != Inf::none},
                            {"has_nan", fi.nan != NaN::none},
                            {"has_negative_zero", fi.has_sign && fi.nan != NaN::neg_zero},
                            {"nan_rule", nan_rule_text(f)},
                            {"can_saturate_or_not", fi.inf != Inf::none || fi.nan != NaN::none},
                            {"constants", constants}});
        list.back().update(TALLY_MEMBERS(fi, name, bits, bias, has_subnormals, default_saturate));
    }
    json roundings = json::array();
    for (int r = 0; r < kRoundCount; ++r)
        roundings.push_back({{"name", round_name((Round)r)}, {"label", round_label((Round)r)}});
    return {{"formats", list}, {"roundings", roundings}};
}

json float_encode(const json& args) {
    const Format f = format_arg(args);
    const ValueArg in = value_arg(args);
    return encode_result(f, in, round_arg(args, f), saturate_arg(args, f));
}

// The same input in every format (the widget's side-by-side table).
json float_compare(const json& args) {
    const ValueArg in = value_arg(args);
    json rows = json::array();
    for (Format f : all_formats()) {
        json row = encode_result(f, in, round_arg(args, f), saturate_arg(args, f));
        row.erase("next");
        row.erase("prev");
        rows.push_back(std::move(row));
    }
    return {{"input", in.text},
            {"input_value", number_or_null(in.value)},
            {"input_exact", exact_decimal(in.value)},
            {"results", rows}};
}

json float_decode(const json& args) {
    const Format f = format_arg(args);
    uint64_t code = code_arg(args, f);
    const FormatInfo fi = format_info(f);
    if (auto bit = optional_number_arg(args, "flip_bit")) {
        const double b = *bit;
        if (!(b >= 0 && b <= fi.bits - 1 && b == std::floor(b)))
            throw InputError("flip_bit", "flip_bit must be a bit index in [0, " + std::to_string(fi.bits - 1) +
                                             "] for " + fi.name + " (bit 0 is the least significant), got " +
                                             format_number(b));
        code ^= 1ull << (int)b;
    }
    return describe(f, code);
}

json float_table(const json& args) {
    const Format f = format_arg(args);
    const FormatInfo fi = format_info(f);
    const std::string kind = optional_string_arg(args, "kind").value_or("gaps");
    if (kind == "values") {
        if (fi.bits > 16)
            throw InputError("kind", std::string("kind \"values\" lists every code, so it needs a format of at most 16 "
                                                 "bits; ") +
                                         fi.name + " has " + std::to_string(fi.bits) + ": use kind \"gaps\"");
        json codes = json::array(), values = json::array();
        for (uint64_t c = 0; c <= fi.max_mag; ++c) {  // non-negative finite values ascend with the code
            if (classify(f, c) == Class::nan) continue;
            codes.push_back(c);
            values.push_back(decode_to_double(f, c));
        }
        return {{"format", fi.name}, {"kind", kind}, {"codes", codes}, {"values", values}};
    }
    if (kind != "gaps") throw InputError("kind", "kind must be \"gaps\" or \"values\", got \"" + kind + "\"");
    json rows = json::array();
    for (const Binade& b : binades(f)) {
        rows.push_back(TALLY_MEMBERS(b, exponent, from, to, gap, count));
        rows.back()["kind"] = b.subnormal ? "subnormal" : "normal";
    }
    return {{"format", fi.name}, {"kind", kind}, {"binades", rows}};
}

// The float explorer's one call: the stored value (encoded, or decoded with flip_bit), every format side by side,
// and on request the gap table and a block comparison (whose bad input goes to blocks_error, not the whole view).
json float_explore(const json& args) {
    const bool from_value = args.contains("value");
    if (from_value && (args.contains("code") || args.contains("hex")))
        throw InputError("value", "give either value (to encode) or code / hex (to decode), not both");
    json out;
    out["stored"] = from_value ? float_encode(args) : float_decode(args);
    json compare_args = {{"value", from_value ? args["value"] : out["stored"]["exact"]}};
    for (const char* key : {"rounding", "saturate"})
        if (args.contains(key)) compare_args[key] = args[key];
    out["compare"] = float_compare(compare_args);
    if (bool_arg(args, "table", false)) {
        const FormatInfo fi = format_info(format_arg(args));
        out["table"] = {{"gaps", float_table({{"format", fi.name}, {"kind", "gaps"}})["binades"]},
                        {"values", fi.bits <= 8 ? float_table({{"format", fi.name}, {"kind", "values"}})["values"]
                                                : json(nullptr)}};
    }
    if (args.contains("blocks")) {
        try {
            out["blocks"] = find_method("block_compare")->fn(args["blocks"]);
        } catch (const InputError& e) {
            out["blocks_error"] = {{"field", e.field()}, {"message", e.what()}};
        }
    }
    return out;
}

// Encodes `count` pseudo-random float bit patterns (splitmix64 of seed + i, low 32 bits) and hashes the codes
// (FNV-1a 64 over each code's bytes, little-endian, ceil(bits/8) bytes): wasm and native must agree.
json float_encode_batch(const json& args) {
    const Format f = format_arg(args);
    const Round rnd = round_arg(args, f);
    const bool sat = saturate_arg(args, f);
    const int64_t count = integer_arg(args, "count", 1, 1 << 24);
    const int64_t seed = optional_integer_arg(args, "seed", 0, (int64_t)1 << 52).value_or(1);
    const int bytes = (format_info(f).bits + 7) / 8;
    uint64_t h = 0xcbf29ce484222325ull;
    json head = json::array(), head_in = json::array();
    uint64_t nan_codes = 0;
    for (int64_t i = 0; i < count; ++i) {
        uint64_t z = (uint64_t)seed + (uint64_t)i * 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        const uint32_t pattern = (uint32_t)z;
        const uint64_t code = encode_from_float(f, bits_float(pattern), rnd, sat);
        for (int b = 0; b < bytes; ++b) {
            h ^= (code >> (8 * b)) & 0xFF;
            h *= 0x100000001b3ull;
        }
        if (classify(f, code) == Class::nan) ++nan_codes;
        if (i < 8) {
            head.push_back(code);
            head_in.push_back(pattern);
        }
    }
    char buf[24];
    std::snprintf(buf, sizeof buf, "%016llx", (unsigned long long)h);
    return {{"format", format_info(f).name},
            {"count", count},
            {"seed", seed},
            {"rounding", round_name(rnd)},
            {"saturate", sat},
            {"hash", buf},
            {"nan_codes", nan_codes},
            {"first_patterns", head_in},
            {"first_codes", head}};
}

constexpr Method kMethods[] = {
    {"float_formats",
     float_formats,
     "every float format with its layout, special-value rules and constants",
     {},
     kFormatsResult,
     true},
    {"float_encode", float_encode,
     "round a number to a format {format, value, saturate?, rounding?}: code, exact value, fields, error", kEncodeArgs,
     kEncodeResult, true},
    {"float_compare", float_compare, "one number in every format side by side {value, saturate?, rounding?}",
     kCompareArgs, kCompareResult, true},
    {"float_decode", float_decode, "decode a bit pattern {format, code | hex, flip_bit?}", kDecodeArgs, kDecodeResult,
     true},
    {"float_table", float_table, "all values of a small format, or the gap between neighbours per binade", kTableArgs,
     kTableResult, true},
    {"float_explore", float_explore,
     "one call for the float explorer {format, value | code | hex, flip_bit?, rounding?, saturate?, table?, blocks?}",
     kExploreArgs, kExploreResult, true},
    {"float_encode_batch", float_encode_batch,
     "encode count pseudo-random float patterns and hash the codes (wasm-vs-native check)", kBatchArgs, kBatchResult,
     true},
};

}  // namespace

std::span<const Method> precision_methods() { return kMethods; }

}  // namespace tally::api
