// API of the step-time model (step.h) and the layout planner (plan.h). Shapes in docs/API.md ("Step time").
#include "api_args.h"
#include "tally/api.h"
#include "tally/base/error.h"
#include "tally/comm/fabric.h"
#include "tally/memory/finetune.h"
#include "tally/hardware/hardware.h"
#include "tally/plan/plan.h"
#include "tally/step/stack.h"
#include "tally/step/step.h"
#include "tally/step_bands.h"
#include "tally/step_validation.h"
#include "tally/base/input.h"
#include "tally/parallel/step_stages.h"

#include <algorithm>
#include <utility>

namespace tally::api {

namespace {

Hardware hardware_arg(const json& args) {
    auto hw = optional_hardware_arg(args);
    if (!hw) throw InputError("hardware", "hardware is required (a preset id or an object)");
    return *std::move(hw);
}

// hsdp: step_time takes shard_group (HSDP, zero 3); the planner, which picks zero and dp itself, does not.
StepLayout layout_from_args(const json& args, const char* method, bool hsdp) {
    StepLayout layout;
    layout.setup = setup_from_args(args, nullptr);
    // Context parallelism (step_cp.h) and HSDP (step_fsdp.h) are modelled in step time; the other placements are not.
    TrainingSetup placement = layout.setup;
    placement.cp = 1;
    const std::int64_t shard_group = hsdp ? std::exchange(placement.shard_group, 0) : 0;
    require_default_placement(placement, method);
    if (shard_group > 0 && layout.setup.zero != 3)
        throw InputError("shard_group", "shard_group (HSDP) needs zero 3 in step_time (FSDP HYBRID_SHARD)");
    layout.interleave = arg_int(args, arg::interleave, layout.setup.virtual_stages);
    if (args.contains("interleave") && args.contains("virtual_stages") &&
        layout.setup.virtual_stages != layout.interleave)
        throw InputError("virtual_stages", "virtual_stages and interleave both give the chunks per stage; give one");
    layout.setup.virtual_stages = layout.interleave;  // the memory check counts the interleaved schedule's activations
    layout.embedding_chunks = arg_bool(args, arg::embedding_chunks);
    layout.gpus_per_node = arg_int(args, arg::gpus_per_node, 0);
    layout.precision = arg_string(args, arg::precision);
    // An FP8 recipe implies FP8 GEMMs; step_time checks that a given dtype agrees.
    const bool fp8_recipe = layout.precision.rfind("fp8", 0) == 0 || layout.precision == "mxfp8";
    layout.dtype = optional_string_arg(args, "dtype").value_or(fp8_recipe ? "fp8" : "bf16");
    layout.overlap_grad_reduce = arg_bool(args, arg::overlap_grad_reduce);
    layout.stack = optional_string_arg(args, "stack").value_or("");
    layout.compile = arg_bool(args, arg::compile);
    layout.async_tp = arg_bool(args, arg::async_tp);
    layout.fp8_all_gather = arg_bool(args, arg::fp8_all_gather);
    layout.ep_overlap = arg_bool(args, arg::ep_overlap);
    layout.lora_rank = arg_int(args, arg::step_lora_rank);
    if (args.contains("lora_targets"))
        layout.lora_targets = lora_targets_from_string(arg_string(args, arg::step_lora_targets));
    // The run's switches: its stack's defaults (InputError naming "stack" for an unknown id), then what it sets.
    StepSwitches switches = stack_profile(layout.stack).defaults;
    for (const StepSwitchInfo& s : kStepSwitches)
        if (args.contains(s.name)) set_step_switch(switches, s.name, args[s.name]);
    layout.switches = switches;
    // The memory check counts what the switches keep, unless the caller says otherwise: an fp32 gradient buffer
    // over every parameter, cost-balanced stages (memory_budget's arguments of the same names).
    if (switches.grad_sync.fp32 && !args.contains("grad_accum")) {
        layout.setup.recipe.grad_accum = DType::FP32;
        if (!args.contains("grad_accum_full")) layout.setup.grad_accum_full = true;
    }
    layout.setup.cost_balanced_stages = switches.cost_balanced_stages;
    // InputError naming "fabric" for an unknown preset; "nominal" kept as "" so step_time takes no copy.
    if (find_fabric(arg_string(args, arg::fabric))) layout.fabric = arg_string(args, arg::fabric);
    layout.node_network_gbps = arg_number(args, arg::node_network_gbps);
    return layout;
}

json layout_json(const StepLayout& l, std::int64_t dp) {
    const TrainingSetup& st = l.setup;
    json out{{"gpus", st.gpus},
             {"tp", st.tp},
             {"pp", st.pp},
             {"dp", dp},
             {"zero", st.zero},
             {"sequence_parallel", st.sequence_parallel},
             {"interleave", l.interleave},
             {"embedding_chunks", l.embedding_chunks},
             {"micro_batch", st.micro_batch},
             {"recompute", to_string(st.recompute)},
             {"flash_attention", st.flash_attention},
             {"seq", st.seq}};
    if (st.cp > 1) out["cp"] = st.cp;                             // context parallelism (absent: 1)
    if (st.ep > 1) out["ep"] = st.ep;                             // MoE expert parallelism (absent for dense layouts)
    if (st.etp != 0 && st.etp != st.tp) out["etp"] = st.etp;      // experts folded over tp (absent: etp = tp)
    if (st.decoder_seq > 0) out["decoder_seq"] = st.decoder_seq;  // encoder-decoder target length (absent: seq)
    if (!l.overlap_grad_reduce) out["overlap_grad_reduce"] = false;  // absent: overlapped (the default)
    if (!l.precision.empty()) out["precision"] = l.precision;        // absent: as dtype says
    out["stack"] = stack_profile(l.stack).id;                        // "generic" when not given
    if (st.shard_group > 0) out["shard_group"] = st.shard_group;     // HSDP (absent: FSDP over all dp)
    if (l.compile) out["compile"] = true;                            // absent: eager
    if (l.async_tp) out["async_tp"] = true;
    if (l.fp8_all_gather) out["fp8_all_gather"] = true;
    if (l.ep_overlap) out["ep_overlap"] = true;
    if (!l.fabric.empty()) out["fabric"] = l.fabric;                              // absent: nominal
    if (l.node_network_gbps > 0) out["node_network_gbps"] = l.node_network_gbps;  // absent: the preset's cards
    const StepSwitches& switches = l.switches ? *l.switches : stack_profile(l.stack).defaults;
    for (const StepSwitchInfo& s : kStepSwitches) out[s.name] = step_switch_value(switches, s.name);  // every one
    if (l.lora_rank > 0) {  // LoRA: the rank and the adapted modules
        out["lora_rank"] = l.lora_rank;
        out["lora_targets"] = lora_targets_to_string(l.lora_targets != 0 ? l.lora_targets : kLoraQ | kLoraV);
    }
    return out;
}

json breakdown_json(const StepResult& r) {
    json parts = json::array();
    for (const StepComponent& part : r.breakdown)
        parts.push_back({{"id", part.id},
                         {"name", part.name},
                         {"seconds", part.seconds},
                         {"exposed", part.exposed},
                         {"share", part.exposed ? part.seconds / r.step_seconds : 0.0}});
    return parts;
}

json result_json(const StepResult& r) {
    return json{{"step_seconds", r.step_seconds},
                {"tokens_per_second", r.tokens_per_second},
                {"model_flops_per_s_per_gpu", r.model_flops_per_s_per_gpu},
                {"mfu", r.mfu},
                {"hfu", r.hfu},
                {"peak_flops_per_s", r.peak_flops_per_s},
                {"dp", r.dp},
                {"microbatches", r.microbatches},
                {"global_batch", r.global_batch},
                {"busiest_stage_layers", r.busiest_stage_layers},
                {"microbatch_seconds", r.microbatch_seconds},
                {"bubble_fraction", r.bubble_fraction},
                {"matmul_efficiency", r.matmul_efficiency},
                {"breakdown", breakdown_json(r)}};
}

// How far to trust a prediction: the interval of the other sources' residuals for runs of this kind and regime
// (tally/step/bands.h); null when none stored. error = (predicted - published) / published in [lower, upper] puts the
// published throughput in [predicted / (1 + upper), predicted / (1 + lower)], unbounded above (null) once lower <= -1.
json band_json(const StepResult& r, const StepLayout& layout, const Hardware& hw) {
    double compute = 0;
    for (const StepComponent& part : r.breakdown)
        if (part.exposed && is_compute_part(part.id)) compute += part.seconds;
    const char* regime = band_regime(compute, r.step_seconds);
    const std::optional<Band> band = find_band(
        stored_step_bands(),
        {stack_profile(layout.stack).id, layout.precision.empty() ? layout.dtype : layout.precision, hw.id, regime});
    if (!band) return json();
    const bool bounded = band->lower > -1;
    return json{{"lower", band->lower},
                {"upper", band->upper},
                {"half_width", std::max(-band->lower, band->upper)},
                {"level", band->level},
                {"key", band->key},
                {"runs", band->runs},
                {"widened", band->widened},
                {"regime", regime},
                {"tokens_per_second_low", r.tokens_per_second / (1 + band->upper)},
                {"tokens_per_second_high", bounded ? json(r.tokens_per_second / (1 + band->lower)) : json()},
                {"step_seconds_low", bounded ? json(r.step_seconds * (1 + band->lower)) : json()},
                {"step_seconds_high", r.step_seconds * (1 + band->upper)}};
}
constexpr Arg kTop{"top", arg::Int, "layouts", 1, 100, "5", "how many of the fastest layouts to list"};
// What plan searches (plan.h): given, it would be overwritten, so it is refused; a test on it (pp > 1) cannot fail
// before the search and is dropped. gpus: the planner's own bound.
constexpr std::array<const char*, 8> kPlanSearched{"tp",        "pp",         "zero",           "micro_batch",
                                                   "recompute", "interleave", "virtual_stages", "sequence_parallel"};
// Searched when not given (cp_choices from seq 32768, ep for a mixture of experts): taken, but a test on them is
// dropped too.
constexpr std::array<const char*, 2> kPlanSearchedUnlessGiven{"cp", "ep"};
template <std::size_t N>
constexpr std::array<Arg, N> planned(std::array<Arg, N> args) {
    const auto in = [](const auto& list, const char* name) {
        return std::any_of(list.begin(), list.end(), [&](const char* s) { return std::string_view(s) == name; });
    };
    for (Arg& a : args) {
        if (in(kPlanSearched, a.name)) a.applies.any_of = {Cond{.test = Test::Never}, Cond{}};
        for (const Cond& c : a.applies.any_of)
            if (c.test != Test::Never && c.test != Test::None &&
                (in(kPlanSearched, c.other) || in(kPlanSearchedUnlessGiven, c.other)))
                a.applies = {};
        if (std::string_view(a.name) == "gpus") a.high = static_cast<double>(kMaxPlanGpus);
    }
    return args;
}
constexpr auto kPlanArgs = planned(join_args(arg::kStepArgs, std::array{kTop}));
constexpr std::array kStepResult = std::to_array<Field>({
    {"step_seconds", "s", "one optimizer step"},
    {"tokens_per_second", "tokens/s", "the whole run's throughput"},
    {"mfu", "", "model FLOPs utilization (an output)"},
    {"hfu", "", "hardware FLOPs utilization"},
    {"peak_flops_per_s", "FLOP/s", "one GPU's peak at dtype"},
    {"dp", "GPUs", "data-parallel degree"},
    {"microbatches", "", "micro-batches per step per pipeline"},
    {"global_batch", "sequences", "sequences per step"},
    {"bubble_fraction", "", "pipeline bubble share of the step"},
    {"breakdown", "s", "{id, name, seconds, exposed, share}: compute, communication, bubble"},
    {"layout", "", "the layout evaluated"},
    {"stage_layers", "layers", "layers per pipeline stage"},
    {"memory_bytes", "bytes", "the memory budget's total per GPU"},
    {"fits", "", "memory_bytes <= the preset's capacity"},
    {"band", "",
     "{lower, upper, half_width, level, key, runs, widened, regime, tokens_per_second_low/high, "
     "step_seconds_low/high}: 80 % interval of other sources' residuals (null bounds when unbounded), null when none"},
    {"model", "", "the resolved tally config"},
    {"hardware", "", "the hardware preset id"},
    {"model_flops_per_s_per_gpu", "FLOP/s", "model FLOPs per second per GPU"},
    {"busiest_stage_layers", "layers", "layers of the slowest pipeline stage"},
    {"microbatch_seconds", "s", "one micro-batch through the busiest stage"},
    {"matmul_efficiency", "", "achieved share of the peak in the matmuls"},
    {"interleave_extra_bytes", "bytes", "activation memory interleaved pipeline stages add"},
    {"memory_capacity_bytes", "bytes", "the preset's capacity"},
});
constexpr std::array kPlanResult = std::to_array<Field>({
    {"evaluated", "layouts", "layouts tried"},
    {"fit", "layouts", "layouts that fit"},
    {"rejected_memory", "layouts", "layouts over the capacity"},
    {"rejected_shape", "layouts", "layouts the model's shape forbids"},
    {"best", "", "the fastest top layouts, each a step_time result"},
    {"losers", "", "the best layout refused per reason"},
    {"memory_capacity_bytes", "bytes", "the preset's capacity"},
    {"hardware", "", "the hardware preset id"},
});

// {model, hardware, gpus, tp, pp, ...training setup, interleave, embedding_chunks, gpus_per_node, dtype}
json step_time_method(const json& args) {
    const ModelConfig c = resolve_model(args);
    const Hardware hw = hardware_arg(args);
    StepLayout layout = layout_from_args(args, "step_time", true);
    const StepResult r = step_time(c, hw, layout);
    json out = result_json(r);
    out["band"] = band_json(r, layout, hw);
    layout.setup.global_batch = r.global_batch;
    out["layout"] = layout_json(layout, r.dp);
    out["stage_layers"] = pipeline_stages(c, layout.setup.pp, layout.interleave, layout.embedding_chunks,
                                          layout.switches->cost_balanced_stages)
                              .layers;
    MemoryBudget mem = memory_budget(c, layout.setup);
    out["memory_bytes"] = mem.bytes.total;
    out["interleave_extra_bytes"] = mem.activations.interleave_extra_bytes;
    out["memory_capacity_bytes"] = hw.memory_bytes;
    out["fits"] = mem.bytes.total <= hw.memory_bytes;
    out["hardware"] = hw.id;
    out["model"] = model_to_json(c);
    return out;
}

// {model, hardware, gpus, seq, global_batch, recipe, top} -> the fastest layouts that fit.
json plan_method(const json& args) {
    const ModelConfig c = resolve_model(args);
    const Hardware hw = hardware_arg(args);
    PlanInput in;
    in.base = layout_from_args(args, "plan", false);
    in.top = arg_int(args, kTop);
    const PlanResult p = plan_layouts(c, hw, in);
    json best = json::array();
    for (const PlanEntry& entry : p.best) {
        json row = result_json(entry.result);
        row["layout"] = layout_json(entry.layout, entry.result.dp);
        row["memory_bytes"] = entry.memory_bytes;
        row["interleave_extra_bytes"] = entry.interleave_extra_bytes;
        row["band"] = band_json(entry.result, entry.layout, hw);
        best.push_back(row);
    }
    json losers = json::array();
    for (const PlanLoser& loser : p.losers)
        losers.push_back({{"reason", loser.reason},
                          {"count", loser.count},
                          {"example", layout_json(loser.example, loser.example_dp)},
                          {"mfu", loser.mfu}});
    return json{{"evaluated", p.evaluated},
                {"fit", p.fit},
                {"rejected_memory", p.rejected_memory},
                {"rejected_shape", p.rejected_shape},
                {"best", best},
                {"losers", losers},
                {"memory_capacity_bytes", hw.memory_bytes},
                {"hardware", hw.id}};
}

// A runs file ({"runs": [...]}, content/validation/*.json) scored as `tally step --validate` scores it.
json step_validation_method(const json& args) {
    if (!args.contains("runs") || args["runs"].is_null())
        throw InputError("runs", "runs is required: a runs file ({\"runs\": [...]}) or its JSON text");
    const json& runs = args["runs"];
    if (runs.is_string())
        return validate_step_runs(parse_json_input(runs.get<std::string>(), "runs", "runs"), "runs").report;
    return validate_step_runs(runs, "runs").report;
}

constexpr std::array kValidationArgs{
    arg::any("runs", "required",
             "a runs file ({\"runs\": [{id, args, published: {metric, value}}], split?}) or its JSON text"),
};
constexpr std::array kValidationResult = std::to_array<Field>({
    {"runs", "",
     "per expressible run: {id, half, source, metric, published, predicted, error, predicted_mfu, generic_error, regime, band}"},
    {"skipped", "", "runs marked expressible_today false: {id, half}"},
    {"halves", "",
     "per half (fit, heldout, all): {count, median_abs_error, median_error, within_20_percent, predicted_faster, worst, groups}"},
    {"sources", "", "the same summary per source"},
    {"band_coverage", "",
     "share of runs inside the band the other sources give them (leave one source out), as given and as generic"},
    {"counts", "", "{runs (scored), skipped (not expressible), total, sources}"},
    {"median_abs_error", "", "median |predicted - published| / published over every run"},
    {"worst_abs_error", "", "the largest |error|"},
});

constexpr Method kMethods[] = {
    {"step_time", step_time_method,
     "predicted time of one training step: compute, communication, bubble; MFU and HFU as outputs", arg::kStepArgs,
     kStepResult, true},
    {"plan", plan_method,
     "layouts (tp, pp, dp, ZeRO, SP, interleave, micro-batch, recompute) that fit, ranked by predicted throughput",
     kPlanArgs, kPlanResult, true},
    {"step_validation", step_validation_method,
     "published runs scored by step_time: errors, leave-one-source-out bands, summaries per half and source",
     kValidationArgs, kValidationResult, true},
};

}  // namespace

std::span<const Method> step_methods() { return kMethods; }

}  // namespace tally::api
