// `tally step` (API step_time), `tally step --validate [FILE | --runs FILE]` (published runs, error table) and
// `tally plan` (API plan).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <optional>
#include <string_view>

#include "cli.h"
#include "commands.h"
#include "tally/api.h"
#include "tally/base/error.h"
#include "tally/base/input.h"
#include "tally/step/bands.h"
#include "tally/step_bands.h"
#include "tally/step_validation.h"

namespace tally::cli {

namespace {

using nlohmann::json;

// Flag rules, then --config FILE through the same bounded reader as every command (a FIFO or a
// directory is refused, never read), and the negative flags as API booleans.
void load_config(json& args) {
    reject_together(args, step_options("step"), "model", "config_path", "give a preset or a config file");
    if (!args.contains("gpus")) throw InputError("--gpus", "--gpus is required: the number of GPUs in total, >= 1");
    if (args.contains("no_overlap_grad_reduce")) {
        args.erase("no_overlap_grad_reduce");
        args["overlap_grad_reduce"] = false;
    }
    fix_flags(args);
}

std::string fixed(double value, int digits) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
    return buffer;
}

std::string seconds_text(double s) {
    if (s >= 1) return fixed(s, 3) + " s";
    if (s >= 1e-3) return fixed(s * 1e3, 2) + " ms";
    return fixed(s * 1e6, 1) + " µs";
}

std::string layout_text(const json& l) {
    std::string text =
        "tp " + std::to_string(l["tp"].get<long long>()) + " · pp " + std::to_string(l["pp"].get<long long>()) +
        (l.contains("cp") ? " · cp " + std::to_string(l["cp"].get<long long>()) : "") + " · dp " +
        std::to_string(l["dp"].get<long long>()) + " · ZeRO " + std::to_string(l["zero"].get<long long>());
    if (l["sequence_parallel"].get<bool>()) text += " · SP";
    if (l["interleave"].get<long long>() > 1) text += " · v " + std::to_string(l["interleave"].get<long long>());
    text += " · b " + std::to_string(l["micro_batch"].get<long long>()) + " · recompute " +
            l["recompute"].get<std::string>();
    return text;
}

void print_breakdown(std::ostream& out, const json& r) {
    std::vector<std::pair<std::string, std::string>> rows;
    for (const auto& part : r["breakdown"]) {
        const double s = part["seconds"].get<double>();
        if (s <= 0) continue;
        rows.push_back(
            {"  " + part["name"].get<std::string>(),
             seconds_text(s) + (part["exposed"].get<bool>() ? "  (" + fixed(100 * part["share"].get<double>(), 1) + "%)"
                                                            : "  (hidden)")});
    }
    print_table(out, rows);
}

void print_step(std::ostream& out, const json& r) {
    out << layout_text(r["layout"]) << " on " << r["layout"]["gpus"].get<long long>() << " × "
        << r["hardware"].get<std::string>()
        << (r["layout"].contains("precision") ? " in " + r["layout"]["precision"].get<std::string>() : "")
        << (r["layout"].contains("stack") ? ", stack " + r["layout"]["stack"].get<std::string>() : "")
        << (r["layout"].contains("fabric") ? ", fabric " + r["layout"]["fabric"].get<std::string>() : "") << "\n";
    print_table(out, {{"step time", seconds_text(r["step_seconds"].get<double>())},
                      {"tokens/s (cluster)", human(r["tokens_per_second"].get<double>())},
                      {"model TFLOP/s per GPU", fixed(r["model_flops_per_s_per_gpu"].get<double>() / 1e12, 1)},
                      {"MFU", fixed(100 * r["mfu"].get<double>(), 1) + "%"},
                      {"HFU", fixed(100 * r["hfu"].get<double>(), 1) + "%"},
                      {"micro-batches per step", std::to_string(r["microbatches"].get<long long>())},
                      {"bubble (p-1)/(v·m)", fixed(100 * r["bubble_fraction"].get<double>(), 1) + "%"},
                      {"matmul efficiency", fixed(100 * r["matmul_efficiency"].get<double>(), 1) + "% of peak"},
                      {"memory per GPU", fixed(r["memory_bytes"].get<double>() / 1e9, 1) + " GB" +
                                             (r["fits"].get<bool>() ? " (fits)" : " (does NOT fit)")}});
    if (r["interleave_extra_bytes"].get<double>() > 0)
        print_table(out, {{"  of which interleaving", fixed(r["interleave_extra_bytes"].get<double>() / 1e9, 1) +
                                                          " GB (first stage, Korthikanti et al. 2022 sec. 4.2.3)"}});
    const json& band = r["band"];
    print_table(out, {{"error band", band.is_object()
                                         ? "±" + fixed(100 * band["half_width"].get<double>(), 0) + " % (80 % of " +
                                               (band["level"] == "regime (fit half)" ? "fit-half" : "held-out") +
                                               " runs of kind " + band["key"].get<std::string>() + ", " +
                                               std::to_string(band["runs"].get<long long>()) + " runs)"
                                         : "none (no held-out runs of this kind)"}});
    out << "where the step goes (per GPU):\n";
    print_breakdown(out, r);
}

void print_plan(std::ostream& out, const json& r) {
    out << r["evaluated"].get<long long>() << " layouts evaluated, " << r["fit"].get<long long>() << " fit in memory, "
        << r["rejected_memory"].get<long long>() << " do not\n\n";
    int rank = 1;
    for (const auto& row : r["best"]) {
        out << "#" << rank++ << "  " << layout_text(row["layout"]) << "\n";
        print_table(
            out, {{"  MFU", fixed(100 * row["mfu"].get<double>(), 1) + "%"},
                  {"  step time", seconds_text(row["step_seconds"].get<double>())},
                  {"  tokens/s",
                   human(row["tokens_per_second"].get<double>()) +
                       (row["band"].is_object() ? " ±" + fixed(100 * row["band"]["half_width"].get<double>(), 0) + " %"
                                                : "")},
                  {"  memory per GPU", fixed(row["memory_bytes"].get<double>() / 1e9, 1) + " GB"}});
        print_breakdown(out, row);
        out << "\n";
    }
    out << "why the others lose (main extra cost per token over #1):\n";
    for (const auto& loser : r["losers"]) {
        out << "  " << loser["count"].get<long long>() << " × " << loser["reason"].get<std::string>() << "; e.g. "
            << layout_text(loser["example"]);
        if (loser["mfu"].get<double>() > 0) out << " (MFU " << fixed(100 * loser["mfu"].get<double>(), 1) << "%)";
        out << "\n";
    }
}

std::string metric_value_text(const std::string& metric, double value) {
    if (metric == "mfu" || metric == "hfu") return fixed(100 * value, 1) + "%";
    return fixed(value, value >= 100 ? 0 : 1);
}

std::string summary_text(const json& s) {
    if (s["count"].get<std::size_t>() == 0) return "| 0 | | | |";
    const double worst = s["worst"]["error"].get<double>();
    return "| " + std::to_string(s["count"].get<std::size_t>()) + " | " +
           fixed(100 * s["median_abs_error"].get<double>(), 1) + "% | " +
           fixed(100 * s["within_20_percent"].get<double>(), 0) + "% | " + (worst >= 0 ? "+" : "") +
           fixed(100 * worst, 1) + "% (" + printable(s["worst"]["id"].get<std::string>(), 80) + ") |";
}

// Prints the scores validate_step_runs (tally/step_validation.h) gives a validation file: per half (fit, heldout),
// group and source; InputError naming --validate when the file is unreadable or malformed.
int validate(const std::string& path, bool json_output, const std::optional<std::string>& bands_path) {
    // Opened (and refused: a FIFO, a device) before the runs are predicted.
    std::optional<OutputFile> bands_file;
    if (bands_path) bands_file.emplace(*bands_path, "--write-bands");
    const std::string what = "--validate \"" + printable(path, 200) + "\"";
    const json file = parse_json_input(read_config_file(path, "--validate"), "--validate", what);
    if (!file.is_object() || !file.contains("runs") || !file["runs"].is_array())
        throw InputError("--validate", what + " is not a runs file ({\"runs\": [...]})");
    StepValidation scored = validate_step_runs(file, "--validate");
    const json& rows = scored.report["runs"];
    const json& skipped = scored.report["skipped"];
    const json& by_half = scored.report["halves"];
    const json& by_source = scored.report["sources"];
    const json& coverage = scored.report["band_coverage"];
    const std::vector<std::string>& halves = scored.half_order;
    if (bands_file) {
        const json file{
            {"description",
             "Error bands of step_time (tally/step/bands.h): per kind of run (stack / precision / hardware / regime, "
             "stack / hardware / regime, stack / precision / regime, stack / regime from the runs predicted with their "
             "own stack; any stack / hardware / regime, any stack / regime, any stack from the same runs predicted as "
             "generic; regime: overhead-bound when more than a quarter of the predicted step is not compute), the "
             "order-statistic interval of the signed errors (predicted - published) / published that holds 80 % of "
             "a new run, over every expressible run of content/validation/runs-modern.json, kinds with at least 9 "
             "runs; 'hardware median' rows widen the band of a GPU without rows. Generated: do not edit."},
            {"command",
             "tally step --validate --runs content/validation/runs-modern.json --write-bands "
             "content/presets/step-bands/heldout.json"},
            {"coverage", kBandCoverage},
            {"min_runs", kBandMinRuns},
            {"bands", scored.bands}};
        bands_file->write(file.dump(1) + "\n");
    }
    if (json_output) {
        std::cout << scored.report.dump(2) << "\n";
        return kExitOk;
    }
    std::cout << "| run | half | metric | published | predicted | error |\n|---|---|---|---:|---:|---:|\n";
    for (const auto& row : rows) {
        const std::string metric = row["metric"];
        std::cout << "| " << printable(row["id"].get<std::string>(), 80) << " | "
                  << printable(row["half"].get<std::string>(), 20) << " | " << printable(metric, 80) << " | "
                  << metric_value_text(metric, row["published"]) << " | " << metric_value_text(metric, row["predicted"])
                  << " | " << (row["error"].get<double>() >= 0 ? "+" : "") << fixed(100 * row["error"].get<double>(), 1)
                  << "% |\n";
    }
    std::cout << "\n| half / group | runs | median abs error | within 20 % | worst |\n|---|---:|---:|---:|---|\n";
    for (const std::string& half : halves) {
        const json& s = by_half[half];
        std::cout << "| **" << printable(half, 20) << "** (" << s["skipped_not_expressible"].get<std::size_t>()
                  << " not expressible, skipped) " << summary_text(s) << "\n";
        if (s.contains("groups"))
            for (const auto& [name, g] : s["groups"].items())
                std::cout << "| " << printable(half, 20) << ": " << printable(name, 120) << " " << summary_text(g)
                          << "\n";
    }
    std::cout << "\nmedian |error| " << fixed(100 * scored.report["median_abs_error"].get<double>(), 1) << "%, worst "
              << fixed(100 * scored.report["worst_abs_error"].get<double>(), 1) << "% over " << rows.size() << " runs ("
              << skipped.size() << " not expressible, skipped)\n";
    std::cout << "\n| source | runs | median abs error | within 20 % | worst |\n|---|---:|---:|---:|---|\n";
    for (const auto& [name, summary] : by_source.items())
        std::cout << "| " << printable(name, 80) << " " << summary_text(summary) << "\n";
    if (coverage["runs"].get<std::size_t>() > 0)
        std::cout << "\nruns inside the band the other sources give them (leave one source out): "
                  << fixed(100 * coverage["inside_leave_one_source_out_band"].get<double>(), 0) << "% of "
                  << coverage["runs"].get<std::size_t>() << " as given, "
                  << fixed(100 * coverage["generic_inside_leave_one_source_out_band"].get<double>(), 0) << "% of "
                  << coverage["generic_runs"].get<std::size_t>() << " predicted as generic\n";
    return kExitOk;
}

// step's usage, for --help in both modes.
constexpr const char* kStepUsage =
    "usage: tally step --model PRESET|--config FILE --hardware ID --gpus N --tp T --pp P [--zero Z]\n"
    "                  [--seq S] [--micro-batch B] [--global-batch G] [--recompute none|selective|full]\n"
    "                  [--flash-attn] [--sequence-parallel] [--interleave V] [--gpus-per-node K]\n"
    "                  [--decoder-seq S] [--encoder-head model|masked_lm|pretraining] [--json]\n"
    "       tally step --validate [FILE | --runs FILE] [--write-bands OUT] [--json]   (published runs; default\n"
    "                  content/validation/runs.json; per half fit/heldout and group when the file has them)\n"
    "Predicted time of one training step per GPU: matmuls, memory-bound kernels, collectives, the\n"
    "pipeline bubble, gradient reduction and the optimizer step; MFU and HFU are outputs.";

}  // namespace

