// `tally float`: encode a number in a float format, or decode a bit pattern, bit-exactly.
//   tally float --format e4m3 --value 500            448 (saturated), code 0x7e
//   tally float --format fp16 --value 1e-8 --json    the float_encode API result
//   tally float --format e4m3 --code 0x7e            decode
//   tally float --all --value 0.1                    every format side by side
#include <iostream>
#include <ostream>
#include <string>

#include "cli.h"
#include "commands.h"
#include "tally/api.h"
#include "tally/base/error.h"

namespace tally::cli {

namespace {

// The engine's float formats, "fp64 fp32 ... e8m0" (float_formats), for the help and the missing --format message.
std::string format_names() {
    std::string names;
    const nlohmann::json table = api::invoke("float_formats", nlohmann::json::object());
    for (const auto& f : table["formats"]) names += (names.empty() ? "" : " ") + f["name"].get<std::string>();
    return names;
}

// float_explore declares every argument encode and decode take (cli.h, declared_options); the CLI spells the hex
// code --code, makes saturation a switch each way, and adds --all (float_compare).
const std::vector<Option>& float_options() {
    static const std::string format_help = "a float format: " + format_names() + " (required unless --all)";
    static const std::vector<Option> options = [] {
        std::vector<Option> out = declared_options(
            "float_explore",
            {{"format", {{"--format", "format", Kind::String, format_help.c_str()}}},
             {"code"},
             {"hex", {{"--code", "hex", Kind::String, nullptr}}},
             {"saturate",
              {{"--saturate", "saturate", Kind::Flag, "overflow gives +-max (default for fp8/fp6/fp4/e8m0)"},
               {"--no-saturate", "no_saturate", Kind::Flag,
                "overflow gives inf, or NaN where there is no inf (IEEE default)"}}},
             {"table"}});
        out.push_back({"--all", "all", Kind::Flag, "with --value: every format side by side"});
        return out;
    }();
    return options;
}

constexpr const char* kUsage =
    "usage: tally float --format NAME --value X [--no-saturate] [--rounding MODE] [--json]\n"
    "       tally float --format NAME --code 0xHH [--flip-bit I] [--json]\n"
    "       tally float --all --value X [--json]\n"
    "Rounds X to the format exactly as NVIDIA's conversion code does, or decodes a bit pattern.";

std::string text(const nlohmann::json& v) {
    if (v.is_null()) return "-";
    if (v.is_string()) return v.get<std::string>();
    if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
    return v.dump();
}

// The engine's own sentences about what storing did (tally::fp::store_notes), one line.
std::string joined_notes(const nlohmann::json& r) {
    std::string all;
    for (const auto& note : r["notes"]) all += (all.empty() ? "" : "; ") + note["text"].get<std::string>();
    return all;
}

void print_one(std::ostream& out, const nlohmann::json& r) {
    std::vector<std::pair<std::string, std::string>> rows;
    if (r.contains("input")) rows.push_back({"input (exact)", text(r["input_exact"])});
    rows.push_back({"format", text(r["format"])});
    rows.push_back({"code", text(r["hex"]) + "  (" + text(r["code"]) + ")"});
    rows.push_back({"bits (s|e|m)", text(r["field_bits"]["sign"]) + "|" + text(r["field_bits"]["exponent"]) + "|" +
                                        text(r["field_bits"]["mantissa"])});
    rows.push_back({"class", text(r["class"])});
    rows.push_back({"value (exact)", text(r["exact"])});
    rows.push_back({"formula", text(r["formula"])});
    if (r.contains("error_abs"))
        rows.push_back({"error (abs, rel)", text(r["error_abs"]) + ", " + text(r["error_rel"])});
    if (const std::string what = joined_notes(r); !what.empty()) rows.push_back({"note", what});
    rows.push_back({"ulp", text(r["ulp_exact"])});
    rows.push_back({"next up", r["next"].is_null() ? "-" : text(r["next"]["hex"]) + " = " + text(r["next"]["exact"])});
    rows.push_back(
        {"next down", r["prev"].is_null() ? "-" : text(r["prev"]["hex"]) + " = " + text(r["prev"]["exact"])});
    print_table(out, rows);
}

void print_all(std::ostream& out, const nlohmann::json& r) {
    std::vector<std::pair<std::string, std::string>> rows;
    rows.push_back({"input (exact)", text(r["input_exact"])});
    for (const auto& row : r["results"]) {
        rows.push_back({text(row["format"]), text(row["hex"]) + "  " + text(row["exact"]) + "  " + joined_notes(row)});
    }
    print_table(out, rows);
}

}  // namespace

int cmd_float(int argc, char** argv) {
    Parsed parsed;
    try {
        parsed = parse_options(argc, argv, 2, float_options());
        if (!parsed.help) {
            const nlohmann::json& a = parsed.args;
            reject_unless(a, float_options(), "flip_bit", a.contains("hex"),
                          "with --code (it flips a bit of the code)");
            for (const char* key : {"rounding", "saturate", "no_saturate"})
                reject_unless(a, float_options(), key, !a.contains("hex"),
                              "when encoding a --value (decoding is exact)");
            reject_together(a, float_options(), "format", "all", "--all shows every format");
        }
    } catch (const InputError& error) {
        return report_input_error("float", error.field(), error.what(), float_options());
    }
    if (parsed.help) {
        print_usage(std::cout, kUsage, float_options());
        return kExitOk;
    }
    nlohmann::json& args = parsed.args;
    if (args.contains("no_saturate")) {
        if (args.contains("saturate")) {
            std::cerr << "tally float: --saturate and --no-saturate contradict each other\n";
            return kExitBadInput;
        }
        args.erase("no_saturate");
        args["saturate"] = false;
    }
    const bool all = args.contains("all");
    args.erase("all");
    const bool decode = args.contains("hex");
    if (decode && args.contains("value")) {
        std::cerr << "tally float: give --value (to encode) or --code (to decode), not both\n";
        return kExitBadInput;
    }
    if (!decode && !args.contains("value")) {
        std::cerr << "tally float: --value or --code is required\n\n";
        print_usage(std::cerr, kUsage, float_options());
        return kExitBadInput;
    }
    if (!all && !args.contains("format")) {
        std::cerr << "tally float: --format is required (" << format_names() << "), or --all\n";
        return kExitBadInput;
    }
    if (all && decode) {
        std::cerr << "tally float: --all works with --value\n";
        return kExitBadInput;
    }
    const char* method = all ? "float_compare" : decode ? "float_decode" : "float_encode";
    if (all) args.erase("format");
    return run_method("float", method, parsed, float_options(), all ? print_all : print_one);
}

}  // namespace tally::cli
