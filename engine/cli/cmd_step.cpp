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
#include "tally/step_bands.h"

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

// One run of a validation file: {"id", "args": {step_time arguments}, "published": {"metric", "value"}}, and
// optionally "split" (fit | heldout), "group" {stack, precision, gpu} and "expressible_today" (runs-modern.json).
struct ValidationRun {
    std::string id, metric, half, group, source;
    json args;
    double published = 0;
    bool expressible = true;
};

std::string group_text(const json& group) {
    if (!group.is_object()) return "";
    std::string out;
    for (const char* key : {"stack", "precision", "gpu"}) {
        const std::string part = group.contains(key) && group[key].is_string() ? group[key].get<std::string>() : "?";
        out += (out.empty() ? "" : " / ") + part;
    }
    return out;
}

ValidationRun validation_run(const json& run, std::size_t index, const json& split) {
    const std::string where = "--validate: run " + std::to_string(index);
    const auto bad = [&](const std::string& what) { return InputError("--validate", where + " " + what); };
    if (!run.is_object()) throw bad("must be an object {\"id\", \"args\", \"published\"}");
    ValidationRun out;
    if (!run.contains("id") || !run["id"].is_string()) throw bad("needs \"id\": a string");
    out.id = run["id"].get<std::string>();
    if (!run.contains("args") || !run["args"].is_object()) throw bad("needs \"args\": the step_time arguments");
    out.args = run["args"];
    const json published = run.value("published", json());
    if (!published.is_object() || !published.contains("metric") || !published["metric"].is_string() ||
        !published.contains("value") || !published["value"].is_number())
        throw bad("needs \"published\": {\"metric\": a result name, \"value\": a number}");
    out.metric = published["metric"].get<std::string>();
    out.published = published["value"].get<double>();
    if (!std::isfinite(out.published) || !(out.published > 0))
        throw bad("published value must be a finite number > 0, got " + format_number(out.published));
    if (run.contains("expressible_today") && !run["expressible_today"].is_boolean())
        throw bad("\"expressible_today\" must be true or false");
    out.expressible = run.value("expressible_today", true);
    // The half: the run's own "split", else its source's in the file's split map, else one half "all".
    if (run.contains("split") && run["split"].is_string())
        out.half = run["split"].get<std::string>();
    else if (split.is_object() && run.contains("source_key") && run["source_key"].is_string() &&
             split.contains(run["source_key"].get<std::string>()) &&
             split[run["source_key"].get<std::string>()].is_string())
        out.half = split[run["source_key"].get<std::string>()].get<std::string>();
    else
        out.half = "all";
    out.group = group_text(run.value("group", json()));
    out.source =
        run.contains("source_key") && run["source_key"].is_string() ? run["source_key"].get<std::string>() : out.id;
    return out;
}

// step_time's figure for a published metric: its own result fields, or the per-GPU forms sources publish.
std::optional<double> predicted_metric(const json& r, const std::string& metric) {
    if (metric == "tokens_per_s_per_gpu")
        return r["tokens_per_second"].get<double>() / r["layout"]["gpus"].get<double>();
    // Model TFLOP/s per GPU, as the Llama 3 paper and Megatron publish it (6N + attention, no recompute).
    if (metric == "tflops_per_gpu") return r["model_flops_per_s_per_gpu"].get<double>() / 1e12;
    if (r.contains(metric) && r[metric].is_number()) return r[metric].get<double>();
    return std::nullopt;
}

