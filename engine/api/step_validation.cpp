#include "tally/step_validation.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "tally/api.h"
#include "tally/base/error.h"
#include "tally/base/input.h"
#include "tally/step/bands.h"
#include "tally/step_bands.h"

namespace tally {

namespace {

using nlohmann::json;

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

ValidationRun validation_run(const json& run, std::size_t index, const json& split, const std::string& field) {
    const std::string where = field + ": run " + std::to_string(index);
    const auto bad = [&](const std::string& what) { return InputError(field, where + " " + what); };
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

}  // namespace

StepValidation validate_step_runs(const json& file, const std::string& field) {
    if (!file.is_object() || !file.contains("runs") || !file["runs"].is_array())
        throw InputError(field, field + " is not a runs file ({\"runs\": [...]})");
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
        const ValidationRun run = validation_run(file["runs"][index], index, split, field);
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
            throw InputError(field, field + ": run \"" + printable(run.id, 80) + "\": " + error.what());
        }
        const std::optional<double> predicted = predicted_metric(r, run.metric);
        if (!predicted)
            throw InputError(field, field + ": run \"" + printable(run.id, 80) + "\": metric \"" +
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
        // Every metric a source publishes is proportional to throughput, so the run's MFU as published is
        // predicted_mfu / (1 + error): the common axis of chapter 8b's scatter.
        row["predicted_mfu"] = r["mfu"];
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
    json report{
        {"runs", rows}, {"skipped", skipped}, {"halves", by_half}, {"sources", by_source}, {"band_coverage", coverage}};
    report["counts"] = {{"runs", rows.size()},
                        {"skipped", skipped.size()},
                        {"total", rows.size() + skipped.size()},
                        {"sources", by_source.size()}};
    report["median_abs_error"] = overall.value("median_abs_error", 0.0);
    report["worst_abs_error"] = overall.value("worst_abs_error", 0.0);
    return {std::move(report), std::move(halves), band_table_json(bands)};
}

}  // namespace tally
