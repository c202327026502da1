// `tally bench gemm` and `tally bench probe`: measurements of this machine (single core).
// Benchmarks, not tests: they print what they measure; correctness is checked and printed too.
#include <cstdio>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>

#include "cli.h"
#include "commands.h"
#include "tally/api.h"
#include "tally/base/error.h"
#include "tally/base/input.h"
#include "tally/compute/roofline.h"

namespace tally::cli {

namespace {

constexpr const char* kUsage =
    "usage: tally bench gemm [--n 256,512,1024,2048] [--kernel NAME[,NAME...]|all] [--reps 5] [--warmup 3]\n"
    "                        [--min-sample-ms 20] [--json]\n"
    "       tally bench probe [--mib 128] [--reps 5] [--json]\n\n"
    "gemm: GFLOP/s (2 n^3 / median time, min and max in brackets) of each kernel of the GEMM ladder\n"
    "      (naive, ikj, blocked, packed, simd; natively also simd-mt on every core) on n x n fp32 matrices,\n"
    "      single-threaded except simd-mt, with the ratio to\n"
    "      the best kernel of the same size, the max error against a double-precision reference, and the\n"
    "      modelled arithmetic intensity (FLOP/byte of main-memory traffic).\n"
    "probe: peak FLOP/s of independent vector multiply-add chains and main-memory read and triad bandwidth.\n";

std::string fixed(double value, int digits) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
    return buffer;
}

// "[1.5, 2.0]" (snprintf: GCC 12 reports a false -Wrestrict on chained std::string +)
std::string range(double low, double high) {
    char buffer[80];
    std::snprintf(buffer, sizeof buffer, "[%.1f, %.1f]", low, high);
    return buffer;
}

std::string sci(double value) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.1e", value);
    return buffer;
}

std::string pad(std::string text, std::size_t width) {
    if (text.size() < width) text.append(width - text.size(), ' ');
    return text;
}

std::string lpad(std::string text, std::size_t width) {
    if (text.size() < width) text.insert(0, width - text.size(), ' ');
    return text;
}

// Decimal digits only: no sign, spaces or hex ("0x10").
std::optional<long> parse_digits(const std::string& text) {
    if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos)
        return std::nullopt;
    return std::stol(text);
}

// "256,512" -> [256, 512]; InputError naming --n otherwise.
nlohmann::json parse_sizes(std::string_view text) {
    nlohmann::json out = nlohmann::json::array();
    std::stringstream stream{std::string(text)};
    std::string item;
    while (std::getline(stream, item, ',')) {
        const auto value = parse_digits(item);
        if (!value || *value < 1 || *value > 2048)
            throw InputError(
                "--n", "--n must be a comma-separated list of sizes in [1, 2048], got \"" + printable(text, 40) + "\"");
        out.push_back(*value);
    }
    if (out.empty()) throw InputError("--n", "--n must list at least one size");
    return out;
}

long parse_integer(const char* flag, const char* text, long low, long high) {
    const auto value = parse_digits(text);
    if (!value || *value < low || *value > high)
        throw InputError(flag, std::string(flag) + " must be a whole number in [" + std::to_string(low) + ", " +
                                   std::to_string(high) + "], got \"" + printable(text, 40) + "\"");
    return *value;
}

// The flags behind the API fields, so messages name what the user typed.
constexpr Option kGemmFlags[] = {{"--n", "n", Kind::String, ""},
                                 {"--kernel", "kernel", Kind::String, ""},
                                 {"--reps", "reps", Kind::Integer, ""},
                                 {"--warmup", "warmup", Kind::Integer, ""},
                                 {"--min-sample-ms", "min_sample_ms", Kind::Integer, ""}};
constexpr Option kProbeFlags[] = {{"--reps", "samples", Kind::Integer, ""}, {"--mib", "mib", Kind::Integer, ""}};

int report_envelope_error(const nlohmann::json& envelope, std::span<const Option> flags) {
    const auto& error = envelope.at("error");
    return report_input_error("bench", error.at("field").get<std::string>(), error.at("message").get<std::string>(),
                              flags);
}

int print_or_fail(const char* method, const nlohmann::json& args, bool json_output,
                  void (*print)(const nlohmann::json&)) {
    const nlohmann::json envelope = nlohmann::json::parse(api::call(method, args.dump()));
    if (!envelope.at("ok").get<bool>()) return report_envelope_error(envelope, kGemmFlags);
    print_warnings(std::cerr, "bench", envelope.at("result"), kGemmFlags);
    if (json_output)
        std::cout << envelope.at("result").dump(2) << "\n";
    else
        print(envelope.at("result"));
    return kExitOk;
}

// Results carry FLOP/s and bytes/s; the tables print GFLOP/s and GB/s (1e9).
double giga(const nlohmann::json& value) { return value.get<double>() / 1e9; }

void print_gemm(const nlohmann::json& r) {
    std::cout << "GEMM ladder, fp32, single thread, SIMD kernel ISA: " << r.at("isa").get<std::string>() << "\n"
              << "GFLOP/s = 2 n^3 / median time; [min, max] over the samples; error vs double reference\n\n";
    std::cout << pad("kernel", 9) << lpad("n", 6) << lpad("GFLOP/s", 10) << "  " << pad("[min, max]", 17)
              << lpad("vs best", 8) << lpad("max err", 10) << lpad("tol", 10) << lpad("FLOP/B", 8) << "\n";
    for (const auto& row : r.at("rows")) {
        std::cout << pad(row.at("kernel").get<std::string>(), 9) << lpad(std::to_string(row.at("n").get<int>()), 6)
                  << lpad(fixed(giga(row.at("flops_per_s")), 1), 10) << "  "
                  << pad(range(giga(row.at("flops_per_s_min")), giga(row.at("flops_per_s_max"))), 17)
                  << lpad(fixed(row.at("ratio_to_best").get<double>(), 3), 8)
                  << lpad(sci(row.at("max_abs_err").get<double>()), 10)
                  << lpad(sci(row.at("tolerance").get<double>()), 10)
                  << lpad(fixed(row.at("intensity").get<double>(), 1), 8)
                  << (row.at("correct").get<bool>() ? "" : "  WRONG") << "\n";
    }
    if (r.contains("skipped"))
        for (const auto& skip : r.at("skipped"))
            std::cout << "skipped: " << skip.at("kernel").get<std::string>() << " at n = " << skip.at("n").get<int>()
                      << " (" << skip.at("reason").get<std::string>() << ")\n";
}

