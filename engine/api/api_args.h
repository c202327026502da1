// Argument readers and result pieces shared by the API files (internal to engine/src; defined in
// api_args.cpp unless noted). Each maps JSON to an engine struct or back; none computes a formula.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "tally/api.h"

#include "tally/compute/flops.h"
#include "tally/hardware/hardware.h"
#include "tally/base/json_members.h"
#include "tally/memory/kvcache.h"
#include "tally/memory/memory.h"
#include "tally/model/model.h"
#include "tally/numerics/precision.h"
#include "tally/step/stack.h"

namespace tally::api {

using json = nlohmann::json;

// ---------------------------------------------------------------- shared declarations
// The arguments several methods read through one reader (the model, the training setup, the recipe, the
// capacity, the FLOP count's inputs): declared once here, read by the readers below, listed by each method.
namespace arg {

inline constexpr auto Int = ArgType::Integer;
inline constexpr auto Num = ArgType::Number;
inline constexpr auto Bool = ArgType::Boolean;
inline constexpr auto Str = ArgType::String;
inline constexpr auto Enum = ArgType::Enum;
inline constexpr auto Obj = ArgType::Object;
inline constexpr auto Arr = ArgType::Array;
inline constexpr auto Any = ArgType::Any;
inline constexpr double kNo = kNoBound;
inline constexpr double kMaxGpus = 100'000'000;
inline constexpr double kMaxDegree = 1'000'000;

// The model: a preset id, a tally config or a Hugging Face config (resolve_model, api_model.cpp).
inline constexpr Arg model = any("model", "depends: required unless hf_config is given",
                                 "a preset id (see presets), a tally config object, or an HF config object");
inline constexpr Arg hf_config =
    any("hf_config", "none", "a Hugging Face config.json, as text or as an object (instead of model)");
// The model's shape needs a model: where a parameter count stands in for one (training_cost, mfu, fit's
// largest_model), these are refused rather than ignored.
inline constexpr Cond kWithModel = given("model"), kWithConfig = given("hf_config");
inline constexpr Arg encoder_head = only(
    choice("encoder_head", "model", "an encoder's head: the bare model, the masked-LM head, or both pretraining heads",
           "model|masked_lm|pretraining"),
    kWithModel, kWithConfig);
inline constexpr std::array kModelArgs{model, hf_config, encoder_head};

// The recipe (recipe_from_args).
inline constexpr Arg recipe =
    text("recipe", kDefaultRecipe, "a named recipe (see recipes): dtype per tensor class and optimizer");
inline constexpr Arg weights = text("weights", "depends: the recipe's", "dtype of the weights");
inline constexpr Arg gradients = text("gradients", "depends: the recipe's", "dtype of the gradients");
inline constexpr Arg master_weights =
    text("master_weights", "depends: the recipe's", "dtype of the master weights (none for no copy)");
inline constexpr Arg optimizer =
    text("optimizer", "depends: the recipe's",
         "optimizer id (see presets: adamw, adamw_8bit, sgd_momentum, sgd, lion, adafactor)");
inline constexpr Arg optimizer_state =
    text("optimizer_state", "depends: the recipe's", "dtype of the optimizer states");
inline constexpr Arg grad_accum = text("grad_accum", "depends: the recipe's",
                                       "dtype of a separate gradient-accumulation buffer (none for no buffer)");
inline constexpr std::array kRecipeArgs{recipe,    weights,         gradients, master_weights,
                                        optimizer, optimizer_state, grad_accum};

// The training setup (setup_from_args).
inline constexpr Arg seq = integer("seq", "tokens", 1, kMaxSeq, "2048", "sequence length");
inline constexpr Arg decoder_seq =
    only(integer("decoder_seq", "tokens", 0, kMaxSeq, "0", "encoder-decoder: the target length (0: seq)"), kWithModel,
         kWithConfig);
inline constexpr Arg micro_batch =
    integer("micro_batch", "sequences", 1, 1'000'000'000, "1", "sequences per GPU per forward pass");
inline constexpr Arg global_batch =
    integer("global_batch", "sequences", 0, std::int64_t{1} << 50, "0",
            "sequences per optimizer step (0: the method's default from micro_batch and dp)");
inline constexpr Arg gpus = integer("gpus", "GPUs", 1, kMaxGpus, "1", "GPUs in the run");
inline constexpr Arg zero = integer("zero", "", 0, 3, "0", "ZeRO stage: 0 none, 1 optimizer, 2 +gradients, 3 +weights");
inline constexpr Arg tp = integer("tp", "GPUs", 1, kMaxDegree, "1", "tensor-parallel degree");
inline constexpr Arg pp = integer("pp", "stages", 1, kMaxDegree, "1", "pipeline-parallel degree");
inline constexpr Arg sequence_parallel =
    boolean("sequence_parallel", "false", "shard the norm and dropout activations across tp (Megatron SP)");
inline constexpr Arg recompute = choice("recompute", "none", "activation recomputation", "none|selective|full");
inline constexpr Arg recompute_ops =
    text("recompute_ops", "", "comma-separated ops recomputed (selective recomputation by op)");
inline constexpr Arg recompute_layers =
    only(integer("recompute_layers", "layers", 0, kMaxLayers, "0",
                 "layers per pipeline stage with full recomputation (0: all, per recompute)"),
         kWithModel, kWithConfig);
inline constexpr Arg flash_attention =
    boolean("flash_attention", "false", "fused attention: no s x s score matrix stored", "--flash-attn");
inline constexpr Arg dropout =
    boolean("dropout", "depends: the model's dropouts", "store dropout masks (absent: when the model has dropout)");
inline constexpr Arg activation_bytes =
    integer("activation_bytes", "bytes", 1, 4, "2", "bytes per stored activation value");
inline constexpr Arg zero3_gather =
    choice("zero3_gather", "none", "ZeRO-3: the gathered-weights buffer counted", "none|module|layer");
inline constexpr Arg zero3_prefetch =
    integer("zero3_prefetch", "", 0, 1'000'000, "0", "ZeRO-3: modules (or layers) prefetched ahead");
inline constexpr Arg virtual_stages =
    integer("virtual_stages", "chunks", 1, kMaxLayers, "1", "model chunks per pipeline stage (interleaved 1F1B)");
inline constexpr Arg keep_stage_outputs =
    only(boolean("keep_stage_outputs", "false", "keep every in-flight micro-batch's stage output (no deallocation)"),
         above("pp", 1));
// Without a buffer (the recipes keep none; nanotron's stack adds its fp32 one) there is nothing to span.
inline constexpr Arg grad_accum_full =
    only(boolean("grad_accum_full", "false", "the accumulation buffer spans every parameter, not the ZeRO shard"),
         given("grad_accum"), one_of("stack", "nanotron"));
inline constexpr Arg cost_balanced_stages =
    only(boolean("cost_balanced_stages", "false", "pipeline stages split by compute cost, LM head counted (nanotron)"),
         above("pp", 1));
inline constexpr Arg ep = integer("ep", "GPUs", 1, kMaxExperts, "1", "expert-parallel degree");
inline constexpr Arg capacity_factor =
    only(number("capacity_factor", "", "0", "MoE expert capacity factor (0: tokens dropped nowhere, no padding)"),
         kWithModel, kWithConfig);
inline constexpr Arg etp = integer("etp", "GPUs", 0, kMaxGpus, "0", "expert tensor-parallel degree (0: tp)");
inline constexpr Arg cp = integer("cp", "GPUs", 1, kMaxSeq, "1", "context-parallel degree");
inline constexpr Arg cp_load_balance =
    only(boolean("cp_load_balance", "true", "context parallelism with the causal load-balanced split"), above("cp", 1));
inline constexpr Arg shard_group = integer("shard_group", "GPUs", 0, kMaxGpus, "0",
                                           "HSDP: GPUs a ZeRO shard spans (0: the whole data-parallel group)");
inline constexpr Arg offload =
    choice("offload", "none", "what lives in host memory", "none|optimizer|params|optimizer_params");
inline constexpr auto kSetupOwnArgs = std::array{seq,
                                                 decoder_seq,
                                                 micro_batch,
                                                 global_batch,
                                                 gpus,
                                                 zero,
                                                 tp,
                                                 pp,
                                                 sequence_parallel,
                                                 recompute,
                                                 recompute_ops,
                                                 recompute_layers,
                                                 flash_attention,
                                                 dropout,
                                                 activation_bytes,
                                                 zero3_gather,
                                                 zero3_prefetch,
                                                 virtual_stages,
                                                 keep_stage_outputs,
                                                 grad_accum_full,
                                                 cost_balanced_stages,
                                                 ep,
                                                 capacity_factor,
                                                 etp,
                                                 cp,
                                                 cp_load_balance,
                                                 shard_group,
                                                 offload};
inline constexpr auto kSetupArgs = join_args(kSetupOwnArgs, kRecipeArgs);

// The capacity (capacity_from_args).
inline constexpr double kMaxBytes = 4.611686018427387904e18;  // 2^62
inline constexpr Arg capacity_bytes =
    integer("capacity_bytes", "bytes", 1, kMaxBytes, "none", "one GPU's memory, used as given (instead of hardware)");
inline constexpr Arg hardware = any("hardware", "none",
                                    "a hardware preset id (see presets) or a hardware object: its reported capacity "
                                    "less the allowance");
// The allowance is taken from a capacity: without one there is nothing to take it from.
inline constexpr Arg cuda_context_bytes = only(
    integer("cuda_context_bytes", "bytes", 0, kMaxBytes,
            "depends: 0 with capacity_bytes, the default allowance with hardware", "memory the CUDA context takes"),
    given("hardware"), given("capacity_bytes"));
inline constexpr Arg fragmentation_fraction =
    only(number("fragmentation_fraction", "", "depends: 0 with capacity_bytes, the default with hardware",
                "share of the capacity lost to allocator fragmentation", "--fragmentation"),
         given("hardware"), given("capacity_bytes"));
inline constexpr std::array kCapacityArgs{capacity_bytes, hardware, cuda_context_bytes, fragmentation_fraction};
// What add_capacity returns beside a method's own capacity_bytes and usable_bytes.
inline constexpr std::array kCapacityFields = std::to_array<Field>({
    {"hardware", "", "with hardware: the preset's record"},
    {"cuda_context_bytes", "bytes", "with a capacity: memory the CUDA context takes"},
    {"fragmentation_fraction", "", "with a capacity: share lost to allocator fragmentation"},
    {"fragmentation_bytes", "bytes", "with a capacity: capacity x fragmentation_fraction"},
    {"allowance_bytes", "bytes", "with a capacity: CUDA context + fragmentation"},
});

// The FLOP count's inputs (flops_input).
inline constexpr Arg flops_seq =
    only(integer("seq", "tokens", 1, kMaxSeq, "depends: min(max_positions, 2048)", "sequence length"), kWithModel,
         kWithConfig);
inline constexpr Arg attention_flops =
    choice("attention_flops", "full", "attention score FLOPs: the full s x s square or the causal half", "full|causal");
inline constexpr Arg flops_pp =
    integer("pp", "stages", -kNo, kNo, "1", "pipeline stages, for recompute_layers (1 to the model's layers)");
inline constexpr std::array kFlopsArgs{flops_seq,        decoder_seq,     attention_flops,
                                       recompute,        flash_attention, recompute_ops,
                                       recompute_layers, flops_pp,        capacity_factor};

// The step-time layout (layout_from_args, api_step.cpp), shared with training_cost's mfu "predicted".
inline constexpr Arg step_hardware = any("hardware", "required", "a hardware preset id or object");
inline constexpr Arg interleave = integer("interleave", "chunks", 1, 1024, "depends: virtual_stages",
                                          "model chunks per pipeline stage (interleaved 1F1B; same as virtual_stages)");
inline constexpr Arg embedding_chunks =
    boolean("embedding_chunks", "false", "the embedding and the LM head as pipeline chunks of their own");
inline constexpr Arg gpus_per_node =
    integer("gpus_per_node", "GPUs", 1, kMaxDegree, "depends: the hardware preset's interconnect", "GPUs per node");
inline constexpr Arg precision = text("precision", "", "a GEMM precision recipe (fp8_*, mxfp8: FP8 GEMMs)");
inline constexpr Arg step_dtype =
    text("dtype", "depends: fp8 with an FP8 precision, else bf16", "dtype of the GEMMs' peak");
inline constexpr Arg overlap_grad_reduce =
    boolean("overlap_grad_reduce", "true", "overlap the gradient reduction with the backward pass");
inline constexpr Arg stack =
    choice("stack", "generic", "software stack: the defaults of the run's switches (content/presets/stacks/<id>.json)",
           "generic|deepspeed|megatron-te|nanotron|pytorch-fsdp|torchtitan");
inline constexpr Arg compile =
    boolean("compile", "false", "torch.compile: fuses the elementwise ops of plain-PyTorch model code");
inline constexpr Arg async_tp =
    boolean("async_tp", "false", "async TP: sequence-parallel collectives overlapped with the linear GEMMs");
inline constexpr Arg fp8_all_gather =
    boolean("fp8_all_gather", "false",
            "ZeRO-3/FSDP gathers the linear weights in FP8 (needs a per-tensor fp8-* precision, not fp8-rowwise)");
inline constexpr Arg ep_overlap =
    boolean("ep_overlap", "false",
            "MoE: the all-to-all behind an adjacent micro-batch's compute (Megatron-Core combined 1F1B)");
inline constexpr Arg step_lora_rank = integer(
    "lora_rank", "", 0, static_cast<double>(kMaxHidden), "0",
    "LoRA rank r: base frozen in the step's time (0: all train); memory_bytes stays full (finetune has LoRA's)");
inline constexpr Arg step_lora_targets =
    only(text("lora_targets", "q,v", "LoRA: adapted modules, comma-separated (PEFT's target_modules)"),
         above("lora_rank", 0));
inline constexpr Arg fabric =
    choice("fabric", "nominal", "cluster fabric: measured bus bandwidth by node count for collectives across nodes",
           "nominal|hf-ultrascale-h100");
inline constexpr Arg node_network_gbps{.name = "node_network_gbps",
                                       .type = Num,
                                       .unit = "Gb/s",
                                       .low = 0,
                                       .high = kMaxNodeNetworkGbps,
                                       .fallback = "0",
                                       .doc =
                                           "the node's network, all its cards together, one way (0: the hardware "
                                           "preset's cards; else at least 1)"};
inline constexpr std::array kLayoutOwnArgs{
    step_hardware, interleave,       embedding_chunks, gpus_per_node,  precision,  step_dtype,     overlap_grad_reduce,
    stack,         compile,          async_tp,         fp8_all_gather, ep_overlap, step_lora_rank, step_lora_targets,
    fabric,        node_network_gbps};
// The run's switches (tally/step/stack.h, kStepSwitches), each defaulting to its stack's value; cost_balanced_stages
// is the training setup's argument (memory reads it too), so it is declared there.
inline constexpr std::size_t kStackSwitchCount = std::size(kStepSwitches) - 1;
inline constexpr auto kStackSwitchArgs = [] {
    std::array<Arg, kStackSwitchCount> out{};
    std::size_t i = 0;
    for (const StepSwitchInfo& s : kStepSwitches) {
        if (std::string_view(s.name) == cost_balanced_stages.name) continue;
        const std::string_view kind = s.kind;
        Arg a{.name = s.name, .fallback = "depends: the stack's default", .doc = s.doc};
        a.type = kind == "boolean" ? Bool : kind == "enum" ? Enum : Num;
        if (kind == "enum") a.values = s.values;
        if (kind == "number") a.low = 0, a.high = 1e15;
        out[i++] = a;
    }
    return out;
}();
inline constexpr auto kLayoutArgs = join_args(kLayoutOwnArgs, kStackSwitchArgs);
inline constexpr auto kStepArgs = join_args(kModelArgs, kLayoutArgs, kSetupArgs);

}  // namespace arg

// A JSON number, or decimal text, as a double; else an InputError naming `field` (api_arg_readers.cpp).
double to_number(const json& value, const char* field);

// An optional integer or string argument with its default.
std::int64_t int_or(const json& args, const char* field, std::int64_t fallback, std::int64_t low, std::int64_t high);
std::string string_or(const json& args, const char* field, const char* fallback);

// The recipe and its per-class overrides (weights, gradients, master_weights, optimizer, ...);
// `recipe_out` (optional) receives the recipe as the results show it.
Recipe recipe_from_args(const json& args, json* recipe_out);
// The training setup of the memory budget (seq, micro_batch, global_batch, gpus, zero, tp, pp,
// sequence_parallel, recompute, flash_attention, dropout, activation_bytes, the recipe, and the placement:
// cp, cp_load_balance, shard_group, offload, ep, etp).
TrainingSetup setup_from_args(const json& args, json* recipe_out);
// InputError naming cp, shard_group, offload or etp when set: for the methods whose model of time or memory
// predates them (step_time, finetune), so they are refused rather than ignored.
void require_default_placement(const TrainingSetup& st, const char* method);

// Capacity from capacity_bytes or a hardware preset (less the default allowance); nullopt when neither
// is given. `hardware_out` (optional) receives the preset.
std::optional<UsableCapacity> capacity_from_args(const json& args, json* hardware_out);
// The hardware argument: a preset id, or an object in the preset format (content/presets/hardware/*.json; a
// calibration file from scripts/bench/calibrate-gpu.sh); nullopt when absent. InputError naming the field.
std::optional<Hardware> optional_hardware_arg(const json& args);
// The capacity fields every method with a capacity reports.
void add_capacity(json& out, const UsableCapacity& u, const json& hardware);

// Every recipe with its bytes per parameter.
json recipes_json();

// The FLOP count's inputs (seq, attention_flops, recompute, ...) for model `c`.
FlopsInput flops_input(const json& args, const ModelConfig& c);
// The Chinchilla reference fields of a result.
void add_chinchilla(json& out, double params, double tokens, const char* basis);
inline constexpr std::array kChinchillaFields = std::to_array<Field>({
    {"chinchilla_tokens_per_param", "tokens/parameter", "the Chinchilla rule's tokens per parameter"},
    {"chinchilla_params", "", "which parameter count the rule uses: total, active (MoE) or given"},
    {"chinchilla_tokens", "tokens", "compute-optimal tokens for that parameter count"},
    {"tokens_per_param", "tokens/parameter", "tokens / that parameter count"},
});

// The flops method's result for a counted model (api_flops.cpp; shared with api_training.cpp); per-token
// totals when `tokens` is absent.
json flops_json(const ModelConfig& c, const FlopsInput& in, const FlopsResult& r, std::optional<double> tokens);
// The memory budget as the API returns it (api_memory.cpp; shared with api_fit.cpp).
json budget_json(const ModelConfig& c, const TrainingSetup& st, const MemoryBudget& m, const json& recipe);
// The KV cache by layer kind (api_kvcache.cpp; shared with api_inference.cpp).
json kv_layers_json(const std::vector<KvLayerGroup>& groups);
// The largest data-parallel degree the GPU-count searches try.
inline constexpr std::int64_t kMaxSearchGpus = std::int64_t{1} << 20;

// Float-format arguments (format, rounding, saturate, value, code or hex).
fp::Format format_arg(const json& args, const char* field = "format");
fp::Round round_arg(const json& args, fp::Format f);
bool saturate_arg(const json& args, fp::Format f);
struct ValueArg {
    double value;
    std::string text;
};
ValueArg value_arg(const json& args);
std::uint64_t code_arg(const json& args, fp::Format f);

}  // namespace tally::api
