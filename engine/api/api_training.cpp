// API of training time (training.h): 6ND or exact FLOPs -> seconds, GPU-seconds and cost, and MFU
// from a measured throughput.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "api_args.h"
#include "tally/api.h"
#include "tally/base/error.h"
#include "tally/compute/flops.h"
#include "tally/hardware/hardware.h"
#include "tally/base/input.h"
#include "tally/model/model.h"
#include "tally/model/params.h"
#include "tally/compute/training.h"

namespace tally::api {

namespace {

using u64 = std::uint64_t;

// ---------------------------------------------------------------- declarations
using namespace arg;
constexpr Arg kPeakDtype = only(text("dtype", "bf16", "dtype whose peak the hardware preset gives"), given("hardware"));
constexpr Arg kPeakFlops{.name = "peak_flops_per_s",
                         .type = Num,
                         .unit = "FLOP/s",
                         .low = 0,
                         .fallback = "none",
                         .doc = "one GPU's peak (instead of hardware)",
                         .flag = "--peak-flops",
                         .low_open = true};
constexpr Arg kPeakTflops{"peak_tflops",
                          Num,
                          "TFLOP/s",
                          0,
                          std::numeric_limits<double>::max() / 1e12,
                          "none",
                          "one GPU's peak in TFLOP/s",
                          nullptr,
                          nullptr,
                          true};
constexpr Arg kPeakHardware =
    text("hardware", "depends: required without peak_flops_per_s", "a hardware preset id: its peak at dtype");
constexpr Arg kParams =
    number("params", "parameters", "depends: required without model", "parameter count N (6ND only)");
constexpr Arg kFlopsBasis = choice("flops_basis", "depends: exact with a model, six_nd with params",
                                   "what the FLOPs count", "exact|six_nd|six_nd_active");
constexpr Arg kRunGpus = integer("gpus", "GPUs", 1, kMaxGpus, "required", "GPUs in the run");
constexpr std::array kPeakArgs{kPeakDtype, kPeakFlops, kPeakTflops, kPeakHardware};
constexpr std::array kPerTokenArgs{kParams, kFlopsBasis};
constexpr std::array kTrainingOwn{
    Arg{"tokens", Num, "tokens", 0, kNo, "required", "training tokens", nullptr, nullptr, true},
    any("mfu", "required",
        "model FLOPs utilization in (0, 1], or \"predicted\": the step-time model's for the layout given"),
    number("dollars_per_gpu_hour", "$/GPU-hour", "none", "price of one GPU-hour: the cost", "--price"),
};
// In the order training_cost reads them (the FLOPs per token, tokens, the peak, gpus, mfu, the price), so a call
// with several bad arguments is refused for the same one as before the declarations.
constexpr auto kMfuOwnArgs =
    merge_args(kModelArgs, kFlopsArgs, kPerTokenArgs,
               std::array{Arg{"tokens_per_second", Num, "tokens/s", 0, kNo, "required",
                              "measured training throughput of the whole run", nullptr, nullptr, true}},
               kPeakArgs, std::array{kRunGpus});

// An argument the other inputs would ignore is refused, not dropped (the model's shape needs a model: api_args.h):
// the step-time layout (the arguments mfu lacks) needs mfu "predicted"; pp counts per stage with recomputed layers,
// or is the layout's.
template <std::size_t N>
constexpr ArgList<N> with_applies(ArgList<N> list, bool predicts) {
    const auto in_mfu = [](std::string_view name) {  // or training_cost's own: tokens, mfu, the price
        for (const Arg& a : kMfuOwnArgs.span())
            if (name == a.name) return true;
        for (const Arg& a : kTrainingOwn)
            if (name == a.name) return true;
        return false;
    };
    for (std::size_t i = 0; i < list.size; ++i) {
        Arg& a = list.items[i];
        const std::string_view name = a.name;
        if (name == "pp")
            a.applies.any_of = {given("recompute_layers"), predicts ? one_of("mfu", "predicted") : Cond{}};
        else if (predicts && !in_mfu(name))
            a.applies.any_of = {one_of("mfu", "predicted"), Cond{}};
    }
    return list;
}
constexpr auto kTrainingArgs =
    with_applies(merge_args(kModelArgs, kFlopsArgs, kPerTokenArgs, std::array{kTrainingOwn[0]}, kPeakArgs,
                            std::array{kRunGpus, kTrainingOwn[1], kTrainingOwn[2]}, kStepArgs),
                 true);
constexpr auto kMfuArgs = with_applies(kMfuOwnArgs, false);
constexpr std::array kTrainingOwnResult = std::to_array<Field>({
    {"flops_basis", "", "what total_flops counts"},
    {"tokens", "tokens", "training tokens"},
    {"total_flops", "FLOP", "FLOPs the run executes"},
    {"six_nd", "FLOP", "6 x N x tokens"},
    {"peak_flops_per_s", "FLOP/s", "one GPU's peak"},
    {"gpus", "GPUs", "GPUs in the run"},
    {"mfu", "", "utilization used"},
    {"cluster_flops_per_s", "FLOP/s", "gpus x peak x mfu"},
    {"seconds", "s", "wall-clock training time"},
    {"gpu_seconds", "GPU-s", "seconds x gpus"},
    {"tokens_per_second", "tokens/s", "the data rate the run sustains"},
    {"cost_dollars", "$", "with dollars_per_gpu_hour: GPU-hours x price"},
    {"flops", "", "with a model: the flops method's answer"},
    {"model", "", "the resolved tally config"},
    {"hardware", "", "the hardware preset's record"},
    {"dtype", "", "the compute dtype whose peak is used"},
    {"dollars_per_gpu_hour", "$/GPU-h", "the price per GPU-hour used"},
    {"tokens_per_second_per_gpu", "tokens/s", "tokens per second each GPU trains at this mfu"},
});
constexpr std::array kMfuResult = std::to_array<Field>({
    {"model_flops_per_token", "FLOP", "model FLOPs per token"},
    {"hardware_flops_per_token", "FLOP", "executed FLOPs per token (recomputation included)"},
    {"achieved_flops_per_s", "FLOP/s", "model FLOPs per second of the whole run"},
    {"peak_cluster_flops_per_s", "FLOP/s", "gpus x peak"},
    {"mfu", "", "model FLOPs utilization"},
    {"hfu", "", "hardware FLOPs utilization"},
    {"six_n_mfu", "", "MFU counted with 6N"},
    {"hardware", "", "the hardware preset's record"},
    {"dtype", "", "the compute dtype whose peak is used"},
    {"gpus", "GPUs", "GPUs in the run"},
    {"tokens_per_second", "tokens/s", "the measured throughput, all GPUs"},
    {"peak_flops_per_s", "FLOP/s", "one GPU's dense peak at dtype"},
    {"flops_basis", "", "what total_flops counts"},
    {"warnings", "", "{field, message}: inputs that look wrong (mfu above 100 %)"},
});

// ---------------------------------------------------------------- training time, cost, MFU
struct Peak {
    double flops_per_s = 0;
    std::string field = "peak_flops_per_s";  // the argument the caller gave the peak in
    std::string dtype;
    json hardware;
};

Peak peak_from_args(const json& args) {
    Peak p;
    p.dtype = arg_string(args, kPeakDtype);
    // Checked even when a peak is given, so a result never echoes an unknown dtype.
    const DType type = dtype_from_string(p.dtype, "dtype", kPeakDType);
    if (auto v = optional_number_arg(args, "peak_flops_per_s")) {
        p.flops_per_s = require_positive("peak_flops_per_s", *v);
    } else if (auto t = optional_number_arg(args, "peak_tflops")) {
        // In FLOP/s the peak must stay finite, so the bound is the largest double / 1e12.
        require_in_left_open("peak_tflops", *t, 0.0, std::numeric_limits<double>::max() / 1e12);
        p.flops_per_s = *t * 1e12;
        p.field = "peak_tflops";
    } else if (auto id = optional_string_arg(args, "hardware")) {
        const Hardware hw = find_hardware(*id);
        p.flops_per_s = hw.peak(type);
        p.hardware = hardware_to_json(hw);
        p.field = "hardware";
    } else {
        throw InputError("hardware", "give hardware (a preset id) or peak_flops_per_s");
    }
    return p;
}

// Training FLOPs per token (training.h) from a model (exact by default) or params (6ND only); with a model,
// its FLOP count too, counted once for the cost and the per-component answer.
struct PerToken {
    TrainingFlopsPerToken flops;
    json model_json;
    std::optional<ModelConfig> config;
    FlopsInput input;
    FlopsResult counted;
};

PerToken per_token_from_args(const json& args) {
    PerToken t;
    const bool has_model = (args.contains("model") && !args["model"].is_null()) ||
                           (args.contains("hf_config") && !args["hf_config"].is_null());
    if (has_model) {
        const ModelConfig c = resolve_model(args);
        t.input = flops_input(args, c);
        const FlopsBasis basis = flops_basis_from_string(string_or(args, "flops_basis", "exact"), true);
        t.counted = count_flops(c, t.input);
        t.flops = training_flops_per_token(c, t.counted, basis);
        t.model_json = model_to_json(c);
        t.config = c;
        return t;
    }
    ParamsOnlyRun run;
    run.params = require_params(number_arg(args, "params"));
    flops_basis_from_string(string_or(args, "flops_basis", "six_nd"), false);
    run.recompute = recompute_from_string(arg_string(args, arg::recompute));
    run.recompute_ops = !arg_string(args, arg::recompute_ops).empty();
    run.recompute_layers = arg_int(args, arg::recompute_layers);
    run.flash_attention = arg_bool(args, arg::flash_attention);
    run.attention_flops = optional_string_arg(args, "attention_flops").has_value();
    t.flops = training_flops_per_token(run);
    return t;
}

void add_warnings(json& out, const std::vector<InputWarning>& warnings) {
    for (const InputWarning& w : warnings) add_warning(out, w.field, w.message);
}

json training_cost(const json& args) {
    const PerToken per = per_token_from_args(args);
    const double tokens = require_positive("tokens", number_arg(args, "tokens"));
    const Peak peak = peak_from_args(args);
    TrainingTimeInput in;
    in.total_flops = run_flops(per.flops.executed, tokens);
    in.gpus = arg_int(args, kRunGpus);
    in.peak_flops_per_s = peak.flops_per_s;
    // mfu "predicted": the step-time model's MFU for the layout in the same arguments (tp, pp, ...),
    // scaled to the FLOPs basis in use so that the time equals tokens / predicted tokens per second.
    const auto mfu_text =
        args.contains("mfu") && args["mfu"].is_string() ? args["mfu"].get<std::string>() : std::string();
    json predicted;
    if (mfu_text == "predicted") {
        predicted = invoke("step_time", declared_only(args, "step_time"));
        in.mfu = executed_utilization(predicted["mfu"].get<double>(), per.flops.executed, per.flops.model);
    } else {
        in.mfu = number_arg(args, "mfu");
    }
    // A cluster rate so small that the seconds overflow: name the input furthest from its usual size.
    if (!std::isfinite(in.total_flops / (static_cast<double>(in.gpus) * in.peak_flops_per_s * in.mfu)) && in.mfu > 0 &&
        in.mfu <= 1 && std::fabs(std::log10(in.mfu / 0.4)) > std::fabs(std::log10(in.peak_flops_per_s / 1e15)))
        throw InputError("mfu", "mfu = " + format_number(in.mfu) +
                                    " is too small: the run would take longer than a "
                                    "double can count in seconds");
    TrainingTime t;
    try {
        t = estimate_training_time(in);
    } catch (const InputError& error) {
        if (error.field() != "peak_flops_per_s") throw;
        throw InputError(peak.field, error.what());
    }
    json out{{"flops_basis", to_string(per.flops.basis)},
             {"tokens", tokens},
             {"six_nd", per.flops.six_n * tokens},
             {"dtype", peak.dtype},
             {"peak_flops_per_s", peak.flops_per_s},
             {"gpus", in.gpus},
             {"mfu", in.mfu},
             // The data rate the run must sustain (tokens / seconds), as the cluster's FLOP/s over the FLOPs per
             // token, so a token count too small to take a representable time still gives a finite rate.
             {"tokens_per_second", t.cluster_flops_per_s / per.flops.executed},
             {"tokens_per_second_per_gpu", t.cluster_flops_per_s / per.flops.executed / in.gpus}};
    out.update(TALLY_MEMBERS(t, total_flops, cluster_flops_per_s, seconds, gpu_seconds));
    add_chinchilla(out, per.flops.chinchilla_params, tokens, per.flops.chinchilla_basis);
    if (!per.model_json.is_null()) out["model"] = per.model_json;
    // With a model, the FLOPs the cost rests on, per component (the flops method's answer): one call for a page.
    if (per.config) out["flops"] = flops_json(*per.config, per.input, per.counted, tokens);
    if (!peak.hardware.is_null()) out["hardware"] = peak.hardware;
    if (!predicted.is_null()) {
        out["mfu_source"] = "predicted";
        out["predicted_mfu"] = predicted["mfu"];
        out["step_seconds"] = predicted["step_seconds"];
    }
    const std::optional<double> price = optional_number_arg(args, "dollars_per_gpu_hour");
    if (price) {
        out["cost_dollars"] = training_cost_dollars(t, in.gpus, *price);
        out["dollars_per_gpu_hour"] = *price;
    }
    add_warnings(out, training_cost_warnings(in.mfu, price));
    return out;
}

json mfu(const json& args) {
    const PerToken per = per_token_from_args(args);
    const double tokens_per_s = require_positive("tokens_per_second", number_arg(args, "tokens_per_second"));
    const Peak peak = peak_from_args(args);
    const std::int64_t gpus = arg_int(args, kRunGpus);
    const Utilization u = utilization(per.flops.model, per.flops.executed, per.flops.six_n, tokens_per_s,
                                      static_cast<double>(gpus), peak.flops_per_s);
    json out{{"flops_basis", to_string(per.flops.basis)},
             {"model_flops_per_token", per.flops.model},
             {"hardware_flops_per_token", per.flops.executed},
             {"tokens_per_second", tokens_per_s},
             {"gpus", gpus},
             {"dtype", peak.dtype},
             {"peak_flops_per_s", peak.flops_per_s},
             {"peak_cluster_flops_per_s", u.cluster_peak_flops_per_s}};
    out.update(TALLY_MEMBERS(u, achieved_flops_per_s, mfu, hfu, six_n_mfu));
    if (!peak.hardware.is_null()) out["hardware"] = peak.hardware;
    add_warnings(out, utilization_warnings(u));
    return out;
}

constexpr auto kTrainingResult = join_args(kTrainingOwnResult, kChinchillaFields);
constexpr Method kMethods[] = {
    {"training_cost", training_cost, "training time, GPU-seconds and cost from a model or params", kTrainingArgs.span(),
     kTrainingResult, true},
    {"mfu", mfu, "model FLOPs utilization from measured tokens per second", kMfuArgs.span(), kMfuResult, true},
};

}  // namespace

std::span<const Method> training_methods() { return kMethods; }

}  // namespace tally::api