void print_probe(const nlohmann::json& r) {
    const auto& peak = r.at("peak");
    const auto& bw = r.at("bandwidth");
    std::cout << "peak (" << peak.at("isa").get<std::string>() << ", " << peak.at("lanes").get<int>() << " fp32 lanes, "
              << (peak.at("fma").get<bool>() ? "FMA" : "mul + add") << "): " << fixed(giga(peak.at("flops_per_s")), 1)
              << " GFLOP/s [" << fixed(giga(peak.at("flops_per_s_min")), 1) << ", "
              << fixed(giga(peak.at("flops_per_s_max")), 1) << "]\n"
              << "read bandwidth:  " << fixed(giga(bw.at("read_bytes_per_s")), 1) << " GB/s ["
              << fixed(giga(bw.at("read_bytes_per_s_min")), 1) << ", " << fixed(giga(bw.at("read_bytes_per_s_max")), 1)
              << "]\n"
              << "triad bandwidth: " << fixed(giga(bw.at("triad_bytes_per_s")), 1) << " GB/s ["
              << fixed(giga(bw.at("triad_bytes_per_s_min")), 1) << ", "
              << fixed(giga(bw.at("triad_bytes_per_s_max")), 1) << "]\n"
              << "ridge point:     "
              << fixed(tally::roofline::ridge(peak.at("flops_per_s").get<double>(),
                                              bw.at("read_bytes_per_s").get<double>()),
                       1)
              << " FLOP/byte (peak / read bandwidth)\n";
}

}  // namespace

int cmd_bench(int argc, char** argv) {
    if (argc < 3 || std::string_view(argv[2]) == "--help" || std::string_view(argv[2]) == "-h") {
        (argc < 3 ? std::cerr : std::cout) << kUsage;
        return argc < 3 ? kExitBadInput : kExitOk;
    }
    const std::string_view what = argv[2];
    if (what != "gemm" && what != "probe") {
        std::cerr << "tally bench: unknown benchmark \"" << what << "\" (gemm or probe)\n";
        return kExitBadInput;
    }
    nlohmann::json args = nlohmann::json::object();
    bool json_output = false;
    long reps = 5, mib = 128;
    std::set<std::string_view> seen;
    for (int i = 3; i < argc; ++i) {
        const std::string_view flag = argv[i];
        if (!seen.insert(flag).second)
            throw InputError(printable(flag, 40), printable(flag, 40) + " is given twice; give each option once");
        if (flag == "--json") {
            json_output = true;
            continue;
        }
        if (flag == "--help" || flag == "-h") {
            std::cout << kUsage;
            return kExitOk;
        }
        const bool known = flag == "--n" || flag == "--kernel" || flag == "--reps" || flag == "--warmup" ||
                           flag == "--min-sample-ms" || flag == "--mib";
        if (!known) throw InputError(printable(flag, 40), "unknown option " + printable(flag, 40) + " (see --help)");
        if (i + 1 >= argc) throw InputError(std::string(flag), std::string(flag) + " needs a value");
        const char* value = argv[++i];
        if (flag == "--n" && what == "gemm") {
            args["n"] = parse_sizes(value);
        } else if (flag == "--kernel" && what == "gemm") {
            args["kernel"] = value;
        } else if (flag == "--reps") {
            reps = parse_integer("--reps", value, 1, 100);
        } else if (flag == "--warmup" && what == "gemm") {
            args["warmup"] = parse_integer("--warmup", value, 0, 100);
        } else if (flag == "--min-sample-ms" && what == "gemm") {
            args["min_sample_ms"] = parse_integer("--min-sample-ms", value, 1, 10000);
        } else if (flag == "--mib" && what == "probe") {
            mib = parse_integer("--mib", value, 1, 256);
        } else {
            throw InputError(std::string(flag), "option " + std::string(flag) + " does not apply to `tally bench " +
                                                    std::string(what) + "` (see --help)");
        }
    }
    if (what == "gemm") {
        if (!args.contains("n")) args["n"] = nlohmann::json::array({256, 512, 1024, 2048});
        args["reps"] = reps;
        return print_or_fail("gemm_bench", args, json_output, print_gemm);
    }
    // probe: two methods, one report
    const nlohmann::json peak =
        nlohmann::json::parse(api::call("probe_peak", nlohmann::json{{"samples", reps}}.dump()));
    const nlohmann::json bw =
        nlohmann::json::parse(api::call("probe_bandwidth", nlohmann::json{{"samples", reps}, {"mib", mib}}.dump()));
    for (const auto* envelope : {&peak, &bw})
        if (!envelope->at("ok").get<bool>()) return report_envelope_error(*envelope, kProbeFlags);
    const nlohmann::json result = {{"peak", peak.at("result")}, {"bandwidth", bw.at("result")}};
    if (json_output)
        std::cout << result.dump(2) << "\n";
    else
        print_probe(result);
    return kExitOk;
}

}  // namespace tally::cli