int cmd_step(int argc, char** argv) {
    for (int i = 2; i < argc; ++i)
        if (std::string_view(argv[i]) == "--validate") {
            bool json_output = false, help = false;
            std::optional<std::string> path, bands_path;
            // Each option once, every value non-empty and not an option (as parse_options does for the other modes).
            const auto value_of = [&](int& k, std::string_view flag, std::optional<std::string>& into) {
                if (into) throw InputError(std::string(flag), std::string(flag) + " is given twice; give it once");
                const std::string_view a = argv[k];
                if (a.size() > flag.size() && a[flag.size()] == '=') {
                    into = std::string(a.substr(flag.size() + 1));
                } else {
                    if (k + 1 >= argc || std::string_view(argv[k + 1]).rfind("--", 0) == 0)
                        throw InputError(std::string(flag), std::string(flag) + " needs a value: a file path");
                    into = argv[++k];
                }
                if (into->empty())
                    throw InputError(std::string(flag), std::string(flag) + " needs a file path, got an empty one");
            };
            try {
                for (int k = 2; k < argc; ++k) {
                    const std::string_view a = argv[k];
                    if (k == i) continue;
                    const auto is = [&](std::string_view flag) {
                        return a == flag || (a.rfind(flag, 0) == 0 && a.size() > flag.size() && a[flag.size()] == '=');
                    };
                    if (a == "--json") {
                        if (json_output) throw InputError("--json", "--json is given twice; give it once");
                        json_output = true;
                    } else if (a == "--help" || a == "-h") {
                        help = true;
                    } else if (is("--write-bands")) {
                        value_of(k, "--write-bands", bands_path);
                    } else if (is("--runs")) {
                        value_of(k, "--runs", path);
                    } else if (k == i + 1 && a.substr(0, 2) != "--" && !path) {
                        if (a.empty()) throw InputError("--validate", "--validate needs a file path, got an empty one");
                        path = std::string(a);
                    } else {
                        throw InputError(
                            "--validate",
                            "--validate takes only [FILE] or --runs FILE, --write-bands FILE and --json, got \"" +
                                printable(a, 40) + "\"" + (a == "--validate" ? " again" : ""));
                    }
                }
                if (help) {
                    std::cout << kStepUsage << "\n";
                    return kExitOk;
                }
                return validate(path.value_or("content/validation/runs.json"), json_output, bands_path);
            } catch (const InputError& error) {
                return report_input_error("step", error.field(), error.what(), step_options("step"));
            }
        }
    return simple_command(argc, argv, "step", "step_time", kStepUsage, step_options("step"), print_step, load_config);
}

