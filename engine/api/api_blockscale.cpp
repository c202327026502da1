// API of block scaling (blockscale.h): a vector quantized with MX, NV or per-tensor fp8 scaling.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "api_args.h"
#include "tally/api.h"
#include "tally/base/error.h"
#include "tally/numerics/blockscale.h"
#include "tally/numerics/precision.h"
#include "tally/numerics/precision_text.h"

namespace tally::api {

namespace {

using namespace tally::fp;

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
                if (c == ',' || c == ' ' || c == '\n' || c == '\t' || c == ';')
                    flush();
                else
                    token += c;
            }
            flush();
        } else if (it->is_array()) {
            for (size_t i = 0; i < it->size(); ++i) {
                const json& x = (*it)[i];
                const std::string field = "values[" + std::to_string(i) + "]";
                double d;
                if (x.is_number())
                    d = x.get<double>();
                else if (x.is_string())
                    d = parse_value(field.c_str(), x.get<std::string>());
                else
                    throw InputError("values", field + " must be a number");
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
        scales.push_back(
            {{"code", r.scale_codes[b]}, {"hex", code_hex(si.scale, r.scale_codes[b])}, {"value", r.scale_values[b]}});
    json codes = json::array();
    for (uint64_t c : r.codes) codes.push_back(c);
    json out{{"scheme", si.name},
             {"display_name", si.display_name},
             {"element_format", format_info(si.element).name},
             {"scale_format", format_info(si.scale).name},
             {"block_size", si.block_size ? si.block_size : (int)r.codes.size()},
             {"scales", scales},
             {"codes", codes}};
    out.update(TALLY_MEMBERS(r, tensor_scale, dequantized, max_abs_error, rms_error, relative_error, zeroed, saturated,
                             bits_per_value));
    return out;
}

Scheme scheme_from(const std::string& name, const char* field) {
    if (auto s = scheme_from_name(name)) return *s;
    std::string list;
    for (Scheme s : all_schemes()) list += std::string(list.empty() ? "" : ", ") + scheme_info(s).name;
    throw InputError(field, std::string(field) + " must be one of " + list + ", got \"" + name + "\"");
}

using namespace arg;
constexpr Arg kValues = any("values", "depends: required without generate",
                            "the vector: a list of up to 65536 finite numbers, or comma-separated text");
constexpr Arg kGenerate{"generate",
                        Obj,
                        "",
                        -kNo,
                        kNo,
                        "none",
                        "a generated vector instead: {n: 64, seed: 1, scale: 1, outlier: 0, outlier_index: n/3}"};
constexpr std::array kQuantizeArgs{choice("scheme", "required", "the block format",
                                          "mxfp8_e4m3|mxfp8_e5m2|mxfp6_e2m3|mxfp6_e3m2|mxfp4|nvfp4|fp8_tensor"),
                                   kValues, kGenerate};
constexpr std::array kBlockCompareArgs{
    kValues, kGenerate,
    Arg{"schemes", Arr, "", -kNo, kNo, "[\"mxfp4\", \"nvfp4\", \"fp8_tensor\"]", "the block formats compared"}};
constexpr std::array kQuantizeResult = std::to_array<Field>({
    {"scheme", "", "the block format"},
    {"scales", "", "{code, hex, value} per block"},
    {"codes", "", "element codes"},
    {"dequantized", "", "the values read back"},
    {"max_abs_error", "", "largest |error|"},
    {"rms_error", "", "root-mean-square error"},
    {"relative_error", "", "rms error / rms value"},
    {"bits_per_value", "bits", "element bits + the scale's share"},
    {"values", "", "the input vector"},
    {"display_name", "", "the scheme's name for display"},
    {"element_format", "", "the element format"},
    {"scale_format", "", "the block scale's format"},
    {"block_size", "values", "values sharing one scale"},
    {"tensor_scale", "", "the per-tensor scale (1 without one)"},
    {"saturated", "values", "values clamped to the largest element"},
    {"zeroed", "values", "nonzero values stored as zero"},
});
constexpr std::array kBlockCompareResult = std::to_array<Field>({
    {"values", "", "the input vector"},
    {"results", "", "block_quantize's result per scheme"},
});

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
    {"block_quantize", block_quantize_method,
     "quantize a vector with a block format {scheme: mxfp8_e4m3|mxfp8_e5m2|mxfp6_e2m3|mxfp6_e3m2|mxfp4|nvfp4|"
     "fp8_tensor, values | generate}",
     kQuantizeArgs, kQuantizeResult, true},
    {"block_compare", block_compare, "one vector under several block formats {values | generate, schemes?}",
     kBlockCompareArgs, kBlockCompareResult, true},
};

}  // namespace

std::span<const Method> blockscale_methods() { return kMethods; }

}  // namespace tally::api
