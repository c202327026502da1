// API area "inference": serving costs for the chapter 9 widget, one matmul on a roofline, and the units and
// checkpoint sizes the worked problems use (docs/API.md "Inference and units").
#include <cmath>

#include "api_args.h"
#include "tally/api.h"
#include "tally/memory/checkpoint.h"
#include "tally/base/error.h"
#include "tally/hardware/hardware.h"
#include "tally/inference/inference.h"
#include "tally/inference/serving.h"
#include "tally/memory/memory.h"
#include "tally/model/model.h"
#include "tally/model/params.h"
#include "tally/compute/roofline.h"
#include "tally/compute/training.h"
#include "tally/compute/units.h"

namespace tally::api {

namespace {

using namespace arg;
constexpr double kMaxDim = static_cast<double>(std::int64_t{1} << 40);
constexpr Arg kContext = integer("context", "tokens", 1, kMaxDim, "required", "tokens in context per sequence");
constexpr Arg kBatch = integer("batch", "sequences", 1, 1'000'000'000, "1", "sequences decoded together");
constexpr Arg kComputeDtype = text("compute_dtype", "bf16", "dtype whose peak the GEMMs run at");
constexpr Arg kServeHardware = any("hardware", "required", "a hardware preset id or a hardware object");
constexpr std::array kInferenceArgs =
    join_args(kModelArgs,
              std::array{kContext, kBatch, text("kv_dtype", "bf16", "storage dtype of the KV cache"),
                         text("weights_dtype", "bf16", "storage dtype of the weights"), kComputeDtype, kServeHardware});
constexpr Arg kM = integer("m", "", 1, kMaxDim, "required", "rows of A and C (the tokens, for a weight matmul)");
constexpr Arg kN = integer("n", "", 1, kMaxDim, "required", "columns of B and C");
constexpr Arg kK = integer("k", "", 1, kMaxDim, "required", "the shared dimension");
constexpr Arg kDtype = text("dtype", "bf16", "dtype of the operands and the peak");
constexpr std::array kMatmulArgs{kM, kN, kK, kDtype, kServeHardware};
constexpr std::array kUnitsArgs{
    number("flops", "FLOP", "depends: 6 x params x tokens", "a FLOP count"),
    number("params", "parameters", "depends: required without flops", "N, for 6ND"),
    number("tokens", "tokens", "depends: required without flops", "D, for 6ND"),
    any("hardware", "none", "a hardware preset id or object: GPU-seconds at its peak"),
    number("mfu", "", "0.4", "with hardware: model FLOPs utilization"),
    text("dtype", "bf16", "with hardware: the dtype of the peak"),
    number("days", "days", "none", "with hardware: the GPUs needed to finish in this many days"),
};
constexpr auto kCheckpointArgs = join_args(kModelArgs, std::array{arg::recipe});
constexpr std::array kInferenceResult = std::to_array<Field>({
    {"weights_bytes", "bytes", "inference weights"},
    {"kv_bytes_per_token", "bytes", "KV cache per token of one sequence"},
    {"kv_cache_bytes", "bytes", "the cache at batch x context"},
    {"total_bytes", "bytes", "weights + cache"},
    {"fits", "", "total <= the preset's usable capacity"},
    {"max_batch", "sequences", "most sequences that fit beside the weights in the usable capacity at context"},
    {"decode", "", "one decode step at batch: memory, compute and step seconds, tokens/s, bound"},
    {"sweep", "", "the decode step at batch 1, 2, 4, ... and max_batch; empty when nothing fits"},
    {"prefill_tokens_per_s", "tokens/s", "prefill rate (compute-bound)"},
    {"prefill_seconds", "s", "prefill of one context"},
    {"crossover_batch", "sequences", "the batch where decode turns compute-bound (null: never)"},
    {"model", "", "the resolved tally config"},
    {"context", "tokens", "tokens per sequence"},
    {"batch", "sequences", "sequences decoded together"},
    {"weights_dtype", "", "dtype of the weights"},
    {"kv_dtype", "", "dtype of the cache"},
    {"compute_dtype", "", "dtype of the peak used"},
    {"hardware", "", "the hardware preset's record"},
    {"capacity_bytes", "bytes", "the preset's memory"},
    {"usable_bytes", "bytes", "the preset's usable capacity: what the device reports less the default allowances"},
    {"memory_bandwidth_bytes_per_s", "bytes/s", "the preset's memory bandwidth"},
    {"peak_flops_per_s", "FLOP/s", "the preset's peak at compute_dtype"},
    {"kv_bytes_per_sequence", "bytes", "the cache of one sequence at context"},
    {"kv_layers", "", "the cache by layer kind"},
    {"decode_flops_per_token", "FLOP", "forward FLOPs of one decoded token at context"},
    {"prefill_flops_per_token", "FLOP", "forward FLOPs per prompt token"},
    {"crossover_batch_whole", "sequences", "crossover_batch rounded up"},
    {"crossover_reason", "", "with no crossover: why decoding stays memory-bound"},
});
constexpr std::array kMatmulResult = std::to_array<Field>({
    {"flops", "FLOP", "2 m n k"},
    {"bytes", "bytes", "compulsory traffic: read A and B, write C"},
    {"intensity", "FLOP/byte", "flops / bytes"},
    {"ridge_flops_per_byte", "FLOP/byte", "peak / bandwidth"},
    {"attainable_flops_per_s", "FLOP/s", "the roofline at this intensity"},
    {"seconds", "s", "flops / attainable"},
    {"bound", "", "memory or compute"},
    {"m", "", "rows of A and C"},
    {"n", "", "columns of B and C"},
    {"k", "", "the shared dimension"},
    {"dtype", "", "the dtype of the peak and the element bytes"},
    {"peak_flops_per_s", "FLOP/s", "the preset's peak at dtype"},
});
constexpr std::array kUnitsResult = std::to_array<Field>({
    {"flops", "FLOP", "the count"},
    {"petaflop_s_days", "PF/s-days", "flops / (1e15 x 86400)"},
    {"gpu_seconds", "GPU-s", "with hardware: flops / (peak x mfu)"},
    {"gpus_for_days", "GPUs", "with days: GPUs to finish in time"},
    {"mfu", "", "with hardware: the model FLOPs utilization assumed"},
    {"days", "days", "with days: the time given"},
});
constexpr std::array kCheckpointResult = std::to_array<Field>({
    {"params", "parameters", "every parameter"},
    {"weights_bytes", "bytes", "the weights in the recipe's dtype"},
    {"inference_bytes", "bytes", "an inference checkpoint"},
    {"resume_bytes", "bytes", "a resumable checkpoint: + master weights and optimizer states"},
    {"resume_bytes_per_param", "bytes", "resume_bytes / params"},
    {"recipe", "", "the recipe the sizes are for"},
    {"master_bytes", "bytes", "fp32 master weights (0 without)"},
    {"optimizer_bytes", "bytes", "optimizer states"},
});

// ---------------------------------------------------------------- serving techniques (serving.h)
constexpr std::array kServeDtypeArgs{text("kv_dtype", "bf16", "storage dtype of the KV cache"),
                                     text("weights_dtype", "bf16", "storage dtype of the weights"), kComputeDtype};
constexpr Arg kReservedContext = integer("reserved_context", "tokens", 1, kMaxDim, "8192",
                                         "tokens reserved per sequence without paging (the longest it may reach)");
constexpr Arg kMeanContext =
    integer("mean_context", "tokens", 1, kMaxDim, "2048", "tokens a sequence holds on average (<= reserved_context)");
constexpr Arg kBlockTokens =
    integer("block_tokens", "tokens", 1, kMaxDim, "16", "tokens per KV block (vLLM's default 16; <= reserved_context)");
constexpr auto kPagedArgs = join_args(kModelArgs, std::array{kReservedContext, kMeanContext, kBlockTokens},
                                      kServeDtypeArgs, std::array{kServeHardware});
constexpr std::array kPagedResult = std::to_array<Field>({
    {"usable_bytes", "bytes", "the preset's usable capacity"},
    {"weights_bytes", "bytes", "inference weights"},
    {"used_bytes_per_sequence", "bytes", "the cache of mean_context tokens"},
    {"reserved_bytes_per_sequence", "bytes", "the cache of reserved_context tokens, held from the start"},
    {"blocks_per_sequence", "blocks", "ceil(mean_context / block_tokens)"},
    {"paged_tokens_per_sequence", "tokens", "the tokens those blocks hold (at most reserved_context)"},
    {"paged_bytes_per_sequence", "bytes", "the cache of those tokens"},
    {"reserved_used_fraction", "", "used / reserved bytes"},
    {"paged_used_fraction", "", "used / paged bytes"},
    {"reserved_sequences", "sequences", "sequences that fit with a reservation each"},
    {"paged_sequences", "sequences", "sequences that fit in blocks"},
    {"sequences_ratio", "", "paged / reserved sequences (0 when none fit reserved)"},
    {"reserved_step", "", "the decode step at reserved_sequences (null when none fit)"},
    {"paged_step", "", "the decode step at paged_sequences (null when none fit)"},
    {"throughput_ratio", "", "paged / reserved tokens/s (0 when none fit reserved)"},
    {"reserved_context", "tokens", "tokens reserved per sequence"},
    {"mean_context", "tokens", "tokens held on average"},
    {"block_tokens", "tokens", "tokens per block"},
});
constexpr Arg kDraftModel = any("draft_model", "required", "the draft: a preset id or a tally config object");
constexpr Arg kAcceptance = {.name = "acceptance_rate",
                             .type = ArgType::Number,
                             .low = 0,
                             .high = 1,
                             .fallback = "0.8",
                             .doc = "alpha: the chance the target accepts a drafted token"};
constexpr Arg kDraftTokens =
    integer("draft_tokens", "tokens", 1, 64, "4", "gamma: tokens drafted per verification step");
constexpr Arg kSpecContext = integer("context", "tokens", 1, kMaxDim, "4096", "tokens in context (one sequence)");
constexpr auto kSpecArgs = join_args(kModelArgs, std::array{kDraftModel, kSpecContext, kAcceptance, kDraftTokens},
                                     kServeDtypeArgs, std::array{kServeHardware});
constexpr std::array kSpecResult = std::to_array<Field>({
    {"expected_tokens", "tokens", "per verification step: (1 - alpha^(gamma+1)) / (1 - alpha)"},
    {"target_step", "", "the target's decode step alone, batch 1"},
    {"draft_step", "", "the draft's decode step, batch 1"},
    {"verify_seconds", "s", "the target scoring gamma + 1 tokens in one pass"},
    {"cost_ratio", "", "c: draft step / target step"},
    {"round_seconds", "s", "gamma draft steps + one verification"},
    {"tokens_per_s", "tokens/s", "expected tokens / round seconds"},
    {"baseline_tokens_per_s", "tokens/s", "the target alone"},
    {"speedup", "", "tokens_per_s / baseline"},
    {"speedup_closed_form", "", "Leviathan et al. 2023 Thm 3.8: (1 - alpha^(gamma+1)) / ((1 - alpha)(gamma c + 1))"},
    {"total_bytes", "bytes", "both models' weights and caches on one GPU"},
    {"usable_bytes", "bytes", "the preset's usable capacity"},
    {"fits", "", "total <= usable"},
    {"acceptance_rate", "", "alpha"},
    {"draft_tokens", "tokens", "gamma"},
    {"context", "tokens", "tokens in context"},
});
constexpr Arg kTpDegree = integer("tp", "GPUs", 1, 1024, "8", "GPUs the model is split over (divides the heads)");
constexpr auto kTpArgs =
    join_args(kModelArgs, std::array{kTpDegree, kContext, kBatch}, kServeDtypeArgs, std::array{kServeHardware});
constexpr std::array kTpResult = std::to_array<Field>({
    {"usable_bytes", "bytes", "usable capacity of one GPU"},
    {"weights_bytes_per_gpu", "bytes", "weights / tp"},
    {"kv_bytes_per_sequence_per_gpu", "bytes", "one sequence's cache on one GPU (its KV heads; MLA: all)"},
    {"kv_heads_per_gpu", "", "KV heads a GPU holds (0 for MLA)"},
    {"fits", "", "weights and the batch's caches per GPU <= usable"},
    {"max_batch", "sequences", "sequences that fit per GPU beside its weights"},
    {"memory_seconds", "s", "per GPU: bytes read / bandwidth"},
    {"compute_seconds", "s", "per GPU: FLOPs / tp / peak"},
    {"all_reduces_per_step", "", "2 per layer"},
    {"all_reduce_bytes", "bytes", "batch x hidden x 2"},
    {"all_reduce_seconds", "s", "one all-reduce over tp GPUs (ring)"},
    {"comm_seconds", "s", "all the all-reduces of one step"},
    {"step_seconds", "s", "max(memory, compute) + comm"},
    {"tokens_per_s", "tokens/s", "whole batch"},
    {"per_sequence_tokens_per_s", "tokens/s", "one sequence"},
    {"comm_fraction", "", "comm / step"},
    {"bound", "", "memory or compute (before comm)"},
    {"tp", "GPUs", "the degree"},
    {"context", "tokens", "tokens per sequence"},
    {"batch", "sequences", "sequences decoded together"},
});
constexpr Arg kQuantDtype = text("quantized_dtype", "fp8", "storage dtype of the quantized weights");
constexpr auto kQuantArgs = join_args(
    kModelArgs, std::array{kContext, kBatch, kQuantDtype, text("kv_dtype", "bf16", "storage dtype of the KV cache"),
                           kComputeDtype, kServeHardware});
constexpr std::array kQuantResult = std::to_array<Field>({
    {"weights_bytes", "bytes", "bf16 weights"},
    {"quantized_weights_bytes", "bytes", "weights in quantized_dtype"},
    {"kv_bytes", "bytes", "the batch's caches, read every step"},
    {"weights_share", "", "bf16 weights / bytes read per step"},
    {"baseline", "", "the decode step with bf16 weights"},
    {"quantized", "", "the decode step with quantized weights"},
    {"speedup", "", "baseline step / quantized step"},
    {"ideal_speedup", "", "weights / quantized weights (if weights were all that is read)"},
    {"max_batch", "sequences", "sequences that fit beside bf16 weights"},
    {"quantized_max_batch", "sequences", "sequences that fit beside quantized weights"},
    {"quantized_dtype", "", "dtype of the quantized weights"},
    {"context", "tokens", "tokens per sequence"},
    {"batch", "sequences", "sequences decoded together"},
});

json step_json(const DecodeStep& s) {
    json out =
        TALLY_MEMBERS(s, batch, memory_seconds, compute_seconds, step_seconds, tokens_per_s, per_sequence_tokens_per_s);
    out["bound"] = s.memory_bound ? "memory" : "compute";
    return out;
}

json inference_method(const json& args) {
    const ModelConfig c = resolve_model(args);
    InferenceInput in;
    in.context = arg_int(args, kContext);
    in.batch = arg_int(args, kBatch);
    in.kv_dtype = dtype_from_string(optional_string_arg(args, "kv_dtype").value_or("bf16"), "kv_dtype", kStorageDType);
    in.weights_dtype =
        dtype_from_string(optional_string_arg(args, "weights_dtype").value_or("bf16"), "weights_dtype", kStorageDType);
    const std::string compute_dtype = arg_string(args, kComputeDtype);
    const auto given = optional_hardware_arg(args);
    if (!given)
        throw InputError("hardware",
                         "hardware (a preset id or object) is required: the rates need its bandwidth and peak");
    const Hardware hw = *given;
    in.compute_dtype = dtype_from_string(compute_dtype, "compute_dtype", kPeakDType);
    const InferenceResult r = inference(c, in, hw);

    json sweep = json::array();
    for (const DecodeStep& s : r.sweep) sweep.push_back(step_json(s));
    json out{{"model", model_to_json(c)},
             {"hardware", hardware_to_json(hw)},
             {"kv_dtype", to_string(in.kv_dtype)},
             {"weights_dtype", to_string(in.weights_dtype)},
             {"compute_dtype", to_string(in.compute_dtype)},
             {"peak_flops_per_s", hw.peak(in.compute_dtype)},
             {"memory_bandwidth_bytes_per_s", hw.memory_bandwidth_bytes_per_s},
             {"capacity_bytes", hw.memory_bytes},
             {"kv_bytes_per_token", r.memory.bytes_per_token},
             {"kv_bytes_per_sequence", r.kv_per_sequence},
             {"kv_layers", kv_layers_json(kv_layer_groups(c, r.memory, in.context, in.kv_dtype, in.weights_dtype))},
             {"decode", step_json(r.at_batch)},
             {"sweep", sweep}};
    out.update(TALLY_MEMBERS(r, usable_bytes, fits, max_batch, decode_flops_per_token, prefill_flops_per_token,
                             prefill_tokens_per_s, prefill_seconds));
    out.update(TALLY_MEMBERS(r.memory, weights_bytes, kv_cache_bytes, total_bytes));
    out.update(TALLY_MEMBERS(in, context, batch));
    if (r.crossover_batch) {
        out["crossover_batch"] = *r.crossover_batch;
        out["crossover_batch_whole"] = static_cast<std::int64_t>(std::ceil(*r.crossover_batch));
    } else {
        out["crossover_batch"] = nullptr;
        out["crossover_reason"] =
            "each sequence's KV cache takes longer to read than its FLOPs take to compute, so decoding stays memory-bound at every batch";
    }
    return out;
}

// The dtypes and hardware every serving method reads.
struct ServeSetup {
    DType kv = DType::BF16, weights = DType::BF16, compute = DType::BF16;
    Hardware hw;
};
ServeSetup serve_setup(const json& args) {
    ServeSetup s;
    s.kv = dtype_from_string(optional_string_arg(args, "kv_dtype").value_or("bf16"), "kv_dtype", kStorageDType);
    s.weights =
        dtype_from_string(optional_string_arg(args, "weights_dtype").value_or("bf16"), "weights_dtype", kStorageDType);
    s.compute = dtype_from_string(arg_string(args, kComputeDtype), "compute_dtype", kPeakDType);
    const auto given = optional_hardware_arg(args);
    if (!given)
        throw InputError("hardware",
                         "hardware (a preset id or object) is required: the rates need its bandwidth and peak");
    s.hw = *given;
    return s;
}

json optional_step_json(const DecodeStep& s) { return s.batch > 0 ? step_json(s) : json(nullptr); }

json paged_kv_method(const json& args) {
    const ModelConfig c = resolve_model(args);
    const ServeSetup s = serve_setup(args);
    PagedKvInput in;
    in.reserved_context = arg_int(args, kReservedContext);
    in.mean_context = arg_int(args, kMeanContext);
    in.block_tokens = arg_int(args, kBlockTokens);
    in.kv_dtype = s.kv;
    in.weights_dtype = s.weights;
    in.compute_dtype = s.compute;
    const PagedKv r = paged_kv(c, in, s.hw);
    json out =
        TALLY_MEMBERS(r, usable_bytes, weights_bytes, used_bytes_per_sequence, reserved_bytes_per_sequence,
                      blocks_per_sequence, paged_tokens_per_sequence, paged_bytes_per_sequence, reserved_used_fraction,
                      paged_used_fraction, reserved_sequences, paged_sequences, sequences_ratio, throughput_ratio);
    out["reserved_step"] = optional_step_json(r.reserved_step);
    out["paged_step"] = optional_step_json(r.paged_step);
    out.update(TALLY_MEMBERS(in, reserved_context, mean_context, block_tokens));
    return out;
}

json speculative_method(const json& args) {
    const ModelConfig target = resolve_model(args);
    if (!args.contains("draft_model") || args["draft_model"].is_null())
        throw InputError("draft_model", "draft_model is required: a preset id or a tally config object");
    ModelConfig draft;
    try {
        draft = resolve_model(json{{"model", args["draft_model"]}});
    } catch (const InputError& e) {
        throw InputError("draft_model", e.what());
    }
    const ServeSetup s = serve_setup(args);
    SpeculativeInput in;
    in.context = arg_int(args, kSpecContext);
    in.acceptance_rate = arg_number(args, kAcceptance);
    in.draft_tokens = arg_int(args, kDraftTokens);
    in.kv_dtype = s.kv;
    in.weights_dtype = s.weights;
    in.compute_dtype = s.compute;
    const Speculative r = speculative_decoding(target, draft, in, s.hw);
    json out = TALLY_MEMBERS(r, expected_tokens, verify_seconds, cost_ratio, round_seconds, tokens_per_s,
                             baseline_tokens_per_s, speedup, speedup_closed_form, total_bytes, usable_bytes, fits);
    out["target_step"] = step_json(r.target_step);
    out["draft_step"] = step_json(r.draft_step);
    out.update(TALLY_MEMBERS(in, acceptance_rate, draft_tokens, context));
    return out;
}

json tp_serving_method(const json& args) {
    const ModelConfig c = resolve_model(args);
    const ServeSetup s = serve_setup(args);
    TpServingInput in;
    in.tp = arg_int(args, kTpDegree);
    in.context = arg_int(args, kContext);
    in.batch = arg_int(args, kBatch);
    in.kv_dtype = s.kv;
    in.weights_dtype = s.weights;
    in.compute_dtype = s.compute;
    const TpServing r = tp_decode(c, in, s.hw);
    json out = TALLY_MEMBERS(r, usable_bytes, weights_bytes_per_gpu, kv_bytes_per_sequence_per_gpu, kv_heads_per_gpu,
                             fits, max_batch, memory_seconds, compute_seconds, all_reduces_per_step, all_reduce_bytes,
                             all_reduce_seconds, comm_seconds, step_seconds, tokens_per_s, per_sequence_tokens_per_s,
                             comm_fraction);
    out["bound"] = r.memory_bound ? "memory" : "compute";
    out.update(TALLY_MEMBERS(in, tp, context, batch));
    return out;
}

json weight_quantization_method(const json& args) {
    const ModelConfig c = resolve_model(args);
    const ServeSetup s = serve_setup(args);
    WeightQuantInput in;
    in.context = arg_int(args, kContext);
    in.batch = arg_int(args, kBatch);
    in.quantized_dtype = dtype_from_string(arg_string(args, kQuantDtype), "quantized_dtype", kStorageDType);
    in.kv_dtype = s.kv;
    in.compute_dtype = s.compute;
    const WeightQuant r = weight_quantization(c, in, s.hw);
    json out = TALLY_MEMBERS(r, weights_bytes, quantized_weights_bytes, kv_bytes, weights_share, speedup, ideal_speedup,
                             max_batch, quantized_max_batch);
    out["baseline"] = step_json(r.baseline);
    out["quantized"] = step_json(r.quantized);
    out["quantized_dtype"] = to_string(in.quantized_dtype);
    out.update(TALLY_MEMBERS(in, context, batch));
    return out;
}

// One matmul (m × k) · (k × n) at its compulsory traffic (read A and B, write C once) on a hardware
// preset: for a weight matmul, m is the tokens in the batch and k × n the weight, so the intensity grows
// with the tokens until the activations outweigh the weight.
json matmul_roofline(const json& args) {
    const double m = static_cast<double>(arg_int(args, kM));
    const double n = static_cast<double>(arg_int(args, kN));
    const double k = static_cast<double>(arg_int(args, kK));
    const std::string dtype = arg_string(args, kDtype);
    const DType type = dtype_from_string(dtype, "dtype", kPeakDType);
    const auto given = optional_hardware_arg(args);
    if (!given) throw InputError("hardware", "hardware (a preset id or object) is required: the peak and bandwidth");
    const Hardware hw = *given;
    const double peak = hw.peak(type);
    const roofline::Traffic t = roofline::matmul_min_traffic(m, n, k, dtype_element_bytes(type));
    const double attainable = roofline::attainable(t.intensity, peak, hw.memory_bandwidth_bytes_per_s);
    return json{{"m", m},
                {"n", n},
                {"k", k},
                {"dtype", dtype},
                {"flops", t.flops},
                {"bytes", t.bytes},
                {"intensity", t.intensity},
                {"ridge_flops_per_byte", roofline::ridge(peak, hw.memory_bandwidth_bytes_per_s)},
                {"peak_flops_per_s", peak},
                {"attainable_flops_per_s", attainable},
                {"seconds", t.flops / attainable},
                {"bound", roofline::to_string(roofline::bound(t.intensity, peak, hw.memory_bandwidth_bytes_per_s))}};
}

// A FLOP count (given, or 6ND) in petaFLOP/s-days; with hardware and MFU the GPU-seconds it takes and the GPUs
// needed to finish within `days` (engine/src/compute/units.cpp).
json compute_units(const json& args) {
    double flops = 0;
    if (auto given = optional_number_arg(args, "flops")) {
        flops = *given;
    } else {
        const double params = number_arg(args, "params");
        const double tokens = number_arg(args, "tokens");
        flops = training_flops(params, tokens);  // 6ND (Kaplan et al. 2020, sec. 2.1)
    }
    json out{{"flops", flops}, {"petaflop_s_days", petaflop_s_days(flops)}};
    if (const auto given = optional_hardware_arg(args)) {
        const Hardware& hw = *given;
        const double mfu = optional_number_arg(args, "mfu").value_or(0.4);
        const double work = gpu_seconds(flops, hw.peak(optional_string_arg(args, "dtype").value_or("bf16")), mfu);
        out["mfu"] = mfu;
        out["gpu_seconds"] = work;
        if (auto days = optional_number_arg(args, "days")) {
            out["gpus_for_days"] = gpus_for_days(work, *days);
            out["days"] = *days;
        }
    }
    return out;
}

// Bytes of an inference checkpoint and of a resumable one (engine/src/memory/checkpoint.cpp).
json checkpoint_size(const json& args) {
    const ModelConfig c = resolve_model(args);
    const RecipePreset& preset = find_recipe(optional_string_arg(args, "recipe").value_or(kDefaultRecipe));
    const CheckpointSize s = tally::checkpoint_size(c, preset.recipe);
    json out = TALLY_MEMBERS(s, params, weights_bytes, master_bytes, optimizer_bytes, inference_bytes, resume_bytes,
                             resume_bytes_per_param);
    out["recipe"] = preset.id;
    return out;
}

constexpr Method kMethods[] = {
    {"compute_units", compute_units,
     "a FLOP count (or 6ND) in petaFLOP/s-days, GPU-seconds at an MFU, and GPUs needed to finish in `days`", kUnitsArgs,
     kUnitsResult, true},
    {"checkpoint_size", checkpoint_size,
     "bytes of an inference checkpoint (weights) and a resumable one (+ master, optimizer)", kCheckpointArgs,
     kCheckpointResult, true},
    {"matmul_roofline", matmul_roofline,
     "one matmul (m,k)·(k,n) at compulsory traffic on a hardware preset: FLOPs, bytes, intensity, bound, time",
     kMatmulArgs, kMatmulResult, true},
    {"inference", inference_method,
     "serving: KV cache, weights, decode step time vs batch (memory- or compute-bound), prefill rate, crossover batch",
     kInferenceArgs, kInferenceResult, true},
    {"paged_kv", paged_kv_method,
     "serving memory: KV caches reserved at the longest context against paged in blocks (PagedAttention): sequences "
     "that fit and the decode rate at each",
     kPagedArgs, kPagedResult, true},
    {"speculative_decoding", speculative_method,
     "speculative decoding: expected tokens per verification step, draft and target step times, speedup", kSpecArgs,
     kSpecResult, true},
    {"tp_serving", tp_serving_method,
     "tensor-parallel decoding: weights and KV split over tp GPUs, two all-reduces per layer, step time", kTpArgs,
     kTpResult, true},
    {"weight_quantization", weight_quantization_method,
     "decoding with quantized weights: the weights' share of bytes read, step times and speedup, what fits", kQuantArgs,
     kQuantResult, true},
};

}  // namespace

std::span<const Method> inference_methods() { return kMethods; }

}  // namespace tally::api