std::span<const Option> step_options(std::string_view command) {
    // Every declared argument is a flag (cli.h, declared_options); these are the ones the CLI sets another way.
    const Replace config{"hf_config", {kConfigOption}};
    const Replace dropout{"dropout", {kNoDropout}};
    const Replace cp_load_balance{"cp_load_balance", {kNoCpLoadBalance}};
    const Replace overlap{"overlap_grad_reduce",
                          {{"--no-overlap-grad-reduce", "no_overlap_grad_reduce", Kind::Flag,
                            "gradient reduction after the last backward (Megatron-LM before Megatron-Core, "
                            "DeepSpeed pipelines)"}}};
    static const std::vector<Option> step = declared_options("step_time", {config, dropout, cp_load_balance, overlap});
    // plan searches these (plan.h): a value given would be overwritten, so they take no flag.
    static const std::vector<Option> plan = declared_options("plan", {config,
                                                                      dropout,
                                                                      cp_load_balance,
                                                                      overlap,
                                                                      {"tp"},
                                                                      {"pp"},
                                                                      {"zero"},
                                                                      {"micro_batch"},
                                                                      {"recompute"},
                                                                      {"sequence_parallel"},
                                                                      {"interleave"},
                                                                      {"virtual_stages"}});
    if (command == "step") return step;
    if (command == "plan") return plan;
    return {};
}

int cmd_plan(int argc, char** argv) {
    return simple_command(
        argc, argv, "plan", "plan",
        "usage: tally plan --model PRESET|--config FILE --hardware ID --gpus N [--seq S] [--global-batch G]\n"
        "                  [--flash-attn] [--recipe R] [--decoder-seq S] [--encoder-head H] [--top K] [--json]\n"
        "Every layout (tp, pp, ZeRO, SP, interleave, micro-batch, recompute) that fits in memory, ranked by\n"
        "predicted throughput, with the main reason the others lose.",
        step_options("plan"), print_plan, load_config);
}

}  // namespace tally::cli