// Median |error|, share within 20 %, worst (signed, with its run) and count of one set of rows (tally/step/bands.h).
json error_summary_json(const std::vector<const json*>& rows) {
    std::vector<double> errors;
    for (const json* row : rows) errors.push_back((*row)["error"].get<double>());
    const ErrorSummary s = error_summary(errors);
    json out{{"count", s.count}};
    if (s.count == 0) return out;
    out["median_abs_error"] = s.median_abs_error;
    out["median_error"] = s.median_error;
    out["within_20_percent"] = s.within_20_percent;
    out["predicted_faster"] = s.faster_share;
    out["worst_abs_error"] = std::fabs(s.worst_error);
    out["worst"] = {{"id", (*rows[s.worst_index])["id"]}, {"error", s.worst_error}};
    return out;
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

// Predicts every expressible run of a validation file and reports the errors per half (fit, heldout) and
// per group; InputError naming --validate when the file is unreadable or malformed.
int validate(const std::string& path, bool json_output, const std::optional<std::string>& bands_path) {
    // Opened (and refused: a FIFO, a device) before the runs are predicted.
    std::optional<OutputFile> bands_file;
    if (bands_path) bands_file.emplace(*bands_path, "--write-bands");
    const std::string what = "--validate \"" + printable(path, 200) + "\"";
    const json file = parse_json_input(read_config_file(path, "--validate"), "--validate", what);
    if (!file.is_object() || !file.contains("runs") || !file["runs"].is_array())
        throw InputError("--validate", what + " is not a runs file ({\"runs\": [...]})");
    const json split = file.value("split", json());
    json rows = json::array(), skipped = json::array();
    std::vector<BandRun> band_runs;
    std::vector<std::size_t> row_band_run;  // each row's own (known-stack) entry in band_runs
    // The run's kind for the error bands, as step_time looks its band up.
    const auto band_run = [](const json& r, const ValidationRun& run, double error, bool known_stack) {
        const json& layout = r["layout"];
        double compute = 0;
        for (const json& part : r["breakdown"])
            if (part["exposed"].get<bool>() && is_compute_part(part["id"].get<std::string>()))
                compute += part["seconds"].get<double>();
        return BandRun{layout["stack"].get<std::string>(),
                       layout.contains("precision") ? layout["precision"].get<std::string>()
                                                    : run.args.value("dtype", std::string("bf16")),
                       r["hardware"].get<std::string>(),
                       band_regime(compute, r["step_seconds"].get<double>()),
                       run.source,
                       error,
                       known_stack};
    };
    for (std::size_t index = 0; index < file["runs"].size(); ++index) {
        const ValidationRun run = validation_run(file["runs"][index], index, split);
        if (!run.expressible) {
            skipped.push_back({{"id", run.id}, {"half", run.half}});
            continue;
        }
        json r;
        // A validation file's args carry the source's own figures (dp, fsdp, ...) beside step_time's arguments.
        const json args = api::declared_only(run.args, "step_time");
        try {
            r = api::invoke("step_time", args);
        } catch (const InputError& error) {
            throw InputError("--validate", "--validate: run \"" + printable(run.id, 80) + "\": " + error.what());
        }
        const std::optional<double> predicted = predicted_metric(r, run.metric);
        if (!predicted)
            throw InputError("--validate", "--validate: run \"" + printable(run.id, 80) + "\": metric \"" +
                                               printable(run.metric, 80) +
                                               "\" is not a number step_time returns (nor tokens_per_s_per_gpu, "
                                               "tflops_per_gpu)");
        json row{{"id", run.id},
                 {"half", run.half},
                 {"source", run.source},
                 {"metric", run.metric},
                 {"published", run.published},
                 {"predicted", *predicted},
                 {"error", (*predicted - run.published) / run.published}};
        if (!run.group.empty()) row["group"] = run.group;
        row_band_run.push_back(band_runs.size());
        band_runs.push_back(band_run(r, run, row["error"].get<double>(), true));
        row["regime"] = band_runs.back().regime;  // compute-bound or overhead-bound (tally/step/bands.h)
        // The same run as tally predicts it without knowing its software: the bands of a stack without rows.
        json generic_args = args;
        generic_args["stack"] = "generic";
        try {
            const json g = api::invoke("step_time", generic_args);
            const std::optional<double> gp = predicted_metric(g, run.metric);
            if (gp) {
                const double ge = (*gp - run.published) / run.published;
                row["generic_error"] = ge;
                band_runs.push_back(band_run(g, run, ge, false));
                row["generic_regime"] = band_runs.back().regime;
            }
        } catch (const InputError&) {
            // A switch only its own stack has (async TP, ...): no generic prediction, no generic residual.
        }
        rows.push_back(row);
    }
    // Bands from every run; how often a run lies inside the band the other sources' runs give it (leave one source
    // out), for the runs as given and as predicted under "generic".
    const std::vector<BandEntry> bands = band_table(band_runs);
    const BandCoverage loso = leave_one_source_out(band_runs);
    // Each row's band from the other sources' runs, as given (the known-stack run of that row).
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const std::optional<Band>& b = loso.bands[row_band_run[i]];
        const double e = rows[i]["error"].get<double>();
        rows[i]["band"] =
            b ? json{{"lower", b->lower}, {"upper", b->upper},     {"level", b->level},
                     {"key", b->key},     {"widened", b->widened}, {"inside", e >= b->lower && e <= b->upper}}
              : json();
    }
    const auto share = [](std::size_t k, std::size_t n) {
        return n ? static_cast<double>(k) / static_cast<double>(n) : 0.0;
    };
    const json coverage{{"runs", loso.runs},
                        {"with_band", loso.with_band},
                        {"inside_leave_one_source_out_band", share(loso.inside, loso.runs)},
                        {"generic_runs", loso.generic_runs},
                        {"generic_with_band", loso.generic_with_band},
                        {"generic_inside_leave_one_source_out_band", share(loso.generic_inside, loso.generic_runs)}};
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
            {"bands", band_table_json(bands)}};
        bands_file->write(file.dump(1) + "\n");
    }
    // Per source: the figure a new source's first contact is recorded as (BENCHMARKS.md, "First contact").
    json by_source = json::object();
    {
        std::map<std::string, std::vector<const json*>> sources;
        for (const auto& row : rows) sources[row["source"].get<std::string>()].push_back(&row);
        for (const auto& [name, members] : sources) by_source[name] = error_summary_json(members);
    }
    // Halves in file order of first appearance; groups sorted within each half.
    std::vector<std::string> halves;
    for (const auto& row : rows)
        if (std::find(halves.begin(), halves.end(), row["half"].get<std::string>()) == halves.end())
            halves.push_back(row["half"]);
    for (const auto& row : skipped)
        if (std::find(halves.begin(), halves.end(), row["half"].get<std::string>()) == halves.end())
            halves.push_back(row["half"]);
    json by_half = json::object();
    std::vector<const json*> all;
    for (const auto& row : rows) all.push_back(&row);
    for (const std::string& half : halves) {
        std::vector<const json*> members;
        std::map<std::string, std::vector<const json*>> groups;
        for (const auto& row : rows)
            if (row["half"] == half) {
                members.push_back(&row);
                if (row.contains("group")) groups[row["group"].get<std::string>()].push_back(&row);
            }
        json summary = error_summary_json(members);
        summary["skipped_not_expressible"] =
            std::count_if(skipped.begin(), skipped.end(), [&](const json& s) { return s["half"] == half; });
        json group_summaries = json::object();
        for (const auto& [name, group_rows] : groups) group_summaries[name] = error_summary_json(group_rows);
        if (!groups.empty()) summary["groups"] = group_summaries;
        by_half[half] = summary;
    }
    const json overall = error_summary_json(all);
    if (json_output) {
        json out{{"runs", rows},
                 {"skipped", skipped},
                 {"halves", by_half},
                 {"sources", by_source},
                 {"band_coverage", coverage}};
        out["median_abs_error"] = overall.value("median_abs_error", 0.0);
        out["worst_abs_error"] = overall.value("worst_abs_error", 0.0);
        std::cout << out.dump(2) << "\n";
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
    std::cout << "\nmedian |error| " << fixed(100 * overall.value("median_abs_error", 0.0), 1) << "%, worst "
              << fixed(100 * overall.value("worst_abs_error", 0.0), 1) << "% over " << rows.size() << " runs ("
              << skipped.size() << " not expressible, skipped)\n";
    std::cout << "\n| source | runs | median abs error | within 20 % | worst |\n|---|---:|---:|---:|---|\n";
    for (const auto& [name, summary] : by_source.items())
        std::cout << "| " << printable(name, 80) << " " << summary_text(summary) << "\n";
    if (loso.runs > 0)
        std::cout << "\nruns inside the band the other sources give them (leave one source out): "
                  << fixed(100 * coverage["inside_leave_one_source_out_band"].get<double>(), 0) << "% of " << loso.runs
                  << " as given, " << fixed(100 * coverage["generic_inside_leave_one_source_out_band"].get<double>(), 0)
                  << "% of " << loso.generic_runs << " predicted as generic\n";
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
