// API of fine-tuning (finetune.h): LoRA adapters, QLoRA's NF4 base and full fine-tuning on one GPU, memory
// class by class and FLOPs per token (docs/API.md "finetune").
#include <string>

#include "api_args.h"
#include "tally/api.h"
#include "tally/numerics/dtype.h"
#include "tally/base/error.h"
#include "tally/memory/finetune.h"
#include "tally/hardware/hardware.h"
#include "tally/model/model.h"

namespace tally::api {

namespace {

using u64 = std::uint64_t;

using namespace arg;
// The adapters' arguments apply to lora and qlora, the quantized base's to qlora (finetune.h).
constexpr Cond kAdapters = one_of("method", "lora|qlora");
constexpr Arg kLoraRank =
    only(integer("lora_rank", "", 1, kMaxHidden, "8", "adapter rank r (at most the narrowest adapted projection)"),
         kAdapters);
constexpr std::array kFinetuneOwn{
    choice("method", "lora", "LoRA adapters, QLoRA (4-bit base) or full fine-tuning", "lora|qlora|full"),
    boolean("paged", "false", "paged optimizer: the states may spill to host memory"),
    kLoraRank,
    only(number("lora_alpha", "", "16", "LoRA scaling numerator (scaling alpha / r)"), kAdapters),
    only(number("lora_dropout", "", "0", "dropout on the adapter input"), kAdapters),
    only(any("lora_targets", "q,v", "adapted modules: comma-separated text or a list of names (PEFT's target_modules)"),
         kAdapters),
    only(boolean("lora_experts", "true", "MoE: adapt every expert too"), kAdapters),
    only(choice("base_dtype", "depends: nf4 for qlora, bf16 for lora", "storage of the frozen base weights",
                "bf16|fp16|fp32|nf4"),
         kAdapters),
    only(boolean("double_quant", "true", "QLoRA: quantize the quantization constants too"), one_of("method", "qlora")),
    only(boolean("quantized_inputs_kept", "false",
                 "QLoRA: each 4-bit linear keeps its input for backward (bitsandbytes before 0.43.2, PR #1270)"),
         one_of("method", "qlora")),
    only(choice("adapter_dtype", "fp32", "dtype of the adapter weights", "fp32|bf16|fp16"), kAdapters),
    boolean("grads_freed", "false",
            "gradients set to None after each step: the peak is the start or the end of backward, not the sum"),
    boolean("optimizer_in_backward", "false",
            "each parameter steps in backward and frees its gradient: one gradient held (implies grads_freed)"),
    integer(
        "loss_chunks", "chunks", 0, kMaxSeq, "0",
        "LM head and compiled cross-entropy in chunks: logits kept at activation_bytes, no fp32 copy (0: whole in fp32)"),
    boolean("activation_offloading", "false", "with recompute full: the layer checkpoints held in host memory"),
    only(choice("compute_dtype", "bf16", "dtype of the dequantized compute", "bf16|fp16|fp32"), kAdapters),
};
constexpr auto kFinetuneArgs = join_args(kModelArgs, kFinetuneOwn, kSetupArgs, kCapacityArgs);
constexpr std::array kFinetuneOwnResult = std::to_array<Field>({
    {"model", "", "the resolved tally config"},
    {"method", "", "lora, qlora or full"},
    {"params_total", "parameters", "base parameters"},
    {"params_trainable", "parameters", "trained parameters (the adapters, or all)"},
    {"trainable_fraction", "", "params_trainable / params_total"},
    {"per_gpu_bytes", "bytes", "frozen and trainable weights, gradients, master, optimizer, activations, total"},
    {"loss_bytes", "bytes",
     "the loss at its largest: logits kept (in activations) and, with grads_freed, their gradient"},
    {"offloaded_bytes", "bytes", "activation_offloading: the checkpoints in host memory (not in total)"},
    {"peak_phase", "", "sum (every class at once), or with grads_freed backward_start or backward_end"},
    {"backward_start_bytes", "bytes", "grads_freed: weights, states, stored activations and the loss (else 0)"},
    {"backward_end_bytes", "bytes", "grads_freed: weights, states and every gradient (else 0)"},
    {"gradient_held_bytes", "bytes", "optimizer_in_backward: the one gradient held at a time (else 0)"},
    {"paged_floor_bytes", "bytes", "with paged optimizer states: what must stay on the GPU"},
    {"flops_per_token", "FLOP", "forward, base_training, adapter_training, recompute, training, full_training"},
    {"fits", "", "with a capacity: total <= usable (null without)"},
    {"recipe", "", "the recipe of the trained parameters"},
    {"setup", "", "the training setup used (gpus, micro_batch, recompute, ...)"},
    {"paged", "", "whether the optimizer is paged"},
    {"fits_paged", "", "with a capacity: paged_floor_bytes <= usable (null without)"},
    {"lora", "", "LoRA and QLoRA: the adapters (rank, alpha, targets, modules, ...)"},
    {"base", "", "QLoRA: the quantized base (dtype, double_quant, quantized_inputs_kept, compute and adapter dtypes)"},
    {"capacity_bytes", "bytes", "with a capacity: one GPU's memory, else null"},
    {"usable_bytes", "bytes", "capacity less the allowance"},
});

// lora_targets: "q,k,v" or ["q_proj", "v_proj"] (PEFT's target_modules).
unsigned targets_arg(const json& args) {
    if (!args.contains("lora_targets")) return kLoraQ | kLoraV;
    const json& v = args["lora_targets"];
    if (v.is_string()) return lora_targets_from_string(v.get<std::string>());
    if (v.is_array() && !v.empty() && v.size() <= 16) {
        unsigned set = 0;
        for (const json& item : v) {
            if (!item.is_string())
                throw InputError("lora_targets", "lora_targets must be a list of module names (strings)");
            set |= lora_targets_from_string(item.get<std::string>());
        }
        return set;
    }
    throw InputError("lora_targets", "lora_targets must be a comma-separated string or a list of 1 to 16 names");
}

json finetune(const json& args) {
    const ModelConfig c = resolve_model(args);
    FinetuneSetup s;
    s.method = finetune_method_from_string(arg_string(args, kFinetuneOwn[0]));
    json recipe;
    s.training = setup_from_args(args, &recipe);
    require_default_placement(s.training, "finetune");
    const bool adapters = s.method != FinetuneMethod::Full;
    // lora_rank ... compute_dtype given with full: refused by their declarations (kAdapters), before this runs.
    s.paged = bool_arg(args, "paged", false);
    s.grads_freed = bool_arg(args, "grads_freed", false);
    s.optimizer_in_backward = bool_arg(args, "optimizer_in_backward", false);
    s.loss_chunks = int_or(args, "loss_chunks", 0, 0, kMaxSeq);
    s.activation_offloading = bool_arg(args, "activation_offloading", false);
    if (adapters) {
        // The rank's upper bound depends on the model (the narrowest adapted projection): lora_params checks it.
        s.lora.rank = arg_int(args, kLoraRank);
        if (auto alpha = optional_number_arg(args, "lora_alpha")) s.lora.alpha = *alpha;
        if (auto dropout = optional_number_arg(args, "lora_dropout")) s.lora.dropout = *dropout;
        s.lora.targets = targets_arg(args);
        s.lora.experts = bool_arg(args, "lora_experts", true);
        s.base =
            base_storage_from_string(string_or(args, "base_dtype", s.method == FinetuneMethod::Qlora ? "nf4" : "bf16"));
        s.double_quant = bool_arg(args, "double_quant", true);
        s.quantized_inputs_kept = bool_arg(args, "quantized_inputs_kept", false);
        s.adapter = dtype_from_string(string_or(args, "adapter_dtype", "fp32"), "adapter_dtype", kStorageDType);
        s.compute = dtype_from_string(string_or(args, "compute_dtype", "bf16"), "compute_dtype", kStorageDType);
        // Adapters train in a float dtype: the block-scaled and 8-bit storage formats are refused by name.
        if (s.adapter != DType::FP32 && s.adapter != DType::BF16 && s.adapter != DType::FP16)
            throw InputError("adapter_dtype", "adapter_dtype must be one of fp32, bf16, fp16");
        if (s.compute != DType::BF16 && s.compute != DType::FP16 && s.compute != DType::FP32)
            throw InputError("compute_dtype", "compute_dtype must be one of bf16, fp16, fp32");
    }
    const FinetuneBudget b = finetune_budget(c, s);
    const FinetuneBytes& x = b.bytes;
    json per_gpu = TALLY_MEMBERS(x, frozen_weights, trainable_weights, gradients, master_weights, optimizer_states,
                                 activations, adapter_activations, dequant_buffer, quantized_inputs, other, total);
    json out{{"model", model_to_json(c)},
             {"method", to_string(s.method)},
             {"recipe", recipe},
             {"per_gpu_bytes", per_gpu},
             {"paged", s.paged},
             {"flops_per_token",
              {{"forward", b.forward_per_token},
               {"base_training", b.base_training_per_token},
               {"adapter_training", b.adapter_training_per_token},
               {"recompute", b.recompute_per_token},
               {"training", b.training_per_token},
               {"full_training", b.full_training_per_token}}},
             {"setup",
              {{"seq", s.training.seq},
               {"micro_batch", s.training.micro_batch},
               {"gpus", s.training.gpus},
               {"recompute", to_string(s.training.recompute)},
               {"flash_attention", s.training.flash_attention},
               {"activation_bytes", s.training.activation_bytes}}}};
    out.update(TALLY_MEMBERS(b, params_total, params_trainable, trainable_fraction, paged_floor_bytes,
                             backward_start_bytes, backward_end_bytes, gradient_held_bytes, loss_bytes,
                             offloaded_bytes));
    out["peak_phase"] = to_string(b.peak_phase);
    json hardware;
    if (auto cap = capacity_from_args(args, &hardware)) {
        add_capacity(out, *cap, hardware);
        out["fits"] = x.total <= cap->usable_bytes;
        out["fits_paged"] = b.paged_floor_bytes <= cap->usable_bytes;
    } else {
        out["capacity_bytes"] = nullptr;
        out["fits"] = nullptr;
        out["fits_paged"] = nullptr;
    }
    if (adapters) {
        json modules = json::array();
        for (const LoraModule& m : b.lora.modules)
            modules.push_back(TALLY_MEMBERS(m, name, target, in, out, layers, instances, params));
        const bool nf4 = s.base == BaseStorage::NF4;
        out["lora"] = json{{"scaling", b.lora_scaling},    {"targets", lora_targets_to_string(s.lora.targets)},
                           {"params", b.lora.total},       {"params_active", b.lora.active},
                           {"max_rank", b.lora.narrowest}, {"modules", modules}};
        out["lora"].update(TALLY_MEMBERS(s.lora, rank, alpha, dropout, experts));
        out["base"] = {{"dtype", to_string(s.base)},
                       {"double_quant", nf4 && s.double_quant},
                       {"quantized_inputs_kept", nf4 && s.quantized_inputs_kept},
                       {"compute_dtype", to_string(s.compute)},
                       {"adapter_dtype", to_string(s.adapter)},
                       {"params_quantized", b.params_quantized},
                       {"nf4_bits_per_param", nf4 ? nf4_bits_per_param(s.double_quant) : 0.0}};
    }
    return out;
}

constexpr auto kFinetuneResult = join_args(kFinetuneOwnResult, arg::kCapacityFields);
constexpr Method kMethods[] = {
    {"finetune", finetune,
     "fine-tuning on one GPU: LoRA / QLoRA adapters, NF4 base, 8-bit or paged optimizer; memory and FLOPs",
     kFinetuneArgs, kFinetuneResult, true},
};

}  // namespace

std::span<const Method> finetune_methods() { return kMethods; }

}  // namespace tally::api
