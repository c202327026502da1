// The JSON API of the precision area: float formats (encode, decode, tables, constants) and block scaling.
// Every number a widget shows about a float format comes from here; the page decodes nothing itself.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "tally/api.h"
#include "tally/blockscale.h"
#include "tally/error.h"
#include "tally/precision.h"
#include "tally/precision_text.h"

namespace tally::api {

namespace {

using namespace tally::fp;

// ---------------------------------------------------------------- argument readers

Format format_arg(const json& args, const char* field = "format") {
    const std::string name = string_arg(args, field);
    if (auto f = format_from_name(name)) return *f;
    throw InputError(field, std::string(field) + " must be one of " + format_names_list() + ", got \"" + name + "\"");
}

Round round_arg(const json& args, Format f) {
    auto name = optional_string_arg(args, "rounding");
    if (!name) return Round::nearest_even;
    auto r = round_from_name(*name);
    if (!r)
        throw InputError("rounding",
                         "rounding must be one of nearest_even (rn), nearest_away (rna), toward_zero (rz), up (ru), "
                         "down (rd), got \"" + *name + "\"");
    (void)f;
    return *r;
}

// saturate: true, false, or absent/null/"default" for the format's NVIDIA default.
bool saturate_arg(const json& args, Format f) {
    auto it = args.find("saturate");
    if (it == args.end() || it->is_null() || (it->is_string() && it->get<std::string>() == "default"))
        return format_info(f).default_saturate;
    return bool_arg(args, "saturate", format_info(f).default_saturate);
}

// The value to encode: a JSON number, or text ("1e-8", "-0", "inf", "nan").
struct ValueArg {
    double value;
    std::string text;
};
ValueArg value_arg(const json& args) {
    auto it = args.find("value");
    if (it == args.end() || it->is_null())
        throw InputError("value", "value is required: a number such as 0.1, 1e-8, -0, inf or nan");
    if (it->is_number()) {
        const double v = it->get<double>();
        return {v, exact_decimal(v)};
    }
    if (it->is_string()) {
        const std::string t = it->get<std::string>();
        return {parse_value("value", t), t};
    }
    throw InputError("value", "value must be a number or a string such as \"1e-8\", got " +
                                  std::string(it->type_name()));
}

// A code from "code" (integer, or hex text) or "hex" (text).
uint64_t code_arg(const json& args, Format f) {
    const FormatInfo fi = format_info(f);
    auto hex = args.find("hex");
    if (hex != args.end() && !hex->is_null()) {
        if (!hex->is_string()) throw InputError("hex", "hex must be a string such as \"0x7e\"");
        return parse_code_text("hex", f, hex->get<std::string>());
    }
    auto code = args.find("code");
    if (code == args.end() || code->is_null())
        throw InputError("code", "code or hex is required: the bit pattern to decode");
    if (code->is_string()) return parse_code_text("code", f, code->get<std::string>());
    const std::string range = "an integer in [0, " + std::to_string(code_mask(fi)) + "] for " + fi.name +
                              (fi.bits > 53 ? " (give 64-bit codes as hex text)" : "");
    if (code->is_number_unsigned()) {
        const uint64_t v = code->get<uint64_t>();
        if (v > code_mask(fi)) throw InputError("code", "code must be " + range + ", got " + std::to_string(v));
        return v;
    }
    if (code->is_number_integer()) throw InputError("code", "code must be " + range + ", got " + code->dump());
    if (code->is_number_float()) {
        const double v = code->get<double>();
        if (!(v >= 0) || v != std::floor(v) || v > (double)code_mask(fi) || v >= 18446744073709551616.0)
            throw InputError("code", "code must be " + range + ", got " + format_number(v));
        return (uint64_t)v;
    }
    throw InputError("code", "code must be " + range);
}

// ---------------------------------------------------------------- result objects

json number_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json brief(Format f, uint64_t code) {
    const double v = decode_to_double(f, code);
    return {{"code", code}, {"hex", code_hex(f, code)}, {"value", number_or_null(v)}, {"exact", exact_decimal(v)},
            {"class", class_name(classify(f, code))}};
}

std::string short_number(double v) {
    std::string e = exact_decimal(v);
    if (e.size() <= 40) return e;
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return std::string("≈") + buf;
}

std::string formula(Format f, uint64_t code) {
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

// The exact significand as text: "1.75" for (1 + 6/8), "0.375" for a subnormal's (0 + 3/8).
std::string significand_text(Format f, uint64_t code) {
    const FormatInfo fi = format_info(f);
    const Fields fl = fields(f, code);
    const Class c = classify(f, code);
    if (c == Class::nan || c == Class::inf) return "";
    const bool lead = c == Class::normal;
    const double sig = ((lead ? (double)(1ull << fi.man_bits) : 0.0) + (double)fl.mantissa) * pow2(-fi.man_bits);
    return exact_decimal(sig);
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
    out["fields"] = {{"sign", fl.sign}, {"exponent", fl.exponent}, {"mantissa", fl.mantissa}};
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
    out["formula"] = formula(f, code);
    out["subnormal"] = c == Class::subnormal;
    uint64_t nb;
    out["next"] = next_up(f, code, &nb) ? brief(f, nb) : json(nullptr);
    out["prev"] = next_down(f, code, &nb) ? brief(f, nb) : json(nullptr);
    const double u = ulp(f, code);
    out["ulp"] = (c == Class::nan || c == Class::inf) ? json(nullptr) : json(u);
    out["ulp_exact"] = (c == Class::nan || c == Class::inf) ? json(nullptr) : json(exact_decimal(u));
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
    return out;
}

// ---------------------------------------------------------------- methods

json float_formats(const json&) {
    json list = json::array();
    for (Format f : all_formats()) {
        const FormatInfo fi = format_info(f);
        const char* nan_rule = fi.nan == NaN::ieee       ? "exponent all ones, mantissa non-zero"
                               : fi.nan == NaN::all_ones ? (fi.man_bits ? "S.1111.111 only (exponent and mantissa all ones)"
                                                                        : "0xFF only")
                               : fi.nan == NaN::neg_zero ? "0x80 only (the would-be negative zero)"
                                                         : "none (NaN inputs become +max)";
        const double eps = pow2(-fi.man_bits);
        json eps_obj = brief(f, encode_from_double(f, eps));
        json constants = {{"max", brief(f, max_code(f))},
                          {"min_normal", brief(f, min_normal_code(f))},
                          {"min_subnormal", fi.has_subnormals ? brief(f, min_subnormal_code(f)) : json(nullptr)},
                          {"epsilon", eps_obj},
                          {"canonical_nan", fi.nan != NaN::none ? brief(f, canonical_nan_code(f)) : json(nullptr)},
                          {"finite_count", finite_count(f)}};
        list.push_back({{"name", fi.name},
                        {"bits", fi.bits},
                        {"exponent_bits", fi.exp_bits},
                        {"mantissa_bits", fi.man_bits},
                        {"sign_bits", fi.has_sign ? 1 : 0},
                        {"bias", fi.bias},
                        {"has_inf", fi.inf != Inf::none},
                        {"has_nan", fi.nan != NaN::none},
                        {"has_negative_zero", fi.has_sign && fi.nan != NaN::neg_zero},
                        {"has_subnormals", fi.has_subnormals},
                        {"nan_rule", nan_rule},
                        {"default_saturate", fi.default_saturate},
                        {"can_saturate_or_not", fi.inf != Inf::none || fi.nan != NaN::none},
                        {"constants", constants}});
    }
    return {{"formats", list},
            {"roundings", {"nearest_even", "nearest_away", "toward_zero", "up", "down"}}};
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
    return {{"input", in.text}, {"input_value", number_or_null(in.value)}, {"input_exact", exact_decimal(in.value)},
            {"results", rows}};
}

json float_decode(const json& args) {
    const Format f = format_arg(args);
    uint64_t code = code_arg(args, f);
    const FormatInfo fi = format_info(f);
    if (auto bit = optional_number_arg(args, "flip_bit")) {
        const double b = *bit;
        if (!(b >= 0 && b <= fi.bits - 1 && b == std::floor(b)))
            throw InputError("flip_bit", "flip_bit must be a bit index in [0, " + std::to_string(fi.bits - 1) + "] for " +
                                             fi.name + " (bit 0 is the least significant), got " + format_number(b));
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
                                                 "bits; ") + fi.name + " has " + std::to_string(fi.bits) +
                                         ": use kind \"gaps\"");
        json codes = json::array(), values = json::array();
        for (uint64_t c = 0; c <= fi.max_mag; ++c) {  // non-negative finite values ascend with the code
            if (classify(f, c) == Class::nan) continue;
            codes.push_back(c);
            values.push_back(decode_to_double(f, c));
        }
        return {{"format", fi.name}, {"kind", kind}, {"codes", codes}, {"values", values}};
    }
    if (kind != "gaps") throw InputError("kind", "kind must be \"gaps\" or \"values\", got \"" + kind + "\"");
    // One row per binade of positive values: its range, the gap between neighbours there and how many values.
    json rows = json::array();
    const int p = fi.man_bits;
    const int emin = fi.has_subnormals ? 1 - fi.bias : -fi.bias;
    const int emax = (int)(fi.max_mag >> p) - fi.bias;
    if (fi.has_subnormals) {
        rows.push_back({{"kind", "subnormal"},
                        {"exponent", emin},
                        {"from", pow2(emin - p)},
                        {"to", decode_to_double(f, (1ull << p) - 1)},
                        {"gap", pow2(emin - p)},
                        {"count", (1ull << p) - 1}});
    }
    for (int e = emin; e <= emax; ++e) {
        const uint64_t first = (uint64_t)(e + fi.bias) << p;
        const uint64_t last = std::min(first | man_mask(fi), fi.max_mag);
        rows.push_back({{"kind", "normal"},
                        {"exponent", e},
                        {"from", decode_to_double(f, first)},
                        {"to", decode_to_double(f, last)},
                        {"gap", pow2(e - p)},
                        {"count", last - first + 1}});
    }
    return {{"format", fi.name}, {"kind", kind}, {"binades", rows}};
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
    return {{"format", format_info(f).name}, {"count", count}, {"seed", seed}, {"rounding", round_name(rnd)},
            {"saturate", sat}, {"hash", buf}, {"nan_codes", nan_codes}, {"first_patterns", head_in},
            {"first_codes", head}};
}

std::vector<double> vector_arg(const json& args) {
    auto it = args.find("values");
    if (it != args.end() && !it->is_null()) {
        std::vector<double> v;
        if (it->is_string()) {
            // "1, 2.5, -3" or whitespace separated
            std::string text = it->get<std::string>(), token;
            size_t index = 0;
            auto flush = [&]() {
                if (token.empty()) return;
                const std::string field = "values[" + std::to_string(index) + "]";
                const double x = parse_value(field.c_str(), token);
                if (!std::isfinite(x)) throw InputError("values", field + " must be finite, got \"" + token + "\"");
                v.push_back(x);
                ++index;
                token.clear();
            };
            for (char c : text) {
                if (c == ',' || c == ' ' || c == '\n' || c == '\t' || c == ';') flush();
                else token += c;
            }
            flush();
        } else if (it->is_array()) {
            for (size_t i = 0; i < it->size(); ++i) {
                const json& x = (*it)[i];
                const std::string field = "values[" + std::to_string(i) + "]";
                double d;
                if (x.is_number()) d = x.get<double>();
                else if (x.is_string()) d = parse_value(field.c_str(), x.get<std::string>());
                else throw InputError("values", field + " must be a number");
                if (!std::isfinite(d)) throw InputError("values", field + " must be finite");
                v.push_back(d);
            }
        } else {
            throw InputError("values", "values must be an array of numbers or a comma-separated string");
        }
        if (v.empty()) throw InputError("values", "values is empty: give at least one number");
        if (v.size() > 65536) throw InputError("values", "values may hold at most 65536 numbers");
        return v;
    }
    auto g = args.find("generate");
    if (g == args.end() || g->is_null())
        throw InputError("values", "values (a list of numbers) or generate {n, seed, scale, outlier} is required");
    if (!g->is_object()) throw InputError("generate", "generate must be an object {n, seed, scale, outlier}");
    const int n = (int)optional_integer_arg(*g, "n", 1, 65536).value_or(64);
    const uint64_t seed = (uint64_t)optional_integer_arg(*g, "seed", 0, (int64_t)1 << 52).value_or(1);
    const double scale = optional_number_arg(*g, "scale").value_or(1.0);
    if (!(scale > 0) || !std::isfinite(scale)) throw InputError("generate.scale", "generate.scale must be > 0");
    const double outlier = optional_number_arg(*g, "outlier").value_or(0.0);
    if (!std::isfinite(outlier)) throw InputError("generate.outlier", "generate.outlier must be finite");
    const int index = (int)optional_integer_arg(*g, "outlier_index", 0, n - 1).value_or(n / 3);
    return demo_vector(seed, n, scale, outlier, index);
}

json block_result_json(const BlockResult& r) {
    const SchemeInfo si = scheme_info(r.scheme);
    json scales = json::array();
    for (size_t b = 0; b < r.scale_codes.size(); ++b)
        scales.push_back({{"code", r.scale_codes[b]},
                          {"hex", code_hex(si.scale, r.scale_codes[b])},
                          {"value", r.scale_values[b]}});
    json codes = json::array();
    for (uint64_t c : r.codes) codes.push_back(c);
    return {{"scheme", si.name},
            {"element_format", format_info(si.element).name},
            {"scale_format", format_info(si.scale).name},
            {"block_size", si.block_size ? si.block_size : (int)r.codes.size()},
            {"tensor_scale", r.tensor_scale},
            {"scales", scales},
            {"codes", codes},
            {"dequantized", r.dequantized},
            {"max_abs_error", r.max_abs_error},
            {"rms_error", r.rms_error},
            {"relative_error", r.relative_error},
            {"zeroed", r.zeroed},
            {"saturated", r.saturated},
            {"bits_per_value", r.bits_per_value}};
}

Scheme scheme_from(const std::string& name, const char* field) {
    if (auto s = scheme_from_name(name)) return *s;
    std::string list;
    for (Scheme s : all_schemes()) list += std::string(list.empty() ? "" : ", ") + scheme_info(s).name;
    throw InputError(field, std::string(field) + " must be one of " + list + ", got \"" + name + "\"");
}

json block_quantize_method(const json& args) {
    const Scheme s = scheme_from(string_arg(args, "scheme"), "scheme");
    const std::vector<double> v = vector_arg(args);
    json out = block_result_json(block_quantize(s, v));
    out["values"] = v;
    return out;
}

json block_compare(const json& args) {
    std::vector<Scheme> schemes;
    auto it = args.find("schemes");
    if (it == args.end() || it->is_null()) {
        schemes = {Scheme::mxfp4, Scheme::nvfp4, Scheme::fp8_tensor};
    } else {
        if (!it->is_array() || it->empty()) throw InputError("schemes", "schemes must be a non-empty list of names");
        for (const json& name : *it) {
            if (!name.is_string()) throw InputError("schemes", "schemes must be a list of names");
            schemes.push_back(scheme_from(name.get<std::string>(), "schemes"));
        }
    }
    const std::vector<double> v = vector_arg(args);
    json results = json::array();
    for (Scheme s : schemes) results.push_back(block_result_json(block_quantize(s, v)));
    return {{"values", v}, {"results", results}};
}

constexpr Method kMethods[] = {
    {"float_formats", float_formats, "every float format with its layout, special-value rules and constants"},
    {"float_encode", float_encode,
     "round a number to a format {format, value, saturate?, rounding?}: code, exact value, fields, error"},
    {"float_compare", float_compare, "one number in every format side by side {value, saturate?, rounding?}"},
    {"float_decode", float_decode, "decode a bit pattern {format, code | hex, flip_bit?}"},
    {"float_table", float_table, "all values of a small format, or the gap between neighbours per binade"},
    {"float_encode_batch", float_encode_batch,
     "encode count pseudo-random float patterns and hash the codes (wasm-vs-native check)"},
    {"block_quantize", block_quantize_method,
     "quantize a vector with a block format {scheme: mxfp8_e4m3|mxfp8_e5m2|mxfp6_e2m3|mxfp6_e3m2|mxfp4|nvfp4|"
     "fp8_tensor, values | generate}"},
    {"block_compare", block_compare, "one vector under several block formats {values | generate, schemes?}"},
};

}  // namespace

std::span<const Method> precision_methods() { return kMethods; }

}  // namespace tally::api
